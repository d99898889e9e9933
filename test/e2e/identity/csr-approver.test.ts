// The CSR approver (kube-controller-manager's csrapproving, sarapprove.go) in-process: a kubelet
// client certificate request (signer kube-apiserver-client-kubelet, O=system:nodes, CN
// system:node:<name>, no SANs, kube's usages) is approved when its requester may create
// certificatesigningrequests/nodeclient — or /selfnodeclient for its own CN — as the server's
// authorizer (RBAC) decides, and the signer then issues it. A request by a user without that
// permission stays pending (until a binding gives it), a request that is not a kubelet client
// certificate is never approved, a Denied one is left as it is, and
// `--controllers *,-csrapproving` turns the approver off.
//
// The approver handles one request at a time, in the order they were written: a request written
// after others and approved shows that the others were looked at (no sleeps).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { webcrypto, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { x509 } from '../../../server/pki/certificates.ts';

const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const KUBELET_CLIENT = 'kubernetes.io/kube-apiserver-client-kubelet';
const NODE_USAGES = ['digital signature', 'key encipherment', 'client auth'];
const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const NODE_CLIENT_MESSAGE = 'Auto approving kubelet client certificate after SubjectAccessReview.';
const SELF_NODE_CLIENT_MESSAGE = 'Auto approving self kubelet client certificate after SubjectAccessReview.';

const dir = mkdtempSync(join(tmpdir(), 'hearth-csr-approver-'));
const tokenFile = join(dir, 'tokens.csv');
// A node's own identity, in system:masters so that it may create its renewal before the Node
// authorizer (which grants nodes their CSR rules) exists; and a user RBAC gives only what the
// test binds.
writeFileSync(tokenFile, 'node-self-token,system:node:self-1,node-uid,"system:nodes,system:masters"\nmaker-token,csr-maker,maker-uid\n');

let s: TestServer;
before(async () => {
  s = await startTestServer({ options: { tokenAuthFile: tokenFile } });
});
after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A PKCS#10 request (PEM, base64 as spec.request holds it) for this subject, with these DNS names. */
async function request(subject: string, dnsNames: string[] = []): Promise<string> {
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const extensions = dnsNames.length ? [new x509.SubjectAlternativeNameExtension(dnsNames.map((value) => ({ type: 'dns' as const, value })))] : [];
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: subject, keys, signingAlgorithm: EC, extensions });
  return Buffer.from(csr.toString('pem')).toString('base64');
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
interface Csr {
  metadata: { name: string };
  spec: { username: string };
  status?: { conditions?: Condition[]; certificate?: string };
}

async function csrBody(name: string, subject: string, opts: { signerName?: string; usages?: string[]; dnsNames?: string[] } = {}) {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: await request(subject, opts.dnsNames), signerName: opts.signerName ?? KUBELET_CLIENT, usages: opts.usages ?? NODE_USAGES },
  };
}

/** Creates the request as the admin, or with these headers (a token, impersonation) instead. */
async function create(server: TestServer, body: unknown, as?: { headers: Record<string, string>; anonymous?: boolean }): Promise<Csr> {
  const r = await server.request('POST', CSRS, { body, ...(as ?? {}) });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

async function get(server: TestServer, name: string): Promise<Csr> {
  const r = await server.request('GET', `${CSRS}/${name}`);
  assert.equal(r.status, 200, r.text);
  return r.json();
}

/** Polls (bounded) until the request is issued; returns it. */
async function issued(server: TestServer, name: string): Promise<Csr> {
  for (let i = 0; i < 400; i++) {
    const csr = await get(server, name);
    if (csr.status?.certificate) return csr;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`${name} was not issued: ${JSON.stringify((await get(server, name)).status)}`);
}

const certificateOf = (csr: Csr) => new X509Certificate(Buffer.from(csr.status!.certificate!, 'base64'));
const approvals = (csr: Csr) => (csr.status?.conditions ?? []).filter((c) => c.type === 'Approved');

test('a node client request by the admin (system:masters) is approved as nodeclient, then signed', async () => {
  await create(s, await csrBody('node-a', 'CN=system:node:a,O=system:nodes'));
  const csr = await issued(s, 'node-a');
  assert.deepEqual(
    csr.status!.conditions!.map(({ type, status, reason, message }) => ({ type, status, reason, message })),
    [{ type: 'Approved', status: 'True', reason: 'AutoApproved', message: NODE_CLIENT_MESSAGE }],
  );
  assert.match(certificateOf(csr).subject, /CN=system:node:a/);
  // kubectl shows it approved and issued.
  const out = await s.kubectl(['get', 'csr', 'node-a']);
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /node-a\s+.*kubernetes\.io\/kube-apiserver-client-kubelet\s+.*Approved,Issued/);
  // The two usages kube also accepts.
  await create(s, await csrBody('node-a2', 'CN=system:node:a2,O=system:nodes', { usages: ['client auth', 'digital signature'] }));
  assert.equal(approvals(await issued(s, 'node-a2'))[0]?.message, NODE_CLIENT_MESSAGE);
});

test('a node renewing its own certificate (CN = its user name, a token user) is approved as selfnodeclient', async () => {
  const created = await create(s, await csrBody('node-self', 'CN=system:node:self-1,O=system:nodes'), { anonymous: true, headers: { authorization: 'Bearer node-self-token' } });
  assert.equal(created.spec.username, 'system:node:self-1');
  const csr = await issued(s, 'node-self');
  assert.equal(approvals(csr).length, 1);
  assert.equal(approvals(csr)[0].reason, 'AutoApproved');
  assert.equal(approvals(csr)[0].message, SELF_NODE_CLIENT_MESSAGE);
});

test('requests that are not kubelet client certificates are never approved, even from the admin', async () => {
  const notNodeClient = [
    await csrBody('other-signer', 'CN=system:node:c,O=system:nodes', { signerName: 'kubernetes.io/kube-apiserver-client' }),
    await csrBody('with-san', 'CN=system:node:d,O=system:nodes', { dnsNames: ['d.example.com'] }),
    await csrBody('wrong-org', 'CN=system:node:e,O=system:nodes,O=extra'),
    await csrBody('wrong-cn', 'CN=node-f,O=system:nodes'),
    await csrBody('wrong-usages', 'CN=system:node:g,O=system:nodes', { usages: ['client auth'] }),
    await csrBody('server-usage', 'CN=system:node:h,O=system:nodes', { usages: [...NODE_USAGES, 'server auth'] }),
  ];
  for (const body of notNodeClient) await create(s, body);
  // Written last, approved: everything above was looked at before it.
  await create(s, await csrBody('marker-1', 'CN=system:node:m1,O=system:nodes'));
  await issued(s, 'marker-1');
  for (const { metadata: { name } } of notNodeClient) {
    const csr = await get(s, name);
    assert.deepEqual(csr.status?.conditions ?? [], [], `${name} stays pending`);
    assert.equal(csr.status?.certificate, undefined, name);
  }
});

test('a requester RBAC does not allow stays pending, and is approved once a binding allows it', async () => {
  const RBAC = '/apis/rbac.authorization.k8s.io/v1';
  const asMaker = { anonymous: true, headers: { authorization: 'Bearer maker-token' } };
  const bind = async (name: string, role: string) => {
    const r = await s.request('POST', `${RBAC}/clusterrolebindings`, { body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'csr-maker' }] } });
    assert.equal(r.status, 201, r.text);
  };
  // csr-maker may create and read requests (the bootstrap policy's system:node-bootstrapper), not have them approved.
  await bind('csr-maker-requests', 'system:node-bootstrapper');
  let made: Csr | undefined;
  for (let i = 0; i < 400 && !made; i++) {
    const r = await s.request('POST', CSRS, { body: await csrBody('by-maker', 'CN=system:node:m,O=system:nodes'), ...asMaker });
    if (r.status === 201) made = r.json();
    else await new Promise((res) => setTimeout(res, 25)); // (the binding reaches the authorizer's index with the commit stream)
  }
  assert.equal(made?.spec.username, 'csr-maker');

  // The approver takes requests in the order written: a later one approved shows this one was looked at.
  await create(s, await csrBody('after-maker', 'CN=system:node:after,O=system:nodes'));
  await issued(s, 'after-maker');
  assert.deepEqual((await get(s, 'by-maker')).status?.conditions ?? [], [], 'no nodeclient permission: left pending');

  // The permission granted later: the request, looked at again with the controllers' backoff, is approved and signed.
  await bind('csr-maker-nodeclient', 'system:certificates.k8s.io:certificatesigningrequests:nodeclient');
  let csr = await get(s, 'by-maker');
  for (let i = 0; i < 600 && !csr.status?.certificate; i++) {
    await new Promise((res) => setTimeout(res, 50));
    csr = await get(s, 'by-maker');
  }
  assert.equal(approvals(csr)[0]?.message, NODE_CLIENT_MESSAGE, JSON.stringify(csr.status));
  assert.ok(csr.status?.certificate, 'signed');
});

test('a Denied request is left alone; --controllers *,-csrapproving runs no approver', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-csr-approver-restart-'));
  try {
    const off = await startTestServer({ dataDir, options: { controllers: ['*', '-csrapproving'] } });
    try {
      await create(off, await csrBody('denied-node', 'CN=system:node:x,O=system:nodes'));
      const deny = await off.kubectl(['certificate', 'deny', 'denied-node']);
      assert.equal(deny.code, 0, deny.stderr);
      // Without the approver, a node client request from the admin waits for a person.
      await create(off, await csrBody('unapproved', 'CN=system:node:y,O=system:nodes'));
      await create(off, await csrBody('marker-off', 'CN=marker,O=example', { signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] }));
      await off.kubectl(['certificate', 'approve', 'marker-off']);
      await issued(off, 'marker-off'); // (the signer runs; the approver does not)
      assert.deepEqual((await get(off, 'unapproved')).status?.conditions ?? [], []);
    } finally {
      await off.stop();
    }
    // The same data with the approver on: it takes in the stored requests at start.
    const on = await startTestServer({ dataDir });
    try {
      const unapproved = await issued(on, 'unapproved');
      assert.equal(approvals(unapproved)[0]?.message, NODE_CLIENT_MESSAGE);
      const denied = await get(on, 'denied-node');
      assert.deepEqual(denied.status?.conditions?.map((c) => c.type), ['Denied']);
      assert.equal(denied.status?.certificate, undefined);
    } finally {
      await on.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
