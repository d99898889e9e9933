// An @kubernetes/client-node informer (list + watch) keeps an exact mirror of one namespace's
// ConfigMaps through a stream of concurrent random writes, a server restart on the same data
// directory and port (it resumes from its resourceVersion without re-listing), and a compaction
// past its resourceVersion (the watch answers 410 Expired and the informer re-lists).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { startServer, type RunningServer } from '../../../server/server.ts';
import { seededRandom } from '../../helpers/random.ts';

const NS = 'informer-mirror';
const CM_PATH = `/api/v1/namespaces/${NS}/configmaps`;
const CONVERGE_MS = 15_000;
const SEED = Number(process.env.INFORMER_TEST_SEED ?? Date.now() % 2 ** 31);

const rand = seededRandom(SEED);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789 -_.\n"\\äß€🔥';
function randomValue(): string {
  const n = Math.floor(rand() * (rand() < 0.1 ? 2000 : 24));
  let s = '';
  for (let i = 0; i < n; i++) s += pick([...ALPHABET]);
  return s;
}
function randomKey(): string {
  return pick(['a', 'b', 'c', 'config.yaml', 'x.y-z', 'k_1', 'LONG_KEY_NAME']);
}
function randomData(): Record<string, string> {
  const d: Record<string, string> = {};
  const n = Math.floor(rand() * 5);
  for (let i = 0; i < n; i++) d[randomKey()] = randomValue();
  return d;
}

let dataDir: string;
let server: RunningServer | undefined;
let port = 0;
let agent: https.Agent;
let kc: k8s.KubeConfig;
let informer: k8s.ListWatch<k8s.V1ConfigMap>;
let listCalls = 0;
let connects = 0;
let errors = 0;
let autoRestart = true;
let tornDown = false;
let restartTimer: NodeJS.Timeout | undefined;

interface Res {
  status: number;
  json: any;
}

// Plain HTTPS with the admin certificate, no keep-alive (the server goes away between phases),
// and a per-request deadline.
function api(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Res> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (payload) {
      headers['content-type'] = contentType;
      headers['content-length'] = String(payload.length);
    }
    const req = https.request(`https://127.0.0.1:${port}${path}`, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: any;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = text;
        }
        resolve({ status: res.statusCode ?? 0, json });
      });
      res.on('error', reject);
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

async function ok(method: string, path: string, body?: unknown, contentType?: string): Promise<any> {
  const r = await api(method, path, body, contentType);
  assert.ok(r.status >= 200 && r.status < 300, `${method} ${path} -> ${r.status}: ${JSON.stringify(r.json)}`);
  return r.json;
}

async function start(): Promise<void> {
  // (without the root CA publisher: the informer's ConfigMaps are compared with a model of the test's own)
  server = await startServer({ dataDir, securePort: port, bindAddress: '127.0.0.1', log: () => {}, controllers: ['*', '-root-ca-certificate-publisher-controller'] });
  if (port === 0) port = server.port;
  assert.equal(server.port, port, 'restarted on the same port');
}

async function stopServer(): Promise<void> {
  const s = server;
  server = undefined;
  await s?.close();
}

async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms = CONVERGE_MS): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) assert.fail(`timed out after ${ms} ms waiting for ${what} (seed ${SEED})`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

type Snap = { name: string; namespace: string | undefined; uid: string | undefined; resourceVersion: string | undefined; data: unknown }[];
function snapshot(items: readonly k8s.V1ConfigMap[]): Snap {
  return items
    .map((o) => ({
      name: o.metadata?.name ?? '',
      namespace: o.metadata?.namespace,
      uid: o.metadata?.uid,
      resourceVersion: o.metadata?.resourceVersion,
      data: o.data === undefined ? '<absent>' : o.data,
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

async function serverSnapshot(): Promise<Snap> {
  const list = await ok('GET', CM_PATH);
  return snapshot(list.items);
}

/** Polls until the informer's cache equals the server's list, then asserts it exactly. */
async function assertMirrored(phase: string): Promise<Snap> {
  let want: Snap = [];
  let got: Snap = [];
  const deadline = Date.now() + CONVERGE_MS;
  for (;;) {
    want = await serverSnapshot();
    got = snapshot(informer.list());
    if (JSON.stringify(want) === JSON.stringify(got)) break;
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual(got, want, `${phase}: informer cache differs from the server's list (seed ${SEED})`);
  assert.ok(informer.list().every((o) => o.metadata?.namespace === NS), 'the cache only holds the watched namespace');
  return want;
}

// The model of what each ConfigMap should hold, kept by the writers.
const model = new Map<string, { rv: string; data: Record<string, string> }>();

/** One random write to `name` (which only this caller touches right now). */
async function randomOp(name: string): Promise<void> {
  const cur = model.get(name);
  if (!cur) {
    const data = randomData();
    const o = await ok('POST', CM_PATH, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { seed: String(SEED % 1000) } }, data });
    model.set(name, { rv: o.metadata.resourceVersion, data: o.data ?? {} });
    return;
  }
  const r = rand();
  if (r < 0.4) {
    const data = randomData();
    const o = await ok('PUT', `${CM_PATH}/${name}`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, resourceVersion: cur.rv }, data });
    model.set(name, { rv: o.metadata.resourceVersion, data: o.data ?? {} });
  } else if (r < 0.7) {
    const patch: Record<string, string | null> = {};
    patch[randomKey()] = rand() < 0.3 ? null : randomValue();
    const o = await ok('PATCH', `${CM_PATH}/${name}`, { data: patch }, 'application/merge-patch+json');
    model.set(name, { rv: o.metadata.resourceVersion, data: o.data ?? {} });
  } else {
    await ok('DELETE', `${CM_PATH}/${name}`);
    model.delete(name);
  }
}

/** `total` random operations spread over `workers` concurrent writers with disjoint names. */
async function randomWrites(total: number, workers: number, names: string[]): Promise<void> {
  const perWorker = Math.ceil(total / workers);
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      const mine = names.filter((_, i) => i % workers === w);
      for (let i = 0; i < perWorker; i++) await randomOp(pick(mine));
    }),
  );
}

async function assertServerMatchesModel(): Promise<void> {
  const snap = await serverSnapshot();
  assert.deepEqual(
    snap.map((s) => [s.name, s.resourceVersion, s.data === '<absent>' ? {} : s.data]),
    [...model.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([n, m]) => [n, m.rv, m.data]),
    'the server holds what the writers wrote',
  );
}

const NAMES = Array.from({ length: 48 }, (_, i) => `cm-${String(i).padStart(3, '0')}`);

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'hearth-informer-'));
  await start();
  agent = new https.Agent({ keepAlive: false, ca: server!.pki.caCertPem, cert: server!.pki.adminCertPem, key: server!.pki.adminKeyPem });
  kc = new k8s.KubeConfig();
  kc.loadFromFile(server!.kubeconfigPath);
  await ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });

  const core = kc.makeApiClient(k8s.CoreV1Api);
  informer = k8s.makeInformer<k8s.V1ConfigMap>(kc, CM_PATH, () => {
    listCalls++;
    return core.listNamespacedConfigMap({ namespace: NS });
  }) as k8s.ListWatch<k8s.V1ConfigMap>;
  informer.on('connect', () => connects++);
  // client-node's informer stops on any error other than 410; restarting it is the caller's job
  // (as its examples do). While autoRestart is off it stays parked.
  informer.on('error', () => {
    errors++;
    if (!autoRestart || tornDown || restartTimer) return;
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      if (!tornDown && autoRestart) informer.start().catch(() => {});
    }, 100);
  });
  await informer.start();
});

after(async () => {
  tornDown = true;
  if (restartTimer) clearTimeout(restartTimer);
  await informer?.stop();
  await stopServer();
  agent?.destroy();
  rmSync(dataDir, { recursive: true, force: true });
});

test('phase 1: 200 random concurrent creates/updates/deletes are mirrored exactly', async () => {
  assert.equal(listCalls, 1);
  // Objects that exist before the informer's first list was taken... and noise elsewhere.
  await ok('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'noise' }, data: { n: '1' } });
  await randomWrites(200, 4, NAMES);
  await ok('PATCH', '/api/v1/namespaces/default/configmaps/noise', { data: { n: '2' } }, 'application/merge-patch+json');
  await assertServerMatchesModel();
  const snap = await assertMirrored('phase 1');
  assert.ok(snap.length > 0, 'some ConfigMaps are left to mirror');
  assert.equal(listCalls, 1, 'the informer followed the watch without re-listing');
});

test('phase 2: a restart on the same data directory and port; the informer resumes from its resourceVersion', async () => {
  const lists = listCalls;
  const connectsBefore = connects;
  const rvBefore = Number(informer.latestResourceVersion());
  const errorsAtStop = errors;
  assert.ok(rvBefore > 0);
  await stopServer();
  // Down: the informer fails to reconnect and keeps retrying.
  await waitFor('a failed reconnect while the server is down', () => errors > errorsAtStop);
  await start();
  // Writes right after the restart, before and while the informer reconnects.
  await randomWrites(60, 3, NAMES);
  await assertServerMatchesModel();
  await assertMirrored('phase 2');
  assert.ok(connects > connectsBefore, 'the informer reconnected');
  assert.equal(listCalls, lists, 'the informer resumed its watch from its resourceVersion instead of re-listing');
  assert.ok(Number(informer.latestResourceVersion()) > rvBefore);
});

test('phase 3: compaction past the informer\'s resourceVersion forces a 410 and a re-list', async () => {
  const lists = listCalls;
  assert.equal(restartTimer, undefined, 'no reconnect pending');
  // Park the informer: after the server goes away it fails to reconnect and is not restarted.
  autoRestart = false;
  const errorsBefore = errors;
  await stopServer();
  await waitFor('the informer to park after the server went away', () => errors > errorsBefore);
  const staleRv = informer.latestResourceVersion();
  assert.match(staleRv, /^\d+$/);

  await start();
  // Writes the informer has not seen, including deletes whose events compaction removes: only a
  // re-list can reveal them.
  const present = [...model.keys()];
  assert.ok(present.length >= 2, 'enough ConfigMaps to delete some');
  for (const name of present.slice(0, Math.ceil(present.length / 3))) {
    await ok('DELETE', `${CM_PATH}/${name}`);
    model.delete(name);
  }
  await randomWrites(40, 4, NAMES);
  await assertServerMatchesModel();
  const compact = await ok('POST', '/admin/compact');
  assert.ok(Number(compact.compactedResourceVersion) > Number(staleRv), `compacted ${compact.compactedResourceVersion} past the informer's ${staleRv}`);

  // The server's answer to the informer's next watch: a 200 stream opening with ERROR 410 Expired.
  const w = await api('GET', `${CM_PATH}?watch=true&resourceVersion=${staleRv}`);
  assert.equal(w.status, 200);
  const first = typeof w.json === 'string' ? JSON.parse(w.json.split('\n')[0]) : w.json;
  assert.equal(first.type, 'ERROR');
  assert.equal(first.object.kind, 'Status');
  assert.equal(first.object.code, 410);
  assert.equal(first.object.reason, 'Expired');
  assert.equal(listCalls, lists, 'still parked: nothing re-listed yet');

  autoRestart = true;
  await informer.start();
  await assertMirrored('phase 3');
  assert.equal(listCalls, lists + 1, 'the informer re-listed exactly once after the 410');
  assert.ok(Number(informer.latestResourceVersion()) >= Number(compact.compactedResourceVersion));
  for (const name of present.slice(0, Math.ceil(present.length / 3))) {
    if (!model.has(name)) assert.equal(informer.get(name, NS), undefined, `${name} was deleted while the informer was away`);
  }

  // And it keeps following the watch after the re-list.
  await randomWrites(40, 4, NAMES);
  await assertServerMatchesModel();
  await assertMirrored('phase 3, after the re-list');
  assert.equal(listCalls, lists + 1);
});
