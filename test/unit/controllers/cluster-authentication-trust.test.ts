// The extension-apiserver-authentication ConfigMap's data as kube's cluster authentication trust
// controller computes it: what is stored combined with what is required (lists without repeats,
// bundles without repeated or expired certificates, written as PEM again), the requestheader keys
// only with a proxy CA, keys sorted, unknown keys dropped, and stored data that does not parse refused.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { webcrypto, X509Certificate } from 'node:crypto';
import { authenticationConfigMapData, type ClusterAuthenticationInfo } from '../../../server/controllers/cluster-authentication-trust.ts';
import { x509 } from '../../../server/pki/certificates.ts';

const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const NOW = new Date();
const DAY = 24 * 3600_000;

/** A self-signed CA certificate valid from..to, PEM (as @peculiar/x509 writes it: not Go's line layout). */
async function ca(name: string, notBefore: Date, notAfter: Date): Promise<string> {
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  return (await x509.X509CertificateGenerator.createSelfSigned({ name: `CN=${name}`, keys, signingAlgorithm: EC, notBefore, notAfter })).toString('pem');
}

const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;
const fingerprints = (bundle: string) => (bundle.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? []).map(fingerprint);

let hearthCa: string;
let outsideCa: string;
let proxyCa: string;
let expired: string;
before(async () => {
  hearthCa = await ca('hearth', new Date(NOW.getTime() - DAY), new Date(NOW.getTime() + 365 * DAY));
  outsideCa = await ca('outside', new Date(NOW.getTime() - DAY), new Date(NOW.getTime() + 365 * DAY));
  proxyCa = await ca('proxy', new Date(NOW.getTime() - DAY), new Date(NOW.getTime() + 365 * DAY));
  // Expired ten minutes ago: past kube's five minutes of slack.
  expired = await ca('expired', new Date(NOW.getTime() - 2 * DAY), new Date(NOW.getTime() - 10 * 60_000));
});

const required = (): ClusterAuthenticationInfo => ({
  clientCaPem: hearthCa,
  requestHeader: { caPem: proxyCa, allowedNames: ['front-proxy-client'], usernameHeaders: ['X-Remote-User'], uidHeaders: [], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'] },
});

test('from nothing: every key, sorted, lists as JSON arrays (an empty one as []), bundles as PEM with 64-character lines', () => {
  const data = authenticationConfigMapData({}, required(), NOW);
  assert.deepEqual(Object.keys(data), [
    'client-ca-file',
    'requestheader-allowed-names',
    'requestheader-client-ca-file',
    'requestheader-extra-headers-prefix',
    'requestheader-group-headers',
    'requestheader-uid-headers',
    'requestheader-username-headers',
  ]);
  assert.deepEqual(fingerprints(data['client-ca-file']), [fingerprint(hearthCa)]);
  assert.deepEqual(fingerprints(data['requestheader-client-ca-file']), [fingerprint(proxyCa)]);
  for (const line of data['client-ca-file'].trimEnd().split('\n').slice(1, -1)) assert.ok(line.length <= 64);
  assert.equal(data['requestheader-uid-headers'], '[]');
  assert.equal(data['requestheader-allowed-names'], '["front-proxy-client"]');
  // Written again, it is the same: nothing to do.
  assert.deepEqual(authenticationConfigMapData(data, required(), NOW), data);
});

test('without a proxy CA there are no requestheader keys', () => {
  assert.deepEqual(Object.keys(authenticationConfigMapData({}, { clientCaPem: hearthCa }, NOW)), ['client-ca-file']);
  assert.deepEqual(authenticationConfigMapData({}, {}, NOW), {});
});

test("what is stored is kept and the required is added, without repeats; expired certificates and unknown keys go", () => {
  const stored = {
    'client-ca-file': outsideCa + expired + hearthCa,
    'requestheader-username-headers': '["X-Other-User","X-Remote-User"]',
    'requestheader-allowed-names': 'null',
    junk: 'x',
  };
  const data = authenticationConfigMapData(stored, required(), NOW);
  assert.deepEqual(fingerprints(data['client-ca-file']), [fingerprint(outsideCa), fingerprint(hearthCa)]);
  assert.equal(data['requestheader-username-headers'], '["X-Other-User","X-Remote-User"]');
  assert.equal(data['requestheader-allowed-names'], '["front-proxy-client"]');
  assert.equal(data.junk, undefined);
  // A proxy CA another server stored stays, even when this one has none.
  const kept = authenticationConfigMapData({ 'requestheader-client-ca-file': proxyCa, 'requestheader-group-headers': '["X-G"]' }, { clientCaPem: hearthCa }, NOW);
  assert.deepEqual(fingerprints(kept['requestheader-client-ca-file']), [fingerprint(proxyCa)]);
  assert.equal(kept['requestheader-group-headers'], '["X-G"]');
  assert.equal(kept['requestheader-username-headers'], '[]');
});

test("Go's JSON: <, > and & in a header name are escaped", () => {
  const data = authenticationConfigMapData({}, { requestHeader: { ...required().requestHeader!, allowedNames: ['a<b>&c'] } }, NOW);
  assert.equal(data['requestheader-allowed-names'], '["a\\u003cb\\u003e\\u0026c"]');
});

test('stored data that does not parse fails the sync (kube retries it)', () => {
  assert.throws(() => authenticationConfigMapData({ 'requestheader-group-headers': 'X-Remote-Group' }, required(), NOW), /invalid JSON/);
  assert.throws(() => authenticationConfigMapData({ 'requestheader-group-headers': '{"a":1}' }, required(), NOW), /cannot unmarshal/);
  assert.throws(() => authenticationConfigMapData({ 'client-ca-file': 'not a certificate' }, required(), NOW), /does not contain any valid RSA or ECDSA certificates/);
});
