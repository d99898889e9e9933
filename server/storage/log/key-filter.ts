// A Bloom filter of the keys in the objects table. A create asks whether its key exists, and
// most never did: the filter answers "no" without SQLite, whose point read costs 40-50 µs on the
// main connection after every commit (another connection's commit empties its page cache).
// "Maybe" falls back to SQLite, so a false positive (a deleted key, a hash collision) only costs
// that read. Keys are never removed; the owner rebuilds the filter from the table when it fills.

/** Bits per expected key: with 5 probes, about 1% false positives at full load. */
const BITS_PER_KEY = 12;
const PROBES = 5;
const MIN_BITS = 1 << 20; // 128 KiB

export class KeyFilter {
  private readonly words: Uint32Array;
  private readonly mask: number;
  private added = 0;

  /** A filter sized for `expected` keys (at least MIN_BITS bits, a power of two). */
  constructor(expected: number) {
    let bits = MIN_BITS;
    while (bits < expected * BITS_PER_KEY * 2) bits *= 2; // room to grow to twice the keys
    this.words = new Uint32Array(bits / 32);
    this.mask = bits - 1;
  }

  /** Whether the filter holds so many keys that false positives pass about 1%. */
  get full(): boolean {
    return this.added * BITS_PER_KEY > this.mask + 1;
  }

  add(key: string): void {
    const [h1, h2] = hashes(key);
    for (let i = 0; i < PROBES; i++) {
      const bit = (h1 + i * h2) & this.mask;
      this.words[bit >>> 5] |= 1 << (bit & 31);
    }
    this.added++;
  }

  /** false: the key was never added. */
  mightHave(key: string): boolean {
    const [h1, h2] = hashes(key);
    for (let i = 0; i < PROBES; i++) {
      const bit = (h1 + i * h2) & this.mask;
      if ((this.words[bit >>> 5] & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}

const pair: [number, number] = [0, 0];

/** Two independent 32-bit hashes of the UTF-16 code units (FNV-1a and a multiply-xorshift), for double hashing. */
function hashes(s: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9e3779b9;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  pair[0] = a >>> 0;
  pair[1] = (b | 1) >>> 0; // odd: every probe lands on a different bit
  return pair;
}
