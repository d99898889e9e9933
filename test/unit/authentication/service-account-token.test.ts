// The service-account token authenticator and its keys, without a server: what kube's
// ServiceAccountInfo.UserInfo gives a token user, what TokenReview's audiences change, and the
// keys kept in pki/ across starts.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceAccountTokens, type TokenObject, type TokenObjectResource } from '../../../server/authentication/service-account-token.ts';
import { loadServiceAccountKeys } from '../../../server/pki/service-account-keys.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-sa-keys-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const keys = loadServiceAccountKeys(join(dir, 'data'));

function world() {
  const objects = new Map<string, TokenObject>([
    ['serviceaccounts/ns/sa', { metadata: { name: 'sa', uid: 'sa-uid' } }],
    ['pods/ns/p', { metadata: { name: 'p', uid: 'pod-uid' } }],
  ]);
  const lookups: string[] = [];
  const lookup = (resource: TokenObjectResource, ns: string, name: string) => {
    lookups.push(`${resource}/${ns}/${name}`);
    return objects.get(`${resource}/${ns}/${name}`);
  };
  const tokens = new ServiceAccountTokens({ issuers: [ISSUER], apiAudiences: [ISSUER], keys }, lookup);
  return { objects, lookups, tokens };
}

const now = () => Math.floor(Date.now() / 1000);

test("a pod-bound token's user: kube's name, uid, groups and extra (pod, node, credential id)", async () => {
  const { tokens } = world();
  const { token, jti } = await tokens.issue({ namespace: 'ns', serviceAccount: { name: 'sa', uid: 'sa-uid' }, pod: { name: 'p', uid: 'pod-uid' }, node: { name: 'n1', uid: 'node-uid' }, audiences: [ISSUER], expirationSeconds: 3600, now: now() });
  assert.deepEqual(await tokens.authenticateToken(token), {
    user: {
      name: 'system:serviceaccount:ns:sa',
      uid: 'sa-uid',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:ns'],
      extra: {
        'authentication.kubernetes.io/pod-name': ['p'],
        'authentication.kubernetes.io/pod-uid': ['pod-uid'],
        'authentication.kubernetes.io/credential-id': [`JTI=${jti}`],
        'authentication.kubernetes.io/node-name': ['n1'],
        'authentication.kubernetes.io/node-uid': ['node-uid'],
      },
    },
    audiences: [ISSUER],
  });
});

test("TokenReview's audiences replace the API audiences; kube's message when none match", async () => {
  const { tokens } = world();
  const { token } = await tokens.issue({ namespace: 'ns', serviceAccount: { name: 'sa', uid: 'sa-uid' }, audiences: ['vault', 'db'], expirationSeconds: 3600, now: now() });
  assert.deepEqual(await tokens.authenticateToken(token), { error: 'token audiences ["vault" "db"] is invalid for the target audiences ["https://kubernetes.default.svc.cluster.local"]' });
  const r = await tokens.authenticateToken(token, ['db']);
  assert.ok(r && 'user' in r, JSON.stringify(r));
});

test('times: a minute of leeway each way, then kube’s messages', async () => {
  const { tokens } = world();
  const issue = (at: number, life: number) => tokens.issue({ namespace: 'ns', serviceAccount: { name: 'sa', uid: 'sa-uid' }, audiences: [ISSUER], expirationSeconds: life, now: at });
  assert.deepEqual(await tokens.authenticateToken((await issue(now() - 1000, 900)).token), { error: 'service account token has expired' });
  assert.ok('user' in ((await tokens.authenticateToken((await issue(now() - 940, 900)).token)) ?? {}));
  assert.deepEqual(await tokens.authenticateToken((await issue(now() + 120, 900)).token), { error: 'service account token is not valid yet' });
  assert.ok('user' in ((await tokens.authenticateToken((await issue(now() + 30, 900)).token)) ?? {}));
});

test("a verified token's signature is remembered, its ServiceAccount never: each use looks it up again", async () => {
  const { tokens, objects, lookups } = world();
  const { token } = await tokens.issue({ namespace: 'ns', serviceAccount: { name: 'sa', uid: 'sa-uid' }, audiences: [ISSUER], expirationSeconds: 3600, now: now() });
  assert.ok('user' in ((await tokens.authenticateToken(token)) ?? {}));
  objects.set('serviceaccounts/ns/sa', { metadata: { name: 'sa', uid: 'sa-uid', deletionTimestamp: new Date(Date.now() - 120_000).toISOString() } });
  assert.deepEqual(await tokens.authenticateToken(token), { error: 'service account ns/sa has been deleted' });
  objects.set('serviceaccounts/ns/sa', { metadata: { name: 'sa', uid: 'new-uid' } });
  assert.deepEqual(await tokens.authenticateToken(token), { error: 'service account UID (new-uid) does not match claim (sa-uid)' });
  objects.delete('serviceaccounts/ns/sa');
  assert.deepEqual(await tokens.authenticateToken(token), { error: 'serviceaccounts "sa" not found' });
  assert.equal(lookups.filter((l) => l === 'serviceaccounts/ns/sa').length, 4);
});

test("others' tokens are not ours (undefined, the union goes on) and never looked up; oversized ones are not read", async () => {
  const { tokens, lookups } = world();
  const segment = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  for (const t of ['', 'abc', 'a.b', 'a.b.c.d', `${segment({ alg: 'RS256' })}.${segment({ iss: 'https://elsewhere' })}.sig`, `${segment({ alg: 'RS256' })}.${segment([ISSUER])}.sig`, '{"iss":"x"}.a.b']) {
    assert.equal(await tokens.authenticateToken(t), undefined, t);
  }
  const huge = `${segment({ alg: 'RS256' })}.${segment({ iss: ISSUER, pad: 'x'.repeat(40 * 1024) })}.sig`;
  assert.equal(await tokens.authenticateToken(huge), undefined);
  // Ours by its issuer, but an unknown key id: refused, not passed on.
  assert.deepEqual(await tokens.authenticateToken(`${segment({ alg: 'RS256', kid: 'nope' })}.${segment({ iss: ISSUER })}.sig`), { error: 'invalid signature, no keys found' });
  assert.deepEqual(lookups, []);
});

test('keys: sa.key generated once (0600) and reused; key files add verification keys; the signing key always verifies', () => {
  const again = loadServiceAccountKeys(join(dir, 'data'));
  assert.equal(again.signing.kid, keys.signing.kid);
  assert.equal(keys.signing.alg, 'RS256');
  assert.equal(statSync(join(dir, 'data', 'pki', 'sa.key')).mode & 0o777, 0o600);
  assert.ok(statSync(join(dir, 'data', 'pki', 'sa.pub')).isFile());
  // kube's key id: base64url SHA-256 of the PKIX DER, 43 characters.
  assert.match(keys.signing.kid, /^[A-Za-z0-9_-]{43}$/);

  const ec = generateKeyPairSync('ec', { namedCurve: 'P-384' });
  const signingFile = join(dir, 'new.key');
  writeFileSync(signingFile, ec.privateKey.export({ type: 'pkcs8', format: 'pem' }));
  const oldPub = join(dir, 'old.pub');
  writeFileSync(oldPub, keys.signing.publicKey.export({ type: 'spki', format: 'pem' }));
  const rotated = loadServiceAccountKeys(join(dir, 'other'), { signingKeyFile: signingFile, keyFiles: [oldPub] });
  assert.equal(rotated.signing.alg, 'ES384');
  assert.deepEqual(rotated.verifying.map((k) => k.kid), [keys.signing.kid, rotated.signing.kid]);
  assert.throws(() => statSync(join(dir, 'other', 'pki', 'sa.key')));
});
