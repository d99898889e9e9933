// How objects are stored: as the JSON text JSON.stringify gives, with Go's HTML escapes
// (goJsonText: kube's JSON has them), in UTF-8, so a JSON list or
// response is the stored bytes, and encoding an object for storage costs one native stringify.
// Rows written by earlier versions, and objects JSON cannot hold (BigInt values from protobuf
// or CBOR bodies), are plain CBOR (RFC 8949 maps/arrays/strings, no cbor-x record extension).
// The first byte tells them apart: JSON text of an object starts with "{", a CBOR map with
// 0xa0–0xbf.
import { randomUUID } from 'node:crypto';
import { Encoder } from 'cbor-x';
import { goJsonText } from '../../go/json.ts';
import { corruptObjectsError, storageKey } from './corrupt-rows.ts';

const cbor = new Encoder({ useRecords: false, mapsAsObjects: true, variableMapSize: true });
const OPEN_BRACE = 0x7b;

/**
 * The stored form of obj, in a buffer of its own (exactly its size: posting it to the writer
 * thread copies the whole buffer behind a view).
 */
export function encodeObject(obj: unknown): Uint8Array {
  let text: string;
  try {
    text = goJsonText(objectJson(obj));
  } catch {
    return encodeObjectCbor(obj); // a BigInt
  }
  const out = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  out.write(text, 0, 'utf8');
  if (typeof obj === 'object' && obj !== null) remember(obj as Served, out);
  return out;
}

/**
 * JSON.stringify(obj), byte for byte, with metadata.managedFields written apart when some of its
 * FieldsV1 are deep-frozen: the field manager shares those from write to write (an owner whose
 * fields did not change), and their text (half of a typical object's JSON) is made once. The rest
 * is stringified natively around a marker. Without a frozen FieldsV1 (a create's, or an object
 * decoded from storage or a request body) all of it goes the native way.
 */
function objectJson(obj: unknown): string {
  // Most objects written have no frozen FieldsV1 (creates): they leave after one cheap look.
  const mf: unknown = (obj as { metadata?: { managedFields?: unknown } } | null | undefined)?.metadata?.managedFields;
  if (!Array.isArray(mf) || !mf.some(hasFrozenFieldsV1)) return JSON.stringify(obj);
  const meta = isRecord(obj) ? obj.metadata : undefined;
  // (what JSON.stringify would not write, the copies below would)
  if (!isRecord(meta) || !ENUMERABLE.call(obj, 'metadata') || !ENUMERABLE.call(meta, 'managedFields')) return JSON.stringify(obj);
  let cachedChars = 0;
  for (let i = 0; i < mf.length; i++) {
    const e: unknown = mf[i];
    if (!isRecord(e)) return JSON.stringify(obj);
    if (isRecord(e.fieldsV1) && Object.isFrozen(e.fieldsV1)) cachedChars += frozenJson(e.fieldsV1).length;
  }
  // Small ones are cheaper to write natively than to splice (a ConfigMap's few fields).
  if (cachedChars < SPLICE_MIN_CHARS) return JSON.stringify(obj);
  // Shallow copies keep every key where it was (managedFields is replaced in place).
  const text = JSON.stringify({ ...(obj as object), metadata: { ...(meta as object), managedFields: MARK } });
  const at = text.indexOf(MARK_JSON);
  let entries = '[';
  for (let i = 0; i < mf.length; i++) entries += (i ? ',' : '') + membersJson(mf[i]);
  return `${text.slice(0, at)}${entries}]${text.slice(at + MARK_JSON.length)}`;
}

function hasFrozenFieldsV1(e: unknown): boolean {
  const f: unknown = (e as { fieldsV1?: unknown } | null | undefined)?.fieldsV1;
  return typeof f === 'object' && f !== null && Object.isFrozen(f);
}

/** The JSON text of a (deep-)frozen object, made once. */
function frozenJson(f: Record<string, unknown>): string {
  let text = FROZEN_JSON.get(f);
  if (text === undefined) FROZEN_JSON.set(f, (text = JSON.stringify(f)));
  return text;
}

/** JSON.stringify of a plain object, its frozen members written by frozenJson. */
function membersJson(o: Record<string, unknown>): string {
  let text = '{';
  for (const k of Object.keys(o)) {
    const v = o[k];
    const t: string | undefined = isRecord(v) && Object.isFrozen(v) ? frozenJson(v) : JSON.stringify(v);
    if (t === undefined) continue; // left out, as JSON.stringify leaves out undefined and functions
    text += `${text.length > 1 ? ',' : ''}${quotedKey(k)}:${t}`;
  }
  return `${text}}`;
}

/** Entry keys repeat ("manager", "fieldsV1"): each is quoted once (a bounded cache). */
function quotedKey(k: string): string {
  let q = QUOTED_KEYS.get(k);
  if (q === undefined) {
    q = JSON.stringify(k);
    if (QUOTED_KEYS.size >= 10_000) QUOTED_KEYS.clear();
    QUOTED_KEYS.set(k, q);
  }
  return q;
}

/**
 * Only the field manager freezes objects that can end up in managedFields, and always deeply
 * (deepFreeze, or frozen objects of frozen parts), so a frozen object's JSON never changes.
 */
const FROZEN_JSON = new WeakMap<object, string>();
const ENUMERABLE = Object.prototype.propertyIsEnumerable;
/** Below this much cached FieldsV1 text, splicing it in costs more than it saves (measured in the server). */
const SPLICE_MIN_CHARS = 1024;
const QUOTED_KEYS = new Map<string, string>();
/** Stands in for what is written apart; random, so no client value can look the same. */
const MARK = `\u0000hearth:${randomUUID()}`;
const MARK_JSON = JSON.stringify(MARK);

/** A plain object (JSON.stringify may treat others in their own way: toJSON, a Date). */
function isRecord(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const p = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

// A write's response is the object just stored, so its JSON is the stored bytes: kept for the
// object while it lives, and reused unless what the store sets after a write (apiVersion and
// kind when served in another version, resourceVersion) differs. HEARTH_CHECK_STORED_JSON=1
// (the tests) compares every reuse with JSON.stringify, to catch an object changed after it was
// stored.
interface Served {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { resourceVersion?: unknown };
}
const storedJson = new WeakMap<object, { bytes: Buffer; apiVersion: unknown; kind: unknown; rv: unknown }>();
export const CHECK_STORED_JSON = process.env.HEARTH_CHECK_STORED_JSON === '1';

function remember(obj: Served, bytes: Buffer): void {
  storedJson.set(obj, { bytes, apiVersion: obj.apiVersion, kind: obj.kind, rv: obj.metadata?.resourceVersion });
}

/** The JSON text obj was stored as, if it is still exactly that object's JSON. */
export function storedJsonOf(obj: object): Buffer | undefined {
  const r = storedJson.get(obj);
  const o = obj as Served;
  if (!r || r.apiVersion !== o.apiVersion || r.kind !== o.kind || r.rv !== o.metadata?.resourceVersion) return undefined;
  if (CHECK_STORED_JSON && r.bytes.toString('utf8') !== goJsonText(JSON.stringify(obj))) {
    throw new Error(`an object was changed after it was stored: ${r.bytes.toString('utf8').slice(0, 200)}`);
  }
  return r.bytes;
}

/** The CBOR form (older rows, and objects JSON cannot hold). */
export function encodeObjectCbor(obj: unknown): Uint8Array {
  const view = cbor.encode(obj);
  const own = new Uint8Array(view.length);
  own.set(view);
  return own;
}

export function decodeObject<T = any>(data: Uint8Array): T {
  if (data[0] === OPEN_BRACE) return JSON.parse(asBuffer(data).toString('utf8')) as T;
  return cbor.decode(data) as T;
}

function asBuffer(data: Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

const UNDECODED: unique symbol = Symbol('undecoded');

/**
 * A stored row (a StoredObject) whose object is decoded on first use: existence checks never
 * decode, and JSON lists copy (or transcode) `data` without decoding at all.
 */
export class StoredRow {
  private decoded: unknown = UNDECODED;

  constructor(
    readonly rv: number,
    readonly uid: string,
    /** The stored bytes (JSON, or CBOR for older rows). */
    readonly data: Uint8Array,
    /** The object as this process committed it, if it did: shared, read-only (see StoredObject). */
    readonly committed?: unknown,
    /**
     * metadata.labels as JSON text ("null" when there are none), when the read gave them
     * (EventLog RowFilter.readLabels): a label selector is matched without decoding the row.
     */
    readonly labelsJson?: string,
    /** Where the row is stored, to name it if its bytes do not decode. */
    readonly source?: { res: string; ns: string; name: string },
  ) {}

  get object(): any {
    if (this.decoded === UNDECODED) {
      try {
        this.decoded = decodeObject(this.data);
      } catch (e) {
        const { res = '', ns = '', name = '' } = this.source ?? {};
        throw corruptObjectsError([{ key: storageKey(res, ns, name), rv: this.rv, detail: (e as Error).message }]);
      }
    }
    return this.decoded;
  }

  set object(v: any) {
    this.decoded = v;
  }
}

// ---------------------------------------------------------------------------------------------
// A stored object's JSON text as served, without building the object: byte for byte what
// JSON.stringify gives for the decoded object once present() set apiVersion/kind. A JSON row is
// copied with those two top-level values replaced; a CBOR row is transcoded. Anything the
// transcoder does not reproduce exactly (tags, byte strings, undefined in maps, 64-bit integers,
// half/single floats, lone surrogates, "__proto__" keys, which cbor-x decodes in its own way)
// makes it give up, and the caller serializes the decoded object instead.

/** A growable output buffer of JSON bytes. */
export class JsonOut {
  buf: Buffer;
  pos = 0;

  constructor(capacity = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(capacity);
  }

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** Appends ASCII/Latin-1-free text (JSON punctuation, numbers, already-escaped JSON). */
  text(s: string): void {
    const n = Buffer.byteLength(s);
    this.ensure(n);
    this.pos += this.buf.write(s, this.pos, n, 'utf8');
  }

  /** The bytes written so far (a view; copy it if the writer is reused). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

const HEX = '0123456789abcdef';
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Bytes of the top-level keys present() replaces, and of the key cbor-x decodes its own way. */
const API_VERSION = Buffer.from('apiVersion');
const KIND = Buffer.from('kind');
const PROTO = Buffer.from('__proto__');
/** What JSON.stringify writes for the control characters with a short escape (0 = \u00XX). */
const SHORT_ESCAPE = new Uint8Array(0x20);
SHORT_ESCAPE[0x08] = 0x62; // \b
SHORT_ESCAPE[0x09] = 0x74; // \t
SHORT_ESCAPE[0x0a] = 0x6e; // \n
SHORT_ESCAPE[0x0c] = 0x66; // \f
SHORT_ESCAPE[0x0d] = 0x72; // \r
/** Bytes that end a run of string bytes copied as they are. */
const SPECIAL = new Uint8Array(256);
for (let b = 0; b < 0x20; b++) SPECIAL[b] = 1;
SPECIAL[QUOTE] = 1;
SPECIAL[BACKSLASH] = 1;
SPECIAL[0xed] = 1; // may start an encoded lone surrogate
// Escaped as Go's encoding/json writes them (goJsonText): <, >, &, and U+2028/U+2029 (E2 80 A8/A9).
SPECIAL[0x3c] = 1;
SPECIAL[0x3e] = 1;
SPECIAL[0x26] = 1;
SPECIAL[0xe2] = 1;

/** One transcoding: reads CBOR at s[p], appends JSON to o[q] (o has room, see room()). */
class Transcoder {
  s: Buffer = EMPTY;
  p = 0;
  o: Buffer = EMPTY;
  q = 0;
  private readonly f64 = new DataView(new ArrayBuffer(8));
  /** The served apiVersion and kind, and their JSON bytes (the same for every row of a list). */
  private apiVersion = '';
  private kind = '';
  private apiVersionJson = EMPTY;
  private kindJson = EMPTY;
  /** servedJsonPrefix of the served apiVersion and kind, in a built-in's order and in a custom object's. */
  private servedPrefix: Buffer = EMPTY;
  private servedSortedPrefix: Buffer = EMPTY;

  constructor(private readonly into: JsonOut) {}

  /** Makes room for n more output bytes. */
  room(n: number): void {
    if (this.q + n <= this.o.length) return;
    this.into.pos = this.q;
    this.into.ensure(n);
    this.o = this.into.buf;
  }

  byte(b: number): void {
    this.room(1);
    this.o[this.q++] = b;
  }

  ascii(text: string): void {
    const n = text.length;
    this.room(n);
    const o = this.o;
    let q = this.q;
    for (let i = 0; i < n; i++) o[q++] = text.charCodeAt(i);
    this.q = q;
  }

  /** A length/argument; -1 when unsupported (indefinite lengths, 64-bit arguments). */
  argument(ai: number): number {
    if (ai < 24) return ai;
    const s = this.s;
    const p = this.p;
    switch (ai) {
      case 24:
        this.p = p + 1;
        return s[p];
      case 25:
        this.p = p + 2;
        return (s[p] << 8) | s[p + 1];
      case 26:
        this.p = p + 4;
        return s[p] * 0x1000000 + ((s[p + 1] << 16) | (s[p + 2] << 8) | s[p + 3]);
    }
    return -1;
  }

  /** A text string of n bytes, quoted and escaped as JSON.stringify and then goJsonText do. */
  string(n: number): boolean {
    const s = this.s;
    const end = this.p + n;
    if (end > s.length) return false;
    // Room for the worst case (every byte a \u00XX escape): no checks in the loop.
    this.room(n * 6 + 2);
    const o = this.o;
    let q = this.q;
    o[q++] = QUOTE;
    for (let i = this.p; i < end; i++) {
      const b = s[i];
      if (SPECIAL[b] === 0) {
        o[q++] = b;
        continue;
      }
      if (b === 0xed) {
        // 0xED 0xA0..0xBF: an encoded lone surrogate, which cbor-x decodes in its own way.
        if (s[i + 1] >= 0xa0) return false;
        o[q++] = b;
        continue;
      }
      if (b === 0xe2) {
        if (s[i + 1] === 0x80 && (s[i + 2] === 0xa8 || s[i + 2] === 0xa9)) {
          o[q++] = BACKSLASH;
          for (const c of s[i + 2] === 0xa8 ? 'u2028' : 'u2029') o[q++] = c.charCodeAt(0);
          i += 2;
        } else o[q++] = b;
        continue;
      }
      o[q++] = BACKSLASH;
      if (b === QUOTE || b === BACKSLASH) o[q++] = b;
      else if (b < 0x20 && SHORT_ESCAPE[b] !== 0) o[q++] = SHORT_ESCAPE[b];
      else {
        o[q++] = 0x75; // u
        o[q++] = 0x30;
        o[q++] = 0x30;
        o[q++] = HEX.charCodeAt(b >> 4);
        o[q++] = HEX.charCodeAt(b & 15);
      }
    }
    o[q++] = QUOTE;
    this.q = q;
    this.p = end;
    return true;
  }

  keyIs(at: number, n: number, want: Buffer): boolean {
    if (n !== want.length) return false;
    const s = this.s;
    for (let i = 0; i < n; i++) if (s[at + i] !== want[i]) return false;
    return true;
  }

  value(): boolean {
    const s = this.s;
    if (this.p >= s.length) return false;
    const ib = s[this.p++];
    const ai = ib & 31;
    switch (ib >> 5) {
      case 0: {
        if (ai < 24) {
          // Most integers: one or two digits.
          this.room(2);
          if (ai >= 10) this.o[this.q++] = 0x31 + (ai >= 20 ? 1 : 0);
          this.o[this.q++] = 0x30 + (ai % 10);
          return true;
        }
        const n = this.argument(ai);
        if (n < 0) return false;
        this.ascii(String(n));
        return true;
      }
      case 1: {
        const n = this.argument(ai);
        if (n < 0) return false;
        this.ascii(String(-1 - n));
        return true;
      }
      case 3: {
        const n = this.argument(ai);
        return n >= 0 && this.string(n);
      }
      case 4: {
        const n = this.argument(ai);
        if (n < 0) return false;
        this.byte(0x5b); // [
        for (let i = 0; i < n; i++) {
          if (i > 0) this.byte(0x2c);
          // undefined in an array serializes as null
          if (s[this.p] === 0xf7) {
            this.p++;
            this.ascii('null');
          } else if (!this.value()) return false;
        }
        this.byte(0x5d); // ]
        return true;
      }
      case 5:
        return this.map(this.argument(ai), false);
      case 7:
        switch (ai) {
          case 20:
            this.ascii('false');
            return true;
          case 21:
            this.ascii('true');
            return true;
          case 22:
            this.ascii('null');
            return true;
          case 27: {
            const f = this.f64;
            for (let i = 0; i < 8; i++) f.setUint8(i, s[this.p + i]);
            this.p += 8;
            const v = f.getFloat64(0);
            this.ascii(Number.isFinite(v) ? String(v) : 'null');
            return true;
          }
        }
        // Half and single precision floats (our encoder writes doubles), undefined, other simple values.
        return false;
    }
    // Byte strings and tags (and anything malformed): not plain JSON data.
    return false;
  }

  /**
   * A map of n pairs. At the top level those two keys get the served apiVersion and kind, and
   * are added at the end when absent, as present() sets them on the object.
   */
  map(n: number, top: boolean): boolean {
    if (n < 0) return false;
    const s = this.s;
    let sawApiVersion = false;
    let sawKind = false;
    this.byte(0x7b); // {
    for (let i = 0; i < n; i++) {
      const kb = s[this.p];
      if (kb >> 5 !== 3) return false; // only text keys
      this.p++;
      const klen = this.argument(kb & 31);
      if (klen < 0) return false;
      const kat = this.p;
      if (klen === 9 && this.keyIs(kat, klen, PROTO)) return false;
      // undefined values are left out by JSON.stringify: leave such objects to it
      if (s[kat + klen] === 0xf7) return false;
      if (i > 0) this.byte(0x2c);
      if (!this.string(klen)) return false;
      this.byte(0x3a); // :
      if (top && (this.keyIs(kat, klen, API_VERSION) || this.keyIs(kat, klen, KIND))) {
        const isKind = klen === KIND.length;
        // The stored value is replaced: skip it (a string, as every stored object has).
        const vb = s[this.p];
        if (vb >> 5 !== 3) return false;
        this.p++;
        const vlen = this.argument(vb & 31);
        if (vlen < 0) return false;
        this.p += vlen;
        this.bytes(isKind ? this.kindJson : this.apiVersionJson);
        if (isKind) sawKind = true;
        else sawApiVersion = true;
        continue;
      }
      if (!this.value()) return false;
    }
    if (top) {
      let first = n === 0;
      if (!sawApiVersion) {
        this.utf8((first ? '' : ',') + '"apiVersion":' + JSON.stringify(this.apiVersion));
        first = false;
      }
      if (!sawKind) this.utf8((first ? '' : ',') + '"kind":' + JSON.stringify(this.kind));
    }
    this.byte(0x7d); // }
    return true;
  }

  bytes(b: Buffer): void {
    this.room(b.length);
    b.copy(this.o, this.q);
    this.q += b.length;
  }

  utf8(text: string): void {
    const n = Buffer.byteLength(text);
    this.room(n);
    this.q += this.o.write(text, this.q, n, 'utf8');
  }

  /**
   * A JSON row (JSON.stringify's text, so no whitespace): copied, with the top-level apiVersion
   * and kind values replaced by the served ones, or added at the end (apiVersion first) when
   * absent, as present() assigns them.
   */
  jsonRow(): boolean {
    const s = this.s;
    const n = s.length;
    // JSON.stringify writes a key once: a row opening with the served kind and apiVersion (as
    // the store writes them) has no others, and is copied without reading the rest.
    const pre = s[2] === 0x6b ? this.servedPrefix : this.servedSortedPrefix; // {"k… or {"a…
    if (n > pre.length && s.compare(pre, 0, pre.length, 0, pre.length) === 0) {
      this.room(n);
      s.copy(this.o, this.q);
      this.q += n;
      return true;
    }
    let av0 = -1;
    let av1 = -1;
    let k0 = -1;
    let k1 = -1;
    let p = 1;
    if (s[p] !== 0x7d) {
      for (;;) {
        if (s[p] !== QUOTE) return false;
        const keyEnd = jsonStringEnd(s, p + 1);
        if (keyEnd < 0 || s[keyEnd + 1] !== 0x3a) return false;
        const v0 = keyEnd + 2;
        const v1 = jsonValueEnd(s, v0);
        if (v1 < 0) return false;
        const klen = keyEnd - p - 1;
        if (klen === API_VERSION.length && this.keyIs(p + 1, klen, API_VERSION)) {
          av0 = v0;
          av1 = v1;
        } else if (klen === KIND.length && this.keyIs(p + 1, klen, KIND)) {
          k0 = v0;
          k1 = v1;
        }
        p = v1;
        if (s[p] === 0x2c) p++;
        else if (s[p] === 0x7d) break;
        else return false;
      }
    }
    if (p !== n - 1) return false;
    const replace: [number, number, Buffer][] = [];
    if (av0 >= 0 && !sameBytes(s, av0, av1, this.apiVersionJson)) replace.push([av0, av1, this.apiVersionJson]);
    if (k0 >= 0 && !sameBytes(s, k0, k1, this.kindJson)) replace.push([k0, k1, this.kindJson]);
    if (replace.length === 0 && av0 >= 0 && k0 >= 0) {
      this.room(n);
      s.copy(this.o, this.q);
      this.q += n;
      return true;
    }
    replace.sort((a, b) => a[0] - b[0]);
    let from = 0;
    for (const [start, end, value] of replace) {
      this.copyFrom(from, start);
      this.bytes(value);
      from = end;
    }
    this.copyFrom(from, n - 1); // all but the closing brace
    let empty = n === 2;
    if (av0 < 0) {
      this.utf8((empty ? '' : ',') + '"apiVersion":');
      this.bytes(this.apiVersionJson);
      empty = false;
    }
    if (k0 < 0) {
      this.utf8((empty ? '' : ',') + '"kind":');
      this.bytes(this.kindJson);
    }
    this.byte(0x7d);
    return true;
  }

  /** Appends s[from, to). */
  private copyFrom(from: number, to: number): void {
    this.room(to - from);
    this.s.copy(this.o, this.q, from, to);
    this.q += to - from;
  }

  /** Transcodes one stored object; on failure the output is left as it was. */
  run(data: Uint8Array, apiVersion: string, kind: string): boolean {
    const into = this.into;
    const start = into.pos;
    if (apiVersion !== this.apiVersion || this.apiVersionJson === EMPTY) {
      this.apiVersion = apiVersion;
      this.apiVersionJson = Buffer.from(JSON.stringify(apiVersion));
      this.servedPrefix = EMPTY;
    }
    if (kind !== this.kind || this.kindJson === EMPTY) {
      this.kind = kind;
      this.kindJson = Buffer.from(JSON.stringify(kind));
      this.servedPrefix = EMPTY;
    }
    if (this.servedPrefix === EMPTY) {
      this.servedPrefix = servedJsonPrefix(apiVersion, kind);
      this.servedSortedPrefix = servedJsonPrefix(apiVersion, kind, true);
    }
    this.s = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    this.p = 0;
    this.o = into.buf;
    this.q = into.pos;
    const s = this.s;
    let ok = false;
    if (s.length > 0 && s[0] === OPEN_BRACE) ok = this.jsonRow();
    else if (s.length > 0 && s[0] >> 5 === 5) {
      this.p = 1;
      ok = this.map(this.argument(s[0] & 31), true) && this.p === s.length;
    }
    // The output is committed on success only (room() may have moved into.pos while growing).
    into.pos = ok ? this.q : start;
    this.s = EMPTY;
    this.o = EMPTY;
    return ok;
  }
}

const EMPTY = Buffer.alloc(0);

/**
 * `{"kind":…,"apiVersion":…,`: how a stored JSON row opens (the store puts TypeMeta first, kind
 * then apiVersion, as kube writes it) when it needs nothing changed to be served as this
 * apiVersion and kind.
 */
export function servedJsonPrefix(apiVersion: string, kind: string, custom = false): Buffer {
  const key = `${apiVersion}\u0000${kind}\u0000${custom ? 1 : 0}`;
  let p = prefixes.get(key);
  if (p === undefined) {
    // A built-in kind's TypeMeta order; a custom object's keys are sorted (goMapOrder).
    p = Buffer.from(custom ? `{"apiVersion":${JSON.stringify(apiVersion)},"kind":${JSON.stringify(kind)},` : `{"kind":${JSON.stringify(kind)},"apiVersion":${JSON.stringify(apiVersion)},`);
    if (prefixes.size < 1000) prefixes.set(key, p);
  }
  return p;
}
const prefixes = new Map<string, Buffer>();
const NULL_MEMBER = Buffer.from(':null');

/**
 * Whether a stored row is served byte for byte as it is: JSON opening with the served kind and
 * apiVersion (`prefix`, see servedJsonPrefix) and, with `noNulls`, without a null object member
 * (which read-time defaulting of a custom object may drop).
 */
export function servedAsStored(data: Buffer, prefix: Buffer, noNulls: boolean | undefined): boolean {
  return data.length > prefix.length && data.compare(prefix, 0, prefix.length, 0, prefix.length) === 0 && !(noNulls && data.includes(NULL_MEMBER));
}

/** servedAsStored of a row read as text (see LogBackend.textRows); `prefix` as servedJsonPrefix's text. */
export function textServedAsStored(text: string, prefix: string, noNulls: boolean | undefined): boolean {
  return text.length > prefix.length && text.startsWith(prefix) && !(noNulls && text.includes(':null'));
}

/** A JSON watch event line around an object's JSON, as JSON.stringify({ type, object }) and a newline write it. */
export const EVENT_OPEN: Readonly<Record<string, Buffer>> = Object.fromEntries(['ADDED', 'MODIFIED', 'DELETED'].map((t) => [t, Buffer.from(`{"type":"${t}","object":`)]));
export const EVENT_CLOSE = Buffer.from('}\n');

/** Index of the quote closing the JSON string whose text starts at `from`, or -1. */
function jsonStringEnd(s: Buffer, from: number): number {
  let q = s.indexOf(QUOTE, from);
  while (q >= 0) {
    // A quote preceded by an odd number of backslashes is escaped.
    let b = q - 1;
    while (b >= from && s[b] === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q;
    q = s.indexOf(QUOTE, q + 1);
  }
  return -1;
}

/** End (exclusive) of the JSON value starting at p in compact JSON text, or -1. */
function jsonValueEnd(s: Buffer, p: number): number {
  const n = s.length;
  const c = s[p];
  if (c === QUOTE) {
    const e = jsonStringEnd(s, p + 1);
    return e < 0 ? -1 : e + 1;
  }
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (let i = p; i < n; ) {
      const b = s[i];
      if (b === QUOTE) {
        const e = jsonStringEnd(s, i + 1);
        if (e < 0) return -1;
        i = e + 1;
        continue;
      }
      if (b === 0x7b || b === 0x5b) depth++;
      else if ((b === 0x7d || b === 0x5d) && --depth === 0) return i + 1;
      i++;
    }
    return -1;
  }
  let i = p;
  while (i < n && s[i] !== 0x2c && s[i] !== 0x7d && s[i] !== 0x5d) i++;
  return i;
}

function sameBytes(s: Buffer, start: number, end: number, want: Buffer): boolean {
  return end - start === want.length && s.compare(want, 0, want.length, start, end) === 0;
}

/**
 * Appends to `into` the JSON of the stored object `data` served as apiVersion/kind (what
 * JSON.stringify gives after present() set them). Returns false, having appended nothing, when
 * a CBOR row holds something only the decoder reproduces exactly; the caller then serializes
 * the decoded object.
 */
export function transcodeToJson(data: Uint8Array, into: JsonOut, apiVersion: string, kind: string): boolean {
  return transcoderFor(into).run(data, apiVersion, kind);
}

const transcoders = new WeakMap<JsonOut, Transcoder>();
function transcoderFor(into: JsonOut): Transcoder {
  let t = transcoders.get(into);
  if (!t) transcoders.set(into, (t = new Transcoder(into)));
  return t;
}

// ---------------------------------------------------------------------------------------------
// Lists of stored rows: `items` are decoded (and presented) only if somebody reads them; a plain
// JSON list is transcoded from the rows' bytes instead.

/** A row of a list: its stored bytes when it has them (StoredRow), and its object. */
export interface ListRow {
  readonly data?: Uint8Array;
  readonly object: unknown;
}

export interface StoredItems {
  /** The rows (none when `joined` holds them). */
  rows: ListRow[];
  /** Instead of rows, their JSON joined by commas, already as served (see EventLog.listJoined), in pieces to concatenate. */
  joined?: readonly Buffer[];
  /** What the rows are served as (present() sets these on every object). */
  apiVersion: string;
  kind: string;
  present: (obj: unknown) => unknown;
}

const STORED_ITEMS = Symbol('storedItems');
const EMPTY_ITEMS = '"items":[]';

/**
 * `fields` with an `items` property holding the rows' presented objects, made on first access.
 * Until then storedItemsOf() hands out the rows, for transcoding.
 */
export function withStoredItems<T extends object>(fields: T, stored: StoredItems): T & { items: unknown[] } {
  let items: unknown[] | undefined;
  const result = fields as T & { items: unknown[]; [STORED_ITEMS]?: StoredItems };
  Object.defineProperty(result, 'items', {
    enumerable: true,
    configurable: true,
    get() {
      if (items === undefined) {
        const objects = stored.joined ? (JSON.parse(`[${Buffer.concat(stored.joined).toString('utf8')}]`) as unknown[]) : stored.rows.map((r) => r.object);
        items = objects.map(stored.present);
        delete result[STORED_ITEMS];
      }
      return items;
    },
    set(v: unknown[]) {
      items = v;
      delete result[STORED_ITEMS];
    },
  });
  Object.defineProperty(result, STORED_ITEMS, { value: stored, enumerable: false, configurable: true });
  return result;
}

/**
 * Decodes a list's stored rows into its `items` a page at a time, awaiting `pause` between pages
 * (see TurnBudget): what reading `items` does at once, for a large list that must not hold the
 * event loop. Items already decoded are left as they are.
 */
export async function decodeItemsInTurns(result: { items: unknown[] }, pause: () => Promise<void>): Promise<void> {
  const stored = storedItemsOf(result);
  if (!stored) return;
  const items: unknown[] = [];
  if (stored.joined) {
    for (const piece of stored.joined) {
      // (the pieces are pages of objects and the commas between them; no page is a lone comma)
      if (piece.length === 1 && piece[0] === 0x2c) continue;
      for (const o of JSON.parse(`[${piece.toString('utf8')}]`) as unknown[]) items.push(stored.present(o));
      await pause();
    }
  } else {
    for (let i = 0; i < stored.rows.length; i++) {
      items.push(stored.present(stored.rows[i].object));
      if (i % ITEMS_PER_PAUSE === ITEMS_PER_PAUSE - 1) await pause();
    }
  }
  result.items = items;
}
const ITEMS_PER_PAUSE = 64;

/** The rows of a list made by withStoredItems whose `items` nobody has read (or replaced) yet. */
export function storedItemsOf(result: object): StoredItems | undefined {
  return (result as { [STORED_ITEMS]?: StoredItems })[STORED_ITEMS];
}

/**
 * The JSON of `list` (a list object whose items are `[]`) with the rows as its items, and a
 * newline, as JSON.stringify writes the whole list with the presented objects: the pieces to
 * send one after another.
 */
export function storedListJson(list: object, stored: StoredItems): Buffer[] {
  const listJson = goJsonText(JSON.stringify(list));
  // The envelope's own members (kinds, versions, digits, a base64 token) hold no such text.
  const at = listJson.indexOf(EMPTY_ITEMS) + EMPTY_ITEMS.length - 1;
  const open = listJson.slice(0, at);
  const close = `${listJson.slice(at)}\n`;
  // (pieces, not one Buffer: a large list is written a piece at a time, never copied whole)
  if (stored.joined) return [Buffer.from(open), ...stored.joined, Buffer.from(close)];
  let estimate = listJson.length + 32;
  // JSON rows are copied; a CBOR row's JSON runs about 1.3 times its size.
  for (const r of stored.rows) estimate += r.data ? r.data.length + (r.data.length >> 1) : 1024;
  const out = new JsonOut(estimate);
  out.text(open);
  const { rows, apiVersion, kind } = stored;
  for (let i = 0; i < rows.length; i++) {
    if (i > 0) {
      out.ensure(1);
      out.buf[out.pos++] = 0x2c;
    }
    const row = rows[i];
    if (!(row.data && transcodeToJson(row.data, out, apiVersion, kind))) out.text(goJsonText(JSON.stringify(stored.present(row.object))));
  }
  out.text(close);
  return [out.bytes()];
}
