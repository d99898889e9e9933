// --enable-priority-and-fairness=false: kube's WithMaxInFlightLimit instead of APF. With
// --max-requests-inflight 1 a second concurrent read from a token user gets kube's 429 (text body,
// Retry-After: 1) while system:masters is still served; the mutating limit is apart from the
// read-only one; a watch (long-running) holds nothing; no response names a FlowSchema.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import type { Credentials } from '../../helpers/identities.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-inflight-'));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, 'reader-token,reader,reader-uid,"readers"\n');
const reader: Credentials = { token: 'reader-token' };
let s: TestServer;
/** A LIST waiting (3 s) for a resourceVersion not yet reached: it holds the read-only slot. */
const FUTURE_RV = '?resourceVersion=99999999&resourceVersionMatch=NotOlderThan';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

function call(who: Credentials, method: string, path: string, body?: unknown, onResponse?: (res: import('node:http').IncomingMessage) => void): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (who.token) headers.authorization = `Bearer ${who.token}`;
    if (payload) headers['content-type'] = 'application/json';
    const req = https.request(`${s.url}${path}`, { method, headers, agent: false, ca: s.pki.caCertPem, cert: who.cert, key: who.key }, (res) => {
      onResponse?.(res);
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      res.on('close', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      res.on('error', reject);
    });
    req.on('error', (e) => (onResponse ? undefined : reject(e)));
    req.end(payload);
  });
}

const admin = (): Credentials => ({ cert: s.pki.adminCertPem, key: s.pki.adminKeyPem });

before(async () => {
  s = await startTestServer({ options: { tokenAuthFile: tokenFile, flowControl: { enablePriorityAndFairness: false, maxRequestsInflight: 1, maxMutatingRequestsInflight: 1, requestTimeoutMs: 60_000 } } });
  const r = await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    body: { metadata: { name: 'readers-view' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'readers' }] },
  });
  assert.equal(r.status, 201, r.text);
});

after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a watch holds nothing: a read beside it is served, with no FlowSchema named', async () => {
  let watchResponse: import('node:http').IncomingMessage | undefined;
  const watching = call(reader, 'GET', '/api/v1/namespaces/default/configmaps?watch=1', undefined, (res) => (watchResponse = res));
  for (let i = 0; i < 100 && !watchResponse; i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(watchResponse?.statusCode, 200);
  const read = await call(reader, 'GET', '/api/v1/namespaces/default/configmaps');
  assert.equal(read.status, 200, read.text);
  assert.equal(read.headers['x-kubernetes-pf-flowschema-uid'], undefined);
  assert.equal(read.headers['x-kubernetes-pf-prioritylevel-uid'], undefined);
  // APF is off: no dumps are served.
  assert.equal((await call(admin(), 'GET', '/debug/api_priority_and_fairness/dump_priority_levels')).status, 404);
  watchResponse!.destroy();
  await watching;
});

test('a second concurrent read gets 429 and Retry-After: 1; system:masters is served; writes have their own limit', async () => {
  const holder = call(reader, 'GET', `/api/v1/namespaces/default/configmaps${FUTURE_RV}`);
  let refused: Answer | undefined;
  // Polled (each read quick) while the holder waits its 3 s.
  for (let i = 0; i < 20 && !refused; i++) {
    const a = await call(reader, 'GET', '/api/v1/namespaces/default/configmaps');
    if (a.status === 429) refused = a;
    else await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(refused, 'no 429 while the read-only slot was held');
  assert.equal(refused.text, 'Too many requests, please try again later.\n');
  assert.equal(refused.headers['retry-after'], '1');
  assert.equal(refused.headers['content-type'], 'text/plain; charset=utf-8');
  // system:masters: served even with the limit reached.
  const masters = await call(admin(), 'GET', '/api/v1/namespaces/default/configmaps');
  assert.equal(masters.status, 200);
  // A write counts against the mutating limit, not the read-only one: it reaches authorization (403).
  const write = await call(reader, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'x' } });
  assert.equal(write.status, 403, write.text);
  assert.equal((await holder).status, 504);
  // The slot is back.
  assert.equal((await call(reader, 'GET', '/api/v1/namespaces/default/configmaps')).status, 200);
});
