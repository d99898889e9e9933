import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { webcrypto, X509Certificate } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import {
  ensurePki,
  issueClientCertificate,
  signCertificateRequest,
  userFromPeerCertificate,
  x509,
  type ServerPki,
} from '../../../server/pki/certificates.ts';
import { renderKubeconfig, serverUrlFor, writeAdminKubeconfig, writeKubeconfig } from '../../../server/pki/kubeconfig.ts';

const DAY = 24 * 3600 * 1000;

const tmpDirs: string[] = [];
function tmpDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-pki-'));
  tmpDirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of tmpDirs) fs.rmSync(dir, { recursive: true, force: true });
});

function readPki(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of ['ca.crt', 'ca.key', 'apiserver.crt', 'apiserver.key', 'admin.crt', 'admin.key']) {
    out[f] = fs.readFileSync(path.join(dir, 'pki', f), 'utf8');
  }
  return out;
}

function sans(certPem: string): string[] {
  return (new X509Certificate(certPem).subjectAltName ?? '').split(', ');
}

function subjectLines(cert: X509Certificate): string[] {
  return cert.subject.split('\n');
}

let shared: { dir: string; pki: ServerPki } | undefined;
async function sharedPki(): Promise<ServerPki> {
  if (!shared) {
    const dir = tmpDir();
    shared = { dir, pki: await ensurePki(dir) };
  }
  return shared.pki;
}

test('ensurePki writes PEM files (keys PKCS#8, mode 0600) and a second call reuses them unchanged', async () => {
  const dir = tmpDir();
  const first = await ensurePki(dir);
  assert.equal(first.dir, path.join(dir, 'pki'));
  const files = readPki(dir);
  for (const f of ['ca.key', 'apiserver.key', 'admin.key']) {
    assert.match(files[f]!, /^-----BEGIN PRIVATE KEY-----\n/);
    assert.equal(fs.statSync(path.join(dir, 'pki', f)).mode & 0o777, 0o600, f);
  }
  for (const f of ['ca.crt', 'apiserver.crt', 'admin.crt']) assert.match(files[f]!, /^-----BEGIN CERTIFICATE-----\n/);
  assert.equal(first.caCertPem, files['ca.crt']);
  assert.equal(first.servingKeyPem, files['apiserver.key']);
  assert.equal(first.adminCertPem, files['admin.crt']);

  const second = await ensurePki(dir);
  assert.deepEqual(second, first);
  assert.deepEqual(readPki(dir), files);
});

test('CA is a 10-year CA certificate named hearth-ca', async () => {
  const pki = await sharedPki();
  const ca = new X509Certificate(pki.caCertPem);
  assert.equal(ca.ca, true);
  assert.equal(ca.subject, 'CN=hearth-ca');
  assert.ok(ca.verify(ca.publicKey));
  const years = (new Date(ca.validTo).getTime() - Date.now()) / (365 * DAY);
  assert.ok(years > 9.9 && years < 10.1, `CA validity ${years} years`);
  const ku = new x509.X509Certificate(pki.caCertPem).getExtension(x509.KeyUsagesExtension)!;
  assert.ok(ku.usages & x509.KeyUsageFlags.keyCertSign);
  assert.ok(ku.usages & x509.KeyUsageFlags.cRLSign);
  assert.equal(new x509.X509Certificate(pki.caCertPem).publicKey.algorithm.name, 'ECDSA');
});

test('serving certificate has the default SANs, serverAuth, and is signed by the CA', async () => {
  const pki = await sharedPki();
  const got = sans(pki.servingCertPem);
  for (const want of [
    'DNS:localhost',
    `DNS:${os.hostname().toLowerCase()}`,
    'DNS:kubernetes',
    'DNS:kubernetes.default',
    'DNS:kubernetes.default.svc',
    'DNS:kubernetes.default.svc.cluster.local',
    'IP Address:127.0.0.1',
    'IP Address:0:0:0:0:0:0:0:1',
  ]) {
    assert.ok(got.includes(want), `missing ${want} in ${got.join(', ')}`);
  }
  const ca = new X509Certificate(pki.caCertPem);
  const serving = new X509Certificate(pki.servingCertPem);
  assert.ok(serving.checkIssued(ca));
  assert.ok(serving.verify(ca.publicKey));
  assert.equal(serving.ca, false);
  assert.deepEqual(serving.keyUsage, ['1.3.6.1.5.5.7.3.1']);
  const days = (new Date(serving.validTo).getTime() - Date.now()) / DAY;
  assert.ok(days > 360 && days < 370, `serving validity ${days} days`);
  // Not signed by some other CA.
  const other = await ensurePki(tmpDir());
  assert.equal(serving.verify(new X509Certificate(other.caCertPem).publicKey), false);
});

test('admin certificate: CN hearth-admin, O system:masters, clientAuth, signed by the CA', async () => {
  const pki = await sharedPki();
  const admin = new X509Certificate(pki.adminCertPem);
  assert.deepEqual(subjectLines(admin), ['CN=hearth-admin', 'O=system:masters']);
  assert.deepEqual(admin.keyUsage, ['1.3.6.1.5.5.7.3.2']);
  assert.ok(admin.verify(new X509Certificate(pki.caCertPem).publicKey));
  const days = (new Date(admin.validTo).getTime() - Date.now()) / DAY;
  assert.ok(days > 360 && days < 370, `admin validity ${days} days`);
  const ku = new x509.X509Certificate(pki.adminCertPem).getExtension(x509.KeyUsagesExtension)!;
  assert.equal(ku.usages, x509.KeyUsageFlags.digitalSignature);
});

test('extra SANs re-issue only the serving certificate, from the same CA', async () => {
  const dir = tmpDir();
  const before = await ensurePki(dir);
  const after = await ensurePki(dir, { extraSans: ['10.1.2.3', 'api.example.test', '0.0.0.0', 'IP:fd00::5'] });
  assert.equal(after.caCertPem, before.caCertPem);
  assert.equal(after.caKeyPem, before.caKeyPem);
  assert.equal(after.adminCertPem, before.adminCertPem);
  assert.notEqual(after.servingCertPem, before.servingCertPem);
  assert.notEqual(after.servingKeyPem, before.servingKeyPem);
  const got = sans(after.servingCertPem);
  assert.ok(got.includes('IP Address:10.1.2.3'), got.join(', '));
  assert.ok(got.includes('DNS:api.example.test'), got.join(', '));
  assert.ok(got.includes('IP Address:FD00:0:0:0:0:0:0:5'), got.join(', '));
  assert.ok(!got.includes('IP Address:0.0.0.0'), 'unspecified address must not become a SAN');
  assert.ok(got.includes('DNS:localhost'));
  assert.ok(new X509Certificate(after.servingCertPem).verify(new X509Certificate(before.caCertPem).publicKey));
  assert.equal(fs.readFileSync(path.join(dir, 'pki', 'apiserver.crt'), 'utf8'), after.servingCertPem);

  // Same request again (in another spelling), or a subset of it: nothing changes.
  const again = await ensurePki(dir, { extraSans: ['API.example.test', '10.1.2.3', 'fd00:0::5'] });
  assert.deepEqual(again, after);
  const fewer = await ensurePki(dir);
  assert.deepEqual(fewer, after);
});

test('missing or foreign leaf files are re-issued; CA without its key is an error', async () => {
  const dir = tmpDir();
  const first = await ensurePki(dir);
  fs.rmSync(path.join(dir, 'pki', 'admin.key'));
  const second = await ensurePki(dir);
  assert.equal(second.caCertPem, first.caCertPem);
  assert.equal(second.servingCertPem, first.servingCertPem);
  assert.notEqual(second.adminCertPem, first.adminCertPem);
  assert.ok(new X509Certificate(second.adminCertPem).verify(new X509Certificate(first.caCertPem).publicKey));

  // A serving cert from another CA gets replaced by one from ours.
  const other = await ensurePki(tmpDir());
  fs.writeFileSync(path.join(dir, 'pki', 'apiserver.crt'), other.servingCertPem);
  fs.writeFileSync(path.join(dir, 'pki', 'apiserver.key'), other.servingKeyPem);
  const third = await ensurePki(dir);
  assert.notEqual(third.servingCertPem, other.servingCertPem);
  assert.ok(new X509Certificate(third.servingCertPem).verify(new X509Certificate(first.caCertPem).publicKey));

  fs.rmSync(path.join(dir, 'pki', 'ca.key'));
  await assert.rejects(ensurePki(dir), /ca\.key is missing/);
  fs.writeFileSync(path.join(dir, 'pki', 'ca.key'), other.caKeyPem);
  await assert.rejects(ensurePki(dir), /does not match/);
});

async function handshake(
  serverPki: ServerPki,
  client: { cert: string; key: string; ca: string; host: string; servername?: string },
): Promise<{ authorized: boolean; authorizationError: unknown; peer: tls.PeerCertificate }> {
  const seen: Promise<{ authorized: boolean; authorizationError: unknown; peer: tls.PeerCertificate }>[] = [];
  const server = tls.createServer({
    key: serverPki.servingKeyPem,
    cert: serverPki.servingCertPem,
    ca: serverPki.caCertPem,
    requestCert: true,
    rejectUnauthorized: false,
  });
  let resolveSeen!: (v: { authorized: boolean; authorizationError: unknown; peer: tls.PeerCertificate }) => void;
  seen.push(new Promise((r) => (resolveSeen = r)));
  server.on('secureConnection', (socket) => {
    resolveSeen({ authorized: socket.authorized, authorizationError: socket.authorizationError, peer: socket.getPeerCertificate() });
    socket.end('ok');
  });
  await new Promise<void>((r) => server.listen(0, client.host, r));
  const port = (server.address() as AddressInfo).port;
  try {
    await new Promise<void>((resolve, reject) => {
      const sock = tls.connect({ host: client.host, port, ca: client.ca, cert: client.cert, key: client.key, servername: client.servername });
      sock.on('secureConnect', () => {
        // The client verified the server (rejectUnauthorized defaults to true).
        sock.on('data', () => undefined);
        sock.on('end', () => resolve());
      });
      sock.on('error', reject);
    });
    return await seen[0]!;
  } finally {
    await new Promise((r) => server.close(r));
  }
}

test('TLS on loopback: the admin client certificate is authorized and maps to hearth-admin/system:masters', async () => {
  const pki = await sharedPki();
  const res = await handshake(pki, { host: '127.0.0.1', ca: pki.caCertPem, cert: pki.adminCertPem, key: pki.adminKeyPem });
  assert.equal(res.authorized, true, String(res.authorizationError));
  assert.deepEqual(userFromPeerCertificate(res.peer), { name: 'hearth-admin', groups: ['system:masters'] });

  // Client verifying the server by DNS name works too.
  const byName = await handshake(pki, { host: '127.0.0.1', servername: 'localhost', ca: pki.caCertPem, cert: pki.adminCertPem, key: pki.adminKeyPem });
  assert.equal(byName.authorized, true);

  // A client certificate from another CA is not authorized.
  const other = await ensurePki(tmpDir());
  const foreign = await handshake(pki, { host: '127.0.0.1', ca: pki.caCertPem, cert: other.adminCertPem, key: other.adminKeyPem });
  assert.equal(foreign.authorized, false);
});

test('issueClientCertificate: one O per group, usable for TLS; publicKeyPem returns no key', async () => {
  const pki = await sharedPki();
  const issued = await issueClientCertificate(pki, { commonName: 'alice', organizations: ['dev', 'ops'] }, { days: 2 });
  assert.ok(issued.keyPem);
  const cert = new X509Certificate(issued.certPem);
  assert.deepEqual(subjectLines(cert), ['CN=alice', 'O=dev', 'O=ops']);
  const days = (new Date(cert.validTo).getTime() - Date.now()) / DAY;
  assert.ok(days > 1.9 && days < 2.1, `validity ${days}`);
  const res = await handshake(pki, { host: '127.0.0.1', ca: pki.caCertPem, cert: issued.certPem, key: issued.keyPem! });
  assert.equal(res.authorized, true);
  assert.deepEqual(userFromPeerCertificate(res.peer), { name: 'alice', groups: ['dev', 'ops'] });

  const keys = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair;
  const spkiPem = x509.PemConverter.encode(await webcrypto.subtle.exportKey('spki', keys.publicKey as webcrypto.CryptoKey), 'PUBLIC KEY');
  const forKey = await issueClientCertificate(pki, { commonName: 'bob' }, { publicKeyPem: spkiPem });
  assert.equal(forKey.keyPem, undefined);
  const bobCert = new x509.X509Certificate(forKey.certPem);
  assert.equal(bobCert.subject, 'CN=bob');
  assert.equal(
    Buffer.from(bobCert.publicKey.rawData).toString('hex'),
    Buffer.from(await webcrypto.subtle.exportKey('spki', keys.publicKey as webcrypto.CryptoKey)).toString('hex'),
  );
});

test('userFromPeerCertificate handles string and array fields and missing certificates', () => {
  assert.deepEqual(userFromPeerCertificate({ subject: { CN: 'u', O: ['a', 'b'] } }), { name: 'u', groups: ['a', 'b'] });
  assert.deepEqual(userFromPeerCertificate({ subject: { CN: 'u', O: 'a' } }), { name: 'u', groups: ['a'] });
  assert.deepEqual(userFromPeerCertificate({ subject: { CN: 'u' } }), { name: 'u', groups: [] });
  assert.equal(userFromPeerCertificate({ subject: { O: 'a' } }), undefined);
  assert.equal(userFromPeerCertificate({}), undefined);
  assert.equal(userFromPeerCertificate(undefined), undefined);
});

async function makeCsr(name: string, sanNames?: { type: 'dns' | 'ip'; value: string }[]) {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name,
    keys,
    signingAlgorithm: alg,
    extensions: sanNames ? [new x509.SubjectAlternativeNameExtension(sanNames)] : [],
  });
  return { csr, keys };
}

test('signCertificateRequest signs a @peculiar/x509 CSR that verifies against the CA', async () => {
  const pki = await sharedPki();
  const { csr } = await makeCsr('CN=system:node:n1, O=system:nodes', [
    { type: 'dns', value: 'n1.example' },
    { type: 'ip', value: '10.0.0.7' },
  ]);
  const pem = await signCertificateRequest(pki, csr.toString('pem'), {
    usages: ['digital signature', 'key encipherment', 'client auth', 'server auth'],
    days: 30,
  });
  const cert = new X509Certificate(pem);
  const ca = new X509Certificate(pki.caCertPem);
  assert.ok(cert.checkIssued(ca));
  assert.ok(cert.verify(ca.publicKey));
  assert.deepEqual(subjectLines(cert), ['CN=system:node:n1', 'O=system:nodes']);
  assert.deepEqual([...(cert.keyUsage ?? [])].sort(), ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
  assert.equal(cert.subjectAltName, 'DNS:n1.example, IP Address:10.0.0.7');
  assert.equal(cert.ca, false);
  const days = (new Date(cert.validTo).getTime() - Date.now()) / DAY;
  assert.ok(days > 29.9 && days < 30.1, `validity ${days}`);
  const px = new x509.X509Certificate(pem);
  assert.equal(
    px.getExtension(x509.KeyUsagesExtension)!.usages,
    x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
  );
  assert.equal(Buffer.from(px.publicKey.rawData).toString('hex'), Buffer.from(csr.publicKey.rawData).toString('hex'));

  // isCA, and validity capped at the CA's own expiry.
  const { csr: caCsr } = await makeCsr('CN=sub-ca');
  const subCa = new X509Certificate(await signCertificateRequest(pki, caCsr.toString('pem'), { usages: ['cert sign'], isCA: true, days: 100000 }));
  assert.equal(subCa.ca, true);
  assert.ok(new Date(subCa.validTo).getTime() <= new Date(ca.validTo).getTime());
});

test('signCertificateRequest rejects unknown usages and CSRs whose signature does not verify', async () => {
  const pki = await sharedPki();
  const { csr } = await makeCsr('CN=x');
  await assert.rejects(signCertificateRequest(pki, csr.toString('pem'), { usages: ['flying'] }), /unknown certificate usage/);

  // Swap in another key's SPKI: the self-signature no longer matches.
  const { csr: other } = await makeCsr('CN=x');
  const der = Buffer.from(csr.rawData);
  const spkiA = Buffer.from(csr.publicKey.rawData);
  const spkiB = Buffer.from(other.publicKey.rawData);
  const at = der.indexOf(spkiA);
  assert.ok(at > 0);
  spkiB.copy(der, at);
  const tampered = x509.PemConverter.encode(der, 'CERTIFICATE REQUEST');
  await assert.rejects(signCertificateRequest(pki, tampered, { usages: ['client auth'] }), /does not verify/);
  await assert.rejects(signCertificateRequest(pki, 'garbage', { usages: ['client auth'] }));
});

test('renderKubeconfig produces a kubeconfig with cluster, user and context "hearth"', async () => {
  const pki = await sharedPki();
  const text = renderKubeconfig({
    server: 'https://127.0.0.1:6443',
    caCertPem: pki.caCertPem,
    clientCertPem: pki.adminCertPem,
    clientKeyPem: pki.adminKeyPem,
    namespace: 'team-a',
  });
  const doc = parseYaml(text);
  assert.equal(doc.apiVersion, 'v1');
  assert.equal(doc.kind, 'Config');
  assert.equal(doc['current-context'], 'hearth');
  assert.equal(doc.clusters.length, 1);
  assert.equal(doc.clusters[0].name, 'hearth');
  assert.equal(doc.clusters[0].cluster.server, 'https://127.0.0.1:6443');
  assert.equal(Buffer.from(doc.clusters[0].cluster['certificate-authority-data'], 'base64').toString(), pki.caCertPem);
  assert.equal(doc.users.length, 1);
  assert.equal(doc.users[0].name, 'hearth-admin');
  assert.equal(Buffer.from(doc.users[0].user['client-certificate-data'], 'base64').toString(), pki.adminCertPem);
  assert.equal(Buffer.from(doc.users[0].user['client-key-data'], 'base64').toString(), pki.adminKeyPem);
  assert.deepEqual(doc.contexts, [{ name: 'hearth', context: { cluster: 'hearth', user: 'hearth-admin', namespace: 'team-a' } }]);

  const tokenDoc = parseYaml(renderKubeconfig({ server: 'https://[::1]:1', caCertPem: pki.caCertPem, token: 'abc.def', userName: 'sa' }));
  assert.deepEqual(tokenDoc.users, [{ name: 'sa', user: { token: 'abc.def' } }]);
  assert.deepEqual(tokenDoc.contexts[0].context, { cluster: 'hearth', user: 'sa' });
  assert.throws(() => renderKubeconfig({ server: 'https://x:1', caCertPem: pki.caCertPem, clientCertPem: pki.adminCertPem }));
});

test('writeKubeconfig / writeAdminKubeconfig write mode-0600 files', async () => {
  const pki = await sharedPki();
  const dir = tmpDir();
  const file = path.join(dir, 'nested', 'k.yaml');
  writeKubeconfig(file, 'hello: 1\n');
  assert.equal(fs.readFileSync(file, 'utf8'), 'hello: 1\n');
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);

  const admin = writeAdminKubeconfig(dir, pki, 'https://127.0.0.1:6443');
  assert.equal(admin, path.join(dir, 'admin.kubeconfig'));
  assert.equal(fs.statSync(admin).mode & 0o777, 0o600);
  const doc = parseYaml(fs.readFileSync(admin, 'utf8'));
  assert.equal(doc.clusters[0].cluster.server, 'https://127.0.0.1:6443');
  assert.equal(Buffer.from(doc.users[0].user['client-certificate-data'], 'base64').toString(), pki.adminCertPem);
  assert.deepEqual(fs.readdirSync(dir).sort(), ['admin.kubeconfig', 'nested']);
});

test('serverUrlFor picks a loopback URL for wildcard/loopback binds', () => {
  assert.equal(serverUrlFor('0.0.0.0', 6443), 'https://127.0.0.1:6443');
  assert.equal(serverUrlFor('127.0.0.1', 6443), 'https://127.0.0.1:6443');
  assert.equal(serverUrlFor('::', 6443), 'https://[::1]:6443');
  assert.equal(serverUrlFor('::1', 6443), 'https://[::1]:6443');
  assert.equal(serverUrlFor('0:0::1', 6443), 'https://[::1]:6443');
  assert.equal(serverUrlFor('192.168.1.5', 8443), 'https://192.168.1.5:8443');
  assert.equal(serverUrlFor('fd00::5', 8443), 'https://[fd00::5]:8443');
  assert.equal(serverUrlFor('myhost.example', 8443), 'https://myhost.example:8443');
});
