// npm run bench:admission [-- --only=webhook] [-- --quick] [-- --seconds=S --connections=N]
// What admission costs on creates, one section per --only name (all when not given):
//   - webhook: ConfigMap creates through one local mutating webhook (HTTPS on loopback, its own
//     CA, answering a one-operation JSONPatch) against the same creates with no webhook
//     configured, in turns (a round of each, --rounds times) so the machine's drift weighs on both
//     alike: requests/s, p50 and p99 latency, server CPU per request. The webhook runs in this
//     process; its CPU is not the server's.
// Every request's status (201) and, for the webhook, the patched label are checked, so a refused
// or unmutated request cannot pass for a fast one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHearth, stopHearth, request, createNamespace, configMap, percentile, serverCpuSecondsPrecise, type Server } from './bench-kit.ts';
import { startAdmissionWebhook } from '../test/helpers/admission-webhook.ts';

const quick = process.argv.includes('--quick');
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const SECTIONS = ['webhook'];
const only = new Set(arg('only')?.split(',') ?? SECTIONS);
for (const p of only) if (!SECTIONS.includes(p)) throw new Error(`--only: unknown section ${p} (known: ${SECTIONS.join(', ')})`);
const seconds = Number(arg('seconds') ?? (quick ? 2 : 5));
const rounds = Number(arg('rounds') ?? (quick ? 1 : 3));
const connections = Number(arg('connections') ?? 8);

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
  const deadline = start + seconds * 1000;
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

async function webhookSection(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-bench-admission-'));
  const wh = await startAdmissionWebhook();
  wh.handle(() => ({ allowed: true, patch: [{ op: 'add', path: '/metadata/labels', value: { mutated: 'yes' } }] }));
  let s: Server | undefined;
  try {
    s = await startHearth(dataDir, { connections, onUnexpectedExit: (why) => { console.error(why); process.exit(1); } });
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
    for (let i = 0; i < rounds; i++) {
      plain.push(await createsFor(s, 'plain', `r${i}`, () => {}));
      hooked.push(await createsFor(s, 'hooked', `r${i}`, mutated));
    }
    console.log(`webhook: ConfigMap creates, ${connections} connections, ${rounds} round(s) of ${seconds} s each`);
    console.log(report('no webhook', plain));
    console.log(report('one mutating webhook', hooked));
    console.log(`webhook calls: ${wh.received.length}, over ${wh.connections} connection(s)`);
  } finally {
    if (s) await stopHearth(s);
    await wh.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (only.has('webhook')) await webhookSection();
