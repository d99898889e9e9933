// The watch benchmark's reader (bench/bench-client.ts): WatchStream's one-pass read of the
// usual event layout must give exactly what the general field search gives, whatever the layout
// and however the bytes are split. (Its HTTP/2 frames are read by the server's codec:
// h2-frames.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WatchStream } from '../../../bench/bench-client.ts';

class Recorder {
  readonly ms: number[] = [];
  add(ms: number): void {
    this.ms.push(ms);
  }
}

/** The layout the server writes for the benchmark's ConfigMaps (ObjectMeta's field order). */
const usual = (rv: number, t: string) =>
  `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"w-${rv}","namespace":"w","uid":"d4563989-945b-4344-a45d-373b7f523ea5","resourceVersion":"${rv}","creationTimestamp":"2026-11-22T16:01:23Z","labels":{"app":"bench","tier":"cache"},"managedFields":[{"manager":"unknown","operation":"Update","apiVersion":"v1","time":"2026-11-22T16:01:23Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:bench-t":{},"f:mode":{}},"f:metadata":{"f:labels":{".":{},"f:app":{},"f:tier":{}}}}}]},"data":{"bench-t":"${t}","mode":"watched"}}}\n`;
/** The layout of servers that append the resourceVersion to the metadata. */
const rvLast = (rv: number, t: string) =>
  `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"w-${rv}","namespace":"w","uid":"d4563989-945b-4344-a45d-373b7f523ea5","creationTimestamp":"2026-11-22T16:01:23Z","resourceVersion":"${rv}"},"data":{"bench-t":"${t}","mode":"watched"}}}\n`;
/** Other layouts: a '-' after the timestamp, a number between the resourceVersion and the timestamp, a non-ADDED event, no timestamp. */
const dashes = (rv: number, t: string) => `{"type":"ADDED","object":{"metadata":{"resourceVersion":"${rv}","labels":{"x":"a-b"}},"data":{"bench-t":"${t}","mode":"wat-ched"}}}\n`;
const numbered = (rv: number, t: string) => `{"type":"ADDED","object":{"metadata":{"resourceVersion":"${rv}","generation":3},"data":{"bench-t":"${t}"}}}\n`;
const modified = () => `{"type":"MODIFIED","object":{}}\n`;
const untimed = (rv: number) => `{"type":"ADDED","object":{"metadata":{"resourceVersion":"${rv}"}}}\n`;

function read(bytes: Buffer, region: [number, number], chunk: number, generalOnly: boolean) {
  const hist = new Recorder();
  const w = new WatchStream(hist, 0.25, generalOnly);
  for (let p = region[0]; p < region[1]; p += chunk) w.body(bytes, p, Math.min(p + chunk, region[1]), 1_795_363_284_000);
  return { rvs: Array.from(w.rvs.subarray(0, w.n)), latencies: hist.ms, failures: w.failures, last: w.last };
}

test('the one-pass read of the usual layout gives what the general search gives, for any split', () => {
  let text = '';
  for (let i = 1; i <= 400; i++) {
    const t = (1_795_363_283_173.8672 + i * 1.37).toFixed(i % 5);
    text += i % 11 === 0 ? dashes(i, t) : i % 13 === 0 ? numbered(i, t) : i % 7 === 0 ? rvLast(i, t) : i === 200 ? modified() : i === 300 ? untimed(i) : usual(i, t);
  }
  // Bytes around the stream's region belong to other streams (a shared read buffer): a newline there is not ours.
  const bytes = Buffer.from(`junk\n${text}{"more":"junk"}\n`);
  const region: [number, number] = [5, 5 + Buffer.byteLength(text)];
  for (const chunk of [1, 3, 64, 571, 4096, 1 << 20]) {
    const fast = read(bytes, region, chunk, false);
    const general = read(bytes, region, chunk, true);
    assert.deepEqual(fast, general, `split every ${chunk} bytes`);
    // 400 events less the MODIFIED one and the one without a timestamp.
    assert.equal(fast.rvs.length, 398);
    assert.equal(fast.failures.length, 2);
    assert.equal(fast.last, 400);
  }
  // The latency is now − offset − the timestamp, to the digit.
  const one = read(Buffer.from(usual(7, '1795363283173.8672')), [0, Buffer.byteLength(usual(7, '1795363283173.8672'))], 1 << 20, false);
  assert.deepEqual(one.rvs, [7]);
  assert.ok(Math.abs(one.latencies[0] - (1_795_363_284_000 - 0.25 - 1_795_363_283_173.8672)) < 1e-3);
});

test('a resourceVersion that goes backwards or repeats is reported', () => {
  const text = usual(5, '1') + usual(4, '2') + usual(4, '3') + usual(9, '4');
  const r = read(Buffer.from(text), [0, Buffer.byteLength(text)], 100, false);
  assert.deepEqual(r.rvs, [5, 4, 4, 9]);
  assert.equal(r.failures.length, 2);
  assert.match(r.failures[0], /resourceVersion 4 after 5/);
});
