// A batch the writer thread has committed is finished (its writes resolved, its events emitted)
// as soon as the main thread next takes a request or a write, not only when it reads the
// writer's reply message between two tasks: under load that message waited as long as the commit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { openDatabase } from '../server/storage/database.ts';
import { EventLog, type Key } from '../server/storage/event-log.ts';

const key = (name: string): Key => ({ res: 'configmaps', ns: 'k', name });
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'k', uid: randomUUID() } });

test('a committed batch finishes within the current task, before the writer reply message is read', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-commit-signal-'));
  const file = join(dir, 'hearth.db');
  const db = openDatabase(file);
  const log = new EventLog(db, { file, synchronous: 'full' });
  try {
    const seen: string[] = [];
    log.onCommit((events) => seen.push(...events.map((e) => `${e.type} ${e.key.name} ${e.rv}`)));
    const rv0 = log.currentRv;
    let resolved = false;
    const written = log.write((tx) => tx.put('ADDED', key('a'), cm('a'))).then((rv) => {
      resolved = true;
      return rv;
    });
    // The batch goes to the writer on the next turn (setImmediate, queued before this one).
    await new Promise((r) => setImmediate(r));
    // From here until the assertions no task runs, only microtasks: the reply message cannot be read.
    const deadline = performance.now() + 10_000;
    let finished = false;
    while (!(finished = log.pollCommitted()) && performance.now() < deadline);
    assert.equal(finished, true, 'the commit was not seen through the shared signal');
    for (let i = 0; i < 10; i++) await Promise.resolve();
    assert.equal(resolved, true, 'the write did not resolve');
    assert.equal(log.currentRv, rv0 + 1);
    assert.deepEqual(seen, [`ADDED a ${rv0 + 1}`]);
    assert.equal(log.pollCommitted(), false, 'a batch finishes once');
    assert.equal(await written, rv0 + 1);
    // The reply message, read later, changes nothing; the next batch goes through as usual.
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(await log.write((tx) => tx.put('ADDED', key('b'), cm('b'))), rv0 + 2);
    assert.deepEqual(seen, [`ADDED a ${rv0 + 1}`, `ADDED b ${rv0 + 2}`]);
    assert.equal(log.get(key('a'))?.rv, rv0 + 1);
  } finally {
    await log.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
