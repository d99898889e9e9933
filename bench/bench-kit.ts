// What every benchmark needs: a hearth in its own process on loopback with a temporary data
// directory, lean keep-alive connections to it, /proc readings, percentiles, and fixtures.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
export async function startHearth(dataDir: string, opts: { connections: number; args?: string[]; nodeArgs?: string[]; onUnexpectedExit?: (why: string) => void; onOutput?: (line: string) => void }): Promise<Server> {
  // nodeArgs: options for node itself, e.g. ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] (written on SIGTERM, which exits cleanly).
  const start = startCommand();
  await (built ??= build());
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...start.nodeArgs, 'main.js', '--data-dir', dataDir, '--secure-port', '0', ...(opts.args ?? [])], {
    cwd: dirname(DIST_MAIN),
    env: { ...process.env, ...start.env },
    stdio: ['ignore', 'pipe', 'inherit'],
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
  const cpuBefore = serverCpuSeconds(s.proc.pid!);
  const start = performance.now();
  const deadline = start + seconds * 1000;
  await Promise.all(s.conns.map(async (conn, w) => {
    for (let i = 0; performance.now() < deadline; i++) {
      await one(conn, w, i);
      n++;
    }
  }));
  return { n, seconds: (performance.now() - start) / 1000, cpuSeconds: serverCpuSeconds(s.proc.pid!) - cpuBefore };
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
