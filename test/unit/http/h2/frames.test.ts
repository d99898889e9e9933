// The HTTP/2 frame codec (server/http/h2/frames.ts) the server, the benchmarks' client and the
// tests' raw client share: frames come out whole however the reads split them, a frame past the
// reader's limit is refused as soon as its header is read, and the fixed payloads have RFC 9113's
// layout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  encodeFrame,
  errorCodeOf,
  ErrorCode,
  Flag,
  FrameReader,
  FrameTooLargeError,
  FrameType,
  goAwayPayload,
  parseSettings,
  rstStreamPayload,
  Setting,
  settingsPayload,
  unpadded,
  windowIncrement,
  windowUpdatePayload,
} from '../../../../server/http/h2/frames.ts';

/** Frames of 0 bytes to past a kept reader buffer's first size (64 KiB), with type, flags and stream id. */
function sampleFrames(): Buffer[] {
  const sizes = [0, 1, 8, 9, 10, 100, 16_384, 70_000, 3, 0, 5_000];
  return sizes.map((n, i) => {
    const f = Buffer.alloc(9 + n);
    f.writeUIntBE(n, 0, 3);
    f[3] = i % 10;
    f[4] = (i * 7) % 256;
    f.writeUInt32BE((i * 2 + 1 + (i % 2 ? 0x80000000 : 0)) >>> 0, 5); // the reserved bit is dropped
    for (let k = 0; k < n; k++) f[9 + k] = (k * 31 + i) % 256;
    return f;
  });
}

for (const keepBuffer of [true, false]) {
  test(`HTTP/2 frames come out whole and in order however the reads split them (keepBuffer: ${keepBuffer})`, () => {
    const frames = sampleFrames();
    const stream = Buffer.concat(frames);
    for (const chunk of [1, 2, 7, 9, 10, 1000, 16_393, 65_536, stream.length]) {
      const got: { type: number; flags: number; id: number; payload: Buffer }[] = [];
      const r = new FrameReader((type, flags, id, buf, start, end) => got.push({ type, flags, id, payload: Buffer.from(buf.subarray(start, end)) }), { keepBuffer });
      // Each read lands in the same buffer, overwritten by the next, as with a shared read buffer.
      const shared = Buffer.alloc(chunk);
      for (let p = 0; p < stream.length; p += chunk) {
        const n = stream.copy(shared, 0, p, Math.min(p + chunk, stream.length));
        r.push(shared.subarray(0, n));
      }
      assert.equal(got.length, frames.length, `chunk ${chunk}`);
      got.forEach((g, i) => {
        assert.equal(g.type, i % 10);
        assert.equal(g.flags, (i * 7) % 256);
        assert.equal(g.id, i * 2 + 1);
        assert.ok(g.payload.equals(frames[i].subarray(9)), `chunk ${chunk}, frame ${i}`);
      });
    }
  });
}

test('a frame longer than maxPayload is refused once its header is read, before its payload comes', () => {
  const seen: number[] = [];
  const r = new FrameReader((type) => seen.push(type), { maxPayload: 16_384 });
  r.push(encodeFrame(FrameType.PING, 0, 0, Buffer.alloc(8)));
  // the header alone, split across two reads
  const big = encodeFrame(FrameType.DATA, 0, 1, Buffer.alloc(16_385)).subarray(0, 9);
  r.push(big.subarray(0, 4));
  assert.throws(() => r.push(big.subarray(4)), (e: unknown) => e instanceof FrameTooLargeError && e.length === 16_385);
  assert.throws(() => new FrameReader(() => {}, { maxPayload: 16_384 }).push(big), FrameTooLargeError);
  // A frame of exactly maxPayload is read.
  const ok = new FrameReader((type) => seen.push(type), { maxPayload: 16_384 });
  ok.push(encodeFrame(FrameType.DATA, 0, 1, Buffer.alloc(16_384)));
  assert.deepEqual(seen, [FrameType.PING, FrameType.DATA]);
});

test('frame headers and fixed payloads have RFC 9113’s layout', () => {
  assert.deepEqual([...encodeFrame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, 0x80000003, Buffer.from('ab'))], [0, 0, 2, 1, 5, 0, 0, 0, 3, 0x61, 0x62]);
  assert.deepEqual([...encodeFrame(FrameType.SETTINGS, Flag.ACK, 0)], [0, 0, 0, 4, 1, 0, 0, 0, 0]);
  const settings = settingsPayload([[Setting.MAX_CONCURRENT_STREAMS, 100], [Setting.INITIAL_WINDOW_SIZE, 262_144]]);
  assert.deepEqual([...settings], [0, 3, 0, 0, 0, 100, 0, 4, 0, 4, 0, 0]);
  assert.deepEqual([...parseSettings(settings)], [[Setting.MAX_CONCURRENT_STREAMS, 100], [Setting.INITIAL_WINDOW_SIZE, 262_144]]);
  assert.deepEqual([...windowUpdatePayload(0xffffffff)], [0x7f, 0xff, 0xff, 0xff]);
  assert.equal(windowIncrement(Buffer.from([0xff, 0, 0, 1])), 0x7f000001);
  assert.equal(errorCodeOf(FrameType.RST_STREAM, rstStreamPayload(ErrorCode.CANCEL)), ErrorCode.CANCEL);
  const goAway = goAwayPayload(7, ErrorCode.ENHANCE_YOUR_CALM, 'calm');
  assert.deepEqual([...goAway], [0, 0, 0, 7, 0, 0, 0, 0xb, 0x63, 0x61, 0x6c, 0x6d]);
  assert.equal(errorCodeOf(FrameType.GOAWAY, goAway), ErrorCode.ENHANCE_YOUR_CALM);
  assert.equal(FrameType[FrameType.WINDOW_UPDATE], 'WINDOW_UPDATE');
});

test('padding comes off a PADDED payload; padding that does not fit is undefined', () => {
  const data = Buffer.from('data');
  assert.equal(unpadded(0, data), data);
  assert.deepEqual(unpadded(Flag.PADDED, Buffer.concat([Buffer.from([3]), data, Buffer.alloc(3)])), data);
  assert.deepEqual(unpadded(Flag.PADDED, Buffer.from([0])), Buffer.alloc(0));
  assert.equal(unpadded(Flag.PADDED, Buffer.alloc(0)), undefined);
  assert.equal(unpadded(Flag.PADDED, Buffer.from([4, 1, 2, 3])), undefined);
});
