// ListCache: an entry answers while its resource has no event after it and its version is not
// compacted away; the bytes kept stay within the budget, least recently used out first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ListCache } from '../../../server/registry/list-cache.ts';
import type { EventLog } from '../../../server/storage/log/event-log.ts';

/** The part of the event log the cache reads: versions, and which resource changed when. */
function fakeLog() {
  const changes: Array<[string, number]> = [];
  const log = {
    currentRv: 10,
    compactedRv: 0,
    changedSince: (res: string, rv: number) => changes.some(([r, at]) => r === res && at > rv),
  };
  const write = (res: string) => changes.push([res, ++log.currentRv]);
  return { log, write, asLog: log as unknown as EventLog };
}

const PREFIX = Buffer.from('{"kind":"ConfigMap","apiVersion":"v1",');
const pages = (bytes: number) => [Buffer.alloc(bytes, 0x61)];

test('an entry answers until its resource changes or its version is compacted away', () => {
  const { log, write, asLog } = fakeLog();
  const cache = new ListCache(asLog, 1000);
  const key = ListCache.key('configmaps', 'a', PREFIX, false);
  cache.set(key, { rv: 10, joined: pages(10), count: 1 });
  assert.equal(cache.get(key, 'configmaps')?.rv, 10);
  // Another resource's write leaves it good; one of its own resource's does not.
  write('secrets');
  assert.equal(cache.get(key, 'configmaps')?.rv, 10);
  write('configmaps');
  assert.equal(cache.get(key, 'configmaps'), undefined);
  // Compacted past its version: the log can no longer say what changed since.
  cache.set(key, { rv: log.currentRv, joined: pages(10), count: 1 });
  assert.ok(cache.get(key, 'configmaps'));
  log.compactedRv = log.currentRv + 1;
  assert.equal(cache.get(key, 'configmaps'), undefined);
});

test('keys tell namespaces, served forms and the null rule apart', () => {
  const keys = new Set([
    ListCache.key('configmaps', 'a', PREFIX, false),
    ListCache.key('configmaps', 'b', PREFIX, false),
    ListCache.key('configmaps', undefined, PREFIX, false),
    ListCache.key('configmaps', 'a', PREFIX, true),
    ListCache.key('configmaps', 'a', Buffer.from('{"kind":"ConfigMap","apiVersion":"v2",'), false),
    ListCache.key('secrets', 'a', PREFIX, false),
  ]);
  assert.equal(keys.size, 6);
});

test('the bytes kept stay within the budget: the least recently used go first, and a list over a quarter of it is not kept', () => {
  const { asLog } = fakeLog();
  const cache = new ListCache(asLog, 100);
  const key = (ns: string) => ListCache.key('configmaps', ns, PREFIX, false);
  cache.set(key('a'), { rv: 10, joined: pages(25), count: 1 });
  cache.set(key('b'), { rv: 10, joined: pages(25), count: 1 });
  cache.set(key('c'), { rv: 10, joined: pages(25), count: 1 });
  cache.set(key('d'), { rv: 10, joined: pages(25), count: 1 });
  // a used last: b is now the least recently used, and goes when e comes.
  assert.ok(cache.get(key('a'), 'configmaps'));
  cache.set(key('e'), { rv: 10, joined: pages(25), count: 1 });
  assert.equal(cache.get(key('b'), 'configmaps'), undefined);
  for (const ns of ['a', 'c', 'd', 'e']) assert.ok(cache.get(key(ns), 'configmaps'), ns);
  // Too large to keep; and setting a key again replaces its bytes rather than adding them.
  cache.set(key('big'), { rv: 10, joined: pages(26), count: 1 });
  assert.equal(cache.get(key('big'), 'configmaps'), undefined);
  cache.set(key('a'), { rv: 10, joined: pages(25), count: 2 });
  for (const ns of ['a', 'c', 'd', 'e']) assert.ok(cache.get(key(ns), 'configmaps'), ns);
  assert.equal(cache.get(key('a'), 'configmaps')?.count, 2);
});
