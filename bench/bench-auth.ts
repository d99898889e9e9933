// npm run bench:auth [-- --quick]
// What authentication costs a token user next to a certificate user (issue 32: ≤ 5% slower), all
// in one run against one server, each kind of request taken in turns (ratesInTurns), 16
// keep-alive HTTPS connections per user:
//   - the admin's client certificate (the reference: x509, read once per connection);
//   - a static token (--token-auth-file) in system:masters, so it may do what the admin does:
//     GET of a ConfigMap and ConfigMap creates, as rates and as a ratio to the certificate's;
//   - a service-account token from TokenRequest (a signed JWT; its signature, issuer, audience
//     and ServiceAccount are checked on a cache miss, then cached 10 s as kube-apiserver does).
//     It is measured on what every authenticated user may do (kube's system:basic-user and
//     system:discovery), against the certificate user doing the same, so that RBAC's cost stays
//     out of the figure (bench.ts --only=rbac measures that): SelfSubjectReview creates
//     (`kubectl auth whoami`, a POST through the whole request path without storage) and GET
//     /api/v1 (discovery).
// First, in process and before the server starts: µs of CPU per authentication of one request
// (the authenticator chain's part alone, steady state), for the admin's certificate on a known
// connection, a static token and a service-account token through the token cache, and a
// service-account token without the cache (decoding, claims, the ServiceAccount looked up again).
// Every request's status is checked, so a refused request cannot pass for a fast one. Each line
// gives the rates and the server CPU per request, and for a token user both as ratios to the
// certificate user's (target: rate ≥ 0.95, CPU ≤ 1.05). On a shared machine the rate drifts by
// more than 5% between slices; the CPU per request is the steadier figure.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { LeanConnection } from './bench-client.ts';
import { x509Authenticator, type Authenticator, type CredentialSource } from '../server/authentication/authenticator.ts';
import { bearerTokenAuthenticator } from '../server/authentication/token.ts';
import { cachedTokenAuthenticator } from '../server/authentication/token-cache.ts';
import { staticTokenAuthenticator } from '../server/authentication/static-token.ts';
import { ServiceAccountTokens } from '../server/authentication/service-account-token.ts';
import { loadServiceAccountKeys } from '../server/pki/service-account-keys.ts';
import { startHearth, stopHearth, request, createNamespace, configMap, ratesInTurns, type RequestMaker, type Server } from './bench-kit.ts';

const quick = process.argv.includes('--quick');
const CONCURRENCY = 16;
/** Short slices, many turns: the machine's speed drifts within a run, and each user gets it alike. */
const ROUNDS = quick ? 6 : 12;
const SLICE_SECONDS = quick ? 0.5 : 1;
const WARMUP_SECONDS = quick ? 1 : 3;
const STATIC_TOKEN = 'bench-static-token-0123456789abcdef';
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
  await inProcess(early);
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-bench-auth-'));
  const tokenFile = join(dataDir, 'tokens.csv');
  writeFileSync(tokenFile, `${STATIC_TOKEN},bench-static,bench-static-uid,"system:masters"\n`);
  const s = await startHearth(join(dataDir, 'data'), { connections: CONCURRENCY, args: ['--token-auth-file', tokenFile] });
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
    const open = async (bearerToken: string) => {
      const conns = await Promise.all(Array.from({ length: CONCURRENCY }, () => LeanConnection.open(s.url, noCert, { bearerToken })));
      extra.push(...conns);
      return conns;
    };
    const users: Record<'cert' | 'static' | 'sa', Server> = { cert: s, static: { ...s, conns: await open(STATIC_TOKEN) }, sa: { ...s, conns: await open(saToken) } };

    let serial = 0;
    const get: RequestMaker = async (conn, w, i) => check(await request(s, 'GET', `/api/v1/namespaces/${NS}/configmaps/get-${(w * 7 + i) % GET_OBJECTS}`, undefined, conn), 200, 'GET');
    const create: RequestMaker = async (conn) => check(await request(s, 'POST', `/api/v1/namespaces/${NS}/configmaps`, configMap(NS, `c-${serial++}`), conn), 201, 'create');
    const whoami: RequestMaker = async (conn) => check(await request(s, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, conn), 201, 'SelfSubjectReview');
    const discovery: RequestMaker = async (conn) => check(await request(s, 'GET', '/api/v1', undefined, conn), 200, 'GET /api/v1');

    /** The certificate user and token users doing `one` in turns; a line per token user. */
    async function compare(what: string, one: RequestMaker, tokenUsers: ('static' | 'sa')[]): Promise<void> {
      const kinds = Object.fromEntries(['cert', ...tokenUsers].map((u) => [u, one])) as Record<string, RequestMaker>;
      // Each user on its own connections (ratesInTurns measures one Server's): one slice at a
      // time per user, the users in turns. A warm-up slice each first (JIT, the token cache).
      for (const u of Object.keys(kinds)) await ratesInTurns(users[u as keyof typeof users], 1, WARMUP_SECONDS, { [u]: one });
      const sum: Record<string, { n: number; seconds: number; cpuMs: number }> = {};
      for (let r = 0; r < ROUNDS; r++) {
        for (const u of Object.keys(kinds)) {
          const m = (await ratesInTurns(users[u as keyof typeof users], 1, SLICE_SECONDS, { [u]: one }))[u];
          const acc = (sum[u] ??= { n: 0, seconds: 0, cpuMs: 0 });
          acc.n += m.rate * SLICE_SECONDS;
          acc.seconds += SLICE_SECONDS;
          acc.cpuMs += m.cpuMs * m.rate * SLICE_SECONDS;
        }
      }
      const rate = (u: string) => sum[u].n / sum[u].seconds;
      const cpu = (u: string) => sum[u].cpuMs / sum[u].n;
      out.push(`${what}: certificate user ${fmt(rate('cert'), 0)}/s (server CPU ${fmt(cpu('cert'), 3)} ms each)`);
      for (const u of tokenUsers) {
        const label = u === 'static' ? 'static token (system:masters)' : 'service-account token';
        out.push(`  ${label}: ${fmt(rate(u), 0)}/s (server CPU ${fmt(cpu(u), 3)} ms each) → token / certificate: rate ${fmt(rate(u) / rate('cert'), 3)}, server CPU per request ${fmt(cpu(u) / cpu('cert'), 3)}`);
      }
    }

    await compare(`GET of a ConfigMap (${CONCURRENCY} clients each, ${ROUNDS} slices of ${SLICE_SECONDS} s in turns)`, get, ['static']);
    await compare('ConfigMap creates', create, ['static']);
    await compare('SelfSubjectReview creates', whoami, ['static', 'sa']);
    await compare('GET /api/v1 (discovery)', discovery, ['static', 'sa']);
  } finally {
    for (const c of extra) c.close();
    await stopHearth(s);
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log('');
  for (const line of out) console.log(line);
  // (a machine busy with other work makes every rate here noise: say how busy it was)
  console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
}

await main();
