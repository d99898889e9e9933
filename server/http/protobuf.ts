// The Kubernetes protobuf wire form (application/vnd.kubernetes.protobuf) of the built-in kinds.
//
// A body is the 4-byte magic "k8s\0" followed by a runtime.Unknown message:
//   Unknown { TypeMeta typeMeta = 1 {apiVersion = 1, kind = 2}; bytes raw = 2; string contentEncoding = 3; string contentType = 4 }
// where raw is the object's own message (which never carries apiVersion/kind itself).
//
// The message layouts come from schemas/protobuf.json, as schema/go-structs.ts reads it (field numbers
// and types taken from the upstream generated.proto files, keyed by OpenAPI definition name). The
// JSON <-> proto mapping follows what a Go client does when it round-trips through the typed structs:
//   - Time/MicroTime are {seconds int64 = 1, nanos int32 = 2}; zero time <-> absent/null.
//   - Quantity is {string = 1}; IntOrString is {type = 1, intVal = 2, strVal = 3}.
//   - RawExtension / apiextensions JSON / FieldsV1 carry the JSON text as bytes (an embedded protobuf
//     object, as used inside watch events, is recognised by its magic).
//   - maps are repeated {key = 1, value = 2} entries (keys sorted when encoding); []byte is base64 in JSON.
//   - JSON-inlined embedded structs (Volume.volumeSource, Probe.handler, ...) are nested messages on the wire.
// Decoding shapes the result the way encoding/json would print the decoded Go struct: zero scalars of
// non-pointer omitempty fields are dropped (Go clients always put them on the wire), pointer fields keep
// explicit zeros (replicas: 0, automountServiceAccountToken: false), non-omitempty scalars and non-pointer
// structs are filled in when absent (so `spec: {}` / `divisor: "0"` look as they do in JSON requests).
// Unknown field numbers are skipped.
//
// Bodies are written with @bufbuild/protobuf's BinaryWriter (repeated scalars unpacked, as Go's
// generated code writes kube's proto2 messages). They are read with the Reader below rather than
// BinaryReader: kube answers a malformed body 400 with Go's decoding errors ("proto: unexpected
// EOF", "integer overflow", "illegal tag 0 (wire type 0)"), which BinaryReader words its own way,
// and BinaryReader reads a length past 32 bits as its low 32 bits instead of refusing it.

import { readFileSync } from 'node:fs';
import { BinaryWriter, UINT32_MAX, WireType } from '@bufbuild/protobuf/wire';
import { badRequest } from '../errors.ts';
import { STRUCT_FACTS, type FieldType, type ScalarType, type Special } from '../schema/go-structs.ts';
import { parseRFC3339 } from '../go/time.ts';

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
/** The 4 bytes every kube protobuf body starts with: "k8s\0". */
export const PROTOBUF_MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

// ---------------------------------------------------------------------------------------------
// Schema

interface Field {
  /** JSON name ('' for an inlined embedded message). */
  name: string;
  number: number;
  type: FieldType;
  repeated: boolean;
  isMap: boolean;
  mapKey: ScalarType;
  messageName: string;
  ptr: boolean;
  omitempty: boolean;
  inline: boolean;
  /** Wire type of one value of this field (for maps: 2). */
  wire: number;
}
interface Message {
  name: string;
  /** Short name for error messages, e.g. "ConfigMap". */
  short: string;
  special?: Special;
  fields: Field[];
  byNumber: Map<number, Field>;
}


const compiled = new Map<string, Message>();

function wireOf(t: FieldType): WireType {
  if (t === 'double') return WireType.Bit64;
  if (t === 'bool' || t === 'int32' || t === 'int64') return WireType.Varint;
  return WireType.LengthDelimited;
}

function getMessage(name: string): Message | undefined {
  const hit = compiled.get(name);
  if (hit) return hit;
  const data = STRUCT_FACTS[name];
  if (!data) return undefined;
  const fields: Field[] = [];
  for (const [key, f] of Object.entries(data.fields)) {
    fields.push({
      name: f.inline ? '' : key,
      number: f.number,
      type: f.type,
      repeated: !!f.repeated,
      isMap: !!f.map,
      mapKey: f.map?.key ?? 'string',
      messageName: f.message ?? '',
      ptr: !!f.ptr,
      omitempty: !!f.omitempty,
      inline: !!f.inline,
      wire: f.map ? WireType.LengthDelimited : wireOf(f.type),
    });
  }
  fields.sort((a, b) => a.number - b.number);
  const msg: Message = { name, short: name.slice(name.lastIndexOf('.') + 1), special: data.special, fields, byNumber: new Map(fields.map((f) => [f.number, f])) };
  compiled.set(name, msg);
  return msg;
}

function mustMessage(name: string): Message {
  const m = getMessage(name);
  if (!m) throw new Error(`protobuf: no message ${name}`);
  return m;
}

/** Whether a definition (e.g. io.k8s.api.core.v1.Pod) has a protobuf form. */
export function hasProtobuf(definitionName: string): boolean {
  return STRUCT_FACTS[definitionName] !== undefined;
}

// ---------------------------------------------------------------------------------------------
// Kinds

let kindIndex: Map<string, string> | undefined;

/** definition name for (apiVersion, kind), from x-kubernetes-group-version-kind in schemas/definitions.json. */
export function definitionForKind(apiVersion: string, kind: string): string | undefined {
  if (!kindIndex) {
    const defs = JSON.parse(readFileSync(new URL('../../schemas/definitions.json', import.meta.url), 'utf8')) as Record<
      string,
      { 'x-kubernetes-group-version-kind'?: { group: string; version: string; kind: string }[] }
    >;
    const idx = new Map<string, string>();
    for (const [name, def] of Object.entries(defs)) {
      for (const gvk of def['x-kubernetes-group-version-kind'] ?? []) {
        idx.set(`${gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version}|${gvk.kind}`, name);
      }
    }
    // meta.k8s.io kinds the OpenAPI document does not list.
    const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
    for (const v of ['meta.k8s.io/v1', 'meta.k8s.io/v1beta1']) {
      for (const k of ['PartialObjectMetadata', 'PartialObjectMetadataList', 'Table']) {
        if (!idx.has(`${v}|${k}`)) idx.set(`${v}|${k}`, META + k);
      }
    }
    kindIndex = idx;
  }
  return kindIndex.get(`${apiVersion}|${kind}`);
}

// ---------------------------------------------------------------------------------------------
// Writing: one BinaryWriter per body, nested messages forked and joined in place.

function describe(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

function toInteger(v: unknown, path: string): number | bigint {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'bigint') return v;
  if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) {
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : BigInt(v.trim());
  }
  throw new Error(`protobuf: ${path}: expected an integer, got ${describe(v)}`);
}

/**
 * A varint of an integer as Go writes int32 and int64 fields: negatives sign-extended to 64 bits
 * (10 bytes), values outside int64 taken modulo 2^64.
 */
function writeInteger(w: BinaryWriter, v: number | bigint): void {
  if (typeof v === 'number' && v >= 0 && v <= UINT32_MAX) w.uint32(v);
  else w.int64(BigInt.asIntN(64, BigInt(v)));
}

function writeScalar(w: BinaryWriter, type: ScalarType, v: unknown, path: string): void {
  switch (type) {
    case 'string':
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw new Error(`protobuf: ${path}: expected a string, got ${describe(v)}`);
      w.string(String(v));
      return;
    case 'bytes':
      if (typeof v !== 'string') throw new Error(`protobuf: ${path}: expected base64 bytes, got ${describe(v)}`);
      w.bytes(Buffer.from(v, 'base64'));
      return;
    case 'bool':
      w.bool(!!v);
      return;
    case 'int32':
    case 'int64':
      writeInteger(w, toInteger(v, path));
      return;
    case 'double':
      if (typeof v !== 'number') throw new Error(`protobuf: ${path}: expected a number, got ${describe(v)}`);
      w.double(v);
      return;
  }
}

/** One value of a field (no key/tag for maps: the caller writes the entry). */
function writeValue(w: BinaryWriter, f: Field, type: FieldType, num: number, v: unknown, path: string): void {
  if (type === 'message') {
    w.tag(num, WireType.LengthDelimited).fork();
    writeMessage(w, mustMessage(f.messageName), v, path);
    w.join();
  } else {
    w.tag(num, wireOf(type));
    writeScalar(w, type, v, path);
  }
}

function writeMessage(w: BinaryWriter, msg: Message, value: unknown, path: string): void {
  if (msg.special) writeSpecial(w, msg, value, path);
  else writeFields(w, msg, value, path);
}

function writeFields(w: BinaryWriter, msg: Message, value: unknown, path: string): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`protobuf: ${path || msg.short}: expected an object, got ${describe(value)}`);
  const obj = value as Record<string, unknown>;
  for (const f of msg.fields) {
    if (f.inline) {
      // JSON-inlined embedded struct: its fields live in this object, on the wire it is a nested message.
      w.tag(f.number, WireType.LengthDelimited).fork();
      writeMessage(w, mustMessage(f.messageName), obj, path);
      w.join();
      continue;
    }
    const v = obj[f.name];
    if (v === undefined || v === null) continue;
    const p = path ? `${path}.${f.name}` : f.name;
    if (f.isMap) {
      if (typeof v !== 'object' || Array.isArray(v)) throw new Error(`protobuf: ${p}: expected an object, got ${describe(v)}`);
      const m = v as Record<string, unknown>;
      for (const key of Object.keys(m).sort()) {
        w.tag(f.number, WireType.LengthDelimited).fork();
        w.tag(1, wireOf(f.mapKey));
        writeScalar(w, f.mapKey, key, p);
        const ev = m[key];
        if (ev !== undefined && ev !== null) writeValue(w, f, f.type, 2, ev, `${p}[${key}]`);
        w.join();
      }
    } else if (f.repeated) {
      if (!Array.isArray(v)) throw new Error(`protobuf: ${p}: expected an array, got ${describe(v)}`);
      v.forEach((el, i) => {
        if (el === undefined || el === null) {
          if (f.type !== 'message') writeValue(w, f, f.type, f.number, f.type === 'bool' ? false : f.type === 'string' || f.type === 'bytes' ? '' : 0, `${p}[${i}]`);
          else writeValue(w, f, f.type, f.number, {}, `${p}[${i}]`);
          return;
        }
        writeValue(w, f, f.type, f.number, el, `${p}[${i}]`);
      });
    } else {
      writeValue(w, f, f.type, f.number, v, p);
    }
  }
}

function jsonBytes(v: unknown): Buffer {
  return Buffer.from(JSON.stringify(v), 'utf8');
}

function writeSpecial(w: BinaryWriter, msg: Message, v: unknown, path: string): void {
  switch (msg.special) {
    case 'time':
    case 'microTime': {
      if (typeof v !== 'string') throw new Error(`protobuf: ${path}: expected an RFC3339 time, got ${describe(v)}`);
      const t = parseTime(v);
      if (!t) throw new Error(`protobuf: ${path}: invalid time ${JSON.stringify(v)}`);
      w.tag(1, WireType.Varint);
      writeInteger(w, t.seconds);
      w.tag(2, WireType.Varint);
      writeInteger(w, t.nanos);
      return;
    }
    case 'quantity':
      if (typeof v !== 'string' && typeof v !== 'number') throw new Error(`protobuf: ${path}: expected a quantity, got ${describe(v)}`);
      w.tag(1, WireType.LengthDelimited).string(String(v));
      return;
    case 'intOrString': {
      const isString = typeof v === 'string';
      if (!isString && typeof v !== 'number') throw new Error(`protobuf: ${path}: expected an int or a string, got ${describe(v)}`);
      w.tag(1, WireType.Varint).uint32(isString ? 1 : 0);
      w.tag(2, WireType.Varint);
      writeInteger(w, isString ? 0 : toInteger(v, path));
      w.tag(3, WireType.LengthDelimited).string(isString ? (v as string) : '');
      return;
    }
    case 'rawExtension':
    case 'json':
    case 'fieldsV1':
      w.tag(1, WireType.LengthDelimited).bytes(Buffer.isBuffer(v) ? v : jsonBytes(v));
      return;
    case 'jsonSchemaPropsOrArray': {
      const f1 = msg.byNumber.get(1)!;
      if (Array.isArray(v)) v.forEach((s, i) => writeValue(w, f1, 'message', 2, s, `${path}[${i}]`));
      else writeValue(w, f1, 'message', 1, v, path);
      return;
    }
    case 'jsonSchemaPropsOrBool': {
      w.tag(1, WireType.Varint);
      if (typeof v === 'boolean') {
        w.bool(v);
        return;
      }
      w.bool(true);
      writeValue(w, msg.byNumber.get(2)!, 'message', 2, v, path);
      return;
    }
    case 'jsonSchemaPropsOrStringArray':
      if (Array.isArray(v)) {
        for (const s of v) w.tag(2, WireType.LengthDelimited).string(String(s));
      } else {
        writeValue(w, msg.byNumber.get(1)!, 'message', 1, v, path);
      }
      return;
    case 'wrapper': {
      if (!Array.isArray(v)) throw new Error(`protobuf: ${path}: expected an array, got ${describe(v)}`);
      const items = msg.byNumber.get(1)!;
      v.forEach((el, i) => writeValue(w, items, items.type, 1, el, `${path}[${i}]`));
      return;
    }
  }
}

/** The k8s envelope after the magic: runtime.Unknown{typeMeta, raw = what writeRaw writes, contentEncoding, contentType}. */
function writeEnvelope(w: BinaryWriter, apiVersion: string, kind: string, writeRaw: (w: BinaryWriter) => void): void {
  w.raw(PROTOBUF_MAGIC);
  w.tag(1, WireType.LengthDelimited).fork();
  w.tag(1, WireType.LengthDelimited).string(apiVersion);
  w.tag(2, WireType.LengthDelimited).string(kind);
  w.join();
  w.tag(2, WireType.LengthDelimited).fork();
  writeRaw(w);
  w.join();
  // contentEncoding and contentType: empty, but present, as Go writes them.
  w.tag(3, WireType.LengthDelimited).string('');
  w.tag(4, WireType.LengthDelimited).string('');
}

/** An object's envelope, or undefined when its kind has no protobuf form (nothing is written then). */
function writeObjectEnvelope(w: BinaryWriter, obj: unknown, definitionName: string): boolean {
  const msg = getMessage(definitionName);
  if (!msg) return false;
  const head = obj as { apiVersion?: unknown; kind?: unknown } | null | undefined;
  const apiVersion = typeof head?.apiVersion === 'string' ? head.apiVersion : '';
  const kind = typeof head?.kind === 'string' ? head.kind : '';
  if (definitionName === WATCH_EVENT) {
    const event: { type?: unknown; object?: unknown } = obj ?? {};
    const embedded = embeddedDefinition(event);
    if (embedded === undefined) return false;
    writeEnvelope(w, apiVersion, kind, (w) => writeWatchEvent(w, event, embedded));
  } else writeEnvelope(w, apiVersion, kind, (w) => writeMessage(w, msg, obj, ''));
  return true;
}

const WATCH_EVENT = 'io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent';

/**
 * The definition of a watch event's object ('' without an object), or undefined when the object
 * has no protobuf form.
 */
function embeddedDefinition(event: { object?: unknown }): string | undefined {
  const obj = event.object as Record<string, unknown> | undefined;
  if (!obj || typeof obj !== 'object') return '';
  const def = typeof obj.apiVersion === 'string' && typeof obj.kind === 'string' ? definitionForKind(obj.apiVersion, obj.kind) : undefined;
  return def && getMessage(def) ? def : undefined;
}

/** The WatchEvent message (no magic): {type = 1, object = 2 RawExtension{raw = the object's own protobuf envelope}}. */
function writeWatchEvent(w: BinaryWriter, event: { type?: unknown; object?: unknown }, embedded: string): void {
  w.tag(1, WireType.LengthDelimited).string(String(event.type ?? ''));
  w.tag(2, WireType.LengthDelimited).fork();
  if (embedded) {
    w.tag(1, WireType.LengthDelimited).fork();
    writeObjectEnvelope(w, event.object, embedded);
    w.join();
  }
  w.join();
}

/**
 * The writer every body is written with, its buffer reused (growing a fresh one from 128 bytes
 * made a small object's watch frame 10% slower than the hand-written writer it replaced). A body
 * past REUSED_WRITER_LIMIT leaves the writer behind, so that a large list does not stay in memory.
 */
let writer = new BinaryWriter();
const REUSED_WRITER_LIMIT = 1 << 20;

/** Writes one body with the shared writer: a copy of its bytes, or undefined when `write` says there is no body. */
function written(write: (w: BinaryWriter) => boolean): Buffer | undefined {
  const w = writer;
  let ok: boolean;
  try {
    ok = write(w);
  } catch (e) {
    // (the error left forks open: finish() resets the writer)
    w.finish();
    throw e;
  }
  const bytes = w.finish();
  if (bytes.length > REUSED_WRITER_LIMIT) writer = new BinaryWriter();
  return ok ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : undefined;
}

/**
 * Encode a JSON object (an object of a known kind, a List, Status, WatchEvent, ...) into the kube protobuf
 * envelope. Returns undefined when the kind has no protobuf form (custom resources, Table) so the caller
 * answers 406 or falls back to JSON. apiVersion/kind of the envelope are taken from the object.
 */
export function encodeProtobuf(obj: unknown, definitionName: string): Buffer | undefined {
  return written((w) => writeObjectEnvelope(w, obj, definitionName));
}

/**
 * One frame of a protobuf watch stream (Content-Type application/vnd.kubernetes.protobuf;stream=watch):
 * a 4-byte big-endian length followed by a WatchEvent message without the magic/Unknown envelope, whose
 * object.raw is the object's full protobuf envelope. Undefined when the object has no protobuf form.
 */
export function encodeWatchEventFrame(event: { type: string; object: unknown }): Buffer | undefined {
  const embedded = embeddedDefinition(event);
  if (embedded === undefined) return undefined;
  const out = written((w) => {
    w.raw(LENGTH_PLACEHOLDER);
    writeWatchEvent(w, event, embedded);
    return true;
  })!;
  out.writeUInt32BE(out.length - 4, 0);
  return out;
}

const LENGTH_PLACEHOLDER = new Uint8Array(4);

// ---------------------------------------------------------------------------------------------
// Reading

class DecodeError extends Error {}

class Reader {
  constructor(
    readonly buf: Buffer,
    public pos: number,
    readonly end: number,
  ) {}

  varint(): number | bigint {
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 7; i++) {
      if (this.pos >= this.end) throw new DecodeError('unexpected EOF');
      const b = this.buf[this.pos++]!;
      result += (b & 0x7f) * mul;
      if (b < 0x80) return result;
      mul *= 0x80;
    }
    let big = BigInt(result);
    let shift = 49n;
    for (let i = 7; i < 10; i++) {
      if (this.pos >= this.end) throw new DecodeError('unexpected EOF');
      const b = this.buf[this.pos++]!;
      big |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return big;
      shift += 7n;
    }
    throw new DecodeError('integer overflow');
  }

  uint(): number {
    const v = this.varint();
    if (typeof v !== 'number') throw new DecodeError('integer overflow');
    return v;
  }

  /** A length-delimited payload as a sub-reader. */
  sub(): Reader {
    const n = this.uint();
    if (n > this.end - this.pos) throw new DecodeError('unexpected EOF');
    const r = new Reader(this.buf, this.pos, this.pos + n);
    this.pos += n;
    return r;
  }

  skip(wire: number): void {
    switch (wire) {
      case WireType.Varint:
        this.varint();
        return;
      case WireType.Bit64:
        if (this.end - this.pos < 8) throw new DecodeError('unexpected EOF');
        this.pos += 8;
        return;
      case WireType.LengthDelimited:
        this.sub();
        return;
      case WireType.Bit32:
        if (this.end - this.pos < 4) throw new DecodeError('unexpected EOF');
        this.pos += 4;
        return;
      default:
        throw new DecodeError(`illegal wireType ${wire}`);
    }
  }

  tag(): [number, number] {
    const t = this.uint();
    const num = Math.floor(t / 8);
    if (num === 0) throw new DecodeError(`illegal tag 0 (wire type ${t & 7})`);
    return [num, t & 7];
  }
}

function toInt32(v: number | bigint): number {
  return typeof v === 'number' ? v | 0 : Number(BigInt.asIntN(32, v));
}
function toInt64(v: number | bigint): number {
  return typeof v === 'number' ? v : Number(BigInt.asIntN(64, v));
}

function readScalar(r: Reader, type: ScalarType): unknown {
  switch (type) {
    case 'string': {
      const s = r.sub();
      return s.buf.toString('utf8', s.pos, s.end);
    }
    case 'bytes': {
      const s = r.sub();
      return s.buf.toString('base64', s.pos, s.end);
    }
    case 'bool': {
      const v = r.varint();
      return v !== 0 && v !== 0n;
    }
    case 'int32':
      return toInt32(r.varint());
    case 'int64':
      return toInt64(r.varint());
    case 'double': {
      if (r.end - r.pos < 8) throw new DecodeError('unexpected EOF');
      const v = r.buf.readDoubleLE(r.pos);
      r.pos += 8;
      return v;
    }
  }
}

function zeroOf(type: ScalarType): unknown {
  return type === 'string' ? '' : type === 'bool' ? false : type === 'bytes' ? '' : 0;
}

function isZero(v: unknown): boolean {
  return v === '' || v === 0 || v === false;
}

function checkWire(msg: Message, f: Field, wire: number, expected: number): void {
  if (wire !== expected) throw new DecodeError(`${msg.short}: wrong wireType = ${wire} for field ${f.name || f.messageName.slice(f.messageName.lastIndexOf('.') + 1)}`);
}

const MAX_DEPTH = 100;

function decodeMessage(msg: Message, r: Reader, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new DecodeError('message nested too deeply');
  if (msg.special) return decodeSpecial(msg, r, depth);
  const out: Record<string, unknown> = {};
  while (r.pos < r.end) {
    const [num, wire] = r.tag();
    const f = msg.byNumber.get(num);
    if (!f) {
      r.skip(wire);
      continue;
    }
    if (f.isMap) {
      checkWire(msg, f, wire, WireType.LengthDelimited);
      const e = r.sub();
      let key: unknown = zeroOf(f.mapKey);
      let val: unknown;
      let haveVal = false;
      while (e.pos < e.end) {
        const [en, ew] = e.tag();
        if (en === 1) {
          if (ew !== wireOf(f.mapKey)) throw new DecodeError(`${msg.short}: wrong wireType = ${ew} for map key of ${f.name}`);
          key = readScalar(e, f.mapKey);
        } else if (en === 2) {
          if (ew !== wireOf(f.type)) throw new DecodeError(`${msg.short}: wrong wireType = ${ew} for map value of ${f.name}`);
          val = f.type === 'message' ? decodeMessage(mustMessage(f.messageName), e.sub(), depth + 1) : readScalar(e, f.type);
          haveVal = true;
        } else {
          e.skip(ew);
        }
      }
      if (!haveVal) val = f.type === 'message' ? decodeMessage(mustMessage(f.messageName), new Reader(e.buf, 0, 0), depth + 1) : zeroOf(f.type);
      const m = (out[f.name] ??= {}) as Record<string, unknown>;
      m[String(key)] = val === undefined ? null : val;
    } else if (f.inline) {
      checkWire(msg, f, wire, WireType.LengthDelimited);
      const sub = decodeMessage(mustMessage(f.messageName), r.sub(), depth + 1) as Record<string, unknown>;
      Object.assign(out, sub);
    } else if (f.repeated) {
      const list = (out[f.name] ??= []) as unknown[];
      if (f.type === 'message') {
        checkWire(msg, f, wire, WireType.LengthDelimited);
        const v = decodeMessage(mustMessage(f.messageName), r.sub(), depth + 1);
        list.push(v === undefined ? null : v);
      } else if (wire === WireType.LengthDelimited && f.wire !== WireType.LengthDelimited) {
        // packed scalars
        const p = r.sub();
        while (p.pos < p.end) list.push(readScalar(p, f.type));
      } else {
        checkWire(msg, f, wire, f.wire);
        list.push(readScalar(r, f.type));
      }
    } else if (f.type === 'message') {
      checkWire(msg, f, wire, WireType.LengthDelimited);
      const v = decodeMessage(mustMessage(f.messageName), r.sub(), depth + 1);
      const prev = out[f.name];
      // A repeated occurrence of a singular message field merges into the earlier one.
      out[f.name] = prev && v && typeof prev === 'object' && typeof v === 'object' && !Array.isArray(v) ? { ...prev, ...v } : v;
    } else {
      checkWire(msg, f, wire, f.wire);
      out[f.name] = readScalar(r, f.type);
    }
  }
  return shape(msg, out, depth);
}

/** Give the decoded object the shape encoding/json would print for the decoded Go struct. */
function shape(msg: Message, got: Record<string, unknown>, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const place = (m: Message) => {
    for (const f of m.fields) {
      if (f.inline) {
        place(mustMessage(f.messageName));
        continue;
      }
      const has = Object.prototype.hasOwnProperty.call(got, f.name);
      const v = got[f.name];
      if (f.isMap || f.repeated) {
        if (has) out[f.name] = v;
      } else if (f.type === 'message') {
        if (has) {
          if (v !== undefined) out[f.name] = v;
        } else if (!f.ptr) {
          const empty = decodeMessage(mustMessage(f.messageName), new Reader(EMPTY, 0, 0), depth + 1);
          if (empty !== undefined) out[f.name] = empty;
        }
      } else if (has) {
        if (!(f.omitempty && !f.ptr && isZero(v))) out[f.name] = v;
      } else if (!f.ptr && !f.omitempty && f.type !== 'bytes') {
        out[f.name] = zeroOf(f.type);
      }
    }
  };
  place(msg);
  return out;
}

const EMPTY = Buffer.alloc(0);

function readFieldsRaw(msg: Message, r: Reader, depth: number): Map<number, unknown[]> {
  // Small helper for the special messages: every field's values in wire order.
  const vals = new Map<number, unknown[]>();
  while (r.pos < r.end) {
    const [num, wire] = r.tag();
    const f = msg.byNumber.get(num);
    if (!f) {
      r.skip(wire);
      continue;
    }
    let v: unknown;
    if (f.type === 'message') {
      checkWire(msg, f, wire, WireType.LengthDelimited);
      v = decodeMessage(mustMessage(f.messageName), r.sub(), depth + 1);
    } else if (wire === WireType.LengthDelimited && f.wire !== WireType.LengthDelimited && f.repeated) {
      const p = r.sub();
      const list = vals.get(num) ?? [];
      while (p.pos < p.end) list.push(readScalar(p, f.type));
      vals.set(num, list);
      continue;
    } else {
      checkWire(msg, f, wire, f.wire);
      v = f.type === 'bytes' ? (() => { const s = r.sub(); return s.buf.subarray(s.pos, s.end); })() : readScalar(r, f.type);
    }
    const list = vals.get(num) ?? [];
    list.push(v);
    vals.set(num, list);
  }
  return vals;
}

function last(vals: Map<number, unknown[]>, num: number): unknown {
  const l = vals.get(num);
  return l && l.length ? l[l.length - 1] : undefined;
}

function parseRawJson(raw: Buffer, what: string): unknown {
  if (raw.length === 0) return undefined;
  if (raw.length >= 4 && raw.subarray(0, 4).equals(PROTOBUF_MAGIC)) return decodeEnvelope(raw, undefined);
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new DecodeError(`${what}: raw bytes are not valid JSON`);
  }
}

function decodeSpecial(msg: Message, r: Reader, depth: number): unknown {
  const vals = readFieldsRaw(msg, r, depth);
  switch (msg.special) {
    case 'time':
    case 'microTime': {
      const seconds = (last(vals, 1) as number | undefined) ?? 0;
      const nanos = (last(vals, 2) as number | undefined) ?? 0;
      if (seconds === 0 && nanos === 0) return undefined;
      return formatTime(seconds, nanos, msg.special === 'microTime');
    }
    case 'quantity': {
      const s = last(vals, 1) as string | undefined;
      return s === undefined || s === '' ? '0' : s;
    }
    case 'intOrString':
      return last(vals, 1) === 1 ? ((last(vals, 3) as string | undefined) ?? '') : ((last(vals, 2) as number | undefined) ?? 0);
    case 'rawExtension':
    case 'json':
    case 'fieldsV1': {
      const raw = last(vals, 1) as Buffer | undefined;
      return raw ? parseRawJson(Buffer.from(raw), msg.short) : undefined;
    }
    case 'jsonSchemaPropsOrArray': {
      const arr = vals.get(2);
      if (arr && arr.length) return arr;
      return last(vals, 1);
    }
    case 'jsonSchemaPropsOrBool': {
      const schema = last(vals, 2);
      if (schema !== undefined) return schema;
      return !!last(vals, 1);
    }
    case 'jsonSchemaPropsOrStringArray': {
      const arr = vals.get(2);
      if (arr && arr.length) return arr;
      return last(vals, 1);
    }
    case 'wrapper':
      return vals.get(1) ?? [];
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Time

/** A metav1.Time or MicroTime as Go's time.Parse(RFC3339) reads it (go/time.ts), in seconds and nanos. */
function parseTime(s: string): { seconds: number; nanos: number } | undefined {
  const t = parseRFC3339(s);
  if (!t) return undefined;
  // Go keeps nanoseconds: digits past the ninth are dropped.
  return { seconds: Math.floor(t.ms / 1000), nanos: t.fraction ? Number(t.fraction.slice(0, 9).padEnd(9, '0')) : 0 };
}

function formatTime(seconds: number, nanos: number, micro: boolean): string {
  const base = new Date(seconds * 1000).toISOString().slice(0, 19);
  if (!micro) return `${base}Z`;
  return `${base}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
}

// ---------------------------------------------------------------------------------------------
// Envelope

function decodeEnvelope(body: Buffer, definitionName: string | undefined): unknown {
  if (body.length === 0) throw badRequest('empty data');
  if (body.length < 4 || !body.subarray(0, 4).equals(PROTOBUF_MAGIC)) {
    throw badRequest(`provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]`);
  }
  if (body.length === 4) throw badRequest('empty body');
  let apiVersion = '';
  let kind = '';
  let raw: Buffer = EMPTY;
  let contentEncoding = '';
  let contentType = '';
  try {
    const r = new Reader(body, 4, body.length);
    while (r.pos < r.end) {
      const [num, wire] = r.tag();
      if (num >= 1 && num <= 4 && wire !== WireType.LengthDelimited) throw new DecodeError(`Unknown: wrong wireType = ${wire} for field ${num}`);
      if (num === 1) {
        const t = r.sub();
        while (t.pos < t.end) {
          const [tn, tw] = t.tag();
          if ((tn === 1 || tn === 2) && tw !== WireType.LengthDelimited) throw new DecodeError(`TypeMeta: wrong wireType = ${tw} for field ${tn}`);
          if (tn === 1) apiVersion = readScalar(t, 'string') as string;
          else if (tn === 2) kind = readScalar(t, 'string') as string;
          else t.skip(tw);
        }
      } else if (num === 2) {
        const s = r.sub();
        raw = s.buf.subarray(s.pos, s.end);
      } else if (num === 3) {
        contentEncoding = readScalar(r, 'string') as string;
      } else if (num === 4) {
        contentType = readScalar(r, 'string') as string;
      } else {
        r.skip(wire);
      }
    }
  } catch (e) {
    if (e instanceof DecodeError) throw badRequest(`proto: ${e.message}`);
    throw e;
  }
  if (contentEncoding) throw badRequest(`unsupported protobuf content encoding ${JSON.stringify(contentEncoding)}`);
  const head: Record<string, unknown> = {};
  if (apiVersion) head.apiVersion = apiVersion;
  if (kind) head.kind = kind;
  if (contentType && contentType !== PROTOBUF_MEDIA_TYPE) {
    if (!/^application\/json\b/.test(contentType)) throw badRequest(`unsupported content type ${JSON.stringify(contentType)} inside the protobuf envelope`);
    let v: unknown;
    try {
      v = JSON.parse(raw.toString('utf8'));
    } catch {
      throw badRequest('the JSON carried in the protobuf envelope is not valid');
    }
    return v && typeof v === 'object' && !Array.isArray(v) ? { ...head, ...(v as object) } : v;
  }
  const def = (apiVersion && kind ? definitionForKind(apiVersion, kind) : undefined) ?? definitionName;
  const msg = def ? getMessage(def) : undefined;
  if (!msg) {
    const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
    throw badRequest(`no kind "${kind}" is registered for version "${apiVersion || version}" in protobuf form`);
  }
  try {
    const obj = decodeMessage(msg, new Reader(raw, 0, raw.length), 0);
    if (obj && typeof obj === 'object' && !Array.isArray(obj)) return { ...head, ...obj };
    return obj;
  } catch (e) {
    if (e instanceof DecodeError) throw badRequest(`proto: ${e.message}`);
    throw e;
  }
}

/**
 * Decode a kube protobuf body (magic "k8s\0" + runtime.Unknown{typeMeta{apiVersion,kind}, raw,
 * contentEncoding, contentType}) into the JSON object the rest of the server uses. The message layout
 * is the envelope's kind when that is known, else definitionName (the kind the caller expects);
 * apiVersion/kind of the result come from the envelope. Throws ApiError 400 on malformed input.
 */
export function decodeProtobuf(body: Buffer, definitionName?: string): any {
  return decodeEnvelope(Buffer.isBuffer(body) ? body : Buffer.from(body), definitionName);
}
