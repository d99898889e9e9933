// The legacy (Secret-based) token authenticator without a server: kube's legacy validator's
// checks in its order and with its messages, the user it names (no extras), the audiences,
// the warning for auto-generated Secrets, and when it asks for the last-used label (once a day,
// today or tomorrow counting as done, and also for a Secret marked invalid).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AUTO_GENERATED_TOKEN_WARNING,
  INVALID_SINCE_LABEL,
  LAST_USED_LABEL,
  LEGACY_ISSUER,
  LegacyServiceAccountTokens,
  issueLegacyToken,
  legacyTokenClaims,
  splitServiceAccountUsername,
  type LegacyTokenSecret,
  type LegacyTokenServiceAccount,
} from '../../../server/authentication/legacy-service-account-token.ts';
import { ServiceAccountTokens, signServiceAccountJwt } from '../../../server/authentication/service-account-token.ts';
import { loadServiceAccountKeys } from '../../../server/pki/service-account-keys.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-legacy-keys-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const keys = loadServiceAccountKeys(join(dir, 'data'));
const API_AUDIENCES = ['https://kubernetes.default.svc.cluster.local'];
const SA = { namespace: 'ns', name: 'robot', uid: 'sa-uid' };
const NOW = new Date('2026-03-01T23:30:00Z');

/** A Secret holding the token, its ServiceAccount, and the label writes asked for. */
async function world(opts: { token?: string; labels?: Record<string, string>; saSecrets?: unknown } = {}) {
  const token = opts.token ?? (await issueLegacyToken(keys, SA, 'robot-token'));
  const secrets = new Map<string, LegacyTokenSecret>([['ns/robot-token', { metadata: { name: 'robot-token', namespace: 'ns', uid: 'secret-uid', labels: opts.labels }, data: { token: Buffer.from(token).toString('base64') } }]]);
  const serviceAccounts = new Map<string, LegacyTokenServiceAccount>([['ns/robot', { metadata: { uid: 'sa-uid' }, secrets: opts.saSecrets }]]);
  const marked: string[] = [];
  const objects = {
    secret: (ns: string, name: string) => secrets.get(`${ns}/${name}`),
    serviceAccount: (ns: string, name: string) => serviceAccounts.get(`${ns}/${name}`),
    markUsed: (ns: string, name: string, uid: string, date: string) => void marked.push(`${ns}/${name} ${uid} ${date}`),
  };
  const tokens = new LegacyServiceAccountTokens(keys, API_AUDIENCES, objects, () => NOW);
  return { token, secrets, serviceAccounts, marked, tokens };
}

test("kube's LegacyClaims: the issuer, sub and the four private claims, sorted as go-jose writes them", () => {
  assert.deepEqual(Object.entries(legacyTokenClaims(SA, 'robot-token')), [
    ['iss', LEGACY_ISSUER],
    ['kubernetes.io/serviceaccount/namespace', 'ns'],
    ['kubernetes.io/serviceaccount/secret.name', 'robot-token'],
    ['kubernetes.io/serviceaccount/service-account.name', 'robot'],
    ['kubernetes.io/serviceaccount/service-account.uid', 'sa-uid'],
    ['sub', 'system:serviceaccount:ns:robot'],
  ]);
});

test('a good token: the service account user without extras, the API audiences, and one last-used write', async () => {
  const { token, tokens, marked } = await world();
  assert.deepEqual(await tokens.authenticateToken(token), {
    user: { name: 'system:serviceaccount:ns:robot', uid: 'sa-uid', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns'] },
    audiences: API_AUDIENCES,
  });
  assert.deepEqual(marked, ['ns/robot-token secret-uid 2026-03-01']);
});

test('the last-used label is asked for only when it says neither today nor tomorrow (UTC)', async () => {
  for (const [label, writes] of [
    ['2026-03-01', 0],
    ['2026-03-02', 0],
    ['2026-02-28', 1],
    ['2025-03-01', 1],
  ] as const) {
    const { token, tokens, marked } = await world({ labels: { [LAST_USED_LABEL]: label } });
    const r = await tokens.authenticateToken(token);
    assert.ok(r && 'user' in r, label);
    assert.equal(marked.length, writes, label);
  }
});

test("a Secret listed in the ServiceAccount's secrets (auto-generated) brings kube's warning", async () => {
  const { token, tokens } = await world({ saSecrets: [{ name: 'other' }, { name: 'robot-token' }] });
  const r = await tokens.authenticateToken(token);
  assert.ok(r && 'user' in r);
  assert.deepEqual(r.warnings, [AUTO_GENERATED_TOKEN_WARNING]);
});

test("legacy-token-invalid-since refuses with kube's message, and the use is still recorded", async () => {
  const { token, tokens, marked } = await world({ labels: { [INVALID_SINCE_LABEL]: '2025-01-01' } });
  assert.deepEqual(await tokens.authenticateToken(token), {
    error:
      "the token in secret ns/robot-token for service account ns/robot has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the 'kubernetes.io/legacy-token-invalid-since' label from the secret to temporarily allow use of this token",
  });
  assert.deepEqual(marked, ['ns/robot-token secret-uid 2026-03-01']);
});

test("the Secret and the ServiceAccount decide, with kube's messages, and nothing is recorded", async () => {
  const cases: [string, (w: Awaited<ReturnType<typeof world>>) => void, string][] = [
    ['secret gone', (w) => w.secrets.clear(), 'Token has been invalidated'],
    ['secret being deleted', (w) => (w.secrets.get('ns/robot-token')!.metadata.deletionTimestamp = '2026-01-01T00:00:00Z'), 'Token has been invalidated'],
    ['secret holds another token', (w) => (w.secrets.get('ns/robot-token')!.data = { token: Buffer.from('other').toString('base64') }), "Token does not match server's copy"],
    ['secret holds no token', (w) => (w.secrets.get('ns/robot-token')!.data = {}), "Token does not match server's copy"],
    ['service account gone', (w) => w.serviceAccounts.clear(), 'serviceaccounts "robot" not found'],
    ['service account being deleted', (w) => (w.serviceAccounts.get('ns/robot')!.metadata.deletionTimestamp = '2026-01-01T00:00:00Z'), 'ServiceAccount ns/robot has been deleted'],
    ['service account recreated', (w) => (w.serviceAccounts.get('ns/robot')!.metadata.uid = 'new-uid'), 'ServiceAccount UID (new-uid) does not match claim (sa-uid)'],
  ];
  for (const [what, change, error] of cases) {
    const w = await world();
    change(w);
    assert.deepEqual(await w.tokens.authenticateToken(w.token), { error }, what);
    assert.deepEqual(w.marked, [], what);
  }
});

test("claims kube's validator requires, in its order, before any lookup", async () => {
  const base = legacyTokenClaims(SA, 'robot-token');
  const cases: [Record<string, unknown>, string][] = [
    [{ ...base, sub: undefined }, 'sub claim is missing'],
    [{ ...base, 'kubernetes.io/serviceaccount/namespace': '' }, 'namespace claim is missing'],
    [{ ...base, 'kubernetes.io/serviceaccount/secret.name': undefined }, 'secretName claim is missing'],
    [{ ...base, 'kubernetes.io/serviceaccount/service-account.name': 7 }, 'serviceAccountName claim is missing'],
    [{ ...base, 'kubernetes.io/serviceaccount/service-account.uid': '' }, 'serviceAccountUID claim is missing'],
    [{ ...base, sub: 'system:serviceaccount:ns:other' }, 'sub claim is invalid'],
    [{ ...base, sub: 'system:serviceaccount:ns:robot:x' }, 'sub claim is invalid'],
    [{ ...base, sub: 'robot' }, 'sub claim is invalid'],
  ];
  for (const [claims, error] of cases) {
    const token = await signServiceAccountJwt(keys, claims);
    const w = await world({ token });
    assert.deepEqual(await w.tokens.authenticateToken(token), { error }, error);
  }
});

test('audiences: a legacy token carries the API audiences; a TokenReview for others is refused with kube message', async () => {
  const { token, tokens } = await world();
  assert.deepEqual(await tokens.authenticateToken(token, ['vault']), { error: 'token audiences ["https://kubernetes.default.svc.cluster.local"] is invalid for the target audiences ["vault"]' });
  const r = await tokens.authenticateToken(token, ['vault', API_AUDIENCES[0]!]);
  assert.ok(r && 'user' in r);
  assert.deepEqual(r.audiences, API_AUDIENCES);
});

test('tokens of other issuers are not its own; its own are not the bound authenticator', async () => {
  const { token, tokens } = await world();
  const bound = new ServiceAccountTokens({ issuers: API_AUDIENCES, apiAudiences: API_AUDIENCES, keys }, () => ({ metadata: { name: 'robot', uid: 'sa-uid' } }));
  const { token: boundToken } = await bound.issue({ namespace: 'ns', serviceAccount: { name: 'robot', uid: 'sa-uid' }, audiences: API_AUDIENCES, expirationSeconds: 3600, now: Math.floor(Date.now() / 1000) });
  assert.equal(await tokens.authenticateToken(boundToken), undefined);
  assert.equal(await bound.authenticateToken(token), undefined);
  assert.equal(await tokens.authenticateToken('not-a-jwt'), undefined);
  // A forged signature on the legacy issuer is refused, not passed on.
  const [h, p] = token.split('.');
  assert.deepEqual(await tokens.authenticateToken(`${h}.${p}.${Buffer.from('forged').toString('base64url')}`), { error: 'go-jose/go-jose: error in cryptographic primitive' });
});

test("kube's SplitUsername: a DNS-1123 label namespace and a subdomain name", () => {
  assert.deepEqual(splitServiceAccountUsername('system:serviceaccount:ns:a.b'), { namespace: 'ns', name: 'a.b' });
  assert.equal(splitServiceAccountUsername('system:serviceaccount:n.s:a'), undefined);
  assert.equal(splitServiceAccountUsername('system:serviceaccount:ns:A'), undefined);
  assert.equal(splitServiceAccountUsername('system:serviceaccount:ns'), undefined);
});
