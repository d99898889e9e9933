// npm run bench:admission [-- --quick] [-- --only=chain,webhook] [-- --rounds=N --slice=S]
// What admission costs (issue 34). --only=chain: the default plugin chain (kube 1.36's default-on
// plugins hearth has, plus NodeRestriction; no webhook or policy configured) against the chain
// switched off (--disable-admission-plugins naming all of them; RBAC's escalation check, which
// is not a plugin, stays), on two hearth servers side by side in one run, taking turns in short
// slices (bench-kit's slicesInTurns): ConfigMap creates (what most plugins only look at and
// pass) and Pod creates (what most of them act on: the ServiceAccount token volume, LimitRange
// defaults, PodSecurity's checks, Priority, tolerations, quota). Each figure is the chain's rate
// and server CPU per request as a ratio to the chain-off server's: the median of the per-round
// ratios with its 95% confidence interval, and the pooled ratio. Target: rate ≥ 0.95 on creates.
// --only=webhook: ConfigMap creates through one local mutating webhook (HTTPS on loopback, its
// own CA, answering a one-operation JSONPatch) against the same creates in a namespace the webhook
// does not apply to, on one server, a slice of each in turn (3 rounds of 5 s; quick: 1 of 2 s):
// requests/s, p50 and p99 latency, server CPU per request. The webhook runs in this process; its
// CPU is not the server's. Every answer is checked to carry the webhook's label.
// Every request's status is checked, so a refused request cannot pass for a fast one.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHearth, stopHearth, request, createNamespace, configMap, slicesInTurns, ratioStats, formatRatio, percentile, serverCpuSecondsPrecise, type RequestMaker, type Server, type TurnTaker } from './bench-kit.ts';
import { startAdmissionWebhook } from '../test/helpers/admission-webhook.ts';
import { DEFAULT_ON_PLUGINS, HEARTH_DEFAULT_ON_PLUGINS } from '../server/admission/plugins.ts';

const quick = process.argv.includes('--quick');
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const SECTIONS = ['chain', 'webhook'];
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
    const serial = { on: 0, off: 0, shaped: 0 };
    const creates = (s: Server, who: keyof typeof serial, make: (name: string) => unknown, path: string): RequestMaker => async (conn) => check(await request(s, 'POST', path, make(`${who}-${serial[who]++}`), conn), 201, `${who} create`);
    /** `shaped`: the chain-off server given what the chain made of the same request (a control: what the bigger object costs, the plugins' own work aside). */
    const compare = async (what: string, make: (name: string) => unknown, path: string, shaped?: (name: string) => unknown) => {
      const takers: TurnTaker[] = [
        { name: 'off', server: off, one: creates(off, 'off', make, path) },
        { name: 'on', server: on, one: creates(on, 'on', make, path) },
      ];
      if (shaped) takers.push({ name: 'shaped', server: off, one: creates(off, 'shaped', shaped, path) });
      await slicesInTurns(1, WARMUP_SECONDS, takers);
      const slices = await slicesInTurns(ROUNDS, SLICE_SECONDS, takers);
      const r = ratioStats(slices, 'on', 'off');
      out.push(`${what} (${CONCURRENCY} clients each, ${ROUNDS} rounds of ${SLICE_SECONDS} s slices in turns): chain off ${fmt(r.refRate, 0)}/s (server CPU ${fmt(r.refCpuMs, 3)} ms each), default chain ${fmt(r.rate, 0)}/s (${fmt(r.cpuMs, 3)} ms each) → the chain's as a ratio to chain off:`);
      out.push(`  rate ${formatRatio(r.rateRatio, r.rateRatios)}`);
      out.push(`  server CPU per request ${formatRatio(r.cpuRatio, r.cpuRatios)}`);
      if (shaped) {
        const c = ratioStats(slices, 'on', 'shaped');
        out.push(`  control: chain off, sent the pod as the chain admits it (token volume, tolerations, priority, defaults): ${fmt(c.refRate, 0)}/s (${fmt(c.refCpuMs, 3)} ms each) → the chain's own cost, as the chain's ratio to it:`);
        out.push(`    rate ${formatRatio(c.rateRatio, c.rateRatios)}`);
        out.push(`    server CPU per request ${formatRatio(c.cpuRatio, c.cpuRatios)}`);
      }
    };
    await compare('ConfigMap creates', (name) => configMap(NS, name), `/api/v1/namespaces/${NS}/configmaps`);
    // What the chain makes of a pod: one admitted, read back, without what the store sets.
    const admitted = await request(on, 'POST', `/api/v1/namespaces/${NS}/pods?dryRun=All`, pod('shape'));
    check(admitted, 201, 'dry-run pod');
    const shape = JSON.parse(admitted.body) as { metadata: Record<string, unknown>; spec: unknown };
    const shapedPod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS, labels: shape.metadata.labels, annotations: shape.metadata.annotations }, spec: shape.spec });
    await compare('Pod creates', pod, `/api/v1/namespaces/${NS}/pods`, shapedPod);
  } finally {
    await stopHearth(on);
    await stopHearth(off);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

const WEBHOOK_CONNECTIONS = 8;
const WEBHOOK_ROUNDS = quick ? 1 : 3;
const WEBHOOK_SECONDS = quick ? 2 : 5;

interface Slice {
  n: number;
  seconds: number;
  cpuSeconds: number;
  latenciesMs: number[];
}

/** Creates for `seconds` on every connection; each request's latency kept. */
async function createsFor(s: Server, ns: string, prefix: string, check: (body: string) => void): Promise<Slice> {
  const latenciesMs: number[] = [];
  const cpuBefore = serverCpuSecondsPrecise(s.proc.pid!);
  const start = performance.now();
  const deadline = start + WEBHOOK_SECONDS * 1000;
  await Promise.all(
    s.conns.map(async (conn, w) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const t = performance.now();
        const r = await request(s, 'POST', `/api/v1/namespaces/${ns}/configmaps`, configMap(ns, `${prefix}-${w}-${i}`), conn);
        latenciesMs.push(performance.now() - t);
        if (r.status !== 201) throw new Error(`create: ${r.status} ${r.body}`);
        check(r.body);
      }
    }),
  );
  return { n: latenciesMs.length, seconds: (performance.now() - start) / 1000, cpuSeconds: serverCpuSecondsPrecise(s.proc.pid!) - cpuBefore, latenciesMs };
}

function report(name: string, slices: Slice[]): string {
  const n = slices.reduce((a, x) => a + x.n, 0);
  const secs = slices.reduce((a, x) => a + x.seconds, 0);
  const cpu = slices.reduce((a, x) => a + x.cpuSeconds, 0);
  const lat = slices.flatMap((x) => x.latenciesMs).sort((a, b) => a - b);
  return `${name.padEnd(22)} ${(n / secs).toFixed(0).padStart(6)} req/s   p50 ${percentile(lat, 50).toFixed(2).padStart(7)} ms   p99 ${percentile(lat, 99).toFixed(2).padStart(7)} ms   server CPU ${((cpu * 1000) / n).toFixed(3)} ms/req   (${n} creates)`;
}

async function webhookSection(out: string[]): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-bench-admission-'));
  const wh = await startAdmissionWebhook();
  wh.handle(() => ({ allowed: true, patch: [{ op: 'add', path: '/metadata/labels', value: { mutated: 'yes' } }] }));
  let s: Server | undefined;
  try {
    s = await startHearth(dataDir, { connections: WEBHOOK_CONNECTIONS, onUnexpectedExit: (why) => { console.error(why); process.exit(1); } });
    await createNamespace(s, 'plain');
    await createNamespace(s, 'hooked');
    // The webhook applies to the `hooked` namespace only, so both measure in one server.
    const config = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'bench' },
      webhooks: [
        {
          name: 'bench.hearth.test',
          clientConfig: { url: `${wh.base}/mutate`, caBundle: wh.caBundle },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'hooked' } },
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
        },
      ],
    };
    const r = await request(s, 'POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', config);
    if (r.status !== 201) throw new Error(`webhook configuration: ${r.status} ${r.body}`);
    const plain: Slice[] = [];
    const hooked: Slice[] = [];
    const mutated = (body: string) => {
      if (!body.includes('"mutated":"yes"')) throw new Error(`not mutated: ${body.slice(0, 200)}`);
    };
    // Warm-up (connections to the webhook, JIT), then rounds in turns.
    await createsFor(s, 'hooked', 'warm', mutated);
    for (let i = 0; i < WEBHOOK_ROUNDS; i++) {
      plain.push(await createsFor(s, 'plain', `r${i}`, () => {}));
      hooked.push(await createsFor(s, 'hooked', `r${i}`, mutated));
    }
    out.push(`ConfigMap creates through one mutating webhook (${WEBHOOK_CONNECTIONS} clients, ${WEBHOOK_ROUNDS} round(s) of ${WEBHOOK_SECONDS} s slices in turns):`);
    out.push(`  ${report('no webhook', plain)}`);
    out.push(`  ${report('one mutating webhook', hooked)}`);
    out.push(`  webhook calls: ${wh.received.length}, over ${wh.connections} connection(s)`);
  } finally {
    if (s) await stopHearth(s);
    await wh.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  console.log(`hearth admission benchmark${quick ? ' (quick)' : ''} — node ${process.version}, loopback, 2-core machine expected`);
  const out: string[] = [];
  if (only.has('chain')) await chain(out);
  if (only.has('webhook')) await webhookSection(out);
  console.log('');
  for (const line of out) console.log(line);
  console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(`command: ${COMMAND}`);
}

await main();
