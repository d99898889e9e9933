// What kube's CBOR decode mode refuses (apimachinery runtime/serializer/cbor/internal/modes,
// decode.go, on fxamacker/cbor), checked on the body's bytes before cbor-x decodes it: cbor-x
// keeps the last of two equal map keys, replaces invalid UTF-8, yields `undefined`, NaN, bignums
// and unlimited nesting, all of which kube answers with 400. Two passes, as fxamacker's
// Unmarshal makes them:
//   1. well-formedness, over the whole body first: structure, at most 64 nested arrays, maps and
//      tags (MaxNestedLevels), 1024 array elements (MaxArrayElements), 1024 map pairs
//      (MaxMapPairs), no bytes after the item;
//   2. validity, in document order: text strings are UTF-8 (UTF8RejectInvalid), the only simple
//      values are false, true and null (SimpleValues), floats are finite (NaN/Inf forbidden),
//      no bignum tags (BignumTagForbidden), map keys are strings and unique (DupMapKeyEnforcedAPF),
//      integers fit int64 (IntDecConvertSignedOrFail).
// Errors carry fxamacker's words, and where kube's serializer meets them: the first pass and the
// top-level map are what its Interpret (decoding apiVersion and kind) reads; the rest only the
// full decode does. Nesting is at most 64 levels, so the recursion here is too.

export const CBOR_MAX_NESTED_LEVELS = 64;
export const CBOR_MAX_ARRAY_ELEMENTS = 1024;
export const CBOR_MAX_MAP_PAIRS = 1024;

/** Where kube's CBOR serializer meets an error: reading the kind (Interpret) or decoding the object. */
export type CborStage = 'kind' | 'object';

export interface CborProblem {
  message: string;
  stage: CborStage;
}

const TYPE_NAMES = ['positive integer', 'negative integer', 'byte string', 'UTF-8 text string', 'array', 'map', 'tag', 'primitives'];
const BREAK = 0xff;

class CborError extends Error {}

/** The first thing kube's decode mode refuses in a CBOR body, or undefined. */
export function cborProblem(body: Uint8Array): CborProblem | undefined {
  try {
    const end = wellFormed(body, 0, 0);
    if (end < body.length) throw new CborError(`cbor: ${body.length - end} bytes of extraneous data starting at index ${end}`);
  } catch (e) {
    if (e instanceof CborError) return { message: e.message, stage: 'kind' };
    throw e;
  }
  const v = new Validity(body);
  v.item(0, true);
  // Interpret's errors win over the full decode's (it runs first for built-in kinds, and its
  // error is the one kube returns for custom ones).
  return v.kindProblem ?? v.objectProblem;
}

interface Head {
  major: number;
  info: number;
  /** The argument: a length, a count, a value, a tag number (a bigint past 2^53). */
  arg: number | bigint;
  /** Offset after the head. */
  next: number;
}

function head(b: Uint8Array, off: number): Head {
  if (off >= b.length) throw new CborError('unexpected EOF');
  const major = b[off] >> 5;
  const info = b[off] & 0x1f;
  let next = off + 1;
  let arg: number | bigint = info;
  const need = (n: number) => {
    if (next + n > b.length) throw new CborError('unexpected EOF');
  };
  if (info === 24) {
    need(1);
    arg = b[next];
    next += 1;
    if (major === 7 && arg < 32) throw new CborError(`cbor: invalid simple value ${arg} for type primitives`);
  } else if (info === 25) {
    need(2);
    arg = (b[next] << 8) | b[next + 1];
    next += 2;
  } else if (info === 26) {
    need(4);
    arg = ((b[next] << 24) >>> 0) + (b[next + 1] << 16) + (b[next + 2] << 8) + b[next + 3];
    next += 4;
  } else if (info === 27) {
    need(8);
    let v = 0n;
    for (let k = 0; k < 8; k++) v = (v << 8n) | BigInt(b[next + k]);
    arg = v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
    next += 8;
  } else if (info >= 28 && info <= 30) {
    throw new CborError(`cbor: invalid additional information ${info} for type ${TYPE_NAMES[major]}`);
  } else if (info === 31) {
    if (major === 0 || major === 1 || major === 6) throw new CborError(`cbor: invalid additional information 31 for type ${TYPE_NAMES[major]}`);
    if (major === 7) throw new CborError('cbor: unexpected "break" code');
  }
  return { major, info, arg, next };
}

/** fxamacker's wellformed pass: the offset after the item at `off`. */
function wellFormed(b: Uint8Array, off: number, depth: number): number {
  const h = head(b, off);
  let at = h.next;
  switch (h.major) {
    case 2:
    case 3: {
      if (h.info === 31) {
        // Indefinite-length string: definite chunks of the same type up to a break.
        for (;;) {
          if (at >= b.length) throw new CborError('unexpected EOF');
          if (b[at] === BREAK) return at + 1;
          if (b[at] >> 5 !== h.major) throw new CborError(`cbor: wrong element type ${TYPE_NAMES[b[at] >> 5]} for indefinite-length ${TYPE_NAMES[h.major]}`);
          if ((b[at] & 0x1f) === 31) throw new CborError(`cbor: indefinite-length ${TYPE_NAMES[h.major]} chunk is not definite-length`);
          at = wellFormed(b, at, depth);
        }
      }
      const n = h.arg;
      if (typeof n === 'bigint' || b.length - at < n) throw new CborError('unexpected EOF');
      return at + n;
    }
    case 4:
    case 5: {
      if (depth + 1 > CBOR_MAX_NESTED_LEVELS) throw new CborError(`cbor: exceeded max nested level ${CBOR_MAX_NESTED_LEVELS}`);
      const perEntry = h.major === 5 ? 2 : 1;
      if (h.info === 31) {
        let items = 0;
        for (;;) {
          if (at >= b.length) throw new CborError('unexpected EOF');
          if (b[at] === BREAK) break;
          at = wellFormed(b, at, depth + 1);
          items++;
          if (h.major === 4 && items > CBOR_MAX_ARRAY_ELEMENTS) throw maxArray();
          if (h.major === 5 && items % 2 === 0 && items / 2 > CBOR_MAX_MAP_PAIRS) throw maxMap();
        }
        if (h.major === 5 && items % 2 === 1) throw new CborError('cbor: unexpected "break" code');
        return at + 1;
      }
      if (h.major === 4 && h.arg > CBOR_MAX_ARRAY_ELEMENTS) throw maxArray();
      if (h.major === 5 && h.arg > CBOR_MAX_MAP_PAIRS) throw maxMap();
      const count = Number(h.arg) * perEntry;
      for (let k = 0; k < count; k++) at = wellFormed(b, at, depth + 1);
      return at;
    }
    case 6: {
      // Nested tag numbers each count a level, then the content.
      let level = depth + 1;
      if (level > CBOR_MAX_NESTED_LEVELS) throw new CborError(`cbor: exceeded max nested level ${CBOR_MAX_NESTED_LEVELS}`);
      while (at < b.length && b[at] >> 5 === 6) {
        at = head(b, at).next;
        if (++level > CBOR_MAX_NESTED_LEVELS) throw new CborError(`cbor: exceeded max nested level ${CBOR_MAX_NESTED_LEVELS}`);
      }
      if (at >= b.length) throw new CborError('unexpected EOF');
      return wellFormed(b, at, level);
    }
    default:
      return at;
  }
}

function maxArray(): CborError {
  return new CborError(`cbor: exceeded max number of elements ${CBOR_MAX_ARRAY_ELEMENTS} for CBOR array`);
}

function maxMap(): CborError {
  return new CborError(`cbor: exceeded max number of key-value pairs ${CBOR_MAX_MAP_PAIRS} for CBOR map`);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const INT64_MAX = (1n << 63n) - 1n;

/** The validity pass over a well-formed body; records the first problem of each stage. */
class Validity {
  kindProblem: CborProblem | undefined;
  objectProblem: CborProblem | undefined;

  constructor(private readonly b: Uint8Array) {}

  private note(message: string, stage: CborStage): void {
    if (stage === 'kind') this.kindProblem ??= { message, stage };
    else this.objectProblem ??= { message, stage };
  }

  /**
   * Checks the item at `off`, returns the offset after it and, for strings, their value (to
   * compare map keys). `top` is the body's own item: its map's keys, and its apiVersion and
   * kind, are what Interpret reads.
   */
  item(off: number, top = false, stage: CborStage = 'object'): { next: number; text?: string; keyType?: string } {
    const b = this.b;
    const h = head(b, off);
    switch (h.major) {
      case 0:
        if (typeof h.arg === 'bigint' && h.arg > INT64_MAX) this.note(`cbor: cannot unmarshal positive integer into Go value of type int64 (${h.arg} overflows Go's int64)`, stage);
        return { next: h.next, keyType: TYPE_NAMES[0] };
      case 1:
        if (typeof h.arg === 'bigint' && h.arg > INT64_MAX) this.note(`cbor: cannot unmarshal negative integer into Go value of type int64 (-${h.arg + 1n} overflows Go's int64)`, stage);
        return { next: h.next, keyType: TYPE_NAMES[1] };
      case 2:
      case 3: {
        const { bytes, next } = this.stringBytes(h);
        let text: string;
        try {
          text = UTF8.decode(bytes);
        } catch {
          // Byte strings are raw bytes (kube decodes them into Go strings as they are).
          if (h.major === 3) this.note('cbor: invalid UTF-8 string', stage);
          text = Buffer.from(bytes).toString('latin1');
        }
        return { next, text };
      }
      case 4: {
        let at = h.next;
        if (h.info === 31) {
          while (b[at] !== BREAK) at = this.item(at).next;
          return { next: at + 1, keyType: TYPE_NAMES[4] };
        }
        for (let k = 0; k < Number(h.arg); k++) at = this.item(at).next;
        return { next: at, keyType: TYPE_NAMES[4] };
      }
      case 5:
        return { next: this.map(h, top), keyType: TYPE_NAMES[5] };
      case 6: {
        const tag = h.arg;
        if (tag === 2 || tag === 3) this.note('cbor: data item of cbor type tag is not accepted by protocol: bignum', stage);
        return { ...this.item(h.next, top, stage), keyType: TYPE_NAMES[6] };
      }
      default: {
        // Simple values and floats.
        if (h.info < 24 || h.info === 24) {
          const sv = Number(h.arg);
          if (sv !== 20 && sv !== 21 && sv !== 22) this.note(`cbor: data item of cbor type primitives is not accepted by protocol: simple value ${sv} is not recognized`, stage);
        } else if (h.info >= 25 && h.info <= 27) {
          const f = floatOf(b, off + 1, h.info);
          if (Number.isNaN(f)) this.note('cbor: data item of cbor type primitives is not accepted by protocol: floating-point NaN', stage);
          else if (!Number.isFinite(f)) this.note('cbor: data item of cbor type primitives is not accepted by protocol: floating-point infinity', stage);
        }
        return { next: h.next, keyType: TYPE_NAMES[7] };
      }
    }
  }

  private map(h: Head, top: boolean): number {
    const b = this.b;
    let at = h.next;
    const seen = new Set<string>();
    for (let index = 0; h.info === 31 ? b[at] !== BREAK : index < Number(h.arg); index++) {
      const keyStage: CborStage = top ? 'kind' : 'object';
      const key = this.item(at, false, keyStage);
      at = key.next;
      if (key.text === undefined) {
        this.note(`cbor: cannot unmarshal ${key.keyType} into Go value of type string`, keyStage);
      } else if (seen.has(key.text)) {
        this.note(`cbor: found duplicate map key "${key.text}" at map element index ${index}`, keyStage);
      } else {
        seen.add(key.text);
      }
      // Interpret decodes apiVersion and kind; the other values it skips.
      const valueStage: CborStage = top && (key.text === 'apiVersion' || key.text === 'kind') ? 'kind' : 'object';
      at = this.item(at, false, valueStage).next;
    }
    return h.info === 31 ? at + 1 : at;
  }

  /** A string's bytes (the chunks of an indefinite-length one joined). */
  private stringBytes(h: Head): { bytes: Uint8Array; next: number } {
    const b = this.b;
    if (h.info !== 31) return { bytes: b.subarray(h.next, h.next + Number(h.arg)), next: h.next + Number(h.arg) };
    const chunks: Uint8Array[] = [];
    let at = h.next;
    while (b[at] !== BREAK) {
      const c = head(b, at);
      chunks.push(b.subarray(c.next, c.next + Number(c.arg)));
      at = c.next + Number(c.arg);
    }
    return { bytes: Buffer.concat(chunks), next: at + 1 };
  }
}

/** A half, single or double precision float's value. */
function floatOf(b: Uint8Array, off: number, info: number): number {
  const view = new DataView(b.buffer, b.byteOffset + off);
  if (info === 26) return view.getFloat32(0);
  if (info === 27) return view.getFloat64(0);
  const half = view.getUint16(0);
  const exp = (half >> 10) & 0x1f;
  const frac = half & 0x3ff;
  if (exp === 0x1f) return frac ? NaN : half & 0x8000 ? -Infinity : Infinity;
  return 0; // finite: its value does not matter here
}
