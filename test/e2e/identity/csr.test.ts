// CertificateSigningRequests through HTTPS as kube-apiserver serves them: the requester fills
// spec.username/groups whatever the body says, the status starts empty, spec.request must be a
// signed PEM CSR, kubectl (1.27 and 1.33) approves and denies through /approval, Approved and
// Denied exclude each other, /status cannot approve, and authorization applies to other users.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { webcrypto, X509Certificate } from 'node:crypto';
import { useTestServer, KUBECTL_VERSIONS, type TestServer } from '../../helpers/server.ts';
import { issueClientCertificate, x509 } from '../../../server/pki/certificates.ts';

const s = useTestServer();
const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A fresh P-256 key's PKCS#10 request for this subject, as PEM, and the key (PKCS#8 PEM). */
async function csrAndKey(subject: string, dnsNames: string[] = []): Promise<{ csr: string; keyPem: string }> {
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const extensions = dnsNames.length ? [new x509.SubjectAlternativeNameExtension(dnsNames.map((value) => ({ type: 'dns' as const, value })))] : [];
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: subject, keys, signingAlgorithm: EC, extensions });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)).toString('base64');
  return { csr: csr.toString('pem'), keyPem: `-----BEGIN PRIVATE KEY-----\n${pkcs8.replace(/.{64}/g, '$&\n')}\n-----END PRIVATE KEY-----\n` };
}

async function csrPem(subject: string): Promise<string> {
  return (await csrAndKey(subject)).csr;
}

const b64 = (text: string) => Buffer.from(text).toString('base64');

interface Condition {
  type: string;
  status: string;
  reason?: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
}
/** A CertificateSigningRequest as the tests read and write it. */
interface Csr {
  apiVersion: string;
  kind: string;
  metadata: { name: string; resourceVersion?: string; labels?: Record<string, string> };
  spec: Record<string, unknown> & { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]>; signerName?: string; usages?: string[] };
  status?: { conditions?: Condition[]; certificate?: string };
}

async function csrBody(name: string, spec: Record<string, unknown> = {}): Promise<Csr> {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: b64(await csrPem(`CN=${name}`)), signerName: 'example.com/test-signer', usages: ['client auth', 'digital signature'], ...spec },
  };
}

async function create(t: TestServer, name: string, spec: Record<string, unknown> = {}): Promise<Csr> {
  const r = await t.request('POST', CSRS, { body: await csrBody(name, spec) });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

function invalid(r: { status: number; json(): { reason: string; message: string; details: { causes: { field: string; message: string }[] } }; text: string }): { message: string; causes: [string, string][] } {
  assert.equal(r.status, 422, r.text);
  const st = r.json();
  assert.equal(st.reason, 'Invalid');
  return { message: st.message, causes: st.details.causes.map((c: { field: string; message: string }) => [c.field, c.message]) };
}

test('create: the requester fills spec.username, groups, uid and extra, whatever the body says; status starts empty', async () => {
  const body = await csrBody('who-am-i', { username: 'mallory', uid: 'forged', groups: ['system:masters', 'forged'], extra: { forged: ['x'] } });
  body.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'SelfApproved' }], certificate: b64('nope') };
  const r = await s.request('POST', CSRS, { body });
  assert.equal(r.status, 201, r.text);
  const csr = r.json();
  assert.equal(csr.spec.username, 'hearth-admin');
  assert.ok(csr.spec.groups.includes('system:masters') && csr.spec.groups.includes('system:authenticated'), JSON.stringify(csr.spec.groups));
  assert.ok(!csr.spec.groups.includes('forged'));
  assert.equal(csr.spec.uid, undefined);
  assert.equal(csr.spec.extra?.forged, undefined);
  assert.deepEqual(csr.status, {});
  // An update of the main resource changes metadata only: spec and status stay.
  const put = await s.request('PUT', `${CSRS}/who-am-i`, {
    body: { ...csr, metadata: { ...csr.metadata, labels: { a: 'b' } }, spec: { ...csr.spec, username: 'mallory' }, status: { conditions: [{ type: 'Approved', status: 'True' }] } },
  });
  assert.equal(put.status, 200, put.text);
  assert.equal(put.json().metadata.labels.a, 'b');
  assert.equal(put.json().spec.username, 'hearth-admin');
  assert.deepEqual(put.json().status, {});
});

for (const version of ['1.27', '1.33']) {
  test(`kubectl ${version} certificate approve and get csr`, async () => {
    const bin = KUBECTL_VERSIONS[version]!;
    const name = `approve-${version.replace('.', '-')}`;
    await create(s, name, { expirationSeconds: 3600 });
    const approve = await s.kubectl(['certificate', 'approve', name], { binary: bin });
    assert.equal(approve.code, 0, approve.stderr);
    assert.match(approve.stdout, new RegExp(`certificatesigningrequest.certificates.k8s.io/${name} approved`));
    const csr = (await s.request('GET', `${CSRS}/${name}`)).json();
    assert.equal(csr.status.conditions.length, 1);
    assert.equal(csr.status.conditions[0].type, 'Approved');
    assert.equal(csr.status.conditions[0].reason, 'KubectlApprove');
    assert.ok(csr.status.conditions[0].lastUpdateTime && csr.status.conditions[0].lastTransitionTime);
    const get = await s.kubectl(['get', 'csr', name], { binary: bin });
    assert.equal(get.code, 0, get.stderr);
    const [header, row] = get.stdout.trim().split('\n');
    assert.deepEqual(header!.split(/\s+/), ['NAME', 'AGE', 'SIGNERNAME', 'REQUESTOR', 'REQUESTEDDURATION', 'CONDITION']);
    const cells = row!.split(/\s+/);
    assert.equal(cells[0], name);
    assert.deepEqual(cells.slice(2), ['example.com/test-signer', 'hearth-admin', '60m', 'Approved']);
  });
}

test('kubectl certificate deny; approving a denied request is refused with kube\'s message; conditions cannot be removed', async () => {
  await create(s, 'to-deny');
  const deny = await s.kubectl(['certificate', 'deny', 'to-deny'], { binary: KUBECTL_VERSIONS['1.33'] });
  assert.equal(deny.code, 0, deny.stderr);
  const denied = (await s.request('GET', `${CSRS}/to-deny`)).json();
  assert.deepEqual(denied.status.conditions.map((c: Condition) => [c.type, c.status, c.reason]), [['Denied', 'True', 'KubectlDeny']]);

  // kubectl refuses by itself (even with --force); a client that sends the update is refused by the server.
  const refused = await s.kubectl(['certificate', 'approve', 'to-deny'], { binary: KUBECTL_VERSIONS['1.27'] });
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /certificate signing request "to-deny" is already Denied/);

  const both = structuredClone(denied);
  both.status.conditions.push({ type: 'Approved', status: 'True', reason: 'Mine' });
  const r = invalid(await s.request('PUT', `${CSRS}/to-deny/approval`, { body: both }));
  assert.equal(r.message, 'CertificateSigningRequest.certificates.k8s.io "to-deny" is invalid: status.conditions[1].type: Invalid value: "Approved": Approved and Denied conditions are mutually exclusive');

  const removed = structuredClone(denied);
  removed.status.conditions = [];
  const r2 = invalid(await s.request('PUT', `${CSRS}/to-deny/approval`, { body: removed }));
  assert.deepEqual(r2.causes, [['status.conditions', 'Forbidden: updates may not remove a condition of type "Denied"']]);
  // Nothing was written by the refused updates.
  const after = (await s.request('GET', `${CSRS}/to-deny`)).json();
  assert.equal(after.metadata.resourceVersion, denied.metadata.resourceVersion);
});

test('/status may not approve, but may add other conditions; /approval changes conditions only', async () => {
  const csr = await create(s, 'status-writes');
  const approvedViaStatus = { ...csr, status: { conditions: [{ type: 'Approved', status: 'True' }] } };
  const r = invalid(await s.request('PUT', `${CSRS}/status-writes/status`, { body: approvedViaStatus }));
  assert.deepEqual(r.causes, [['status.conditions', 'Forbidden: updates may not add a condition of type "Approved"']]);

  const failed = await s.request('PUT', `${CSRS}/status-writes/status`, { body: { ...csr, status: { conditions: [{ type: 'Failed', status: 'True', reason: 'SignerRefused' }] } } });
  assert.equal(failed.status, 200, failed.text);
  assert.equal(failed.json().status.conditions[0].type, 'Failed');

  // /approval takes the conditions only: a certificate in its body is dropped, as is a spec change.
  const viaApproval = await s.request('PUT', `${CSRS}/status-writes/approval`, {
    body: { ...failed.json(), spec: { ...csr.spec, username: 'mallory' }, status: { conditions: [...failed.json().status.conditions, { type: 'Approved', status: 'True' }], certificate: b64('x') } },
  });
  assert.equal(viaApproval.status, 200, viaApproval.text);
  assert.deepEqual(viaApproval.json().status.conditions.map((c: Condition) => c.type), ['Failed', 'Approved']);
  assert.equal(viaApproval.json().status.certificate, undefined);
  assert.equal(viaApproval.json().spec.username, 'hearth-admin');

  const latest = viaApproval.json();
  const badCert = invalid(await s.request('PUT', `${CSRS}/status-writes/status`, { body: { ...latest, status: { ...latest.status, certificate: b64('not pem') } } }));
  assert.deepEqual(badCert.causes, [['status.certificate', 'Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block']]);
});

test('bad requests: not PEM, a signature that does not verify, short expirationSeconds, usages and signerName — 422 in kube\'s words, nothing stored', async () => {
  const notPem = invalid(await s.request('POST', CSRS, { body: await csrBody('bad-pem', { request: b64('hello') }) }));
  assert.deepEqual(notPem.causes, [['spec.request', 'Invalid value: []byte{0x68, 0x65, 0x6c, 0x6c, 0x6f}: PEM block type must be CERTIFICATE REQUEST']]);

  // One byte of the signed part changed: the self-signature no longer verifies.
  const pem = await csrPem('CN=tampered');
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  const cn = der.indexOf(Buffer.from('tampered'));
  der[cn] = 'T'.charCodeAt(0);
  const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64').replace(/.{64}/g, '$&\n')}\n-----END CERTIFICATE REQUEST-----\n`;
  const sig = invalid(await s.request('POST', CSRS, { body: await csrBody('bad-sig', { request: b64(tampered) }) }));
  assert.equal(sig.causes.length, 1);
  assert.equal(sig.causes[0]![0], 'spec.request');
  assert.match(sig.causes[0]![1], /: x509: ECDSA verification failure$/);

  const short = invalid(await s.request('POST', CSRS, { body: await csrBody('short', { expirationSeconds: 300 }) }));
  assert.deepEqual(short.causes, [['spec.expirationSeconds', 'Invalid value: 300: may not specify a duration less than 600 seconds (10 minutes)']]);

  const body = await csrBody('many-bad', { usages: ['client auth', 'flying', 'client auth'], signerName: 'nodomain' });
  const many = invalid(await s.request('POST', CSRS, { body }));
  assert.deepEqual(many.causes.slice(0, 1), [['spec.usages[1]', many.causes[0]![1]]]);
  assert.match(many.causes[0]![1], /^Unsupported value: "flying": supported values: "any", "cert sign", "client auth",/);
  assert.deepEqual(many.causes.slice(1), [
    ['spec.usages[2]', 'Duplicate value: "client auth"'],
    ['spec.signerName', "Invalid value: \"nodomain\": must be a fully qualified domain and path of the form 'example.com/signer-name'"],
  ]);

  const legacy = invalid(await s.request('POST', CSRS, { body: await csrBody('legacy', { signerName: 'kubernetes.io/legacy-unknown' }) }));
  assert.deepEqual(legacy.causes, [['spec.signerName', 'Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version']]);

  const missing = await csrBody('missing');
  delete missing.spec.signerName;
  delete missing.spec.usages;
  assert.deepEqual(invalid(await s.request('POST', CSRS, { body: missing })).causes, [
    ['spec.usages', 'Required value'],
    ['spec.signerName', 'Required value'],
  ]);

  for (const name of ['bad-pem', 'bad-sig', 'short', 'many-bad', 'legacy', 'missing']) {
    assert.equal((await s.request('GET', `${CSRS}/${name}`)).status, 404, name);
  }
});

/** The request once the signer has written to it (a certificate or a Failed condition). */
async function signed(name: string): Promise<Csr> {
  const w = await s.watch(`${CSRS}?watch=1&fieldSelector=metadata.name%3D${name}`, (events) =>
    events.some((e) => e.object?.status?.certificate || e.object?.status?.conditions?.some((c: Condition) => c.type === 'Failed')),
  );
  assert.equal(w.status, 200);
  return w.events[w.events.length - 1].object;
}

/** GET path over HTTPS with this client certificate. */
function getAs(path: string, cert: string, key: string): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(`${s.url}${path}`, { ca: s.pki.caCertPem, cert, key, agent: false }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('kubernetes.io/kube-apiserver-client: an approved request is signed by the cluster CA for its duration, and the certificate authenticates', async () => {
  const { csr, keyPem } = await csrAndKey('CN=bob, O=devs');
  const body = await csrBody('bob');
  body.spec = { ...body.spec, request: b64(csr), signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth', 'digital signature'], expirationSeconds: 3600 };
  assert.equal((await s.request('POST', CSRS, { body })).status, 201);
  // Not approved: nothing is signed.
  assert.equal((await s.request('GET', `${CSRS}/bob`)).json().status.certificate, undefined);
  const approve = await s.kubectl(['certificate', 'approve', 'bob'], { binary: KUBECTL_VERSIONS['1.33'] });
  assert.equal(approve.code, 0, approve.stderr);
  const done = await signed('bob');
  const certPem = Buffer.from(done.status!.certificate!, 'base64').toString();
  const cert = new X509Certificate(certPem);
  assert.ok(cert.verify(new X509Certificate(s.pki.caCertPem).publicKey), 'signed by the cluster CA');
  assert.match(cert.subject, /CN=bob/);
  assert.match(cert.subject, /O=devs/);
  const lifetimeMin = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 60_000;
  assert.ok(lifetimeMin >= 64 && lifetimeMin <= 66, `lifetime ${lifetimeMin} min: 5 min backdated + the hour asked for`);
  assert.equal(cert.keyUsage?.includes('1.3.6.1.5.5.7.3.2'), true, 'client auth');
  // The certificate is bob's credential: the server names him (and RBAC being the next issue, refuses him).
  const asBob = await getAs('/api/v1/namespaces', certPem, keyPem);
  assert.equal(asBob.code, 403, asBob.body);
  assert.match(JSON.parse(asBob.body).message, /^namespaces is forbidden: User "bob" cannot list resource "namespaces"/);
  const get = await s.kubectl(['get', 'csr', 'bob']);
  assert.match(get.stdout, /Approved,Issued/);
});

test('kubernetes.io/kube-apiserver-client refuses usages a client certificate does not have: Failed, SignerValidationFailure', async () => {
  const body = await csrBody('server-usage');
  body.spec = { ...body.spec, signerName: 'kubernetes.io/kube-apiserver-client', usages: ['server auth', 'client auth'] };
  assert.equal((await s.request('POST', CSRS, { body })).status, 201);
  assert.equal((await s.kubectl(['certificate', 'approve', 'server-usage'])).code, 0);
  const done = await signed('server-usage');
  assert.equal(done.status!.certificate, undefined);
  const failed = done.status!.conditions!.find((c) => c.type === 'Failed')!;
  assert.deepEqual([failed.status, failed.reason, (failed as Condition & { message?: string }).message], ['True', 'SignerValidationFailure', 'invalid usage for client certificate: server auth']);
  const get = await s.kubectl(['get', 'csr', 'server-usage']);
  assert.match(get.stdout, /Approved,Failed/);
});

test('kubernetes.io/kube-apiserver-client-kubelet: a node client certificate, which authenticates as the node', async () => {
  const { csr, keyPem } = await csrAndKey('CN=system:node:n1, O=system:nodes');
  const body = await csrBody('node-client');
  body.spec = { ...body.spec, request: b64(csr), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] };
  assert.equal((await s.request('POST', CSRS, { body })).status, 201);
  assert.equal((await s.kubectl(['certificate', 'approve', 'node-client'])).code, 0);
  const certPem = Buffer.from((await signed('node-client')).status!.certificate!, 'base64').toString();
  const asNode = await getAs('/api/v1/namespaces', certPem, keyPem);
  assert.equal(asNode.code, 403, asNode.body);
  assert.match(JSON.parse(asNode.body).message, /User "system:node:n1" cannot list resource "namespaces"/);

  // Not a node's subject: refused with kube's reason.
  const wrong = await csrBody('node-client-wrong');
  wrong.spec = { ...wrong.spec, request: b64(await csrPem('CN=n2, O=system:nodes')), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] };
  assert.equal((await s.request('POST', CSRS, { body: wrong })).status, 201);
  assert.equal((await s.kubectl(['certificate', 'approve', 'node-client-wrong'])).code, 0);
  const failed = (await signed('node-client-wrong')).status!.conditions!.find((c) => c.type === 'Failed') as Condition & { message?: string };
  assert.deepEqual([failed.reason, failed.message], ['SignerValidationFailure', 'subject common name does not begin with system:node:']);
});

test('kubernetes.io/kubelet-serving: signed with its DNS names; without one, Failed', async () => {
  const { csr } = await csrAndKey('CN=system:node:n1, O=system:nodes', ['n1.example.com']);
  const body = await csrBody('node-serving');
  body.spec = { ...body.spec, request: b64(csr), signerName: 'kubernetes.io/kubelet-serving', usages: ['digital signature', 'key encipherment', 'server auth'] };
  assert.equal((await s.request('POST', CSRS, { body })).status, 201);
  assert.equal((await s.kubectl(['certificate', 'approve', 'node-serving'])).code, 0);
  const cert = new X509Certificate(Buffer.from((await signed('node-serving')).status!.certificate!, 'base64').toString());
  assert.equal(cert.subjectAltName, 'DNS:n1.example.com');
  assert.equal(cert.keyUsage?.includes('1.3.6.1.5.5.7.3.1'), true, 'server auth');

  const noSan = await csrBody('node-serving-nosan');
  noSan.spec = { ...noSan.spec, request: b64(await csrPem('CN=system:node:n1, O=system:nodes')), signerName: 'kubernetes.io/kubelet-serving', usages: ['digital signature', 'server auth'] };
  assert.equal((await s.request('POST', CSRS, { body: noSan })).status, 201);
  assert.equal((await s.kubectl(['certificate', 'approve', 'node-serving-nosan'])).code, 0);
  const failed = (await signed('node-serving-nosan')).status!.conditions!.find((c) => c.type === 'Failed') as Condition & { message?: string };
  assert.deepEqual([failed.reason, failed.message], ['SignerValidationFailure', 'DNS or IP subjectAltName is required']);
});

test('CertificateSubjectRestriction: kubernetes.io/kube-apiserver-client may not be asked for system:masters (403); other signers may', async () => {
  const masters = b64(await csrPem('CN=eve, O=devs, O=system:masters'));
  const body = await csrBody('eve');
  body.spec = { ...body.spec, request: masters, signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] };
  const r = await s.request('POST', CSRS, { body });
  assert.equal(r.status, 403, r.text);
  assert.equal(r.json().reason, 'Forbidden');
  assert.equal(r.json().message, 'certificatesigningrequests.certificates.k8s.io "eve" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed');
  assert.equal((await s.request('GET', `${CSRS}/eve`)).status, 404);
  const kubectl = await s.kubectl(['create', '-f', '-'], { input: JSON.stringify(body) });
  assert.notEqual(kubectl.code, 0);
  assert.match(kubectl.stderr, /Error from server \(Forbidden\).*use of kubernetes.io\/kube-apiserver-client signer with system:masters group is not allowed/);
  const other = await s.request('POST', CSRS, { body: { ...body, metadata: { name: 'eve-elsewhere' }, spec: { ...body.spec, signerName: 'example.com/test-signer' } } });
  assert.equal(other.status, 201, other.text);
});

test('authorization applies: a user outside system:masters is refused (403), anonymous too', async () => {
  const alice = await issueClientCertificate(s.pki, { commonName: 'alice', organizations: ['devs'] });
  const payload = JSON.stringify(await csrBody('alice-csr'));
  const status = await new Promise<{ code: number; body: string }>((resolve, reject) => {
    const req = https.request(`${s.url}${CSRS}`, { method: 'POST', ca: s.pki.caCertPem, cert: alice.certPem, key: alice.keyPem, agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(payload);
  });
  assert.equal(status.code, 403, status.body);
  assert.equal(JSON.parse(status.body).reason, 'Forbidden');
  assert.match(JSON.parse(status.body).message, /User "alice" cannot create resource "certificatesigningrequests" in API group "certificates.k8s.io"/);
  const anon = await s.request('POST', CSRS, { body: await csrBody('anon-csr'), anonymous: true });
  assert.equal(anon.status, 403, anon.text);
  assert.equal((await s.request('GET', `${CSRS}/alice-csr`)).status, 404);
});
