// The CSR cleaner (kube-controller-manager's, in-process): requests denied or failed more than an
// hour ago, and issued ones approved more than an hour ago, are deleted; recent ones, and approved
// ones without a certificate, stay. The server sweeps every 100 ms here instead of hourly.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { webcrypto } from 'node:crypto';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { x509 } from '../../../server/pki/certificates.ts';

const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const TWO_HOURS_AGO = new Date(Date.now() - 2 * 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
let s: TestServer;
let certificate: string;

before(async () => {
  s = await startTestServer({ options: { csrCleanerIntervalMs: 100 } });
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  certificate = Buffer.from((await x509.X509CertificateGenerator.createSelfSigned({ name: 'CN=issued', keys, signingAlgorithm: EC })).toString('pem')).toString('base64');
});
after(() => s.stop());

async function create(name: string): Promise<{ metadata: { name: string } }> {
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const request = (await x509.Pkcs10CertificateRequestGenerator.create({ name: `CN=${name}`, keys, signingAlgorithm: EC })).toString('pem');
  const r = await s.request('POST', CSRS, {
    body: { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name }, spec: { request: Buffer.from(request).toString('base64'), signerName: 'example.com/cleaner-test', usages: ['client auth'] } },
  });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

async function put(name: string, subresource: string, status: Record<string, unknown>): Promise<void> {
  const cur = (await s.request('GET', `${CSRS}/${name}`)).json();
  const r = await s.request('PUT', `${CSRS}/${name}/${subresource}`, { body: { ...cur, status: { ...cur.status, ...status } } });
  assert.equal(r.status, 200, r.text);
}

test('finished requests go after an hour; recent and unissued ones stay', async () => {
  // Watched from before anything exists: every deletion is seen.
  const rv = (await s.request('GET', CSRS)).json().metadata.resourceVersion;
  for (const name of ['old-denied', 'old-failed', 'old-issued', 'new-denied', 'old-approved-unissued']) await create(name);
  await put('old-denied', 'approval', { conditions: [{ type: 'Denied', status: 'True', reason: 'Test', lastUpdateTime: TWO_HOURS_AGO }] });
  await put('new-denied', 'approval', { conditions: [{ type: 'Denied', status: 'True', reason: 'Test' }] });
  await put('old-failed', 'status', { conditions: [{ type: 'Failed', status: 'True', reason: 'Test', lastUpdateTime: TWO_HOURS_AGO }] });
  await put('old-approved-unissued', 'approval', { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', lastUpdateTime: TWO_HOURS_AGO }] });
  await put('old-issued', 'approval', { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', lastUpdateTime: TWO_HOURS_AGO }] });
  await put('old-issued', 'status', { certificate });

  const gone = new Set(['old-denied', 'old-failed', 'old-issued']);
  const w = await s.watch(`${CSRS}?watch=1&resourceVersion=${rv}`, (events) => [...gone].every((n) => events.some((e) => e.type === 'DELETED' && e.object.metadata.name === n)));
  assert.equal(w.status, 200);
  const deleted = w.events.filter((e) => e.type === 'DELETED').map((e) => e.object.metadata.name).sort();
  assert.deepEqual(deleted, [...gone].sort());
  const left = (await s.request('GET', CSRS)).json().items.map((i: { metadata: { name: string } }) => i.metadata.name).sort();
  assert.deepEqual(left, ['new-denied', 'old-approved-unissued']);
});
