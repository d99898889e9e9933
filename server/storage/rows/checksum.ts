// The checksum kept beside each stored row (CRC-32, the one zlib and gzip use): SQLite has no
// checksums of its own, so a row whose bytes were damaged on disk (a bad sector, garbage written
// into the file) would otherwise be served as it is, or fail deep inside a decoder. Node's zlib
// computes it natively (about 2 GB/s) from Node 20.15; older Node 20 releases use the table below.
import * as zlib from 'node:zlib';

const nativeCrc32: ((data: Uint8Array | string) => number) | undefined = (zlib as { crc32?: (data: Uint8Array | string) => number }).crc32;

let table: Uint32Array | undefined;

/** CRC-32 (IEEE 802.3) by table, for a Node without zlib.crc32 (exported for its test). */
export function tableCrc32(data: Uint8Array): number {
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i++) crc = table[(crc ^ data[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** The checksum of a row's stored bytes (or of a string's UTF-8), as an unsigned 32-bit integer. */
export const checksum: (data: Uint8Array | string) => number = nativeCrc32 ?? ((data) => tableCrc32(typeof data === 'string' ? Buffer.from(data) : data));

/**
 * Whether a row's bytes still match the checksum written with them (rows written before checksums
 * have none). A row read as text (JSON, always valid UTF-8 as written) is checked as its UTF-8:
 * damaged bytes that are not UTF-8 decode to U+FFFD and no longer match.
 */
export function intact(data: Uint8Array | string, crc: number | null | undefined): boolean {
  return crc === null || crc === undefined || checksum(data) === crc;
}
