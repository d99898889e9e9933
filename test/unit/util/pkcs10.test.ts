// server/util/pkcs10.ts: certificate requests of every key kind Go verifies (RSA PKCS#1 v1.5,
// RSA-PSS, ECDSA, Ed25519) pass; a changed byte fails with Go's message for that key; the PEM
// rules of certificates.ParseCSR and validateCertificate; the subject's organizations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { webcrypto } from 'node:crypto';
import { x509 } from '../../../server/pki/certificates.ts';
import { certificateError, certificateRequestError, parseCsr } from '../../../server/util/pkcs10.ts';

type Alg = RsaHashedKeyGenParams | EcKeyGenParams | { name: 'Ed25519' } | (RsaHashedKeyGenParams & { saltLength: number });

async function request(alg: Alg, subject = 'CN=someone, O=a, O=b'): Promise<string> {
  const keys = (await webcrypto.subtle.generateKey(alg as RsaHashedKeyGenParams, true, ['sign', 'verify'])) as CryptoKeyPair;
  const signingAlgorithm = alg.name === 'ECDSA' ? { ...alg, hash: 'SHA-256' } : alg;
  return (await x509.Pkcs10CertificateRequestGenerator.create({ name: subject, keys, signingAlgorithm: signingAlgorithm as Algorithm })).toString('pem');
}

/** The request with one byte of its subject changed, so the signature no longer covers it. */
function tampered(pem: string): Buffer {
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  der[der.indexOf(Buffer.from('someone'))] = 'S'.charCodeAt(0);
  return Buffer.from(`-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`);
}

const RSA = { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' };
const PSS = { name: 'RSA-PSS', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-384', saltLength: 48 };

for (const [label, alg, failure] of [
  ['RSA', RSA, 'crypto/rsa: verification error'],
  ['RSA-PSS', PSS, 'crypto/rsa: verification error'],
  ['ECDSA P-256', { name: 'ECDSA', namedCurve: 'P-256' }, 'x509: ECDSA verification failure'],
  ['Ed25519', { name: 'Ed25519' }, 'x509: Ed25519 verification failure'],
] as [string, Alg, string][]) {
  test(`${label}: a signed request verifies; a changed one fails with Go's message`, async () => {
    const pem = await request(alg);
    assert.equal(certificateRequestError(Buffer.from(pem)), undefined);
    assert.equal(certificateRequestError(tampered(pem)), failure);
  });
}

test('PEM: the first block must be a CERTIFICATE REQUEST; DER that is not a request fails in asn1 words', async () => {
  const pem = await request({ name: 'ECDSA', namedCurve: 'P-256' });
  assert.equal(certificateRequestError(Buffer.from('')), 'PEM block type must be CERTIFICATE REQUEST');
  assert.equal(certificateRequestError(Buffer.from(pem.replace(/CERTIFICATE REQUEST/g, 'CERTIFICATE'))), 'PEM block type must be CERTIFICATE REQUEST');
  assert.equal(certificateRequestError(Buffer.from(`junk before\n${pem}`)), undefined);
  assert.match(certificateRequestError(Buffer.from('-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n'))!, /^asn1: /);
});

test('the subject\'s organizations, in order', async () => {
  const parts = parseCsr(Buffer.from(await request({ name: 'ECDSA', namedCurve: 'P-256' }, 'CN=x, O=system:masters, O=devs')));
  assert.ok(typeof parts !== 'string');
  assert.deepEqual(parts.organizations, ['system:masters', 'devs']);
});

test('status.certificate: only CERTIFICATE blocks, without headers, each a certificate', async () => {
  const keys = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair;
  const cert = (await x509.X509CertificateGenerator.createSelfSigned({ name: 'CN=c', keys, signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' } })).toString('pem');
  assert.equal(certificateError(Buffer.from(cert)), undefined);
  assert.equal(certificateError(Buffer.from(cert + cert)), undefined);
  assert.equal(certificateError(Buffer.from('x')), 'must contain at least one CERTIFICATE PEM block');
  assert.equal(certificateError(Buffer.from(await request(RSA))), 'only CERTIFICATE PEM blocks are allowed, found "CERTIFICATE REQUEST"');
  const withHeader = cert.replace('-----BEGIN CERTIFICATE-----\n', '-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\n');
  assert.equal(certificateError(Buffer.from(withHeader)), 'no PEM block headers are permitted');
});
