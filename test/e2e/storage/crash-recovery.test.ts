// Crash safety under load: the real server (npm start's bundle) is killed with SIGKILL ten times
// while concurrent clients write, and restarted on the same directory each time. Every write
// that was answered 2xx must be there with its resourceVersion, a watch resumed from a
// resourceVersion before the crash must see every later event once and in order, and the file
// must pass PRAGMA integrity_check at the end. A torn WAL (a power cut in the middle of a
// write) must be recovered as SQLite recovers it, keeping every acknowledged write.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import https from 'node:https';
import Database from 'better-sqlite3';
import { adminClient, freePort, startHearthProcess, stopHearthProcess, type HearthProcess } from '../../helpers/hearth-process.ts';

const ROUNDS = 10;
const WRITERS = 8;
const NS = 'crash';

/** Acknowledged creates: name → the resourceVersion the server answered with. */
type Acked = Map<string, number>;

/** Writers creating ConfigMaps until the server goes away; `killAfter` acknowledgements in, it is killed with SIGKILL. */
async function writeUntilKilled(p: HearthProcess, req: ReturnType<typeof adminClient>, url: string, round: number, killAfter: number, acked: Acked): Promise<void> {
  let count = 0;
  let killed = false;
  const writer = async (w: number) => {
    for (let i = 0; !killed; i++) {
      const name = `r${round}-w${w}-${i}`;
      let r: { status: number; json: any };
      try {
        r = await req('POST', `${url}/api/v1/namespaces/${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { round: String(round), i: String(i) } });
      } catch {
        return; // the server is gone: this write was never acknowledged
      }
      if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${JSON.stringify(r.json)}`);
      acked.set(name, Number(r.json.metadata.resourceVersion));
      if (++count === killAfter && !killed) {
        killed = true;
        p.child.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
  await stopHearthProcess(p, 'SIGKILL');
}

/** A watch from `rv`, read until it has passed `untilRv` (then closed); its events. */
function watchFrom(dataDir: string, url: string, rv: number, untilRv: number): Promise<any[]> {
  const read = (f: string) => readFileSync(join(dataDir, 'pki', f), 'utf8');
  return new Promise((resolve, reject) => {
    const events: any[] = [];
    const req = https.get(`${url}/api/v1/namespaces/${NS}/configmaps?watch=1&resourceVersion=${rv}&allowWatchBookmarks=false`, { ca: read('ca.crt'), cert: read('admin.crt'), key: read('admin.key'), agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`watch: ${res.statusCode}`));
      let buf = '';
      res.on('data', (d) => {
        buf += d;
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
          const e = JSON.parse(buf.slice(0, nl));
          buf = buf.slice(nl + 1);
          events.push(e);
          if (e.type === 'ERROR' || Number(e.object.metadata.resourceVersion) >= untilRv) {
            req.destroy();
            return resolve(events);
          }
        }
      });
    });
    req.on('error', (e) => (events.length ? undefined : reject(e)));
  });
}

/** The ConfigMaps of NS now: name → resourceVersion. */
async function storedObjects(req: ReturnType<typeof adminClient>, url: string): Promise<Map<string, number>> {
  const list = (await req('GET', `${url}/api/v1/namespaces/${NS}/configmaps`)).json;
  return new Map(list.items.map((i: any) => [i.metadata.name, Number(i.metadata.resourceVersion)]));
}

function assertAcknowledgedKept(stored: Map<string, number>, acked: Acked, when: string): void {
  for (const [name, rv] of acked) assert.equal(stored.get(name), rv, `${when}: ${name} was acknowledged at resourceVersion ${rv}`);
}

/**
 * A server on a fresh directory with the namespace NS; run() may kill and restart it (it returns
 * the one running at its end), which is then stopped cleanly and its file checked.
 */
async function onCrashingServer(run: (s: { p: HearthProcess; dataDir: string; port: number; url: string }) => Promise<HearthProcess>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-crash-'));
  const port = await freePort();
  const url = `https://127.0.0.1:${port}`;
  try {
    const p = await startHearthProcess(dataDir, ['--secure-port', String(port)]);
    assert.equal((await adminClient(dataDir)('POST', `${url}/api/v1/namespaces`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);
    await stopHearthProcess(await run({ p, dataDir, port, url }), 'SIGTERM');
    const db = new Database(join(dataDir, 'hearth.db'), { readonly: true });
    try {
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    } finally {
      db.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

test(`kill -9 under writes, ${ROUNDS} times: no acknowledged write lost, a resumed watch sees every event once, in order; integrity_check ok`, () =>
  onCrashingServer(async ({ p, dataDir, port, url }) => {
    const acked: Acked = new Map();
    let req = adminClient(dataDir);
    for (let round = 0; round < ROUNDS; round++) {
      // A resourceVersion from before this round's writes: the watch resumes from it after the crash.
      const resumeRv = Number((await req('GET', `${url}/api/v1/namespaces/${NS}/configmaps?limit=1`)).json.metadata.resourceVersion);
      await writeUntilKilled(p, req, url, round, 20 + ((round * 37) % 60), acked);

      p = await startHearthProcess(dataDir, ['--secure-port', String(port)]);
      req = adminClient(dataDir);
      const stored = await storedObjects(req, url);
      assertAcknowledgedKept(stored, acked, `round ${round}`);

      // Every object written after resumeRv (acknowledged or not, if it was committed) is one ADDED event, in order.
      const later = [...stored].filter(([, rv]) => rv > resumeRv).sort((a, b) => a[1] - b[1]);
      assert.ok(later.length >= 20, `round ${round}: ${later.length} objects written`);
      const events = await watchFrom(dataDir, url, resumeRv, later[later.length - 1][1]);
      assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`), later.map(([name, rv]) => `ADDED ${name} ${rv}`), `round ${round}`);
    }
    return p;
  }));

test('a torn WAL (a frame cut short by a power cut) is recovered as SQLite recovers it: every acknowledged write kept', () =>
  onCrashingServer(async ({ p, dataDir, port, url }) => {
    const acked: Acked = new Map();
    await writeUntilKilled(p, adminClient(dataDir), url, 0, 50, acked);
    // What a write cut off by the power leaves: the start of a frame (its header and part of
    // its page) after the last whole one. Its checksum cannot match: SQLite ignores it.
    const wal = join(dataDir, 'hearth.db-wal');
    assert.ok(statSync(wal).size > 32, 'the crash left a WAL');
    appendFileSync(wal, Buffer.alloc(24 + 1000, 0x5a));
    p = await startHearthProcess(dataDir, ['--secure-port', String(port)]);
    const req = adminClient(dataDir);
    assertAcknowledgedKept(await storedObjects(req, url), acked, 'after the power cut');
    const created = await req('POST', `${url}/api/v1/namespaces/${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-power-cut' } });
    assert.equal(created.status, 201);
    assert.ok(Number(created.json.metadata.resourceVersion) > Math.max(...acked.values()));
    return p;
  }));
