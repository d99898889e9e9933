// Objects are stored as plain CBOR (RFC 8949 maps/arrays/strings, no cbor-x record extension),
// so the data file stays readable by any CBOR decoder.
import { Encoder } from 'cbor-x';

const cbor = new Encoder({ useRecords: false, mapsAsObjects: true, variableMapSize: true });

export function encodeObject(obj: unknown): Buffer {
  return cbor.encode(obj);
}

export function decodeObject<T = any>(data: Uint8Array): T {
  return cbor.decode(data) as T;
}
