// The key filter lets a create's existence check skip SQLite. It must never say "absent" for a
// key that exists: not for keys written in this process, not after a restart (it is rebuilt
// from the table), not after it filled up and was rebuilt while writes went on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { KeyFilter } from '../../../../server/storage/log/key-filter.ts';
import { openDatabase } from '../../../../server/storage/sqlite/database.ts';
import { EventLog } from '../../../../server/storage/log/event-log.ts';
import type { Key } from '../../../../server/storage/log/types.ts';
import { SqliteBackend } from '../../../../server/storage/sqlite/backend.ts';

test('a key filter has no false negatives and few false positives', () => {
  const f = new KeyFilter(0);
  const n = 80_000;
  for (let i = 0; i < n; i++) f.add(`configmaps\u0000ns-${i % 17}\u0000cm-${i}`);
  for (let i = 0; i < n; i++) assert.ok(f.mightHave(`configmaps\u0000ns-${i % 17}\u0000cm-${i}`), `key ${i} lost`);
  let positives = 0;
  for (let i = 0; i < n; i++) if (f.mightHave(`configmaps\u0000ns-${i % 17}\u0000other-${i}`)) positives++;
  assert.ok(positives / n < 0.03, `false positives ${((100 * positives) / n).toFixed(2)}%`);
  assert.equal(f.full, false);
  for (let i = 0; i < n; i++) f.add(`secrets\u0000x\u0000${i}`);
  assert.equal(f.full, true, '160,000 keys fill a filter sized for none');
});

const key = (name: string): Key => ({ res: 'configmaps', ns: 'k', name });
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'k', uid: randomUUID() } });

function open(dir: string) {
  const file = join(dir, 'hearth.db');
  const db = openDatabase(file);
  return { db, log: new EventLog(new SqliteBackend(db, { file, synchronous: 'off' })) };
}

/** Creates the keys as a create does: fails when the key exists. */
function create(log: EventLog, names: string[]): Promise<unknown> {
  return Promise.all(
    names.map((name) =>
      log.write((tx) => {
        if (tx.currentRv(key(name)) !== undefined) throw new Error(`${name} exists`);
        tx.put('ADDED', key(name), cm(name));
      }),
    ),
  );
}

test('existence checks see every stored key: after a restart, and across a rebuild of a full filter', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-key-filter-'));
  try {
    let s = open(dir);
    await create(s.log, ['a', 'b']);
    await assert.rejects(create(s.log, ['a']), /a exists/);
    await s.log.write((tx) => {
      tx.remove(key('b'), cm('b'), tx.get(key('b'))!);
    });
    await create(s.log, ['b']); // deleted keys may be created again
    await s.log.close();
    s.db.close();

    s = open(dir); // the filter comes from the table
    await assert.rejects(create(s.log, ['a']), /a exists/);
    assert.ok(s.log.get(key('b')));
    // Enough creates to fill the smallest filter: the next batch rebuilds it from the table.
    const many = Array.from({ length: 90_000 }, (_, i) => `m-${i}`);
    await create(s.log, many);
    await create(s.log, ['after-rebuild']);
    for (const name of ['a', 'b', 'm-0', 'm-45000', 'm-89999', 'after-rebuild']) {
      await assert.rejects(create(s.log, [name]), new RegExp(`${name} exists`));
    }
    assert.equal(s.log.get(key('never')), undefined);
    await s.log.close();
    s.db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
