import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  HpackDecoder,
  HpackEncoder,
  HpackError,
  decodeInteger,
  encodeInteger,
  huffmanEncode,
} from '../../../../server/http/h2/hpack.ts';

/** Hex as printed in RFC 7541 (spaces allowed). */
function hex(s: string): Buffer {
  return Buffer.from(s.replace(/\s+/g, ''), 'hex');
}

type Fields = Array<[string, string]>;

/** Decodes `block` and checks the header list, the dynamic table (newest first) and its size. */
function step(dec: HpackDecoder, block: string, headers: Fields, table: Fields, size: number): void {
  assert.deepEqual(dec.decode(hex(block)), headers);
  assert.deepEqual(dec.dynamicTable(), table);
  assert.equal(dec.dynamicTableSize, size);
}

/** A dynamic table size update (001 + 5-bit prefix integer). */
function sizeUpdate(n: number): Buffer {
  const b = encodeInteger(n, 5);
  b[0]! |= 0x20;
  return b;
}

function throwsHpack(fn: () => unknown, message?: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof HpackError, `expected HpackError, got ${String(err)}`);
    if (message) assert.match(err.message, message);
    return true;
  });
}

// ---------------------------------------------------------------------------
// C.1 Integer representation

test('C.1.1: 10 with a 5-bit prefix', () => {
  assert.deepEqual([...encodeInteger(10, 5)], [0x0a]);
  assert.deepEqual(decodeInteger(Buffer.from([0xea]), 5), { value: 10, length: 1 }); // high bits ignored
});

test('C.1.2: 1337 with a 5-bit prefix', () => {
  assert.deepEqual([...encodeInteger(1337, 5)], [0x1f, 0x9a, 0x0a]);
  assert.deepEqual(decodeInteger(Buffer.from([0x1f, 0x9a, 0x0a]), 5), { value: 1337, length: 3 });
  // The same integer through the decoder: a dynamic table size update uses a 5-bit prefix.
  const dec = new HpackDecoder(4096);
  assert.deepEqual(dec.decode(Buffer.from([0x3f, 0x9a, 0x0a])), []);
  assert.equal(dec.maxDynamicTableSize, 1337);
});

test('C.1.3: 42 starting at an octet boundary (8-bit prefix)', () => {
  assert.deepEqual([...encodeInteger(42, 8)], [0x2a]);
  assert.deepEqual(decodeInteger(Buffer.from([0x2a]), 8), { value: 42, length: 1 });
});

test('integers: prefix boundary values and the 2^31-1 limit round-trip', () => {
  for (const bits of [4, 5, 6, 7, 8]) {
    const max = (1 << bits) - 1;
    for (const v of [0, 1, max - 1, max, max + 1, max + 127, max + 128, 16383, 2 ** 21, 2 ** 31 - 1]) {
      const enc = encodeInteger(v, bits);
      assert.deepEqual(decodeInteger(enc, bits), { value: v, length: enc.length }, `value ${v}, ${bits}-bit prefix`);
    }
  }
  assert.equal(encodeInteger(2 ** 31 - 1, 5).length, 6); // prefix + 5 continuation bytes
});

test('integers: overflow past 2^31-1, too many continuation bytes, truncation', () => {
  // 31 + 0x7fffffe0 = 2^31 - 1 is the largest accepted; 2^31 is one past the limit.
  assert.deepEqual(decodeInteger(Buffer.from([0x1f, 0xe0, 0xff, 0xff, 0xff, 0x07]), 5).value, 2 ** 31 - 1);
  throwsHpack(() => decodeInteger(Buffer.from([0x1f, 0xe1, 0xff, 0xff, 0xff, 0x07]), 5), /overflow/);
  throwsHpack(() => decodeInteger(Buffer.from([0x1f, 0xff, 0xff, 0xff, 0xff, 0x0f]), 5), /overflow/);
  // Redundant zero continuation bytes are fine up to 5 bytes; a 6th is rejected.
  assert.equal(decodeInteger(Buffer.from([0x1f, 0x80, 0x80, 0x80, 0x80, 0x00]), 5).value, 31);
  throwsHpack(() => decodeInteger(Buffer.from([0x1f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]), 5), /continuation/);
  throwsHpack(() => decodeInteger(Buffer.from([0x1f, 0x80]), 5), /truncated/);
  // Through the decoder too.
  throwsHpack(() => new HpackDecoder().decode(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x0f])), /overflow/);
  throwsHpack(() => new HpackDecoder().decode(Buffer.from([0xff, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01])), /continuation/);
  throwsHpack(() => new HpackDecoder().decode(Buffer.from([0x7f, 0x80])), /truncated/);
});

// ---------------------------------------------------------------------------
// C.2 Header field representations

test('C.2.1: literal header field with indexing', () => {
  const dec = new HpackDecoder();
  step(
    dec,
    '400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572',
    [['custom-key', 'custom-header']],
    [['custom-key', 'custom-header']],
    55,
  );
});

test('C.2.2: literal header field without indexing', () => {
  const dec = new HpackDecoder();
  step(dec, '040c 2f73 616d 706c 652f 7061 7468', [[':path', '/sample/path']], [], 0);
});

test('C.2.3: literal header field never indexed', () => {
  const dec = new HpackDecoder();
  step(dec, '1008 7061 7373 776f 7264 0673 6563 7265 74', [['password', 'secret']], [], 0);
});

test('C.2.4: indexed header field', () => {
  const dec = new HpackDecoder();
  step(dec, '82', [[':method', 'GET']], [], 0);
});

// ---------------------------------------------------------------------------
// C.3 / C.4 Requests (same connection, default 4096-octet table)

const REQ1: Fields = [
  [':method', 'GET'],
  [':scheme', 'http'],
  [':path', '/'],
  [':authority', 'www.example.com'],
];
const REQ2: Fields = [...REQ1, ['cache-control', 'no-cache']];
const REQ3: Fields = [
  [':method', 'GET'],
  [':scheme', 'https'],
  [':path', '/index.html'],
  [':authority', 'www.example.com'],
  ['custom-key', 'custom-value'],
];
const REQ_T1: Fields = [[':authority', 'www.example.com']];
const REQ_T2: Fields = [['cache-control', 'no-cache'], [':authority', 'www.example.com']];
const REQ_T3: Fields = [['custom-key', 'custom-value'], ...REQ_T2];

test('C.3: requests without Huffman coding', () => {
  const dec = new HpackDecoder();
  step(dec, '8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d', REQ1, REQ_T1, 57);
  step(dec, '8286 84be 5808 6e6f 2d63 6163 6865', REQ2, REQ_T2, 110);
  step(
    dec,
    '8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65',
    REQ3,
    REQ_T3,
    164,
  );
});

test('C.4: requests with Huffman coding', () => {
  const dec = new HpackDecoder();
  step(dec, '8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff', REQ1, REQ_T1, 57);
  step(dec, '8286 84be 5886 a8eb 1064 9cbf', REQ2, REQ_T2, 110);
  step(dec, '8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf', REQ3, REQ_T3, 164);
});

// ---------------------------------------------------------------------------
// C.5 / C.6 Responses (same connection, 256-octet table, with evictions)

const DATE1 = 'Mon, 21 Oct 2013 20:13:21 GMT';
const DATE2 = 'Mon, 21 Oct 2013 20:13:22 GMT';
const LOC = 'https://www.example.com';
const COOKIE = 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1';
const RES1: Fields = [
  [':status', '302'],
  ['cache-control', 'private'],
  ['date', DATE1],
  ['location', LOC],
];
const RES2: Fields = [[':status', '307'], ...RES1.slice(1)];
const RES3: Fields = [
  [':status', '200'],
  ['cache-control', 'private'],
  ['date', DATE2],
  ['location', LOC],
  ['content-encoding', 'gzip'],
  ['set-cookie', COOKIE],
];
const RES_T1: Fields = [
  ['location', LOC],
  ['date', DATE1],
  ['cache-control', 'private'],
  [':status', '302'],
];
const RES_T2: Fields = [[':status', '307'], ['location', LOC], ['date', DATE1], ['cache-control', 'private']];
const RES_T3: Fields = [['set-cookie', COOKIE], ['content-encoding', 'gzip'], ['date', DATE2]];

test('C.5: responses without Huffman coding, 256-octet table, evictions', () => {
  const dec = new HpackDecoder(256);
  step(
    dec,
    `4803 3330 3258 0770 7269 7661 7465 611d
     4d6f 6e2c 2032 3120 4f63 7420 3230 3133
     2032 303a 3133 3a32 3120 474d 546e 1768
     7474 7073 3a2f 2f77 7777 2e65 7861 6d70
     6c65 2e63 6f6d`,
    RES1,
    RES_T1,
    222,
  );
  step(dec, '4803 3330 37c1 c0bf', RES2, RES_T2, 222);
  step(
    dec,
    `88c1 611d 4d6f 6e2c 2032 3120 4f63 7420
     3230 3133 2032 303a 3133 3a32 3220 474d
     54c0 5a04 677a 6970 7738 666f 6f3d 4153
     444a 4b48 514b 425a 584f 5157 454f 5049
     5541 5851 5745 4f49 553b 206d 6178 2d61
     6765 3d33 3630 303b 2076 6572 7369 6f6e
     3d31`,
    RES3,
    RES_T3,
    215,
  );
});

test('C.6: responses with Huffman coding, 256-octet table, evictions', () => {
  const dec = new HpackDecoder(256);
  step(
    dec,
    `4882 6402 5885 aec3 771a 4b61 96d0 7abe
     9410 54d4 44a8 2005 9504 0b81 66e0 82a6
     2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8
     e9ae 82ae 43d3`,
    RES1,
    RES_T1,
    222,
  );
  step(dec, '4883 640e ffc1 c0bf', RES2, RES_T2, 222);
  step(
    dec,
    `88c1 6196 d07a be94 1054 d444 a820 0595
     040b 8166 e084 a62d 1bff c05a 839b d9ab
     77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b
     3960 d5af 2708 7f36 72c1 ab27 0fb5 291f
     9587 3160 65c0 03ed 4ee5 b106 3d50 07`,
    RES3,
    RES_T3,
    215,
  );
});

// ---------------------------------------------------------------------------
// Huffman

test('Huffman: encoding the RFC 7541 C.4/C.6 strings gives the RFC bytes', () => {
  const cases: Array<[string, string]> = [
    ['www.example.com', 'f1e3c2e5f23a6ba0ab90f4ff'],
    ['no-cache', 'a8eb10649cbf'],
    ['custom-key', '25a849e95ba97d7f'],
    ['custom-value', '25a849e95bb8e8b4bf'],
    ['302', '6402'],
    ['307', '640eff'],
    ['private', 'aec3771a4b'],
    [DATE1, 'd07abe941054d444a8200595040b8166e082a62d1bff'],
    [DATE2, 'd07abe941054d444a8200595040b8166e084a62d1bff'],
    [LOC, '9d29ad171863c78f0b97c8e9ae82ae43d3'],
    ['gzip', '9bd9ab'],
    [COOKIE, '94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007'],
  ];
  for (const [s, h] of cases) assert.equal(huffmanEncode(s).toString('hex'), h, s);
});

/** A literal-without-indexing field with a new name 'x' and the given Huffman-coded value bytes. */
function huffValueBlock(value: Buffer): Buffer {
  assert.ok(value.length < 127);
  return Buffer.concat([Buffer.from([0x00, 0x01, 0x78, 0x80 | value.length]), value]);
}

test('Huffman: every byte value (all code lengths 5..30) round-trips through the decoder', () => {
  const dec = new HpackDecoder();
  for (let c = 0; c < 256; c++) {
    const s = String.fromCharCode(c).repeat(3) + 'a' + String.fromCharCode(c);
    assert.deepEqual(dec.decode(huffValueBlock(huffmanEncode(s))), [['x', s]], `byte ${c}`);
  }
  // One long string with all 256 values, in a field with a Huffman name as well.
  let all = '';
  for (let c = 0; c < 256; c++) all += String.fromCharCode(c);
  const v = huffmanEncode(all);
  const n = huffmanEncode('x-all-bytes');
  const vlen = encodeInteger(v.length, 7);
  assert.ok(vlen.length > 1); // a multi-byte length in front of a Huffman string
  vlen[0]! |= 0x80;
  const block = Buffer.concat([Buffer.from([0x10, 0x80 | n.length]), n, vlen, v]);
  assert.deepEqual(dec.decode(block), [['x-all-bytes', all]]);
});

test('Huffman: empty string and random strings round-trip', () => {
  const dec = new HpackDecoder();
  assert.deepEqual(dec.decode(Buffer.from([0x00, 0x01, 0x78, 0x80])), [['x', '']]);
  let seed = 12345;
  const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 16;
  for (let i = 0; i < 300; i++) {
    const len = rnd() % 40;
    let s = '';
    for (let j = 0; j < len; j++) s += String.fromCharCode(rnd() % 3 === 0 ? rnd() & 0xff : 0x20 + (rnd() % 95));
    const enc = huffmanEncode(s);
    if (enc.length >= 127) continue;
    assert.deepEqual(dec.decode(huffValueBlock(enc)), [['x', s]]);
  }
});

test('Huffman: long strings (scratch growth, and a one-off buffer past 64 KiB)', () => {
  const dec = new HpackDecoder();
  for (const n of [2000, 100_000, 30]) {
    const s = 'ab/'.repeat(n).slice(0, n);
    const h = huffmanEncode(s);
    const len = encodeInteger(h.length, 7);
    len[0]! |= 0x80;
    assert.deepEqual(dec.decode(Buffer.concat([Buffer.from([0x00, 0x01, 0x78]), len, h])), [['x', s]]);
  }
});

test('Huffman: EOS symbol inside a string is rejected', () => {
  // EOS (30 ones) then '0' (00000) then 5 bits of 1s padding = 40 bits. Decoding EOS as a
  // symbol would otherwise "succeed", so this fails only on the EOS check.
  const bits = '1'.repeat(30) + '00000' + '11111';
  const bytes = Buffer.from(bits.match(/.{8}/g)!.map((b) => parseInt(b, 2)));
  throwsHpack(() => new HpackDecoder().decode(huffValueBlock(bytes)), /EOS/);
  // EOS in the middle of a longer string too: 'a' + EOS + 'a' + padding.
  const a = huffmanEncode('a'); // 00011 + 111 padding
  assert.equal(a.toString('hex'), '1f');
  const bits2 = '00011' + '1'.repeat(30) + '00011' + '1111';
  throwsHpack(
    () => new HpackDecoder().decode(huffValueBlock(Buffer.from(bits2.match(/.{8}/g)!.map((b) => parseInt(b, 2))))),
    /EOS/,
  );
});

test('Huffman: padding longer than 7 bits is rejected', () => {
  // 'a' (00011) + 11 ones = 2 bytes.
  throwsHpack(() => new HpackDecoder().decode(huffValueBlock(Buffer.from([0x1f, 0xff]))), /longer than 7/);
  // A whole byte of padding after a byte-aligned end: '0' x 8 = 40 bits = 5 bytes, then 0xff.
  const zeros = huffmanEncode('00000000');
  assert.equal(zeros.length, 5);
  assert.deepEqual(new HpackDecoder().decode(huffValueBlock(zeros)), [['x', '00000000']]);
  throwsHpack(
    () => new HpackDecoder().decode(huffValueBlock(Buffer.concat([zeros, Buffer.from([0xff])]))),
    /longer than 7/,
  );
  // Exactly 7 bits of padding is fine: 'aaaaa' = 25 bits + 7 bits of padding.
  assert.deepEqual(new HpackDecoder().decode(huffValueBlock(huffmanEncode('aaaaa'))), [['x', 'aaaaa']]);
  assert.equal(huffmanEncode('aaaaa').at(-1)! & 0x7f, 0x7f);
});

test('Huffman: padding that is not all 1s is rejected', () => {
  // 'a' (00011) then padding 110 instead of 111.
  throwsHpack(() => new HpackDecoder().decode(huffValueBlock(Buffer.from([0x1e]))), /not all 1s/);
  // 'a' then padding 000.
  throwsHpack(() => new HpackDecoder().decode(huffValueBlock(Buffer.from([0x18]))), /not all 1s/);
  // A truncated code: the first 8 bits of '"' (1111111001, 10 bits).
  assert.equal(huffmanEncode('"').toString('hex'), 'fe7f');
  throwsHpack(() => new HpackDecoder().decode(huffValueBlock(Buffer.from([0xfe]))), /not all 1s/);
  // '\0' (1111111111000, 13 bits) followed by 000 instead of 111.
  assert.equal(huffmanEncode('\0').toString('hex'), 'ffc7');
  throwsHpack(() => new HpackDecoder().decode(huffValueBlock(Buffer.from([0xff, 0xc0]))), /not all 1s/);
  // Valid control: 'a' with 111 padding.
  assert.deepEqual(new HpackDecoder().decode(huffValueBlock(Buffer.from([0x1f]))), [['x', 'a']]);
});

// ---------------------------------------------------------------------------
// Dynamic table and representation errors

test('indexed header field with index 0 is rejected', () => {
  throwsHpack(() => new HpackDecoder().decode(Buffer.from([0x80])), /index 0/);
});

test('index beyond the static + dynamic table is rejected', () => {
  const dec = new HpackDecoder();
  assert.deepEqual(dec.decode(Buffer.from([0xbd])), [['www-authenticate', '']]); // 61: last static entry
  throwsHpack(() => dec.decode(Buffer.from([0xbe])), /out of range/); // 62 with an empty dynamic table
  // A literal whose *name* index is out of range.
  throwsHpack(() => dec.decode(Buffer.from([0x7f, 0x00, 0x01, 0x61])), /out of range/); // name index 63
  // After one insertion 62 exists but 63 does not.
  dec.decode(hex('400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572'));
  assert.deepEqual(dec.decode(Buffer.from([0xbe])), [['custom-key', 'custom-header']]);
  throwsHpack(() => dec.decode(Buffer.from([0xbf])), /out of range/);
  // Name from the dynamic table, literal value.
  assert.deepEqual(dec.decode(Buffer.from([0x0f, 0x2f, 0x01, 0x76])), [['custom-key', 'v']]);
});

test('literal with a name index into the static table, all three literal kinds', () => {
  const dec = new HpackDecoder();
  // content-type is static 31: incremental (6-bit prefix), without (4-bit, 15 + 16), never (4-bit).
  const v = Buffer.from('application/json');
  const withIdx = Buffer.concat([Buffer.from([0x40 | 31, v.length]), v]);
  const without = Buffer.concat([Buffer.from([0x0f, 0x10, v.length]), v]);
  const never = Buffer.concat([Buffer.from([0x1f, 0x10, v.length]), v]);
  assert.deepEqual(dec.decode(Buffer.concat([without, never])), [
    ['content-type', 'application/json'],
    ['content-type', 'application/json'],
  ]);
  assert.equal(dec.dynamicTableSize, 0);
  assert.deepEqual(dec.decode(withIdx), [['content-type', 'application/json']]);
  assert.deepEqual(dec.dynamicTable(), [['content-type', 'application/json']]);
  assert.equal(dec.dynamicTableSize, 12 + 16 + 32);
});

test('string literal running past the end of the block is rejected', () => {
  throwsHpack(() => new HpackDecoder().decode(Buffer.from([0x00, 0x05, 0x61, 0x62])), /past the end/);
  throwsHpack(() => new HpackDecoder().decode(Buffer.from([0x00, 0x01, 0x61, 0x03, 0x61])), /past the end/);
  throwsHpack(() => new HpackDecoder().decode(Buffer.from([0x00, 0x01, 0x61])), /truncated/); // value missing
  throwsHpack(() => new HpackDecoder().decode(Buffer.from([0x40])), /truncated/); // name missing
});

test('dynamic table size update: allowed at the start, rejected after a field or above the limit', () => {
  const dec = new HpackDecoder(4096);
  // Two updates at the start of a block are allowed (§4.2).
  assert.deepEqual(dec.decode(Buffer.from([0x20, 0x3f, 0xe1, 0x1f, 0x82])), [[':method', 'GET']]);
  assert.equal(dec.maxDynamicTableSize, 4096);
  throwsHpack(() => dec.decode(Buffer.from([0x82, 0x20])), /after a header field/);
  throwsHpack(() => new HpackDecoder(4096).decode(Buffer.from([0x3f, 0xe2, 0x1f])), /exceeds/); // 4097
  throwsHpack(() => new HpackDecoder(256).decode(Buffer.from([0x3f, 0xe2, 0x01])), /exceeds/); // 257
  assert.deepEqual(new HpackDecoder(256).decode(Buffer.from([0x3f, 0xe1, 0x01])), []); // 256
});

test('dynamic table size update evicts, and 0 empties the table', () => {
  const dec = new HpackDecoder(256);
  dec.decode(hex('4803 3330 3258 0770 7269 7661 7465')); // :status 302 (42), cache-control private (52)
  assert.equal(dec.dynamicTableSize, 94);
  dec.decode(Buffer.from([0x3f, 0x1f])); // 31 + 31 = 62: only the newest entry (52) fits
  assert.deepEqual(dec.dynamicTable(), [['cache-control', 'private']]);
  assert.equal(dec.dynamicTableSize, 52);
  assert.equal(dec.maxDynamicTableSize, 62);
  // Inserting :status 307 (42) now evicts cache-control.
  dec.decode(hex('4803 3330 37'));
  assert.deepEqual(dec.dynamicTable(), [[':status', '307']]);
  dec.decode(Buffer.from([0x20]));
  assert.deepEqual(dec.dynamicTable(), []);
  assert.equal(dec.dynamicTableSize, 0);
  throwsHpack(() => dec.decode(Buffer.from([0xbe])), /out of range/);
  // With max 0, an incremental-indexing literal is decoded but not stored.
  assert.deepEqual(dec.decode(hex('4803 3330 32')), [[':status', '302']]);
  assert.equal(dec.dynamicTableSize, 0);
});

test('an entry larger than the whole table empties it and is not added', () => {
  const dec = new HpackDecoder(100);
  dec.decode(hex('4803 3330 32')); // 42
  assert.equal(dec.dynamicTableSize, 42);
  const big = 'v'.repeat(100 - 32 - 7 + 1); // 7 = ':status'.length, one octet too many
  const block = Buffer.concat([Buffer.from([0x48, big.length]), Buffer.from(big)]);
  assert.deepEqual(dec.decode(block), [[':status', big]]);
  assert.deepEqual(dec.dynamicTable(), []);
  assert.equal(dec.dynamicTableSize, 0);
  // Exactly the table size fits.
  const fit = big.slice(1);
  dec.decode(Buffer.concat([Buffer.from([0x48, fit.length]), Buffer.from(fit)]));
  assert.deepEqual(dec.dynamicTable(), [[':status', fit]]);
  assert.equal(dec.dynamicTableSize, 100);
});

test('dynamic table keeps order across ring-buffer growth and wrap-around', () => {
  const dec = new HpackDecoder(65536);
  const expected: Fields = [];
  // 200 entries of 32 + 1 + 4 = 37 octets: grows past the initial capacity.
  for (let i = 0; i < 200; i++) {
    const v = String(i).padStart(4, '0');
    dec.decode(Buffer.from([0x40, 0x01, 0x6b, 0x04, ...Buffer.from(v)]));
    expected.unshift(['k', v]);
  }
  assert.deepEqual(dec.dynamicTable(), expected);
  assert.equal(dec.dynamicTableSize, 200 * 37);
  assert.deepEqual(dec.decode(Buffer.from([0xbe])), [['k', '0199']]);
  // Shrink to 50 entries, then insert 120 more: the ring wraps.
  dec.decode(sizeUpdate(50 * 37));
  for (let i = 200; i < 320; i++) {
    const v = String(i).padStart(4, '0');
    dec.decode(Buffer.from([0x40, 0x01, 0x6b, 0x04, ...Buffer.from(v)]));
    expected.unshift(['k', v]);
  }
  assert.deepEqual(dec.dynamicTable(), expected.slice(0, 50));
  // Index 62 + 49 is the oldest ('0270'); 62 + 50 is out of range.
  assert.deepEqual(dec.decode(Buffer.from([0x80 | 62])), [['k', '0319']]);
  assert.deepEqual(dec.decode(Buffer.from([0x80 | (62 + 49)])), [['k', '0270']]);
  throwsHpack(() => dec.decode(Buffer.from([0x80 | (62 + 50)])), /out of range/);
});

test('header bytes are decoded as latin1 and sized in octets', () => {
  const dec = new HpackDecoder();
  const value = Buffer.from([0x63, 0xe9, 0xff, 0x80]); // not valid UTF-8
  const out = dec.decode(Buffer.concat([Buffer.from([0x40, 0x01, 0x78, 0x04]), value]));
  assert.deepEqual(out, [['x', 'c\u00e9\u00ff\u0080']]);
  assert.equal(dec.dynamicTableSize, 1 + 4 + 32);
});

test('a list past maxListSize is counted in full but only collected up to it; the table still follows every field', () => {
  const dec = new HpackDecoder();
  // x-fill: 4000 bytes, indexed (62), then named by index 100,000 times: 100 KB of block, ~400 MB of list.
  const fill = 'f'.repeat(4000);
  const literal = Buffer.concat([Buffer.from([0x40, 0x06]), Buffer.from('x-fill'), encodeInteger(fill.length, 7), Buffer.from(fill)]);
  const field = 6 + 4000 + 32;
  const block = Buffer.concat([literal, Buffer.alloc(100_000, 0x80 | 62), Buffer.from([0x40, 0x01, 0x79, 0x01, 0x7a]) /* y: z, indexed */]);
  const out = dec.decode(block, 3 * field);
  assert.equal(out.length, 3);
  assert.deepEqual(out[2], ['x-fill', fill]);
  assert.equal(dec.lastListSize, 100_001 * field + (1 + 1 + 32));
  // the last field, past the limit, still entered the table: 62 is y: z now, 63 x-fill
  assert.deepEqual(dec.decode(Buffer.from([0x80 | 62, 0x80 | 63])), [['y', 'z'], ['x-fill', fill]]);
  assert.equal(dec.lastListSize, 1 + 1 + 32 + field);
});

// ---------------------------------------------------------------------------
// Encoder

test('status(): 200 is 0x88, 404 is 0x8d, other codes are literals', () => {
  const enc = new HpackEncoder();
  assert.deepEqual([...enc.status(200)], [0x88]);
  assert.deepEqual([...enc.status(404)], [0x8d]);
  assert.deepEqual([...enc.status(204)], [0x89]);
  assert.deepEqual([...enc.status(500)], [0x8e]);
  assert.deepEqual([...enc.status(201)], [0x08, 0x03, 0x32, 0x30, 0x31]);
  const dec = new HpackDecoder();
  for (const code of [100, 200, 201, 204, 206, 301, 304, 400, 401, 403, 404, 409, 410, 422, 429, 500, 503]) {
    assert.deepEqual(dec.decode(enc.status(code)), [[':status', String(code)]]);
    assert.deepEqual(enc.status(code), enc.encode([[':status', String(code)]]));
  }
  assert.equal(dec.dynamicTableSize, 0);
  assert.throws(() => enc.status(99), RangeError);
  assert.throws(() => enc.status(1000), RangeError);
});

test('encode(): static exact match, static name match and new name representations', () => {
  const enc = new HpackEncoder();
  assert.deepEqual([...enc.encode([[':status', '200']])], [0x88]);
  assert.deepEqual([...enc.encode([['accept-encoding', 'gzip, deflate']])], [0x90]);
  // content-type: static index 31 → 4-bit prefix 15, then 16; value raw (H = 0).
  assert.deepEqual(
    enc.encode([['content-type', 'application/json']]),
    Buffer.concat([Buffer.from([0x0f, 0x10, 16]), Buffer.from('application/json')]),
  );
  // :status with a value not in the table: name index 8.
  assert.deepEqual([...enc.encode([[':status', '409']])], [0x08, 0x03, 0x34, 0x30, 0x39]);
  // New name.
  assert.deepEqual(
    enc.encode([['audit-id', 'abc']]),
    Buffer.concat([Buffer.from([0x00, 0x08]), Buffer.from('audit-id'), Buffer.from([0x03]), Buffer.from('abc')]),
  );
  assert.deepEqual([...enc.encode([])], []);
});

test('encode(): realistic Kubernetes responses round-trip and never touch the dynamic table', () => {
  const enc = new HpackEncoder();
  const dec = new HpackDecoder();
  const common: Fields = [
    ['audit-id', '6c1b2a4e-0f3d-4b7e-9a51-2d8c7f3e91aa'],
    ['cache-control', 'no-cache, private'],
    ['content-type', 'application/json'],
    ['x-kubernetes-pf-flowschema-uid', 'b5f6c6e2-3a1d-4d2f-8e7a-1c2b3d4e5f60'],
    ['x-kubernetes-pf-prioritylevel-uid', '0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9'],
    ['date', 'Tue, 03 Jun 2025 10:11:12 GMT'],
  ];
  const responses: Fields[] = [
    [[':status', '200'], ...common, ['content-length', '1834']],
    [[':status', '201'], ...common, ['content-length', '912']],
    [[':status', '404'], ...common, ['content-length', '231']],
    [[':status', '409'], ...common, ['content-length', '318']],
    [
      [':status', '200'],
      ...common,
      ['warning', '299 - "unknown field \\"spec.template.spec.containers[0].foo\\""'],
      ['warning', '299 - "metadata.finalizers: \\"example.com/x\\": prefer a domain-qualified finalizer name"'],
      ['content-length', '20480'],
    ],
    [[':status', '200'], ['content-type', 'application/json'], ['x-big', 'q'.repeat(20 * 1024)]],
    [[':status', '200'], ['x-empty', ''], ['content-type', '']],
  ];
  for (const headers of responses) {
    const block = enc.encode(headers);
    assert.deepEqual(dec.decode(block), headers);
    assert.equal(dec.dynamicTableSize, 0);
    assert.equal(block[0], headers[0]![1] === '200' ? 0x88 : headers[0]![1] === '404' ? 0x8d : 0x08);
  }
  // The 20 KB value: literal new name, then a 4-byte length (127 + 20353) and the raw bytes.
  const big = enc.encode([['x-big', 'q'.repeat(20 * 1024)]]);
  assert.equal(big.length, 1 + 1 + 5 + 4 + 20 * 1024);
  assert.deepEqual([...big.subarray(0, 11)], [0x00, 0x05, ...Buffer.from('x-big'), 0x7f, 0x81, 0x9f, 0x01]);
  assert.ok(big.subarray(11).every((b) => b === 0x71));
});
