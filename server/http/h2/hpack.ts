/**
 * HPACK (RFC 7541) header compression for our HTTP/2 server layer.
 *
 * - HpackDecoder: full decoder (static + dynamic table, all literal kinds,
 *   Huffman, dynamic table size updates). One instance per connection; it is
 *   fed each complete header block (HEADERS + CONTINUATION payloads joined).
 * - HpackEncoder: stateless encoder for responses. It never inserts into the
 *   peer's dynamic table, so it needs no table-size bookkeeping at all.
 *
 * Header strings are treated as bytes: decoded as latin1 and encoded as
 * latin1, so `string.length` is the octet count HPACK's table sizes use.
 */

/** Any malformed header block. The connection answers with COMPRESSION_ERROR. */
export class HpackError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HpackError';
  }
}

// ---------------------------------------------------------------------------
// Static table (RFC 7541 Appendix A). Index 0 is unused.

const STATIC_TABLE: ReadonlyArray<readonly [string, string]> = [
  ['', ''],
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
];
const STATIC_COUNT = 61;
const STATIC_NAMES: string[] = STATIC_TABLE.map((e) => e[0]);
const STATIC_VALUES: string[] = STATIC_TABLE.map((e) => e[1]);

/** name → lowest static index with that name, plus exact (name, value) matches. */
interface StaticName {
  index: number;
  values: Map<string, number> | null;
}
const STATIC_LOOKUP = new Map<string, StaticName>();
for (let i = 1; i <= STATIC_COUNT; i++) {
  const [name, value] = STATIC_TABLE[i]!;
  let e = STATIC_LOOKUP.get(name);
  if (e === undefined) {
    e = { index: i, values: null };
    STATIC_LOOKUP.set(name, e);
  }
  if (value !== '') (e.values ??= new Map()).set(value, i);
}

// ---------------------------------------------------------------------------
// Huffman code (RFC 7541 Appendix B).
//
// The code is canonical: codes of one length are consecutive, in symbol
// order, and each length's first code follows on from the previous length's
// last. So the bit length of each of the 257 symbols (256 = EOS) determines
// every code; we keep only the lengths and rebuild the codes at load.

// prettier-ignore
const HUFFMAN_LENGTHS = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, // 0x00
  28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28, // 0x10
   6, 10, 10, 12, 13,  6,  8, 11, 10, 10,  8, 11,  8,  6,  6,  6, // 0x20
   5,  5,  5,  6,  6,  6,  6,  6,  6,  6,  7,  8, 15,  6, 12, 10, // 0x30
  13,  6,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7, // 0x40
   7,  7,  7,  7,  7,  7,  7,  7,  8,  7,  8, 13, 19, 13, 14,  6, // 0x50
  15,  5,  6,  5,  6,  5,  6,  6,  6,  5,  7,  7,  6,  6,  6,  5, // 0x60
   6,  7,  6,  5,  5,  6,  7,  7,  7,  7,  7, 15, 11, 14, 13, 28, // 0x70
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, // 0x80
  24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, // 0x90
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, // 0xa0
  21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, // 0xb0
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, // 0xc0
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, // 0xd0
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, // 0xe0
  26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, // 0xf0
  30, // EOS
];
const EOS = 256;

/** HUFFMAN_CODES[sym] = the code's bits, right-aligned (up to 30 bits). */
const HUFFMAN_CODES = new Uint32Array(257);
{
  const order = Array.from({ length: 257 }, (_, s) => s).sort(
    (a, b) => HUFFMAN_LENGTHS[a]! - HUFFMAN_LENGTHS[b]! || a - b,
  );
  let code = 0;
  let len = HUFFMAN_LENGTHS[order[0]!]!;
  for (let i = 0; i < order.length; i++) {
    const s = order[i]!;
    const l = HUFFMAN_LENGTHS[s]!;
    if (i > 0) code = (code + 1) * 2 ** (l - len);
    len = l;
    HUFFMAN_CODES[s] = code;
  }
  // A complete prefix code ends on the all-ones code of the longest length.
  if (code !== 2 ** len - 1 || HUFFMAN_CODES[EOS] !== 0x3fffffff) {
    throw new Error('hpack: Huffman code table is inconsistent');
  }
}

// Decoding is a table-driven state machine that consumes one input byte per
// step. A state is an internal node of the code tree (there are exactly 256:
// 257 leaves), i.e. the bits read since the last completed symbol. For each
// (state, byte), HUFFMAN_DECODE holds the next state and the symbols completed
// on the way: codes are ≥ 5 bits, so at most two per byte.
//
// The 64K byte table is filled lazily, entry by entry, from a 4K per-nibble
// table built at load (filling all of it up front costs milliseconds of
// start-up). 0 marks an entry not filled yet: no real entry is 0, because a
// byte that ends on the root state has just completed a symbol.
const HD_SYM1 = 0x1000000; // one symbol in bits 8-15
const HD_SYM2 = 0x2000000; // a second symbol in bits 16-23
const HD_FAIL = 0x4000000; // the EOS code was completed
const HUFFMAN_DECODE = new Uint32Array(256 * 256);
// Per-nibble table: next state | NIB_EMIT | symbol << 16, or NIB_FAIL.
const NIB_EMIT = 0x100;
const NIB_FAIL = 0x200;
const HUFFMAN_NIBBLES = new Uint32Array(256 * 16);

/** Computes and stores HUFFMAN_DECODE[state * 256 + byte]. */
function fillHuffmanEntry(state: number, byte: number): number {
  const hi = HUFFMAN_NIBBLES[state * 16 + (byte >> 4)]!;
  let entry: number;
  if (hi & NIB_FAIL) {
    entry = HD_FAIL;
  } else {
    const lo = HUFFMAN_NIBBLES[(hi & 0xff) * 16 + (byte & 15)]!;
    const first = hi & NIB_EMIT ? HD_SYM1 | ((hi >>> 16) << 8) : 0;
    if (lo & NIB_FAIL) entry = HD_FAIL;
    else if (!(lo & NIB_EMIT)) entry = first | (lo & 0xff);
    else if (first !== 0) entry = first | HD_SYM2 | ((lo >>> 16) << 16) | (lo & 0xff);
    else entry = HD_SYM1 | ((lo >>> 16) << 8) | (lo & 0xff);
  }
  HUFFMAN_DECODE[state * 256 + byte] = entry;
  return entry;
}

/** For each state: 1 if input may end there (the bits since the last symbol are ≤ 7 ones). */
const HUFFMAN_ACCEPT = new Uint8Array(256);
/** For each state: its depth if the path to it is all ones, else -1 (for error messages). */
const HUFFMAN_ONES_DEPTH = new Int8Array(256).fill(-1);
{
  // children[node * 2 + bit]: -1 unset, < 256 internal node, ≥ 512 leaf (512 + symbol)
  const children = new Int32Array(512).fill(-1);
  let nodes = 1;
  for (let s = 0; s <= EOS; s++) {
    const code = HUFFMAN_CODES[s]!;
    const len = HUFFMAN_LENGTHS[s]!;
    let node = 0;
    for (let b = len - 1; b >= 0; b--) {
      const slot = node * 2 + (Math.floor(code / 2 ** b) & 1);
      if (b === 0) {
        if (children[slot] !== -1) throw new Error('hpack: Huffman code is not prefix-free');
        children[slot] = 512 + s;
      } else {
        let next = children[slot]!;
        if (next === -1) {
          if (nodes >= 256) throw new Error('hpack: Huffman tree too large');
          next = nodes++;
          children[slot] = next;
        } else if (next >= 512) {
          throw new Error('hpack: Huffman code is not prefix-free');
        }
        node = next;
      }
    }
  }
  if (nodes !== 256 || children.includes(-1)) throw new Error('hpack: Huffman tree is incomplete');

  for (let state = 0; state < 256; state++) {
    for (let nibble = 0; nibble < 16; nibble++) {
      let node = state;
      let entry = 0;
      for (let b = 3; b >= 0; b--) {
        const child = children[node * 2 + ((nibble >> b) & 1)]!;
        if (child >= 512) {
          const sym = child - 512;
          if (sym === EOS) {
            entry = NIB_FAIL;
            break;
          }
          entry |= NIB_EMIT | (sym << 16);
          node = 0;
        } else {
          node = child;
        }
      }
      HUFFMAN_NIBBLES[state * 16 + nibble] = entry === NIB_FAIL ? NIB_FAIL : entry | node;
    }
  }
  let node = 0;
  for (let depth = 0; depth < 30; depth++) {
    HUFFMAN_ONES_DEPTH[node] = depth;
    if (depth <= 7) HUFFMAN_ACCEPT[node] = 1;
    node = children[node * 2 + 1]!;
  }
}

/** Scratch for Huffman output; the longest decoding of n bytes is ⌊8n/5⌋ symbols. */
let huffScratch = Buffer.allocUnsafeSlow(1024);
const HUFF_SCRATCH_MAX = 64 * 1024;

function huffmanDecode(buf: Uint8Array, start: number, end: number): string {
  const need = Math.floor(((end - start) * 8) / 5);
  let out = huffScratch;
  if (need > out.length) {
    // Keep a grown scratch only up to 64 KiB; rarer huge values get a one-off buffer.
    out = Buffer.allocUnsafeSlow(Math.max(need, Math.min(out.length * 2, HUFF_SCRATCH_MAX)));
    if (out.length <= HUFF_SCRATCH_MAX) huffScratch = out;
  }
  const table = HUFFMAN_DECODE;
  let state = 0;
  let o = 0;
  for (let i = start; i < end; i++) {
    const byte = buf[i]!;
    let e = table[(state << 8) | byte]!;
    if (e === 0) e = fillHuffmanEntry(state, byte);
    if (e >= HD_SYM1) {
      if (e >= HD_FAIL) throw new HpackError('hpack: EOS symbol inside a Huffman-encoded string');
      out[o++] = (e >> 8) & 0xff;
      if (e >= HD_SYM2) out[o++] = (e >> 16) & 0xff;
    }
    state = e & 0xff;
  }
  if (HUFFMAN_ACCEPT[state] === 0) {
    throw new HpackError(
      HUFFMAN_ONES_DEPTH[state]! > 7
        ? 'hpack: Huffman padding longer than 7 bits'
        : 'hpack: Huffman padding is not a prefix of EOS (not all 1s)',
    );
  }
  return out.toString('latin1', 0, o);
}

/**
 * Huffman-encodes a string's latin1 bytes. Not used by HpackEncoder (which
 * sends raw literals); exported for tests and for callers that want it.
 */
export function huffmanEncode(s: string): Buffer {
  let bits = 0;
  for (let i = 0; i < s.length; i++) bits += HUFFMAN_LENGTHS[s.charCodeAt(i) & 0xff]!;
  const out = Buffer.allocUnsafe((bits + 7) >> 3);
  let acc = 0; // pending bits, at most 7 + 30 (exact in a double)
  let n = 0;
  let o = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i) & 0xff;
    const len = HUFFMAN_LENGTHS[c]!;
    acc = acc * 2 ** len + HUFFMAN_CODES[c]!;
    n += len;
    while (n >= 8) {
      n -= 8;
      const p = 2 ** n;
      out[o++] = Math.floor(acc / p);
      acc %= p;
    }
  }
  if (n > 0) out[o++] = (acc << (8 - n)) | (0xff >> n); // pad with the EOS prefix (1s)
  return out;
}

// ---------------------------------------------------------------------------
// Integers (RFC 7541 §5.1)

const MAX_INT = 0x7fffffff;
/** Position after the last integer read by readInt. */
let intEnd = 0;

/**
 * Reads an integer whose prefix is the low bits of buf[p] selected by `mask`
 * (2^N - 1). Sets intEnd. Rejects values above 2^31 - 1 and more than 5
 * continuation bytes.
 */
function readInt(buf: Uint8Array, p: number, end: number, mask: number): number {
  let v = buf[p++]! & mask;
  if (v === mask) {
    let mul = 1;
    for (let i = 0; ; i++) {
      if (p >= end) throw new HpackError('hpack: truncated integer');
      const b = buf[p++]!;
      v += (b & 0x7f) * mul;
      if (b < 0x80) break;
      if (i === 4) throw new HpackError('hpack: integer has too many continuation bytes');
      mul *= 128;
    }
    if (v > MAX_INT) throw new HpackError('hpack: integer overflow');
  }
  intEnd = p;
  return v;
}

/** Writes `first` | integer with prefix mask `mask` at out[o]; returns the new offset. */
function writeInt(out: Uint8Array, o: number, first: number, mask: number, v: number): number {
  if (v < mask) {
    out[o++] = first | v;
    return o;
  }
  out[o++] = first | mask;
  v -= mask;
  while (v >= 128) {
    out[o++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  out[o++] = v;
  return o;
}

/** Integer decoding with an N-bit prefix (the high 8-N bits of the first byte are ignored). */
export function decodeInteger(buf: Uint8Array, prefixBits: number, offset = 0): { value: number; length: number } {
  if (offset >= buf.length) throw new HpackError('hpack: truncated integer');
  const value = readInt(buf, offset, buf.length, (1 << prefixBits) - 1);
  return { value, length: intEnd - offset };
}

/** Integer encoding with an N-bit prefix; `first` holds the bits of the first byte above the prefix. */
export function encodeInteger(value: number, prefixBits: number, first = 0): Buffer {
  const out = Buffer.alloc(6);
  return out.subarray(0, writeInt(out, 0, first, (1 << prefixBits) - 1, value));
}

// ---------------------------------------------------------------------------
// Decoder

const ENTRY_OVERHEAD = 32;
/** RFC 9113 §6.5.2: a header list's size counts 32 octets per field, as the table counts entries. */
const LIST_FIELD_OVERHEAD = 32;

export class HpackDecoder {
  /** The SETTINGS_HEADER_TABLE_SIZE we advertise: the most a size update may ask for. */
  private readonly settingSize: number;
  /** Current maximum (changed by dynamic table size updates). */
  private maxSize: number;
  /** Current size: Σ (name + value + 32). */
  private size = 0;
  // Dynamic table: ring buffer, newest at (head - 1), oldest at (head - count).
  private names: string[];
  private values: string[];
  private mask: number;
  private head = 0;
  private count = 0;

  constructor(maxTableSize = 4096) {
    if (!Number.isInteger(maxTableSize) || maxTableSize < 0 || maxTableSize > MAX_INT) {
      throw new RangeError(`hpack: invalid table size ${maxTableSize}`);
    }
    this.settingSize = maxTableSize;
    this.maxSize = maxTableSize;
    const cap = 32;
    this.names = new Array<string>(cap).fill('');
    this.values = new Array<string>(cap).fill('');
    this.mask = cap - 1;
  }

  /** Current dynamic table size in octets (RFC 7541 §4.1). */
  get dynamicTableSize(): number {
    return this.size;
  }

  /** Current dynamic table maximum size (as last set by a size update). */
  get maxDynamicTableSize(): number {
    return this.maxSize;
  }

  /** The dynamic table, newest entry (index 62) first. For tests and debugging. */
  dynamicTable(): Array<[string, string]> {
    const out: Array<[string, string]> = [];
    for (let d = 0; d < this.count; d++) {
      const pos = (this.head - 1 - d) & this.mask;
      out.push([this.names[pos]!, this.values[pos]!]);
    }
    return out;
  }

  /**
   * The size of the last block's header list as RFC 9113 §6.5.2 counts SETTINGS_MAX_HEADER_LIST_SIZE
   * (name + value + 32 octets per field), every field counted, also those decode left out.
   */
  lastListSize = 0;

  /**
   * Decodes a header block. Fields past maxListSize (counted as lastListSize) are decoded for the
   * dynamic table's sake but not collected: a small block naming a large table entry over and over
   * stays a small list in memory.
   */
  decode(block: Buffer, maxListSize = Infinity): Array<[string, string]> {
    const buf = block;
    const end = buf.length;
    const out: Array<[string, string]> = [];
    let listSize = 0;
    const emit = (name: string, value: string) => {
      listSize += name.length + value.length + LIST_FIELD_OVERHEAD;
      if (listSize <= maxListSize) out.push([name, value]);
    };
    let p = 0;
    let fieldSeen = false;
    while (p < end) {
      const b = buf[p]!;
      if (b >= 0x80) {
        // Indexed header field (§6.1)
        const idx = readInt(buf, p, end, 0x7f);
        p = intEnd;
        if (idx <= STATIC_COUNT) {
          if (idx === 0) throw new HpackError('hpack: indexed header field with index 0');
          emit(STATIC_NAMES[idx]!, STATIC_VALUES[idx]!);
        } else {
          const pos = this.dynamicPos(idx);
          emit(this.names[pos]!, this.values[pos]!);
        }
        fieldSeen = true;
        continue;
      }
      let mask: number;
      if (b >= 0x40) {
        mask = 0x3f; // literal with incremental indexing (§6.2.1)
      } else if (b >= 0x20) {
        // Dynamic table size update (§6.3)
        if (fieldSeen) throw new HpackError('hpack: dynamic table size update after a header field');
        const size = readInt(buf, p, end, 0x1f);
        p = intEnd;
        if (size > this.settingSize) {
          throw new HpackError(`hpack: dynamic table size update to ${size} exceeds the limit ${this.settingSize}`);
        }
        this.maxSize = size;
        this.evictTo(size);
        continue;
      } else {
        mask = 0x0f; // literal without indexing (0000) or never indexed (0001) (§6.2.2, §6.2.3)
      }
      fieldSeen = true;
      const nameIdx = readInt(buf, p, end, mask);
      p = intEnd;
      let name: string;
      if (nameIdx === 0) {
        name = this.readString(buf, p, end);
        p = intEnd;
      } else if (nameIdx <= STATIC_COUNT) {
        name = STATIC_NAMES[nameIdx]!;
      } else {
        name = this.names[this.dynamicPos(nameIdx)]!;
      }
      const value = this.readString(buf, p, end);
      p = intEnd;
      emit(name, value);
      if (mask === 0x3f) this.insert(name, value);
    }
    this.lastListSize = listSize;
    return out;
  }

  /** Reads a string literal at p (§5.2); sets intEnd to the position after it. */
  private readString(buf: Buffer, p: number, end: number): string {
    if (p >= end) throw new HpackError('hpack: truncated header block');
    const huffman = buf[p]! >= 0x80;
    const len = readInt(buf, p, end, 0x7f);
    const start = intEnd;
    const stop = start + len;
    if (stop > end) throw new HpackError('hpack: string literal runs past the end of the header block');
    const s = huffman ? huffmanDecode(buf, start, stop) : buf.toString('latin1', start, stop);
    intEnd = stop;
    return s;
  }

  /** Ring position of dynamic table index `idx` (> 61). */
  private dynamicPos(idx: number): number {
    const d = idx - STATIC_COUNT - 1;
    if (d >= this.count) throw new HpackError(`hpack: header table index ${idx} out of range`);
    return (this.head - 1 - d) & this.mask;
  }

  private insert(name: string, value: string): void {
    const es = name.length + value.length + ENTRY_OVERHEAD;
    if (es > this.maxSize) {
      // §4.4: an entry larger than the table empties it and is not added.
      this.evictTo(0);
      return;
    }
    this.evictTo(this.maxSize - es);
    if (this.count > this.mask) this.grow();
    this.names[this.head] = name;
    this.values[this.head] = value;
    this.head = (this.head + 1) & this.mask;
    this.count++;
    this.size += es;
  }

  /** Evicts oldest entries until size ≤ limit. */
  private evictTo(limit: number): void {
    while (this.size > limit) {
      const pos = (this.head - this.count) & this.mask;
      this.size -= this.names[pos]!.length + this.values[pos]!.length + ENTRY_OVERHEAD;
      this.names[pos] = '';
      this.values[pos] = '';
      this.count--;
    }
  }

  private grow(): void {
    const cap = (this.mask + 1) * 2;
    const names = new Array<string>(cap).fill('');
    const values = new Array<string>(cap).fill('');
    for (let i = 0; i < this.count; i++) {
      const pos = (this.head - this.count + i) & this.mask;
      names[i] = this.names[pos]!;
      values[i] = this.values[pos]!;
    }
    this.names = names;
    this.values = values;
    this.mask = cap - 1;
    this.head = this.count;
  }
}

// ---------------------------------------------------------------------------
// Encoder

/** Writes a raw (non-Huffman) string literal; returns the new offset. */
function writeString(out: Buffer, o: number, s: string): number {
  const len = s.length;
  o = writeInt(out, o, 0, 0x7f, len);
  if (len < 24) {
    // A JS loop beats Buffer#write's native call for short strings.
    for (let i = 0; i < len; i++) out[o + i] = s.charCodeAt(i);
    return o + len;
  }
  return o + out.write(s, o, 'latin1');
}

const STATUS_CACHE: Array<Buffer | undefined> = [];

export class HpackEncoder {
  /**
   * Stateless encoding: an exact static-table match is an indexed field; a
   * static name match is a literal without indexing with an indexed name;
   * anything else is a literal without indexing with a literal name. No
   * Huffman. Names must already be lowercase. Strings are written as latin1.
   */
  encode(headers: Array<[string, string]>): Buffer {
    const n = headers.length;
    // Worst case per field: 1 + 5 (name length) + 5 (value length) + 2 (name index) bytes + the strings.
    let bound = 0;
    for (let i = 0; i < n; i++) {
      const h = headers[i]!;
      bound += h[0].length + h[1].length + 14;
    }
    const out = Buffer.allocUnsafe(bound);
    let o = 0;
    for (let i = 0; i < n; i++) {
      const h = headers[i]!;
      const name = h[0];
      const value = h[1];
      const st = STATIC_LOOKUP.get(name);
      if (st !== undefined) {
        if (st.values !== null) {
          const idx = st.values.get(value);
          if (idx !== undefined) {
            out[o++] = 0x80 | idx;
            continue;
          }
        }
        o = writeInt(out, o, 0x00, 0x0f, st.index);
      } else {
        out[o++] = 0x00;
        o = writeString(out, o, name);
      }
      o = writeString(out, o, value);
    }
    return out.subarray(0, o);
  }

  /**
   * The encoding of ':status' for `code`: one byte for the static-table codes
   * (200 → 0x88, 404 → 0x8d, ...), else a 5-byte literal without indexing.
   * The returned Buffer is shared between calls: do not modify it.
   */
  status(code: number): Buffer {
    let b = STATUS_CACHE[code];
    if (b !== undefined) return b;
    if (!Number.isInteger(code) || code < 100 || code > 999) {
      throw new RangeError(`hpack: invalid status code ${code}`);
    }
    const idx = STATIC_LOOKUP.get(':status')!.values!.get(String(code));
    if (idx !== undefined) {
      b = Buffer.from([0x80 | idx]);
    } else {
      const s = String(code);
      b = Buffer.from([0x08, 0x03, s.charCodeAt(0), s.charCodeAt(1), s.charCodeAt(2)]);
    }
    STATUS_CACHE[code] = b;
    return b;
  }
}
