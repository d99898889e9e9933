// hearth's log as an operator reads it, from a real process (`npm start`'s bundle and options):
// at -v=2 one line per request in kube's httplog shape ("HTTP" verb, URI, latency, userAgent,
// audit-ID, srcIP, resp; hearth adds user and bytes), in --log-format=json as component-base
// writes it; at -v=0 no request lines, klog's text header on every line, and the start-up and
// shutdown steps. Several identities: the admin through kubectl, a token user refused, anonymous.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import https from 'node:https';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHearthProcess, stopHearthProcess, type HearthProcess } from '../../helpers/hearth-process.ts';
import { requester } from '../../helpers/identities.ts';
import { KUBECTL } from '../../helpers/server.ts';
import { KLOG_HEADER, logMessage } from '../../helpers/log-lines.ts';

const dirs: string[] = [];
const started: HearthProcess[] = [];
after(async () => {
  for (const p of started) await stopHearthProcess(p);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'hearth-logs-'));
  dirs.push(d);
  return d;
}

/** Polls (bounded) until check finds what it looks for: a request's line is written when its response closes. */
async function eventually<T>(what: string, check: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = check();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A GET over a fresh connection: its status, Audit-Id and whole body (a watch's until it ends). */
function rawGet(url: string, opts: { ca: string; cert?: string; key?: string; headers?: Record<string, string> }): Promise<{ status: number; auditId: string | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { headers: opts.headers, ca: opts.ca, cert: opts.cert, key: opts.key, agent: false }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, auditId: res.headers['audit-id'] as string | undefined, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

type Entry = Record<string, unknown>;
const jsonEntries = (p: HearthProcess): Entry[] => p.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Entry);

function kubectl(kubeconfig: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { timeout: 60_000 }, (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
}

test('-v=2 --log-format=json: one JSON line per request with the user, status, audit ID (the response\'s Audit-Id), verb and bytes', async () => {
  const dataDir = tempDir();
  const tokenFile = join(tempDir(), 'tokens.csv');
  writeFileSync(tokenFile, 'alice-token,alice,alice-uid,"devs"\n');
  const p = await startHearthProcess(dataDir, ['-v=2', '--log-format=json', '--token-auth-file', tokenFile]);
  started.push(p);
  const caCertPem = readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8');
  const requestAs = requester(() => ({ url: p.url, pki: { caCertPem } }));

  // Every line is one JSON object with component-base's fields.
  const startup = jsonEntries(p);
  assert.ok(startup.length > 0, p.stderr);
  for (const e of startup) {
    assert.equal(typeof e.ts, 'number');
    assert.equal(typeof e.caller, 'string');
    assert.equal(typeof e.msg, 'string');
  }
  assert.ok(startup.some((e) => e.msg === 'Store opened' && typeof e.bytes === 'number' && e.v === 0), p.stderr);
  assert.ok(startup.some((e) => typeof e.msg === 'string' && e.msg.startsWith('Serving securely on 127.0.0.1:')), p.stderr);

  // The admin, through kubectl: -v=8 shows the response headers, the Audit-Id among them.
  const admin = await kubectl(join(dataDir, 'admin.kubeconfig'), ['get', 'namespaces', '-v=8']);
  assert.equal(admin.code, 0, admin.stderr);
  // (kubectl may ask for discovery first: the Audit-Id after the LIST's request line is the LIST's)
  const listAt = admin.stderr.indexOf('/api/v1/namespaces?limit=500');
  assert.ok(listAt >= 0, admin.stderr);
  const kubectlAuditId = /Audit-Id: ([0-9a-f-]{36})/i.exec(admin.stderr.slice(listAt))?.[1];
  assert.ok(kubectlAuditId, admin.stderr);
  const adminLine = await eventually('the admin\'s LIST line', () => jsonEntries(p).find((e) => e.msg === 'HTTP' && e['audit-ID'] === kubectlAuditId));
  assert.equal(adminLine.verb, 'LIST');
  assert.equal(adminLine.URI, '/api/v1/namespaces?limit=500');
  assert.equal(adminLine.user, 'hearth-admin');
  assert.equal(adminLine.resp, 200);
  assert.equal(adminLine.v, 2);
  assert.equal(adminLine.caller, 'httplog');
  assert.match(String(adminLine.userAgent), /^kubectl\//);
  assert.match(String(adminLine.srcIP), /^127\.0\.0\.1:\d+$/);
  assert.match(String(adminLine.latency), /^\d+(\.\d+)?(ns|µs|ms|s)$/, 'a Go duration string');
  assert.ok(typeof adminLine.bytes === 'number' && adminLine.bytes > 0);

  // A token user refused: 403, the user named, the response's Audit-Id in the line, the body's size as bytes.
  const refused = await requestAs({ token: 'alice-token' }, 'GET', '/api/v1/namespaces/kube-system/secrets');
  assert.equal(refused.status, 403, refused.text);
  const alice = await eventually('alice\'s line', () => jsonEntries(p).find((e) => e.msg === 'HTTP' && e.user === 'alice'));
  assert.equal(alice.resp, 403);
  assert.equal(alice.verb, 'LIST');
  assert.equal(alice.URI, '/api/v1/namespaces/kube-system/secrets');
  assert.equal(alice.bytes, Buffer.byteLength(refused.text));
  // (the identities helper does not return headers: this one's Audit-Id is chosen by the client, which kube keeps)
  const chosenResponse = await rawGet(`${p.url}/api/v1/namespaces/default/configmaps/missing`, { ca: caCertPem, headers: { authorization: 'Bearer alice-token', 'audit-id': 'operator-chosen-id' } });
  const chosen = { status: chosenResponse.status, auditId: chosenResponse.auditId };
  assert.deepEqual(chosen, { status: 403, auditId: 'operator-chosen-id' });
  const chosenLine = await eventually('the line of the chosen Audit-Id', () => jsonEntries(p).find((e) => e['audit-ID'] === 'operator-chosen-id'));
  assert.deepEqual([chosenLine.verb, chosenLine.user, chosenLine.resp], ['GET', 'alice', 403]);

  // Anonymous: its user, and a 403 like the others.
  const anonymous = await requestAs({}, 'GET', '/api/v1/namespaces');
  assert.equal(anonymous.status, 403);
  const anonymousLine = await eventually('the anonymous line', () => jsonEntries(p).find((e) => e.msg === 'HTTP' && e.user === 'system:anonymous' && e.URI === '/api/v1/namespaces'));
  assert.equal(anonymousLine.resp, 403);

  // A watch: logged when it ends (kube's deferred httplog line), as WATCH, with the bytes it streamed.
  const read = (f: string) => readFileSync(join(dataDir, 'pki', f), 'utf8');
  const watched = await rawGet(`${p.url}/api/v1/namespaces?watch=true&timeoutSeconds=1`, { ca: caCertPem, cert: read('admin.crt'), key: read('admin.key') });
  assert.equal(watched.status, 200);
  const watchLine = await eventually('the watch\'s line', () => jsonEntries(p).find((e) => e.msg === 'HTTP' && e.verb === 'WATCH'));
  assert.deepEqual([watchLine.URI, watchLine.user, watchLine.resp, watchLine['audit-ID']], ['/api/v1/namespaces?watch=true&timeoutSeconds=1', 'hearth-admin', 200, watched.auditId]);
  assert.equal(watchLine.bytes, Buffer.byteLength(watched.text), 'the bytes it streamed');
  assert.ok(typeof watchLine.bytes === 'number' && watchLine.bytes > 0, 'the initial ADDED events were streamed');

  // One line per request: each audit ID once.
  const ids = jsonEntries(p).filter((e) => e.msg === 'HTTP').map((e) => e['audit-ID']);
  assert.equal(new Set(ids).size, ids.length, 'no request is logged twice');
});

test('-v=0, text: no request lines; klog\'s header on every line; start-up and shutdown steps', async () => {
  const dataDir = tempDir();
  const p = await startHearthProcess(dataDir);
  started.push(p);
  const caCertPem = readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8');
  const requestAs = requester(() => ({ url: p.url, pki: { caCertPem } }));
  assert.equal((await requestAs({}, 'GET', '/livez')).status, 200);
  const admin = await kubectl(join(dataDir, 'admin.kubeconfig'), ['get', 'namespaces']);
  assert.equal(admin.code, 0, admin.stderr);
  // stdout: only what scripts wait for.
  assert.deepEqual(p.stdout.trim().split('\n'), [`hearth serving the Kubernetes v1.36.0 API at ${p.url}`, `export KUBECONFIG=${join(dataDir, 'admin.kubeconfig')}; kubectl get namespaces`]);
  assert.equal(await stopHearthProcess(p), 0);

  const lines = p.stderr.split('\n').filter((l) => l !== '');
  for (const line of lines) assert.match(line, KLOG_HEADER, `klog's header: ${line}`);
  for (const line of lines) assert.equal(KLOG_HEADER.exec(line)![8], String(p.child.pid), 'the process id');
  const messages = lines.map(logMessage);
  assert.ok(!messages.includes('HTTP'), 'no request lines at -v=0');
  // Start-up in order, then shutdown in order.
  const steps = [
    'Starting hearth',
    `pki: generated a new cluster CA in ${join(dataDir, 'pki', 'ca.crt')}`,
    'Store opened',
    'Controllers started',
    /^Serving securely on 127\.0\.0\.1:\d+$/,
    'Received a signal: shutting down',
    'Shutting down: unready, stopping controllers, draining connections',
    'Listener closed: connections drained',
    'Store closed: shutdown complete',
  ];
  let at = -1;
  for (const step of steps) {
    const i = messages.findIndex((m, j) => j > at && (typeof step === 'string' ? m === step : step.test(m)));
    assert.ok(i > at, `${step} after the previous step:\n${messages.join('\n')}`);
    at = i;
  }
  assert.match(lines.find((l) => logMessage(l) === 'Received a signal: shutting down')!, /signal="SIGTERM"$/);
  assert.match(lines.find((l) => logMessage(l) === 'Store opened')!, / file="[^"]+hearth\.db" bytes=\d+ schemaVersion=[1-9]\d* resourceVersion=\d+ compactedResourceVersion=\d+$/);
});
