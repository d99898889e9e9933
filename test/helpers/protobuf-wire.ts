// Protobuf wire bytes built by hand, field by field, for the tests that check an encoder's output
// byte for byte (test/unit/http/protobuf.test.ts, test/unit/http/openapi-v2-proto.test.ts). Written the plain way, on
// purpose independent of the encoders under test.

/** An unsigned varint of a non-negative safe integer. */
export function varint(n: number): Buffer {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return Buffer.from(out);
}

/** A field's key: its number and wire type (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32). */
export const key = (num: number, wire: number) => varint(num * 8 + wire);

/** A length-delimited field (a message, a string, bytes) of the parts joined. */
export const ld = (num: number, ...parts: Buffer[]) => {
  const b = Buffer.concat(parts);
  return Buffer.concat([key(num, 2), varint(b.length), b]);
};

/** A string field (UTF-8). */
export const str = (num: number, s: string) => ld(num, Buffer.from(s, 'utf8'));

/** A varint field of a non-negative integer (a bool is 0 or 1). */
export const vint = (num: number, v: number) => Buffer.concat([key(num, 0), varint(v)]);

/** A signed varint field: negatives are 64-bit two's complement (10 bytes), as Go writes int32 and int64. */
export const sint = (num: number, v: bigint) => {
  const out: number[] = [];
  let u = BigInt.asUintN(64, v);
  while (u >= 0x80n) {
    out.push(Number(u & 0x7fn) | 0x80);
    u >>= 7n;
  }
  out.push(Number(u));
  return Buffer.concat([key(num, 0), Buffer.from(out)]);
};

/** A double field (fixed64, little endian). */
export const dbl = (num: number, v: number) => {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(v);
  return Buffer.concat([key(num, 1), b]);
};
