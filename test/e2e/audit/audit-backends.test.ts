// The audit backends and the policy file's checks: the log rotated as lumberjack rotates it (a
// 1 MB maxsize makes backups named audit-<UTC time>.log, maxbackup keeps two); the legacy format's
// one line per event; a real HTTPS webhook with its own CA receiving audit.k8s.io/v1 EventLists in
// batches of batch-max-size, the rest sent when the server stops; bad policy files refused at
// start with kube's messages, before the data directory is made (in process and by the CLI).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import YAML from 'yaml';
import { startTestServer } from '../../helpers/server.ts';
import { runHearth } from '../../helpers/hearth-process.ts';
import { startServer } from '../../../server/server.ts';
import { ensurePki } from '../../../server/pki/certificates.ts';
import { logMessage } from '../../helpers/log-lines.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-audit-backends-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function policy(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

const CONFIGMAPS_AT = (level: string) => `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: ${level}
  resources: [{ group: "", resources: ["configmaps"] }]
`;

test('rotation: a 1 MB maxsize makes lumberjack-named backups, maxbackup keeps the newest two', async () => {
  const logDir = join(dir, 'rotated');
  const logPath = join(logDir, 'audit.log');
  const s = await startTestServer({ options: { audit: { policyFile: policy('rr.yaml', CONFIGMAPS_AT('RequestResponse')), log: { path: logPath, maxSizeMegabytes: 1, maxBackups: 2, maxAgeDays: 0, format: 'json', mode: 'blocking' } } } });
  const names: string[] = [];
  try {
    // Each create's ResponseComplete line carries the 300 kB object twice (request and response).
    for (let i = 0; i < 8; i++) {
      const r = await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: `big-${i}` }, data: { blob: String(i).repeat(300_000) } } });
      assert.equal(r.status, 201, r.text);
      names.push(String(r.headers['audit-id']));
    }
  } finally {
    await s.stop();
  }
  const files = readdirSync(logDir).sort();
  const backups = files.filter((f) => f !== 'audit.log');
  assert.ok(files.includes('audit.log'));
  assert.equal(backups.length, 2, files.join(' '));
  for (const b of backups) assert.match(b, /^audit-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}\.log$/);
  const seen = new Set<string>();
  for (const f of files) {
    assert.ok(statSync(join(logDir, f)).size <= 1024 * 1024, `${f} is larger than 1 MB`);
    for (const line of readFileSync(join(logDir, f), 'utf8').split('\n').filter(Boolean)) seen.add((JSON.parse(line) as { auditID: string }).auditID);
  }
  // The newest requests are kept; the first ones went with the removed backups.
  assert.ok(seen.has(names[7]));
  assert.ok(!seen.has(names[0]));
  // The file is created 0600, as kube's ensureLogFile makes it.
  assert.equal(statSync(logPath).mode & 0o777, 0o600);
});

interface EventList {
  kind: string;
  apiVersion: string;
  items: { auditID: string; stage: string; kind: string; apiVersion: string; verb: string }[];
}

/** An HTTPS audit sink on loopback with its own CA; records every EventList POSTed to it. */
async function startSink(failFirst = 0): Promise<{ lists: EventList[]; paths: string[]; failed: number; kubeconfig: string; close(): Promise<void> }> {
  const pkiDir = join(dir, 'sink-pki');
  const pki = await ensurePki(pkiDir);
  const lists: EventList[] = [];
  const paths: string[] = [];
  const sink = { lists, paths, failed: 0 };
  const server = https.createServer({ key: pki.servingKeyPem, cert: pki.servingCertPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // The first calls fail as a sink that is restarting would: 500, which kube retries.
      if (sink.failed < failFirst) {
        sink.failed++;
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'restarting', reason: 'InternalError', code: 500 }));
        return;
      }
      paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      lists.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as EventList);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const kubeconfig = join(dir, 'sink.kubeconfig');
  writeFileSync(
    kubeconfig,
    YAML.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'sink', cluster: { server: `https://127.0.0.1:${port}/audit`, 'certificate-authority-data': Buffer.from(pki.caCertPem).toString('base64') } }],
      users: [{ name: 'apiserver', user: {} }],
      contexts: [{ name: 'sink', context: { cluster: 'sink', user: 'apiserver' } }],
      'current-context': 'sink',
    }),
  );
  return Object.assign(sink, { kubeconfig, close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
}

test('webhook: EventLists of batch-max-size, the rest sent when the server stops; the legacy log alongside', async () => {
  const sink = await startSink();
  const legacyPath = join(dir, 'legacy', 'audit.log');
  const s = await startTestServer({
    options: {
      audit: {
        policyFile: policy('meta.yaml', CONFIGMAPS_AT('Metadata')),
        log: { path: legacyPath, maxSizeMegabytes: 0, maxBackups: 0, maxAgeDays: 0, format: 'legacy', mode: 'batch' },
        // A max wait no test waits for: batches leave full, or at the stop.
        webhook: { configFile: sink.kubeconfig, mode: 'batch', batchMaxSize: 3, batchMaxWaitMs: 600_000, batchBufferSize: 100, initialBackoffMs: 100, version: 'audit.k8s.io/v1' },
      },
    },
  });
  const ids: string[] = [];
  try {
    // 4 GETs: 8 events; two full batches leave at once, 2 events wait.
    for (let i = 0; i < 4; i++) {
      const r = await s.request('GET', '/api/v1/namespaces/default/configmaps/kube-root-ca.crt');
      ids.push(String(r.headers['audit-id']));
    }
    for (let i = 0; i < 200 && sink.lists.length < 2; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(sink.lists.length, 2);
    assert.deepEqual(sink.lists.map((l) => l.items.length), [3, 3]);
  } finally {
    await s.stop();
  }
  // The stop sent the last two.
  assert.deepEqual(sink.lists.map((l) => l.items.length), [3, 3, 2]);
  await sink.close();
  for (const l of sink.lists) {
    assert.equal(l.kind, 'EventList');
    assert.equal(l.apiVersion, 'audit.k8s.io/v1');
  }
  assert.deepEqual([...new Set(sink.paths)], ['POST /audit application/json']);
  const items = sink.lists.flatMap((l) => l.items);
  assert.deepEqual(items.map((e) => [e.auditID, e.stage, e.verb]), ids.flatMap((id) => [[id, 'RequestReceived', 'get'], [id, 'ResponseComplete', 'get']]));

  // The legacy format: one line per event, kube's EventString.
  const lines = readFileSync(legacyPath, 'utf8').split('\n').filter(Boolean);
  assert.equal(lines.length, 8);
  const legacy = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z AUDIT: id="([^"]+)" stage="(\w+)" ip="127\.0\.0\.1" method="get" user="hearth-admin" groups="\\"system:masters\\",\\"system:authenticated\\"" as="<self>" asgroups="<lookup>" user-agent="" namespace="default" uri="\/api\/v1\/namespaces\/default\/configmaps\/kube-root-ca\.crt" response="(\d+|<deferred>)"$/;
  lines.forEach((line, i) => {
    const m = legacy.exec(line);
    assert.ok(m, line);
    assert.equal(m[2], ids[Math.floor(i / 2)]);
    assert.equal(m[3], i % 2 ? 'ResponseComplete' : 'RequestReceived');
    assert.equal(m[4], i % 2 ? '200' : '<deferred>');
  });
});

/** startServer's refusal of a policy file, and that no data directory was made. */
async function refused(file: string): Promise<string> {
  const dataDir = join(dir, `never-${Math.random().toString(36).slice(2)}`);
  const err = await startServer({ dataDir, securePort: 0, bindAddress: '127.0.0.1', log: () => {}, audit: { policyFile: file } }).then(
    (running) => {
      void running.close();
      return undefined;
    },
    (e: unknown) => e as Error,
  );
  assert.ok(err, 'the server started');
  assert.equal(existsSync(dataDir), false, 'the data directory was made');
  return err.message;
}

test('bad policy files are refused at start with kube\'s messages', async () => {
  const invalid = policy(
    'invalid.yaml',
    `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- verbs: ["get"]
- level: Loud
- level: Metadata
  omitStages: ["Sometimes"]
- level: Metadata
  nonResourceURLs: ["healthz", "/a*b"]
  namespaces: ["x"]
- level: Metadata
  resources: [{ group: "Apps/v1", resourceNames: ["x"] }]
`,
  );
  assert.equal(
    await refused(invalid),
    '[rules[0].level: Required value, ' +
      'rules[1].level: Unsupported value: "Loud": supported values: "None", "Metadata", "Request", "RequestResponse", ' +
      'rules[2].omitStages[0]: Invalid value: "Sometimes": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic, ' +
      "rules[3].nonResourceURLs[0]: Invalid value: \"healthz\": non-resource URL rules must begin with a '/' character, " +
      "rules[3].nonResourceURLs[1]: Invalid value: \"/a*b\": non-resource URL wildcards '*' must be the final character of the rule, " +
      'rules[3].nonResourceURLs: Invalid value: []string{"healthz", "/a*b"}: rules cannot apply to both regular resources and non-resource URLs, ' +
      "rules[4].resources.group: Invalid value: \"Apps/v1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), " +
      'rules[4].resources.resourceNames: Invalid value: []string{"x"}: using resourceNames requires at least one resource]' +
      `: from file ${invalid}`,
  );
  const empty = policy('empty.yaml', 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n');
  assert.equal(await refused(empty), `loaded illegal policy with 0 rules: from file ${empty}`);
  const beta = policy('beta.yaml', 'apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{ level: Metadata }]\n');
  assert.match(await refused(beta), /^failed decoding: no kind "Policy" is registered for version "audit\.k8s\.io\/v1beta1" in scheme ".*": from file /);
  const missing = join(dir, 'missing.yaml');
  assert.equal(await refused(missing), `failed to read file path "${missing}": open ${missing}: no such file or directory`);

  // The command line says the same and exits non-zero.
  const cli = await runHearth(['--data-dir', join(dir, 'cli-never'), '--secure-port', '0', '--audit-policy-file', empty], { timeoutMs: 60_000 });
  assert.notEqual(cli.code, 0);
  assert.match(cli.stderr + cli.stdout, /loaded illegal policy with 0 rules: from file /);
  assert.equal(existsSync(join(dir, 'cli-never')), false);
});

test('a log that cannot be written: blocking goes on (the error logged), blocking-strict refuses the request with kube\'s 500', async () => {
  const policyFile = policy('all.yaml', 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n');
  for (const mode of ['blocking', 'blocking-strict'] as const) {
    const logged: string[] = [];
    // /dev/full: every write fails with ENOSPC.
    const s = await startTestServer({ options: { log: (l: string) => logged.push(logMessage(l)), audit: { policyFile, log: { path: '/dev/full', maxSizeMegabytes: 0, maxBackups: 0, maxAgeDays: 0, format: 'json', mode } } } });
    try {
      const r = await s.request('GET', '/version');
      if (mode === 'blocking') {
        assert.equal(r.status, 200);
      } else {
        assert.equal(r.status, 500);
        assert.equal(r.text, 'Internal Server Error: "/version": failed to store audit event\n');
        assert.match(String(r.headers['content-type']), /^text\/plain; charset=utf-8/);
      }
      assert.ok(logged.some((l) => /^error: audit: log: Error writing audit event: .*ENOSPC/.test(l)), logged.join('\n'));
    } finally {
      await s.stop();
    }
  }
});

test('webhook: a failed POST is retried after the initial backoff; blocking mode sends each event before the response', async () => {
  const sink = await startSink(1);
  const s = await startTestServer({
    options: {
      audit: {
        policyFile: policy('meta2.yaml', CONFIGMAPS_AT('Metadata')),
        webhook: { configFile: sink.kubeconfig, mode: 'blocking', batchMaxSize: 400, batchMaxWaitMs: 30_000, batchBufferSize: 10_000, initialBackoffMs: 50, version: 'audit.k8s.io/v1' },
      },
    },
  });
  try {
    const r = await s.request('GET', '/api/v1/namespaces/default/configmaps/kube-root-ca.crt');
    assert.equal(r.status, 200);
    const id = String(r.headers['audit-id']);
    // Blocking: both events were taken before the answer; the first POST failed and was sent again.
    assert.equal(sink.failed, 1);
    assert.deepEqual(sink.lists.map((l) => l.items.map((e) => [e.auditID, e.stage])), [[[id, 'RequestReceived']], [[id, 'ResponseComplete']]]);
  } finally {
    await s.stop();
    await sink.close();
  }
});
