// npm run bench:auth [-- --quick] [-- --only=inprocess,get,create,whoami,discovery] [-- --rounds=N --slice=S]
//                    [-- --control[=padded]] [-- --cpu-prof=DIR]
// What authentication costs a token user next to a certificate user (issue 32: ≤ 5% slower), all
// in one run against one server, 16 keep-alive HTTPS connections per user, every user's
// connections opened alike at the same moment:
//   - the admin's client certificate (the reference: x509, read once per connection);
//   - a static token (--token-auth-file) in system:masters, so it may do what the admin does:
//     GET of a ConfigMap and ConfigMap creates;
//   - a service-account token from TokenRequest (a signed JWT; its signature, issuer, audience
//     and ServiceAccount are checked on a cache miss, then cached 10 s as kube-apiserver does).
//     It is measured on what every authenticated user may do (kube's system:basic-user and
//     system:discovery), against the certificate user doing the same, so that RBAC's cost stays
//     out of the figure (bench.ts --only=rbac measures that): SelfSubjectReview creates
//     (`kubectl auth whoami`, a POST through the whole request path without storage) and GET
//     /api/v1 (discovery).
// The users take turns in short slices (--rounds of --slice seconds; bench-kit's slicesInTurns
// rotates the order each round), and each figure is a ratio to the certificate user's: the
// median of the per-round ratios with its 95% confidence interval and range (the spread that
// says whether a difference is one), and the pooled ratio. Rates and server CPU per request (each
// server thread's run time from /proc, ns-precise) — on a shared machine the rate moves with
// the other work; the CPU per request is the steadier figure. Target: rate ≥ 0.95, CPU ≤ 1.05.
// --control adds the certificate user a second time, on connections of its own (an A/A
// comparison: the method's own noise and bias); --control=padded has it send a header as long as
// the token's Authorization (what the header's bytes cost, authentication aside). --cpu-prof=DIR profiles the server and splits the
// profile by user (cpuprofile-summary.ts): µs of server CPU per request by function, per user,
// and each user's difference from the certificate user's.
// First, in process and before the server starts (--only=inprocess): µs of CPU per
// authentication of one request (the authenticator chain's part alone, steady state), for the
// admin's certificate on a known connection, a static token and a service-account token through
// the token cache, and a service-account token without the cache (decoding, claims, the
// ServiceAccount looked up again).
// Every request's status is checked, so a refused request cannot pass for a fast one.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { LeanConnection } from './bench-client.ts';
import { x509Authenticator, type Authenticator, type CredentialSource } from '../server/authentication/authenticator.ts';
import { bearerTokenAuthenticator } from '../server/authentication/token.ts';
import { cachedTokenAuthenticator } from '../server/authentication/token-cache.ts';
import { staticTokenAuthenticator } from '../server/authentication/static-token.ts';
import { ServiceAccountTokens } from '../server/authentication/service-account-token.ts';
import { loadServiceAccountKeys } from '../server/pki/service-account-keys.ts';
import { startHearth, stopHearth, request, createNamespace, configMap, slicesInTurns, ratioStats, formatRatio, phasesOf, type RequestMaker, type Server, type TurnTaker } from './bench-kit.ts';
import { profileReport, type Phases } from './cpuprofile-summary.ts';

const quick = process.argv.includes('--quick');
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const PHASE_NAMES = ['inprocess', 'get', 'create', 'whoami', 'discovery'];
const only = new Set(arg('only')?.split(',') ?? PHASE_NAMES);
for (const p of only) if (!PHASE_NAMES.includes(p)) throw new Error(`--only: unknown measurement ${p} (known: ${PHASE_NAMES.join(', ')})`);
const cpuProfDir = arg('cpu-prof');
/**
 * --control: the certificate user a second time, as one more user (an A/A comparison: what the
 * method reads as a difference where there is none). --control=padded: that second certificate
 * user also sends a header as long as the static token's Authorization header (the cost of the
 * header's bytes alone, parsed and kept by Node's HTTP server, authentication aside).
 */
const control = process.argv.includes('--control') ? 'plain' : arg('control');
if (control !== undefined && control !== 'plain' && control !== 'padded') throw new Error(`--control=${control}: plain (--control) or padded`);
type User = 'cert' | 'static' | 'sa' | 'cert2';
const COMMAND = `npm run bench:auth -- ${process.argv.slice(2).join(' ')}`.trim();
const CONCURRENCY = 16;
/** Short slices, many turns: the machine's speed drifts within a run, and each user gets it alike. */
const ROUNDS = Number(arg('rounds') ?? (quick ? 40 : 200));
const SLICE_SECONDS = Number(arg('slice') ?? 0.2);
const WARMUP_SECONDS = quick ? 1 : 3;
const STATIC_TOKEN = 'bench-static-token-0123456789abcdef';
const PADDING_HEADER = `X-Bench-Padding: ${'x'.repeat(`Authorization: Bearer ${STATIC_TOKEN}`.length - 'X-Bench-Padding: '.length)}`;
const NS = 'bench';
const GET_OBJECTS = 100;

function check(r: { status: number; body: string }, want: number, what: string): void {
  if (r.status !== want) throw new Error(`${what}: ${r.status} ${r.body.slice(0, 300)}`);
}

const IN_PROCESS_CALLS = quick ? 50_000 : 200_000;

/** µs of this process's CPU per call of `authenticate` on `req` (after a warm-up); throws unless it names a user. */
async function cpuPerCall(a: Authenticator, req: CredentialSource): Promise<number> {
  const once = async () => {
    const r = await a.authenticate(req);
    if (!r || !('user' in r)) throw new Error(`${a.name}: no user (${JSON.stringify(r)})`);
  };
  for (let i = 0; i < 1000; i++) await once();
  const before = process.cpuUsage();
  for (let i = 0; i < IN_PROCESS_CALLS; i++) await once();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / IN_PROCESS_CALLS;
}

/** The authentication step alone, in process. */
async function inProcess(out: string[]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-bench-auth-keys-'));
  try {
    const issuer = 'https://kubernetes.default.svc.cluster.local';
    const sa = { name: 'bench-sa', uid: '6d0e0f3e-0000-4000-8000-000000000001' };
    const tokens = new ServiceAccountTokens({ issuers: [issuer], apiAudiences: [issuer], keys: loadServiceAccountKeys(dir) }, (resource, _ns, name) => (resource === 'serviceaccounts' && name === sa.name ? { metadata: sa } : undefined));
    const saToken = (await tokens.issue({ namespace: NS, serviceAccount: sa, audiences: [issuer], expirationSeconds: 3600, now: Math.floor(Date.now() / 1000) })).token;
    const statics = staticTokenAuthenticator(new Map([[STATIC_TOKEN, { name: 'bench-static', uid: 'u', groups: ['system:masters'] }]]), [issuer]);
    const cached = bearerTokenAuthenticator([cachedTokenAuthenticator([statics, tokens])]);
    const uncached = bearerTokenAuthenticator([statics, tokens]);
    // A TLS socket whose peer certificate the x509 authenticator reads once, as on a real connection.
    const certSocket = { authorized: true, getPeerCertificate: () => ({ subject: { CN: 'kubernetes-admin', O: 'system:masters' }, raw: Buffer.alloc(600, 1) }) };
    const request = (authorization?: string, socket: object = {}) => ({ headers: authorization ? { authorization } : {}, socket }) as unknown as CredentialSource;
    const x509 = await cpuPerCall(x509Authenticator(), request(undefined, certSocket));
    const staticHit = await cpuPerCall(cached, request(`Bearer ${STATIC_TOKEN}`));
    const saHit = await cpuPerCall(cached, request(`Bearer ${saToken}`));
    const saUncached = await cpuPerCall(uncached, request(`Bearer ${saToken}`));
    out.push(`in process, CPU per authentication (${IN_PROCESS_CALLS} calls each): client certificate ${x509.toFixed(2)} µs; static token ${staticHit.toFixed(2)} µs; service-account token ${saHit.toFixed(2)} µs through the cache, ${saUncached.toFixed(2)} µs without it (its signature check remembered)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  console.log(`hearth authentication benchmark${quick ? ' (quick)' : ''} — node ${process.version}, loopback, 2-core machine expected`);
  const early: string[] = [];
  if (only.has('inprocess')) await inProcess(early);
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-bench-auth-'));
  const tokenFile = join(dataDir, 'tokens.csv');
  writeFileSync(tokenFile, `${STATIC_TOKEN},bench-static,bench-static-uid,"system:masters"\n`);
  if (cpuProfDir) mkdirSync(cpuProfDir, { recursive: true });
  const profStarted = Date.now();
  const s = await startHearth(join(dataDir, 'data'), { connections: CONCURRENCY, args: ['--token-auth-file', tokenFile], nodeArgs: cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`, '--cpu-prof-interval=250'] : [] });
  const phases: Phases = {};
  const extra: LeanConnection[] = [];
  const out: string[] = [...early];
  const fmt = (n: number, d = 1) => n.toFixed(d);
  try {
    await createNamespace(s, NS);
    for (let i = 0; i < GET_OBJECTS; i++) check(await request(s, 'POST', `/api/v1/namespaces/${NS}/configmaps`, configMap(NS, `get-${i}`)), 201, 'fixture');
    check(await request(s, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bench-sa' } }), 201, 'ServiceAccount');
    const tr = await request(s, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts/bench-sa/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } });
    check(tr, 201, 'TokenRequest');
    const saToken = (JSON.parse(tr.body) as { status: { token: string } }).status.token;

    const noCert = { ca: s.creds.ca, cert: '', key: '' };
    const open = async (bearerToken?: string, extraHeader?: string) => {
      const conns = await Promise.all(Array.from({ length: CONCURRENCY }, () => LeanConnection.open(s.url, bearerToken ? noCert : s.creds, { bearerToken, extraHeader })));
      extra.push(...conns);
      return conns;
    };
    const users: Record<User, Server> = { cert: { ...s, conns: await open() }, static: { ...s, conns: await open(STATIC_TOKEN) }, sa: { ...s, conns: await open(saToken) }, cert2: { ...s, conns: await open(undefined, control === 'padded' ? PADDING_HEADER : undefined) } };

    let serial = 0;
    const get: RequestMaker = async (conn, w, i) => check(await request(s, 'GET', `/api/v1/namespaces/${NS}/configmaps/get-${(w * 7 + i) % GET_OBJECTS}`, undefined, conn), 200, 'GET');
    const create: RequestMaker = async (conn) => check(await request(s, 'POST', `/api/v1/namespaces/${NS}/configmaps`, configMap(NS, `c-${serial++}`), conn), 201, 'create');
    const whoami: RequestMaker = async (conn) => check(await request(s, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, conn), 201, 'SelfSubjectReview');
    const discovery: RequestMaker = async (conn) => check(await request(s, 'GET', '/api/v1', undefined, conn), 200, 'GET /api/v1');

    /** The certificate user and token users doing `one` in turns; a line per token user. */
    async function compare(phase: string, what: string, one: RequestMaker, tokenUsers: Exclude<User, 'cert'>[]): Promise<void> {
      if (!only.has(phase)) return;
      if (control) tokenUsers = [...tokenUsers, 'cert2'];
      const takers: TurnTaker[] = ['cert' as const, ...tokenUsers].map((u) => ({ name: u, server: users[u], one }));
      // A warm-up slice each first (JIT, the token cache), then ROUNDS rounds of a slice each.
      await slicesInTurns(1, WARMUP_SECONDS, takers);
      const slices = await slicesInTurns(ROUNDS, SLICE_SECONDS, takers);
      Object.assign(phases, phasesOf(slices, `${phase}/`));
      const ref = ratioStats(slices, 'cert', 'cert');
      out.push(`${what} (${CONCURRENCY} clients each, ${ROUNDS} rounds of ${SLICE_SECONDS} s slices in turns): certificate user ${fmt(ref.rate, 0)}/s (server CPU ${fmt(ref.cpuMs, 3)} ms each)`);
      for (const u of tokenUsers) {
        const label = { static: 'static token (system:masters)', sa: 'service-account token', cert2: `control: the certificate user again, on connections of its own${control === 'padded' ? ', with a header as long as the token\'s' : ''}` }[u];
        const r = ratioStats(slices, u, 'cert');
        out.push(`  ${label}: ${fmt(r.rate, 0)}/s (server CPU ${fmt(r.cpuMs, 3)} ms each) → as a ratio to the certificate user's:`);
        out.push(`    rate ${formatRatio(r.rateRatio, r.rateRatios)}`);
        out.push(`    server CPU per request ${formatRatio(r.cpuRatio, r.cpuRatios)}`);
      }
    }

    await compare('get', 'GET of a ConfigMap', get, ['static']);
    await compare('create', 'ConfigMap creates', create, ['static']);
    await compare('whoami', 'SelfSubjectReview creates', whoami, ['static', 'sa']);
    await compare('discovery', 'GET /api/v1 (discovery)', discovery, ['static', 'sa']);
  } finally {
    for (const c of extra) c.close();
    await stopHearth(s);
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log('');
  for (const line of out) console.log(line);
  if (cpuProfDir) {
    const pairs: Array<[string, string]> = [];
    for (const p of Object.keys(phases)) if (!p.endsWith('/cert')) pairs.push([p.replace(/\/[^/]+$/, '/cert'), p]);
    for (const line of profileReport(cpuProfDir, profStarted, phases, pairs)) console.log(line);
  }
  // (a machine busy with other work makes every rate here noise: say how busy it was)
  console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(`command: ${COMMAND}`);
}

await main();
