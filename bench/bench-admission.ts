// npm run bench:admission [-- --quick] [-- --only=chain] [-- --rounds=N --slice=S]
// What admission costs (issue 34). --only=chain: the default plugin chain (kube 1.36's default-on
// plugins hearth has, plus NodeRestriction; no webhook or policy configured) against the chain
// switched off (--disable-admission-plugins naming all of them; RBAC's escalation check, which
// is not a plugin, stays), on two hearth servers side by side in one run, taking turns in short
// slices (bench-kit's slicesInTurns): ConfigMap creates (what most plugins only look at and
// pass) and Pod creates (what most of them act on: the ServiceAccount token volume, LimitRange
// defaults, PodSecurity's checks, Priority, tolerations, quota). Each figure is the chain's rate
// and server CPU per request as a ratio to the chain-off server's: the median of the per-round
// ratios with its 95% confidence interval, and the pooled ratio. Target: rate ≥ 0.95 on creates.
// Every request's status is checked, so a refused request cannot pass for a fast one.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHearth, stopHearth, request, createNamespace, configMap, slicesInTurns, ratioStats, formatRatio, type RequestMaker, type Server, type TurnTaker } from './bench-kit.ts';
import { DEFAULT_ON_PLUGINS, HEARTH_DEFAULT_ON_PLUGINS } from '../server/admission/plugins.ts';

const quick = process.argv.includes('--quick');
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const SECTIONS = ['chain'];
const only = new Set(arg('only')?.split(',') ?? SECTIONS);
for (const p of only) if (!SECTIONS.includes(p)) throw new Error(`--only: unknown measurement ${p} (known: ${SECTIONS.join(', ')})`);
const COMMAND = `npm run bench:admission -- ${process.argv.slice(2).join(' ')}`.trim();
const CONCURRENCY = 16;
const ROUNDS = Number(arg('rounds') ?? (quick ? 30 : 150));
const SLICE_SECONDS = Number(arg('slice') ?? 0.25);
const WARMUP_SECONDS = quick ? 1 : 3;
const NS = 'bench';

function check(r: { status: number; body: string }, want: number, what: string): void {
  if (r.status !== want) throw new Error(`${what}: ${r.status} ${r.body.slice(0, 300)}`);
}

/** A small pod of the kind a Deployment makes: one container with requests and limits. */
function pod(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels: { app: 'bench' } },
    spec: {
      containers: [{ name: 'app', image: 'registry.example/app:1.0', ports: [{ containerPort: 8080 }], resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '100m', memory: '64Mi' } } }],
    },
  };
}

/** Waits (bounded) for the namespace's default ServiceAccount, which ServiceAccount admission needs for pods. */
async function defaultServiceAccount(s: Server): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await request(s, 'GET', `/api/v1/namespaces/${NS}/serviceaccounts/default`)).status === 200) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no default ServiceAccount after 10 s');
}

async function chain(out: string[]): Promise<void> {
  const dirs = [mkdtempSync(join(tmpdir(), 'hearth-bench-admission-on-')), mkdtempSync(join(tmpdir(), 'hearth-bench-admission-off-'))];
  const allPlugins = [...DEFAULT_ON_PLUGINS, ...HEARTH_DEFAULT_ON_PLUGINS].join(',');
  const on = await startHearth(join(dirs[0], 'data'), { connections: CONCURRENCY });
  const off = await startHearth(join(dirs[1], 'data'), { connections: CONCURRENCY, args: ['--disable-admission-plugins', allPlugins] });
  const fmt = (n: number, d = 1) => n.toFixed(d);
  try {
    for (const s of [on, off]) {
      await createNamespace(s, NS);
      await defaultServiceAccount(s);
    }
    const serial = { on: 0, off: 0 };
    const creates = (s: Server, who: 'on' | 'off', make: (name: string) => unknown, path: string): RequestMaker => async (conn) => check(await request(s, 'POST', path, make(`${who}-${serial[who]++}`), conn), 201, `${who} create`);
    const compare = async (what: string, make: (name: string) => unknown, path: string) => {
      const takers: TurnTaker[] = [
        { name: 'off', server: off, one: creates(off, 'off', make, path) },
        { name: 'on', server: on, one: creates(on, 'on', make, path) },
      ];
      await slicesInTurns(1, WARMUP_SECONDS, takers);
      const slices = await slicesInTurns(ROUNDS, SLICE_SECONDS, takers);
      const r = ratioStats(slices, 'on', 'off');
      out.push(`${what} (${CONCURRENCY} clients each, ${ROUNDS} rounds of ${SLICE_SECONDS} s slices in turns): chain off ${fmt(r.refRate, 0)}/s (server CPU ${fmt(r.refCpuMs, 3)} ms each), default chain ${fmt(r.rate, 0)}/s (${fmt(r.cpuMs, 3)} ms each) → the chain's as a ratio to chain off:`);
      out.push(`  rate ${formatRatio(r.rateRatio, r.rateRatios)}`);
      out.push(`  server CPU per request ${formatRatio(r.cpuRatio, r.cpuRatios)}`);
    };
    await compare('ConfigMap creates', (name) => configMap(NS, name), `/api/v1/namespaces/${NS}/configmaps`);
    await compare('Pod creates', pod, `/api/v1/namespaces/${NS}/pods`);
  } finally {
    await stopHearth(on);
    await stopHearth(off);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

async function main() {
  console.log(`hearth admission benchmark${quick ? ' (quick)' : ''} — node ${process.version}, loopback, 2-core machine expected`);
  const out: string[] = [];
  if (only.has('chain')) await chain(out);
  console.log('');
  for (const line of out) console.log(line);
  console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(`command: ${COMMAND}`);
}

await main();
