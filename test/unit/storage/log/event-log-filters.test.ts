// Lists narrowed in SQLite (EventLog RowFilter): by name, and by the labels a label selector
// requires, read from the stored JSON without decoding rows here (and each row's labels handed
// over as text, so the store matches the selector without decoding rows either). The store matches every row it
// gets against the whole selector; what is tested here is that the narrowing never drops a row
// that could match (CBOR rows, whose labels SQLite cannot read, always pass), at the current
// state and at an older resourceVersion, page by page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { openDatabase } from '../../../../server/storage/sqlite/database.ts';
import { EventLog } from '../../../../server/storage/log/event-log.ts';
import type { Key, RowFilter, StoredObject } from '../../../../server/storage/log/types.ts';
import { SqliteBackend } from '../../../../server/storage/sqlite/backend.ts';
import type { StoredRow } from '../../../../server/storage/rows/codec.ts';

const key = (ns: string, name: string): Key => ({ res: 'configmaps', ns, name });
const cm = (ns: string, name: string, labels?: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns, uid: randomUUID(), ...(labels ? { labels } : {}) },
  ...extra,
});

const names = (rows: StoredObject[]) => rows.map((r) => `${r.object.metadata.namespace}/${r.object.metadata.name}`);

test('rows narrowed by name and by required labels, now and at an older resourceVersion, paged', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-row-filters-'));
  const file = join(dir, 'hearth.db');
  const db = openDatabase(file);
  const log = new EventLog(new SqliteBackend(db, { file, synchronous: 'off' }));
  try {
    const write = (ns: string, name: string, labels?: Record<string, string>, extra?: Record<string, unknown>) =>
      log.write((tx) => tx.put(tx.get(key(ns, name)) ? 'MODIFIED' : 'ADDED', key(ns, name), cm(ns, name, labels, extra), tx.get(key(ns, name))));
    await write('a', 'web-1', { tier: 'web', 'app.kubernetes.io/name': 'shop' });
    await write('a', 'db-1', { tier: 'db' });
    await write('a', 'plain');
    await write('b', 'web-1', { tier: 'web' });
    await write('b', 'cache', { tier: 'cache', 'app.kubernetes.io/name': 'shop' });
    // A BigInt value makes the row CBOR: SQLite cannot read its labels, so it always passes.
    await write('b', 'big', { tier: 'db' }, { data: { n: 2n ** 70n } });
    const before = log.currentRv;

    const all = (only: RowFilter, ns?: string) => names(log.list('configmaps', ns, undefined, -1, only));
    assert.deepEqual(all({ labels: [{ key: 'tier', values: ['web'] }] }), ['a/web-1', 'b/big', 'b/web-1']);
    assert.deepEqual(all({ labels: [{ key: 'tier', values: ['web', 'cache'] }] }), ['a/web-1', 'b/big', 'b/cache', 'b/web-1']);
    assert.deepEqual(all({ labels: [{ key: 'app.kubernetes.io/name' }] }), ['a/web-1', 'b/big', 'b/cache']);
    assert.deepEqual(all({ labels: [{ key: 'app.kubernetes.io/name', values: ['shop'] }, { key: 'tier', values: ['web'] }] }), ['a/web-1', 'b/big']);
    assert.deepEqual(all({ labels: [{ key: 'tier', values: ['web'] }] }, 'a'), ['a/web-1']);
    assert.deepEqual(all({ labels: [{ key: 'missing' }] }), ['b/big']);
    assert.deepEqual(all({ name: 'web-1' }), ['a/web-1', 'b/web-1']);
    assert.deepEqual(all({ name: 'web-1', labels: [{ key: 'app.kubernetes.io/name' }] }), ['a/web-1']);
    assert.deepEqual(all({ name: 'web-1' }, 'b'), ['b/web-1']);
    assert.deepEqual(all({ name: 'nope' }), []);
    // A string at a JSON path (a pod's spec.nodeName, say).
    await write('a', 'on-node', undefined, { spec: { nodeName: 'n1' } });
    await write('b', 'on-other', undefined, { spec: { nodeName: 'n2' } });
    await write('b', 'numbered', undefined, { spec: { nodeName: 7 } });
    const onN1 = { fields: [{ path: '$.spec.nodeName', value: 'n1' }] };
    assert.deepEqual(all(onN1), ['a/on-node', 'b/big']);
    assert.deepEqual(all({ ...onN1, labels: [{ key: 'tier' }] }), ['b/big']);
    assert.deepEqual(all({ fields: [{ path: '$.spec.nodeName', value: '7' }] }), ['b/big']);
    for (const name of ['on-node', 'on-other', 'numbered']) {
      const ns = name === 'on-node' ? 'a' : 'b';
      await log.write((tx) => tx.remove(key(ns, name), cm(ns, name), tx.get(key(ns, name))!));
    }
    // With readLabels each JSON row comes with its labels as text ("null" for none); a CBOR row without.
    const labelled = log.list('configmaps', 'b', undefined, -1, { readLabels: true }) as StoredRow[];
    assert.deepEqual(
      labelled.map((r) => [r.object.metadata.name, r.labelsJson]),
      [['big', undefined], ['cache', '{"tier":"cache","app.kubernetes.io/name":"shop"}'], ['web-1', '{"tier":"web"}']],
    );
    assert.deepEqual(log.list('configmaps', 'a', undefined, -1, { readLabels: true, name: 'plain' }).map((r) => (r as StoredRow).labelsJson), ['null']);
    // Page by page: the cursor goes on from the last row of the page before.
    const web = { labels: [{ key: 'tier', values: ['web', 'db'] }] };
    const pages: string[][] = [];
    let after: { ns: string; name: string } | undefined;
    for (;;) {
      const page = log.list('configmaps', undefined, after, 2, web);
      if (page.length === 0) break;
      pages.push(names(page));
      const last = page[page.length - 1].object.metadata;
      after = { ns: last.namespace, name: last.name };
    }
    assert.deepEqual(pages, [['a/db-1', 'a/web-1'], ['b/big', 'b/web-1']]);

    // Labels change and objects go: the older state is read as it was.
    await write('a', 'web-1', { tier: 'db' });
    await write('a', 'plain', { tier: 'web' });
    await log.write((tx) => tx.remove(key('b', 'web-1'), cm('b', 'web-1', { tier: 'web' }), tx.get(key('b', 'web-1'))!));
    const at = (only: RowFilter, ns?: string) => names(log.listAt('configmaps', ns, before, undefined, -1, only));
    assert.deepEqual(at({ labels: [{ key: 'tier', values: ['web'] }] }), ['a/web-1', 'b/big', 'b/web-1']);
    assert.deepEqual(at({ labels: [{ key: 'tier', values: ['web'] }] }, 'a'), ['a/web-1']);
    assert.deepEqual(at({ name: 'web-1' }), ['a/web-1', 'b/web-1']);
    assert.deepEqual(all({ labels: [{ key: 'tier', values: ['web'] }] }), ['a/plain', 'b/big']);
    assert.deepEqual(all({ name: 'web-1' }), ['a/web-1']);
  } finally {
    await log.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
