// Events expire a TTL after their last write, as with kube-apiserver's --event-ttl: watchers see
// them DELETED, a write in between gives a new TTL, other kinds never expire, and events stored
// before a restart expire the TTL after the write their managedFields record.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer } from '../../helpers/server.ts';

const EVENTS = '/api/v1/namespaces/default/events';
const event = (name: string) => ({ metadata: { name }, involvedObject: { kind: 'Pod', namespace: 'default', name: 'web' }, reason: 'Started', message: 'started', type: 'Normal' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('an event is deleted the TTL after its last write; a write in between renews it', async () => {
  const s = await startTestServer({ eventTtlMs: 3000 });
  try {
    const rv = (await s.request('GET', EVENTS)).json().metadata.resourceVersion;
    const watching = s.watch(`/apis/events.k8s.io/v1/namespaces/default/events?watch=1&resourceVersion=${rv}`, (events) => events.filter((e) => e.type === 'DELETED').length >= 2);
    assert.equal((await s.request('POST', EVENTS, { body: event('short') })).status, 201);
    assert.equal((await s.request('POST', EVENTS, { body: event('renewed') })).status, 201);
    assert.equal((await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'stays' } } })).status, 201);
    await sleep(1500);
    // Written again halfway through its TTL: a new TTL from now, 1.5 s past the first one's end.
    const renewed = (await s.request('GET', `${EVENTS}/renewed`)).json();
    assert.equal((await s.request('PUT', `${EVENTS}/renewed`, { body: { ...renewed, count: 2 } })).status, 200);
    assert.equal(await goneWithin(s, `${EVENTS}/short`, 6000), true);
    // Gone with the first TTL; the renewed one is not.
    assert.equal((await s.request('GET', `${EVENTS}/renewed`)).status, 200);
    const { events } = await Promise.race([watching, sleep(10000).then(() => ({ events: [] as any[] }))]);
    assert.deepEqual(events.filter((e) => e.type === 'DELETED').map((e) => e.object.metadata.name), ['short', 'renewed']);
    assert.equal((await s.request('GET', `${EVENTS}/renewed`)).status, 404);
    assert.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps/stays')).status, 200);
  } finally {
    await s.stop();
  }
});

/** Whether GET path answers 404 within ms (polled). */
async function goneWithin(s: Awaited<ReturnType<typeof startTestServer>>, path: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if ((await s.request('GET', path)).status === 404) return true;
    await sleep(50);
  }
  return false;
}

test('events kept across a restart expire the TTL after their recorded last write; 0 keeps them', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-ttl-'));
  try {
    const first = await startTestServer({ dataDir, eventTtlMs: 0 });
    assert.equal((await first.request('POST', EVENTS, { body: event('old') })).status, 201);
    await sleep(3000);
    assert.equal((await first.request('GET', `${EVENTS}/old`)).status, 200);
    await first.stop();
    // Written three seconds or more ago (managedFields' time has whole seconds): with an 8 s TTL it
    // goes at most 5 s after the restart (it expires right when its TTL ends), not 8 s. (Wide
    // margins both ways: a loaded machine may take seconds to restart.)
    const second = await startTestServer({ dataDir, eventTtlMs: 8000 });
    try {
      assert.equal((await second.request('GET', `${EVENTS}/old`)).status, 200);
      assert.equal(await goneWithin(second, `${EVENTS}/old`, 6500), true);
    } finally {
      await second.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
