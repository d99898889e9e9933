// npm run bench [-- --quick] [-- --only=create,get,list,rss,apply,put,rbac,apf-metrics] [-- --baseline=REF] [-- --cpu-prof=DIR]
//   --only runs just those measurements; --cpu-prof writes the server's
//   V8 CPU profile (.cpuprofile, for Chrome DevTools or speedscope) to DIR when it stops.
// Measures hearth side by side with a raw better-sqlite3 baseline in the same run:
//   - durable creates/s of ConfigMaps over HTTPS, 16 concurrent keep-alive clients,
//     next to durable single-row better-sqlite3 inserts (WAL, synchronous=FULL), as a ratio
//   - GET-one latency p50/p99
//   - list of 10,000 ConfigMaps (median of 5), and among them a label-selected and a name-selected list
//   - server RSS with 100,000 ConfigMaps stored
//   - server-side applies/s of a ~60-field Deployment (3 managers), PUT updates/s of it (in turns
//     with ConfigMap creates, for issue 4's ratio), and creates/s of it for scale; server CPU per
//     request for each
//   - creates/s and GETs/s of ConfigMaps by a user a RoleBinding authorizes, among ~1,000 roles and
//     bindings, in turns with the same for the admin (system:masters, allowed before RBAC), as a
//     ratio (issue 33's target: within 5%)
//   - apf-metrics: creates/s and GETs/s by a RoleBinding-authorized user on this build and on the
//     build before issue 35 (--baseline=REF), two servers in turns (issue 35's target: within 5%)
// The server runs in its own process (as users run it) on loopback with a temporary data dir.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { LeanConnection } from './bench-client.ts';
import { issueClientCertificate } from '../server/pki/certificates.ts';
import { startHearth, stopHearth, buildBaseline, request, createNamespace, serverCpuSeconds, rssKb, percentile, configMap, deploymentConfig, rateOf, ratesInTurns, slicesInTurns, ratioStats, formatRatio, phasesOf, type Server } from './bench-kit.ts';
import { profileReport, type Phases } from './cpuprofile-summary.ts';

const quick = process.argv.includes('--quick');
const CONCURRENCY = 16;
const CREATE_SECONDS = quick ? 3 : 10;
/** Creates before the measured window, so the JIT has compiled the write path (steady state). */
const WARMUP_SECONDS = quick ? 2 : 5;
const GET_SAMPLES = quick ? 500 : 3000;
/** PUTs and ConfigMap creates take turns in this many slices each (CREATE_SECONDS in all for each). */
const PUT_ROUNDS = quick ? 3 : 5;
const LIST_SIZE = 10_000;
const RSS_OBJECTS = quick ? 20_000 : 100_000;
const PHASES = ['create', 'get', 'list', 'rss', 'apply', 'put', 'rbac', 'apf-metrics'];
/** The code before issue 35 (API Priority and Fairness, /metrics, audit, logs), which apf-metrics compares against (--baseline=REF to change). */
const BASELINE_REF = process.argv.find((a) => a.startsWith('--baseline='))?.slice(11) ?? '61a30a5';
/** Roles and bindings in the store besides the one that authorizes the RBAC benchmark's user. */
const RBAC_OBJECTS = 1000;
const onlyArg = process.argv.find((a) => a.startsWith('--only='))?.slice(7);
const phases = new Set(onlyArg ? onlyArg.split(',') : PHASES);
for (const p of phases) if (!PHASES.includes(p)) throw new Error(`--only: unknown measurement ${p} (known: ${PHASES.join(', ')})`);
const cpuProfDir = process.argv.find((a) => a.startsWith('--cpu-prof='))?.slice(11);
/** The RBAC comparison's turns: many short slices, so that each pair of slices sees the machine alike (--rbac-rounds=, --rbac-slice= to change). */
const RBAC_ROUNDS = Number(process.argv.find((a) => a.startsWith('--rbac-rounds='))?.slice(14) ?? (quick ? 40 : 300));
const RBAC_SLICE_SECONDS = Number(process.argv.find((a) => a.startsWith('--rbac-slice='))?.slice(13) ?? 0.2);
/** Each measurement's time windows and request counts, to split the CPU profile by (cpuprofile-summary.ts). */
const profilePhases: Phases = {};

function rawSqliteInsertsPerSecond(seconds: number): number {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-bench-raw-'));
  try {
    const db = new Database(join(dir, 'raw.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, k TEXT NOT NULL, v BLOB NOT NULL)');
    const ins = db.prepare('INSERT INTO t (k, v) VALUES (?, ?)');
    const blob = Buffer.from(JSON.stringify(configMap('ns', 'x')));
    const end = Date.now() + seconds * 1000;
    let n = 0;
    while (Date.now() < end) {
      ins.run(`key-${n}`, blob); // autocommit: one durable transaction per row
      n++;
    }
    db.close();
    return n / seconds;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Creates ConfigMaps with 16 concurrent clients until `count` are made or `seconds` pass. */
async function createMany(s: Server, ns: string, opts: { count?: number; seconds?: number; prefix: string }): Promise<{ n: number; seconds: number }> {
  let next = 0;
  let done = 0;
  const start = performance.now();
  const deadline = opts.seconds ? start + opts.seconds * 1000 : Infinity;
  const worker = async (conn: LeanConnection) => {
    while (performance.now() < deadline) {
      const i = next++;
      if (opts.count !== undefined && i >= opts.count) return;
      const r = await request(s, 'POST', `/api/v1/namespaces/${ns}/configmaps`, configMap(ns, `${opts.prefix}-${i}`), conn);
      if (r.status !== 201) throw new Error(`create: ${r.status} ${r.body}`);
      done++;
    }
  };
  await Promise.all(s.conns.map(worker));
  return { n: done, seconds: (performance.now() - start) / 1000 };
}

async function main() {
  console.log(`hearth benchmark${quick ? ' (quick)' : ''}${onlyArg ? ` (only ${onlyArg})` : ''} — node ${process.version}, loopback, 2-core machine expected`);
  const rawRate = phases.has('create') ? rawSqliteInsertsPerSecond(CREATE_SECONDS) : NaN;

  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-bench-'));
  const profStarted = Date.now();
  const s = await startHearth(dataDir, { connections: CONCURRENCY, nodeArgs: cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : [] });
  const fmt = (n: number, d = 1) => n.toFixed(d);
  const out: string[] = [];
  try {
    await createNamespace(s, 'bench');
    await createNamespace(s, 'warmup');
    await createMany(s, 'warmup', { seconds: WARMUP_SECONDS, prefix: 'w' });
    let rate = NaN;
    let createdN = 0;
    if (phases.has('create') || phases.has('get')) {
      const cpuBefore = serverCpuSeconds(s.proc.pid!);
      const created = await createMany(s, 'bench', { seconds: CREATE_SECONDS, prefix: 'rate' });
      const cpuPerCreateMs = ((serverCpuSeconds(s.proc.pid!) - cpuBefore) * 1000) / created.n;
      rate = created.n / created.seconds;
      createdN = created.n;
      if (phases.has('create')) {
        out.push(`durable creates/s (HTTPS, ${CONCURRENCY} clients, ${fmt(created.seconds)} s): ${fmt(rate, 0)}`);
        out.push(`raw better-sqlite3 durable single-row inserts/s (same run): ${fmt(rawRate, 0)}`);
        out.push(`ratio hearth creates / raw inserts: ${fmt(rate / rawRate, 2)}`);
        out.push(`server CPU per create: ${fmt(cpuPerCreateMs, 3)} ms`);
      }
    }

    if (phases.has('get')) {
      const lat: number[] = [];
      for (let i = 0; i < GET_SAMPLES; i++) {
        const t = performance.now();
        const r = await request(s, 'GET', `/api/v1/namespaces/bench/configmaps/rate-${i % Math.max(1, createdN)}`);
        lat.push(performance.now() - t);
        if (r.status !== 200) throw new Error(`get: ${r.status}`);
      }
      lat.sort((a, b) => a - b);
      out.push(`GET one ConfigMap: p50 ${fmt(percentile(lat, 50), 2)} ms, p99 ${fmt(percentile(lat, 99), 2)} ms (${GET_SAMPLES} sequential)`);
    }

    if (phases.has('list') || phases.has('rss')) {
      await createNamespace(s, 'list');
      await createMany(s, 'list', { count: LIST_SIZE, prefix: 'l' });
      const stored = Number(JSON.parse((await request(s, 'GET', '/api/v1/configmaps?limit=1')).body).metadata.remainingItemCount ?? 0) + 1;
      let rssStored = NaN;
      if (phases.has('rss')) {
        if (RSS_OBJECTS > stored) {
          await createNamespace(s, 'rss');
          await createMany(s, 'rss', { count: RSS_OBJECTS - stored, prefix: 'r' });
        }
        await new Promise((r) => setTimeout(r, 2000));
        rssStored = rssKb(s.proc.pid!) / 1024;
      }
      const listTimes: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t = performance.now();
        const r = await request(s, 'GET', '/api/v1/namespaces/list/configmaps');
        listTimes.push(performance.now() - t);
        const n = JSON.parse(r.body).items.length;
        if (n !== LIST_SIZE) throw new Error(`list returned ${n}`);
      }
      listTimes.sort((a, b) => a - b);
      const rssAfterLists = rssKb(s.proc.pid!) / 1024;
      out.push(`list of ${LIST_SIZE} ConfigMaps: median ${fmt(percentile(listTimes, 50), 0)} ms (5 runs: ${listTimes.map((t) => fmt(t, 0)).join(', ')})`);
      // Selected lists among the same objects: a label none carries, one all carry, one
      // name. The store reads only rows that can match and matches labels on the text SQLite
      // reads from each row, where it once decoded every row.
      const selected = async (query: string, expect: number) => {
        const times: number[] = [];
        for (let i = 0; i < 5; i++) {
          const t = performance.now();
          const r = await request(s, 'GET', `/api/v1/namespaces/list/configmaps?${query}`);
          times.push(performance.now() - t);
          const n = JSON.parse(r.body).items.length;
          if (n !== expect) throw new Error(`${query} returned ${n}`);
        }
        return percentile(times.sort((a, b) => a - b), 50);
      };
      const byLabel = await selected('labelSelector=tier%3Dnone', 0);
      const byAll = await selected('labelSelector=app%3Dbench', LIST_SIZE);
      const byName = await selected('fieldSelector=metadata.name%3Dl-5', 1);
      out.push(`  the same ${LIST_SIZE} with labelSelector=tier=none (matches none): median ${fmt(byLabel, 1)} ms; labelSelector=app=bench (matches all): ${fmt(byAll, 0)} ms; fieldSelector=metadata.name=l-5: ${fmt(byName, 1)} ms`);
      if (phases.has('rss')) out.push(`server RSS with ${Math.max(RSS_OBJECTS, stored)} ConfigMaps stored: ${fmt(rssStored, 0)} MB (after the 5 lists of ${LIST_SIZE}: ${fmt(rssAfterLists, 0)} MB)`);
    }

    // Server-side apply of a ~60-field Deployment, alternating between 3 managers (each object
    // is applied by 3 managers in turn, with force so the alternation always writes), next to
    // PUT updates of the same shape.
    if (phases.has('apply')) {
      await createNamespace(s, 'apply');
      const managers = ['team-a', 'team-b', 'team-c'];
      const applyPath = (w: number) => `/apis/apps/v1/namespaces/apply/deployments/d${w}`;
      const { rate: applyRate, cpuMs: applyCpu } = await rateOf(s, CREATE_SECONDS, async (conn, w, i) => {
        const r = await conn.request('PATCH', `${applyPath(w)}?fieldManager=${managers[i % 3]}&force=true`, Buffer.from(JSON.stringify(deploymentConfig(`d${w}`, i))), 'application/apply-patch+yaml');
        if (r.status !== 200 && r.status !== 201) throw new Error(`apply: ${r.status} ${r.body}`);
      });
      out.push(`server-side applies/s (~60-field Deployment, 3 managers alternating, ${CONCURRENCY} clients): ${fmt(applyRate, 0)} (server CPU ${fmt(applyCpu, 3)} ms each)`);
    }
    if (phases.has('put')) {
      await createNamespace(s, 'put');
      // For scale: creates of the same Deployment shape (a PUT does all a create does, plus reading
      // and diffing the stored object), next to the ConfigMap creates issue 2 measures.
      const { rate: deployCreateRate, cpuMs: deployCreateCpu } = await rateOf(s, CREATE_SECONDS, async (conn, w, i) => {
        const r = await conn.request('POST', '/apis/apps/v1/namespaces/put/deployments', Buffer.from(JSON.stringify(deploymentConfig(`c${w}-${i}`, i))));
        if (r.status !== 201) throw new Error(`create: ${r.status} ${r.body}`);
      });
      out.push(`Deployment creates/s (same shape as below): ${fmt(deployCreateRate, 0)} (server CPU ${fmt(deployCreateCpu, 3)} ms each)`);
      for (let w = 0; w < CONCURRENCY; w++) await request(s, 'POST', '/apis/apps/v1/namespaces/put/deployments', deploymentConfig(`d${w}`, 0));
      // Issue #4's target: PUTs within 15% of issue 2's rate (ConfigMap creates, 16 clients), both
      // measured here in turns (PUT_ROUNDS slices of each) rather than minutes apart.
      let serial = 0;
      const sideBySide = await ratesInTurns(s, PUT_ROUNDS, CREATE_SECONDS / PUT_ROUNDS, {
        put: async (conn, w) => {
          // An unconditional PUT (no resourceVersion): every one a real change.
          const r = await conn.request('PUT', `/apis/apps/v1/namespaces/put/deployments/d${w}`, Buffer.from(JSON.stringify(deploymentConfig(`d${w}`, ++serial))));
          if (r.status !== 200) throw new Error(`put: ${r.status} ${r.body}`);
        },
        configMap: async (conn) => {
          const r = await request(s, 'POST', '/api/v1/namespaces/put/configmaps', configMap('put', `cm-${serial++}`), conn);
          if (r.status !== 201) throw new Error(`create: ${r.status} ${r.body}`);
        },
      });
      const { put, configMap: cm } = sideBySide;
      out.push(`PUT updates/s of the same shape: ${fmt(put.rate, 0)} (server CPU ${fmt(put.cpuMs, 3)} ms each), ${fmt((put.rate / deployCreateRate) * 100, 0)}% of the Deployment create rate`);
      out.push(`  in turns with ConfigMap creates (${PUT_ROUNDS} slices of ${fmt(CREATE_SECONDS / PUT_ROUNDS)} s each): ${fmt(cm.rate, 0)}/s (server CPU ${fmt(cm.cpuMs, 3)} ms each) → PUT rate ${fmt((put.rate / cm.rate) * 100, 0)}% of the ConfigMap create rate${phases.has('create') ? ` (${fmt((put.rate / rate) * 100, 0)}% of the create rate measured first)` : ''}`);
    }

    if (phases.has('rbac')) out.push(...(await rbacBenchmark(s)));
  } finally {
    await stopHearth(s);
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (phases.has('apf-metrics')) out.push(...(await apfAndMetricsOverhead()));
  console.log('');
  for (const line of out) console.log(line);
  if (cpuProfDir) {
    console.log(`server CPU profile written to ${cpuProfDir}`);
    if (Object.keys(profilePhases).length) for (const line of profileReport(cpuProfDir, profStarted, profilePhases, [['rbac-creates/admin', 'rbac-creates/user'], ['rbac-GETs/admin', 'rbac-GETs/user']])) console.log(line);
  }
}

/**
 * Issue 33's target: a user authorized by a RoleBinding (with RBAC_OBJECTS other roles and
 * bindings stored, a quarter of each kind, naming other users) creates and GETs within 5% of the
 * admin's rates, each pair measured in turns on the same number of connections.
 */
async function rbacBenchmark(s: Server): Promise<string[]> {
  const fmt = (n: number, d = 1) => n.toFixed(d);
  const ns = 'rbac';
  await createNamespace(s, ns);
  const ok = async (path: string, body: unknown) => {
    const r = await request(s, 'POST', path, body);
    if (r.status !== 201) throw new Error(`rbac setup ${path}: ${r.status} ${r.body}`);
  };
  const RBAC = '/apis/rbac.authorization.k8s.io/v1';
  const rule = (i: number) => [{ apiGroups: [''], resources: ['configmaps', `things-${i}`], verbs: ['get', 'list'] }];
  const subjects = (i: number) => [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: `someone-${i}` }, { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: `team-${i % 20}` }];
  const ref = (kind: string, name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name });
  for (let i = 0; i < RBAC_OBJECTS / 4; i++) {
    await ok(`${RBAC}/clusterroles`, { metadata: { name: `bench-cr-${i}` }, rules: rule(i) });
    await ok(`${RBAC}/clusterrolebindings`, { metadata: { name: `bench-crb-${i}` }, roleRef: ref('ClusterRole', `bench-cr-${i}`), subjects: subjects(i) });
    await ok(`${RBAC}/namespaces/${ns}/roles`, { metadata: { name: `bench-r-${i}` }, rules: rule(i) });
    await ok(`${RBAC}/namespaces/${ns}/rolebindings`, { metadata: { name: `bench-rb-${i}` }, roleRef: ref('Role', `bench-r-${i}`), subjects: subjects(i) });
  }
  await ok(`${RBAC}/clusterroles`, { metadata: { name: 'bench-writer' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'get'] }] });
  await ok(`${RBAC}/namespaces/${ns}/rolebindings`, { metadata: { name: 'bench-writer' }, roleRef: ref('ClusterRole', 'bench-writer'), subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'bench-user' }] });
  await ok(`/api/v1/namespaces/${ns}/configmaps`, configMap(ns, 'read-me'));

  // bench-user: a client certificate from the cluster CA, in a group of its own (no system:masters).
  const pki = (f: string) => readFileSync(join(s.dataDir, 'pki', f), 'utf8');
  const issued = await issueClientCertificate({ caCertPem: pki('ca.crt'), caKeyPem: pki('ca.key') }, { commonName: 'bench-user', organizations: ['bench-users'] });
  // Both users on connections opened alike, at the same moment, after the setup.
  const userConns = await Promise.all(s.conns.map(() => LeanConnection.open(s.url, { ca: s.creds.ca, cert: issued.certPem, key: issued.keyPem! })));
  const adminConns = await Promise.all(s.conns.map(() => LeanConnection.open(s.url, s.creds)));
  try {
    let serial = 0;
    const create = async (conn: LeanConnection) => {
      const r = await request(s, 'POST', `/api/v1/namespaces/${ns}/configmaps`, configMap(ns, `cm-${serial++}`), conn);
      if (r.status !== 201) throw new Error(`rbac create: ${r.status} ${r.body}`);
    };
    const get = async (conn: LeanConnection) => {
      const r = await request(s, 'GET', `/api/v1/namespaces/${ns}/configmaps/read-me`, undefined, conn);
      if (r.status !== 200) throw new Error(`rbac get: ${r.status} ${r.body}`);
    };
    const user = { ...s, conns: userConns };
    const admin = { ...s, conns: adminConns };
    const lines = [`RBAC (${RBAC_OBJECTS} other roles and bindings stored; a RoleBinding authorizes the user), the user and system:masters in turns (${RBAC_ROUNDS} rounds of ${fmt(RBAC_SLICE_SECONDS)} s slices each; per-round ratios user / system:masters, target ≥ 0.95 for rates):`];
    for (const [what, one] of [['creates', create], ['GETs', get]] as const) {
      const takers = [{ name: 'admin', server: admin, one }, { name: 'user', server: user, one }];
      // A warm-up slice each first (the JIT compiles RBAC's path).
      await slicesInTurns(1, WARMUP_SECONDS / 2, takers);
      const slices = await slicesInTurns(RBAC_ROUNDS, RBAC_SLICE_SECONDS, takers);
      Object.assign(profilePhases, phasesOf(slices, `rbac-${what}/`));
      const r = ratioStats(slices, 'user', 'admin');
      lines.push(`  ${what}/s: user ${fmt(r.rate, 0)} (server CPU ${fmt(r.cpuMs, 3)} ms each), system:masters ${fmt(r.refRate, 0)} (${fmt(r.refCpuMs, 3)} ms)`);
      lines.push(`    rate: ${formatRatio(r.rateRatio, r.rateRatios)}`);
      lines.push(`    server CPU per request: ${formatRatio(r.cpuRatio, r.cpuRatios)}`);
    }
    return lines;
  } finally {
    for (const c of [...userConns, ...adminConns]) c.close();
  }
}

/**
 * Issue 35's target: with API Priority and Fairness and the metrics on (the defaults), creates and
 * GETs within 5% of the same server without them. "Without" is hearth built from BASELINE_REF (the
 * commit before issue 35, in a temporary worktree): the server has no switch for its metrics, and
 * the baseline also has no audit or request-log code, each of which costs nothing when not asked
 * for. Both servers run side by side, in turns, with requests from a user a RoleBinding authorizes
 * (so APF classifies them to a limited level, global-default, and dispatches them through its
 * seats; system:masters' would go to the exempt level).
 */
async function apfAndMetricsOverhead(): Promise<string[]> {
  const fmt = (n: number, d = 1) => n.toFixed(d);
  const ns = 'overhead';
  const baseline = buildBaseline(BASELINE_REF);
  const dirs = [mkdtempSync(join(tmpdir(), 'hearth-bench-on-')), mkdtempSync(join(tmpdir(), 'hearth-bench-off-'))];
  const servers: Server[] = [];
  const userConns: LeanConnection[] = [];
  try {
    servers.push(await startHearth(join(dirs[0], 'data'), { connections: CONCURRENCY }));
    servers.push(await startHearth(join(dirs[1], 'data'), { connections: CONCURRENCY, distMain: baseline.distMain }));
    const users: Server[] = [];
    for (const s of servers) {
      const ok = async (path: string, body: unknown) => {
        const r = await request(s, 'POST', path, body);
        if (r.status !== 201) throw new Error(`overhead setup ${path}: ${r.status} ${r.body}`);
      };
      await createNamespace(s, ns);
      const RBAC = '/apis/rbac.authorization.k8s.io/v1';
      await ok(`${RBAC}/namespaces/${ns}/roles`, { metadata: { name: 'writer' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'get'] }] });
      await ok(`${RBAC}/namespaces/${ns}/rolebindings`, { metadata: { name: 'writer' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'writer' }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'bench-user' }] });
      await ok(`/api/v1/namespaces/${ns}/configmaps`, configMap(ns, 'read-me'));
      const pki = (f: string) => readFileSync(join(s.dataDir, 'pki', f), 'utf8');
      const issued = await issueClientCertificate({ caCertPem: pki('ca.crt'), caKeyPem: pki('ca.key') }, { commonName: 'bench-user', organizations: ['bench-users'] });
      const conns = await Promise.all(s.conns.map(() => LeanConnection.open(s.url, { ca: s.creds.ca, cert: issued.certPem, key: issued.keyPem! })));
      userConns.push(...conns);
      users.push({ ...s, conns });
    }
    const [on, off] = users;
    let serial = 0;
    const create = (s: Server) => async (conn: LeanConnection) => {
      const r = await request(s, 'POST', `/api/v1/namespaces/${ns}/configmaps`, configMap(ns, `cm-${serial++}`), conn);
      if (r.status !== 201) throw new Error(`overhead create: ${r.status} ${r.body}`);
    };
    const get = (s: Server) => async (conn: LeanConnection) => {
      const r = await request(s, 'GET', `/api/v1/namespaces/${ns}/configmaps/read-me`, undefined, conn);
      if (r.status !== 200) throw new Error(`overhead get: ${r.status} ${r.body}`);
    };
    const lines = [`APF + metrics on (this build) vs off (built from ${BASELINE_REF}), a RoleBinding-authorized user on both, in turns (${RBAC_ROUNDS} rounds of ${fmt(RBAC_SLICE_SECONDS)} s slices; per-round ratios on / off, target ≥ 0.95 for rates):`];
    for (const [what, one] of [['creates', create], ['GETs', get]] as const) {
      const takers = [{ name: 'off', server: off, one: one(off) }, { name: 'on', server: on, one: one(on) }];
      await slicesInTurns(1, WARMUP_SECONDS / 2, takers);
      const slices = await slicesInTurns(RBAC_ROUNDS, RBAC_SLICE_SECONDS, takers);
      const r = ratioStats(slices, 'on', 'off');
      lines.push(`  ${what}/s: on ${fmt(r.rate, 0)} (server CPU ${fmt(r.cpuMs, 3)} ms each), off ${fmt(r.refRate, 0)} (${fmt(r.refCpuMs, 3)} ms)`);
      lines.push(`    rate: ${formatRatio(r.rateRatio, r.rateRatios)}`);
      lines.push(`    server CPU per request: ${formatRatio(r.cpuRatio, r.cpuRatios)}`);
    }
    return lines;
  } finally {
    for (const c of userConns) c.close();
    for (const s of servers) await stopHearth(s);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    baseline.remove();
  }
}

await main();
