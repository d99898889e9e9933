// What every benchmark needs: a hearth in its own process on loopback with a temporary data
// directory, lean keep-alive connections to it, /proc readings, percentiles, and fixtures.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LeanConnection, type TlsCredentials } from './bench-client.ts';
import { build, DIST_MAIN } from '../scripts/build.mjs';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface Server {
  proc: ChildProcess;
  url: string;
  creds: TlsCredentials;
  /** Keep-alive connections; conns[0] serves sequential requests. */
  conns: LeanConnection[];
  dataDir: string;
}

const stopping = new WeakSet<ChildProcess>();

/**
 * How `npm start` runs the server, read from package.json so benchmarks measure the same process:
 * environment assignments, then `node OPTIONS... dist/server/main.js` (the bundle `npm run build`
 * makes; npm runs it before start). The options there are about
 * memory (issue 2's RSS figure): young generations of 8 MiB per semi-space instead of 16 (every
 * isolate: main and the storage threads; 4 MiB saves ~8 MB more but triples
 * the scavenges), 2 V8 helper threads on a 2-core machine, and 2 glibc malloc arenas instead of
 * up to one per thread, each holding on to memory its thread freed.
 */
export function startCommand(): { env: Record<string, string>; nodeArgs: string[] } {
  const script = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start;
  const words = script.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (words.length && /^[A-Z_][A-Z0-9_]*=/.test(words[0])) {
    const w = words.shift()!;
    env[w.slice(0, w.indexOf('='))] = w.slice(w.indexOf('=') + 1);
  }
  if (words[0] !== 'node' || words[words.length - 1] !== 'dist/server/main.js') throw new Error(`package.json start script is not "[VAR=value]... node [options] dist/server/main.js": ${script}`);
  return { env, nodeArgs: words.slice(1, -1) };
}

let built: Promise<void> | undefined;

/**
 * Starts the server on a free port, as `npm start` does (the bundle built once per process from
 * the current source, then startCommand). It is started as `main.js` from dist/server/ (the same
 * program): a `pkill -f dist/server/main.js` aimed at another server must not end a run midway.
 * An exit not asked for by stopHearth calls onUnexpectedExit (requests would hang otherwise).
 */
export async function startHearth(dataDir: string, opts: { connections: number; args?: string[]; nodeArgs?: string[]; onUnexpectedExit?: (why: string) => void; onOutput?: (line: string) => void; distMain?: string }): Promise<Server> {
  // nodeArgs: options for node itself, e.g. ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] (written on SIGTERM, which exits cleanly).
  // distMain: another build's bundle (buildBaseline) instead of this source's.
  const start = startCommand();
  if (!opts.distMain) await (built ??= build());
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...start.nodeArgs, 'main.js', '--data-dir', dataDir, '--secure-port', '0', ...(opts.args ?? [])], {
    cwd: dirname(opts.distMain ?? DIST_MAIN),
    env: { ...process.env, ...start.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // hearth's log (stderr): to onOutput; lines other than klog's info lines (warnings, errors and
  // their stacks) are shown, as the inherited stderr showed them before the log moved there.
  proc.stderr!.on('data', (d) => {
    const text = String(d);
    opts.onOutput?.(text.trim());
    for (const line of text.split('\n')) if (line !== '' && !/^I\d{4} /.test(line)) process.stderr.write(`${line}\n`);
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    proc.stdout!.on('data', (d) => {
      opts.onOutput?.(String(d).trim());
      buf += d;
      const m = /at (https:\/\/\S+)/.exec(buf);
      if (m) resolve(m[1]);
    });
    proc.on('exit', (c) => reject(new Error(`server exited with ${c}`)));
  });
  proc.on('exit', (code, signal) => {
    if (!stopping.has(proc)) opts.onUnexpectedExit?.(`the server (pid ${proc.pid}) exited unexpectedly (code ${code}, signal ${signal})`);
  });
  const read = (f: string) => readFileSync(join(dataDir, 'pki', f), 'utf8');
  const creds = { ca: read('ca.crt'), cert: read('admin.crt'), key: read('admin.key') };
  const conns = await Promise.all(Array.from({ length: opts.connections }, () => LeanConnection.open(url, creds)));
  return { proc, url, creds, conns, dataDir };
}

/**
 * Builds hearth as it was at a git commit (a detached worktree in a temporary directory, sharing
 * this checkout's node_modules), to run side by side with the current source: what a change costs,
 * measured against the code without it. Returns the bundle's path and a cleanup.
 */
export function buildBaseline(ref: string): { distMain: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-baseline-'));
  const git = (...args: string[]) => execFileSync('git', ['-C', ROOT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }).toString().trim();
  git('worktree', 'add', '--detach', dir, ref);
  const remove = () => {
    try {
      git('worktree', 'remove', '--force', dir);
    } catch {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  try {
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    execFileSync(process.execPath, [join(dir, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  } catch (e) {
    remove();
    throw e;
  }
  return { distMain: join(dir, 'dist', 'server', 'main.js'), remove };
}

export async function stopHearth(s: Server): Promise<void> {
  for (const c of s.conns) c.close();
  if (s.proc.exitCode === null) {
    const exited = new Promise((r) => s.proc.once('exit', r));
    stopping.add(s.proc);
    s.proc.kill('SIGTERM');
    await exited;
  }
}

export async function request(s: Server, method: string, path: string, body?: unknown, conn = s.conns[0], contentType?: string): Promise<{ status: number; body: string }> {
  const r = await conn.request(method, path, body === undefined ? undefined : Buffer.from(JSON.stringify(body)), contentType);
  return { status: r.status, body: r.body.toString() };
}

export async function createNamespace(s: Server, name: string): Promise<void> {
  const r = await request(s, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  if (r.status !== 201) throw new Error(`namespace create: ${r.status} ${r.body}`);
}

/** Server CPU seconds (user + system) from /proc. */
export function serverCpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/**
 * Server CPU seconds from each thread's /proc schedstat (ns of run time): /proc/<pid>/stat counts
 * in 10 ms ticks, ±6% of a 0.2 s slice's CPU. (A thread that ended takes its time with it: the
 * server's threads live as long as it does.)
 */
export function serverCpuSecondsPrecise(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // (the thread ended between the listing and the read)
    }
  }
  return ns / 1e9;
}

export function rssKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

export function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

export function configMap(ns: string, name: string, data: Record<string, string> = { 'config.yaml': 'x'.repeat(200), mode: 'fast' }) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels: { app: 'bench', tier: 'cache' } }, data };
}

/** A realistic Deployment of about 60 fields; `i` varies what each write sets. */
export function deploymentConfig(name: string, i: number) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels: { app: name, tier: 'web', team: 'platform' }, annotations: { 'example.com/revision': String(i) } },
    spec: {
      replicas: 3,
      revisionHistoryLimit: 5,
      selector: { matchLabels: { app: name } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
      template: {
        metadata: { labels: { app: name, tier: 'web' }, annotations: { 'prometheus.io/scrape': 'true' } },
        spec: {
          serviceAccountName: 'web',
          terminationGracePeriodSeconds: 20,
          containers: [
            {
              name: 'app',
              image: `registry.example.com/web:${i % 7}`,
              args: ['--port=8080', '--log-level=info'],
              ports: [{ name: 'http', containerPort: 8080 }, { name: 'metrics', containerPort: 9090 }],
              env: [{ name: 'MODE', value: 'production' }, { name: 'REGION', value: 'eu' }, { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
              resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '512Mi' } },
              readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 5 },
              livenessProbe: { httpGet: { path: '/live', port: 8080 }, initialDelaySeconds: 10 },
              volumeMounts: [{ name: 'config', mountPath: '/etc/web' }],
            },
            { name: 'sidecar', image: 'registry.example.com/proxy:2', ports: [{ containerPort: 15001 }] },
          ],
          volumes: [{ name: 'config', configMap: { name: `${name}-config` } }],
        },
      },
    },
  };
}

/** Requests per second for `seconds`, one worker per server connection, and the server CPU ms per request. */
export async function rateOf(s: Server, seconds: number, one: RequestMaker): Promise<{ rate: number; cpuMs: number }> {
  const m = await measure(s, seconds, one);
  return { rate: m.n / m.seconds, cpuMs: (m.cpuSeconds * 1000) / m.n };
}

/** One request on a connection: `worker` is the connection's index, `i` counts its requests. */
export type RequestMaker = (conn: LeanConnection, worker: number, i: number) => Promise<void>;

async function measure(s: Server, seconds: number, one: RequestMaker): Promise<{ n: number; seconds: number; cpuSeconds: number }> {
  let n = 0;
  const cpuBefore = serverCpuSecondsPrecise(s.proc.pid!);
  const start = performance.now();
  const deadline = start + seconds * 1000;
  await Promise.all(s.conns.map(async (conn, w) => {
    for (let i = 0; performance.now() < deadline; i++) {
      await one(conn, w, i);
      n++;
    }
  }));
  return { n, seconds: (performance.now() - start) / 1000, cpuSeconds: serverCpuSecondsPrecise(s.proc.pid!) - cpuBefore };
}

/**
 * rateOf for two or more kinds of request measured side by side: `rounds` rounds of one slice
 * of each kind in turn. This machine's speed drifts by tens of percent within a run, so rates
 * measured minutes apart compare the moments as much as the requests; in turns, a drift weighs
 * on each kind alike.
 */
export async function ratesInTurns<K extends string>(s: Server, rounds: number, sliceSeconds: number, kinds: Record<K, RequestMaker>): Promise<Record<K, { rate: number; cpuMs: number }>> {
  const names = Object.keys(kinds) as K[];
  const sum = Object.fromEntries(names.map((k) => [k, { n: 0, seconds: 0, cpuSeconds: 0 }])) as Record<K, { n: number; seconds: number; cpuSeconds: number }>;
  for (let r = 0; r < rounds; r++) {
    for (const k of names) {
      const m = await measure(s, sliceSeconds, kinds[k]);
      sum[k].n += m.n;
      sum[k].seconds += m.seconds;
      sum[k].cpuSeconds += m.cpuSeconds;
    }
  }
  return Object.fromEntries(names.map((k) => [k, { rate: sum[k].n / sum[k].seconds, cpuMs: (sum[k].cpuSeconds * 1000) / sum[k].n }])) as Record<K, { rate: number; cpuMs: number }>;
}

/** One user's (or kind's) requests: the server connections they go over and what each one does. */
export interface TurnTaker {
  name: string;
  server: Server;
  one: RequestMaker;
}

/** One slice of one TurnTaker: requests, wall seconds, server CPU seconds, and when (µs, CLOCK_MONOTONIC, as V8's profiles). */
export interface TurnSlice {
  name: string;
  round: number;
  n: number;
  seconds: number;
  cpuSeconds: number;
  window: [number, number];
}

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/**
 * `rounds` rounds of one slice of each TurnTaker, every slice kept (for the spread across
 * slices, and for splitting a CPU profile by phase: see cpuprofile-summary.ts). The order within
 * a round changes from round to round (rotated, and reversed every other cycle: a b c, b c a,
 * c a b, c b a, …), so that no TurnTaker always follows the same one or holds the same place
 * (whatever a slice leaves behind — garbage to collect, a JIT deopt — falls on each alike).
 */
export async function slicesInTurns(rounds: number, sliceSeconds: number, takers: TurnTaker[]): Promise<TurnSlice[]> {
  const slices: TurnSlice[] = [];
  const k = takers.length;
  for (let r = 0; r < rounds; r++) {
    const rotated = [...takers.slice(r % k), ...takers.slice(0, r % k)];
    const order = Math.floor(r / k) % 2 === 0 ? rotated : rotated.reverse();
    for (const t of order) {
      const from = monotonicUs();
      const m = await measure(t.server, sliceSeconds, t.one);
      slices.push({ name: t.name, round: r, n: m.n, seconds: m.seconds, cpuSeconds: m.cpuSeconds, window: [from, monotonicUs()] });
    }
  }
  return slices;
}

/** Per-round ratios: their median with its 95% confidence interval, their range, how many. */
export interface RatioSpread {
  median: number;
  /** The median's 95% confidence interval, from order statistics (no assumption about the distribution: a slice hit by another process's burst is an outlier, not a shift). */
  low: number;
  high: number;
  min: number;
  max: number;
  rounds: number;
}

export interface RatioStats {
  /** Pooled over every slice: requests / seconds, server CPU ms / request. */
  rate: number;
  cpuMs: number;
  /** The same pooled for the reference. */
  refRate: number;
  refCpuMs: number;
  /** Pooled ratios (this / reference). */
  rateRatio: number;
  cpuRatio: number;
  /** Per round, this slice's over the reference's slice of the same round. */
  rateRatios: RatioSpread;
  cpuRatios: RatioSpread;
}

function spread(values: number[]): RatioSpread {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const median = n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  // Ranks n/2 ∓ 1.96·√n/2 (the binomial's normal approximation), 1-based.
  const half = (1.96 * Math.sqrt(n)) / 2;
  const lowRank = Math.max(1, Math.floor(n / 2 - half));
  const highRank = Math.min(n, Math.ceil(n / 2 + half + 1));
  return { median, low: sorted[lowRank - 1], high: sorted[highRank - 1], min: sorted[0], max: sorted[n - 1], rounds: n };
}

/** `name` against `reference` over the slices of slicesInTurns. */
export function ratioStats(slices: TurnSlice[], name: string, reference: string): RatioStats {
  const pool = (who: string) => {
    const mine = slices.filter((s) => s.name === who);
    const n = mine.reduce((a, s) => a + s.n, 0);
    return { rate: n / mine.reduce((a, s) => a + s.seconds, 0), cpuMs: (mine.reduce((a, s) => a + s.cpuSeconds, 0) * 1000) / n };
  };
  const a = pool(name);
  const b = pool(reference);
  const rateRatios: number[] = [];
  const cpuRatios: number[] = [];
  for (const s of slices) {
    if (s.name !== name) continue;
    const ref = slices.find((x) => x.name === reference && x.round === s.round);
    if (!ref || !s.n || !ref.n) continue;
    rateRatios.push(s.n / s.seconds / (ref.n / ref.seconds));
    cpuRatios.push(s.cpuSeconds / s.n / (ref.cpuSeconds / ref.n));
  }
  return { rate: a.rate, cpuMs: a.cpuMs, refRate: b.rate, refCpuMs: b.cpuMs, rateRatio: a.rate / b.rate, cpuRatio: a.cpuMs / b.cpuMs, rateRatios: spread(rateRatios), cpuRatios: spread(cpuRatios) };
}

/** "median 0.990 [0.975, 1.004] of 200 rounds (range 0.61–1.52); pooled 0.987" */
export function formatRatio(pooled: number, s: RatioSpread): string {
  return `median ${s.median.toFixed(3)} [95% CI ${s.low.toFixed(3)}, ${s.high.toFixed(3)}] of ${s.rounds} rounds (range ${s.min.toFixed(2)}–${s.max.toFixed(2)}); pooled ${pooled.toFixed(3)}`;
}

/** What cpuprofile-summary.ts splits a profile by: each TurnTaker's windows and request count. */
export function phasesOf(slices: TurnSlice[], prefix = ''): Record<string, { windows: Array<[number, number]>; requests: number }> {
  const phases: Record<string, { windows: Array<[number, number]>; requests: number }> = {};
  for (const s of slices) {
    const p = (phases[prefix + s.name] ??= { windows: [], requests: 0 });
    p.windows.push(s.window);
    p.requests += s.n;
  }
  return phases;
}
