// npm run bench:audit [-- --quick] [-- --rounds=N --slice=S] [-- --mode=blocking|batch] [-- --omit-request-received]
// What auditing costs (issue 35): a policy auditing every request at Metadata, written to a log
// file (--audit-log-mode blocking by default: each event written before the request goes on),
// against no policy at all, on two hearth servers side by side in one run, taking turns in short
// slices (bench-kit's slicesInTurns): ConfigMap creates and GETs of one ConfigMap. Each figure is
// the audited server's rate and server CPU per request as a ratio to the other's: the median of
// the per-round ratios with its 95% confidence interval, and the pooled ratio. Target: rate ≥ 0.95.
// Every request's status is checked, and the audit log is checked to hold two events per request.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHearth, stopHearth, request, createNamespace, configMap, slicesInTurns, ratioStats, formatRatio, type RequestMaker, type Server, type TurnTaker } from './bench-kit.ts';

const quick = process.argv.includes('--quick');
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const COMMAND = `npm run bench:audit -- ${process.argv.slice(2).join(' ')}`.trim();
const CONCURRENCY = 16;
const ROUNDS = Number(arg('rounds') ?? (quick ? 30 : 150));
const SLICE_SECONDS = Number(arg('slice') ?? 0.25);
const WARMUP_SECONDS = quick ? 1 : 3;
const MODE = arg('mode') ?? 'blocking';
const NS = 'bench';

function check(r: { status: number; body: string }, want: number, what: string): void {
  if (r.status !== want) throw new Error(`${what}: ${r.status} ${r.body.slice(0, 300)}`);
}

async function main() {
  console.log(`hearth audit benchmark${quick ? ' (quick)' : ''} — node ${process.version}, loopback, 2-core machine expected`);
  const dirs = [mkdtempSync(join(tmpdir(), 'hearth-bench-audit-on-')), mkdtempSync(join(tmpdir(), 'hearth-bench-audit-off-'))];
  const policyFile = join(dirs[0], 'policy.yaml');
  // --omit-request-received: the policy omits RequestReceived, as most production policies do.
  const omit = process.argv.includes('--omit-request-received');
  writeFileSync(policyFile, `apiVersion: audit.k8s.io/v1\nkind: Policy\n${omit ? 'omitStages: ["RequestReceived"]\n' : ''}rules:\n- level: Metadata\n`);
  const logPath = join(dirs[0], 'audit.log');
  const on = await startHearth(join(dirs[0], 'data'), { connections: CONCURRENCY, args: ['--audit-policy-file', policyFile, '--audit-log-path', logPath, '--audit-log-mode', MODE] });
  const off = await startHearth(join(dirs[1], 'data'), { connections: CONCURRENCY });
  const out: string[] = [];
  const fmt = (n: number, d = 1) => n.toFixed(d);
  let requestsOn = 0;
  try {
    for (const s of [on, off]) {
      await createNamespace(s, NS);
      check(await request(s, 'POST', `/api/v1/namespaces/${NS}/configmaps`, configMap(NS, 'read-me')), 201, 'create read-me');
    }
    requestsOn = 2;
    const serial = { on: 0, off: 0 };
    const counted = (s: Server, fn: RequestMaker): RequestMaker => async (conn, w, i) => {
      await fn(conn, w, i);
      if (s === on) requestsOn++;
    };
    const creates = (s: Server, who: 'on' | 'off'): RequestMaker => counted(s, async (conn) => check(await request(s, 'POST', `/api/v1/namespaces/${NS}/configmaps`, configMap(NS, `${who}-${serial[who]++}`), conn), 201, `${who} create`));
    const gets = (s: Server, who: string): RequestMaker => counted(s, async (conn) => check(await request(s, 'GET', `/api/v1/namespaces/${NS}/configmaps/read-me`, undefined, conn), 200, `${who} get`));
    const compare = async (what: string, make: (s: Server, who: 'on' | 'off') => RequestMaker) => {
      const takers: TurnTaker[] = [
        { name: 'off', server: off, one: make(off, 'off') },
        { name: 'on', server: on, one: make(on, 'on') },
      ];
      await slicesInTurns(1, WARMUP_SECONDS, takers);
      const slices = await slicesInTurns(ROUNDS, SLICE_SECONDS, takers);
      const r = ratioStats(slices, 'on', 'off');
      out.push(`${what} (${CONCURRENCY} clients each, ${ROUNDS} rounds of ${SLICE_SECONDS} s slices in turns): no policy ${fmt(r.refRate, 0)}/s (server CPU ${fmt(r.refCpuMs, 3)} ms each), Metadata for everything to a file (${MODE}) ${fmt(r.rate, 0)}/s (${fmt(r.cpuMs, 3)} ms each) → audited as a ratio to no policy:`);
      out.push(`  rate ${formatRatio(r.rateRatio, r.rateRatios)}`);
      out.push(`  server CPU per request ${formatRatio(r.cpuRatio, r.cpuRatios)}`);
    };
    await compare('ConfigMap creates', creates);
    await compare('ConfigMap GETs', gets);
  } finally {
    await stopHearth(on);
    await stopHearth(off);
  }
  // Two events (RequestReceived, ResponseComplete) per request the audited server answered (backups included: 100 MB rotates).
  const lines = readdirSync(dirs[0])
    .filter((f) => /^audit.*\.log$/.test(f))
    .reduce((n, f) => n + readFileSync(join(dirs[0], f), 'utf8').split('\n').filter(Boolean).length, 0);
  out.push(`audit log: ${lines} events for ${requestsOn} requests (namespace creation included; ${omit ? 'one' : 'two'} per request expected)`);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  console.log('');
  for (const line of out) console.log(line);
  console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(`command: ${COMMAND}`);
}

await main();
