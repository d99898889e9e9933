// npm run bench:apf [-- --seconds=N] [-- --objects=N] [-- --flooders=N] [-- --ignore-retry-after] [-- --flood-nice=N] [-- --baseline=REF]
// API Priority and Fairness under a LIST flood (issue 35): one hearth in its own process on
// loopback (--max-requests-inflight 40, --max-mutating-requests-inflight 20), a priority level
// `bench-narrow` with one seat (nominalConcurrencyShares 1 of 246) and one small queue, a
// FlowSchema sending the token user `flooder` to it. The flooder LISTs every ConfigMap of a
// namespace (--objects, 1 KiB each) in a tight loop on --flooders keep-alive connections, from a
// process of its own (apf-flood.ts): after a 429 a connection waits Retry-After as client-go
// does, or with --ignore-retry-after retries at once. Meanwhile the token user `light`
// (global-default) and the admin (system:masters, exempt) each GET one ConfigMap, one request at
// a time. Reported: the light user's and the admin's p50/p99 unloaded (no flood) and under the
// flood, the ratio of the light p99s, and the flood's answers (200 vs 429 share). Every status is
// checked; the run is bounded (--seconds per phase) and stops the server and the flooder.
// --flood-nice=N lowers the flooding process's CPU priority (a flooder on another machine).
// --baseline=REF runs it all on hearth built from REF first, for a before/after in one run.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import type { FloodAnswers, FloodOrders } from './apf-flood.ts';
import { LeanConnection } from './bench-client.ts';
import { buildBaseline, configMap, createNamespace, percentile, request, startHearth, stopHearth, type Server } from './bench-kit.ts';

const arg = (name: string, dflt: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
const SECONDS = arg('seconds', 6);
const OBJECTS = arg('objects', 1000);
const FLOODERS = arg('flooders', 16);
const FLOOD_NICE = arg('flood-nice', 0);
const IGNORE_RETRY_AFTER = process.argv.includes('--ignore-retry-after');
const NS = 'bench-apf';

async function must(s: Server, method: string, path: string, body: unknown, want = 201): Promise<void> {
  const r = await request(s, method, path, body);
  if (r.status !== want) throw new Error(`${method} ${path}: ${r.status} ${r.body}`);
}

/** One request at a time on `conn` for `ms`: each latency in ms. */
async function sequential(conn: LeanConnection, path: string, ms: number): Promise<number[]> {
  const out: number[] = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const t0 = performance.now();
    const r = await conn.request('GET', path);
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.body.toString().slice(0, 200)}`);
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

const fmt = (xs: number[]) => `p50 ${percentile(xs, 50).toFixed(2)} ms, p99 ${percentile(xs, 99).toFixed(2)} ms (${xs.length} requests)`;

async function main(build: string, distMain?: string): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-bench-apf-'));
  const tokenFile = join(dataDir, 'tokens.csv');
  writeFileSync(tokenFile, 'flood-token,flooder,flooder-uid,"flooders"\nlight-token,light,light-uid,"lights"\n');
  const s = await startHearth(join(dataDir, 'data'), {
    connections: 4,
    distMain,
    args: ['--token-auth-file', tokenFile, '--max-requests-inflight', '40', '--max-mutating-requests-inflight', '20'],
    onUnexpectedExit: (why) => {
      console.error(why);
      process.exit(1);
    },
  });
  try {
    await must(s, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: 'bench-apf-view' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: ['flooders', 'lights'].map((name) => ({ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name })),
    });
    await createNamespace(s, NS);
    const blob = 'x'.repeat(1024);
    // (a lean connection carries one request at a time: one writer per connection)
    await Promise.all(
      s.conns.map(async (conn, w) => {
        for (let i = w; i < OBJECTS; i += s.conns.length) {
          const r = await request(s, 'POST', `/api/v1/namespaces/${NS}/configmaps`, configMap(NS, `cm-${i}`, { blob }), conn);
          if (r.status !== 201) throw new Error(`create: ${r.status} ${r.body}`);
        }
      }),
    );
    await must(s, 'POST', '/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations', {
      metadata: { name: 'bench-narrow' },
      spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Queue', queuing: { queues: 1, handSize: 1, queueLengthLimit: 4 } } } },
    });
    await must(s, 'POST', '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas', {
      metadata: { name: 'bench-flood' },
      spec: {
        priorityLevelConfiguration: { name: 'bench-narrow' },
        matchingPrecedence: 100,
        rules: [{ subjects: [{ kind: 'User', user: { name: 'flooder' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }],
      },
    });
    const creds = { ca: s.creds.ca, cert: '', key: '' };
    const light = await LeanConnection.open(s.url, creds, { bearerToken: 'light-token' });
    const admin = s.conns[1];
    const one = `/api/v1/namespaces/${NS}/configmaps/cm-1`;
    // Warm-up, then unloaded.
    await sequential(light, one, 1000);
    await sequential(admin, one, 1000);
    const [lightIdle, adminIdle] = await Promise.all([sequential(light, one, SECONDS * 1000), sequential(admin, one, SECONDS * 1000)]);

    const floodOrders: FloodOrders = { url: s.url, ca: s.creds.ca, bearerToken: 'flood-token', path: `/api/v1/namespaces/${NS}/configmaps`, connections: FLOODERS, ignoreRetryAfter: IGNORE_RETRY_AFTER };
    const flooder = fork(fileURLToPath(new URL('./apf-flood.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, HEARTH_BENCH_FLOOD: JSON.stringify(floodOrders) } });
    const floodAnswers = new Promise<FloodAnswers>((resolve, reject) => {
      flooder.on('message', (m) => typeof m === 'object' && resolve(m as FloodAnswers));
      flooder.once('exit', (code) => reject(new Error(`the flooding process exited (${code}) without its answers`)));
    });
    await new Promise<void>((resolve) => flooder.once('message', () => resolve()));
    if (FLOOD_NICE) setPriority(flooder.pid!, FLOOD_NICE);
    await new Promise((r) => setTimeout(r, 500));
    const [lightFlood, adminFlood] = await Promise.all([sequential(light, one, SECONDS * 1000), sequential(admin, one, SECONDS * 1000)]);
    flooder.send('stop');
    const answers = await floodAnswers;
    if (answers.error) throw new Error(`flooding client: ${answers.error}`);
    light.close();

    const total = answers.ok + answers.tooMany;
    console.log(`bench:apf, ${build} — ${OBJECTS} ConfigMaps of 1 KiB, ${FLOODERS} flooding connections (${IGNORE_RETRY_AFTER ? "ignoring Retry-After" : "waiting Retry-After"}${FLOOD_NICE ? `, nice ${FLOOD_NICE}` : ""}), ${SECONDS} s per phase`);
    console.log(`  light (global-default)  unloaded: ${fmt(lightIdle)}`);
    console.log(`  light (global-default)  flood:    ${fmt(lightFlood)}`);
    console.log(`  light p99 flood / unloaded: ${(percentile(lightFlood, 99) / percentile(lightIdle, 99)).toFixed(2)}×`);
    console.log(`  system:masters (exempt) unloaded: ${fmt(adminIdle)}`);
    console.log(`  system:masters (exempt) flood:    ${fmt(adminFlood)}`);
    console.log(`  flood LISTs: ${total} answered, ${answers.ok} served, ${answers.tooMany} refused (429: ${((100 * answers.tooMany) / Math.max(1, total)).toFixed(1)}%)`);
  } finally {
    await stopHearth(s);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// --baseline=REF: the same run on hearth built from REF first (a temporary worktree), then on this build.
const baselineRef = process.argv.find((a) => a.startsWith('--baseline='))?.slice(11);
if (baselineRef) {
  const baseline = buildBaseline(baselineRef);
  try {
    await main(`built from ${baselineRef}`, baseline.distMain);
  } finally {
    baseline.remove();
  }
}
await main('this build');
