// A batch the writer thread has committed is finished (its writes resolved, its events emitted)
// as soon as the main thread next takes a request or a write, not only when it reads the
// writer's reply message between two tasks: under load that message waited as long as the commit.
// The batch gathered meanwhile then leaves for the writer at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { openDatabase } from '../../../../server/storage/sqlite/database.ts';
import { EventLog } from '../../../../server/storage/log/event-log.ts';
import type { Key } from '../../../../server/storage/log/types.ts';
import { SqliteBackend } from '../../../../server/storage/sqlite/backend.ts';

const key = (name: string): Key => ({ res: 'configmaps', ns: 'k', name });
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'k', uid: randomUUID() } });

/** Spins until pollCommitted finishes a batch: no task runs meanwhile, so no message is read. */
function spinUntilCommitted(log: EventLog): boolean {
  const deadline = performance.now() + 10_000;
  while (performance.now() < deadline) if (log.pollCommitted()) return true;
  return false;
}

async function microtasks(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

function withLog(fn: (log: EventLog) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hearth-commit-signal-'));
    const file = join(dir, 'hearth.db');
    const db = openDatabase(file);
    const log = new EventLog(new SqliteBackend(db, { file, synchronous: 'full' }));
    try {
      await fn(log);
    } finally {
      await log.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

/** A create of `name` whose promise records when it resolved. */
function put(log: EventLog, name: string): { done: () => boolean; rv: Promise<number> } {
  let resolved = false;
  const rv = log.write((tx) => tx.put('ADDED', key(name), cm(name))).then((r) => {
    resolved = true;
    return r;
  });
  return { done: () => resolved, rv };
}

test('a committed batch finishes within the current task, before the writer reply message is read', withLog(async (log) => {
  const seen: string[] = [];
  log.onCommit((events) => seen.push(...events.map((e) => `${e.type} ${e.key.name} ${e.rv}`)));
  const rv0 = log.currentRv;
  const a = put(log, 'a');
  // The batch goes to the writer on the next turn (setImmediate, queued before this one).
  await new Promise((r) => setImmediate(r));
  // From here until the assertions no task runs, only microtasks.
  assert.equal(spinUntilCommitted(log), true, 'the commit was not seen through the shared signal');
  await microtasks();
  assert.equal(a.done(), true, 'the write did not resolve');
  assert.equal(log.currentRv, rv0 + 1);
  assert.deepEqual(seen, [`ADDED a ${rv0 + 1}`]);
  assert.equal(log.pollCommitted(), false, 'a batch finishes once');
  assert.equal(await a.rv, rv0 + 1);
  // The reply message, read later, changes nothing; the next batch goes through as usual.
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(await put(log, 'b').rv, rv0 + 2);
  assert.deepEqual(seen, [`ADDED a ${rv0 + 1}`, `ADDED b ${rv0 + 2}`]);
  assert.equal(log.get(key('a'))?.rv, rv0 + 1);
}));

test('writes gathered while a batch commits leave as it finishes, without waiting for another task', withLog(async (log) => {
  const rv0 = log.currentRv;
  const a = put(log, 'a');
  await new Promise((r) => setImmediate(r)); // a is with the writer
  // No task runs from here on: b can only reach the writer from a's finishing.
  assert.equal(spinUntilCommitted(log), true, 'a was not finished');
  const b = put(log, 'b'); // gathered before a's finishing runs (a microtask)
  await microtasks();
  assert.equal(a.done(), true);
  assert.equal(b.done(), false);
  assert.equal(spinUntilCommitted(log), true, 'b did not leave for the writer when a finished');
  await microtasks();
  assert.equal(b.done(), true);
  assert.deepEqual([await a.rv, await b.rv], [rv0 + 1, rv0 + 2]);
}));
