// server/webhook/client.ts against local webhooks: where and how it posts (the server's path,
// JSON, the kubeconfig user's credentials), kube's retry (which failures are transient, the
// backoff's waits, the attempt count), client-go's error texts, the per-call timeout, and TLS
// with the kubeconfig's CA and tls-server-name.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { WebhookClient, WebhookCallError, defaultRetryBackoff, type WebhookClientOptions } from '../../../server/webhook/client.ts';
import type { WebhookClientConfig } from '../../../server/webhook/kubeconfig.ts';
import { ensurePki, type ServerPki } from '../../../server/pki/certificates.ts';

interface Seen {
  url: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, n: number) => void;

const dir = mkdtempSync(join(tmpdir(), 'hearth-webhook-client-'));
let pki: ServerPki;
let server: http.Server;
let port = 0;
let handler: Handler = (_req, res) => res.end('{}');
let seen: Seen[] = [];

before(async () => {
  pki = await ensurePki(join(dir, 'pki'));
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      seen.push({ url: req.url ?? '', headers: req.headers, body: text ? JSON.parse(text) : undefined });
      handler(req, res, seen.length);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
after(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

/** A client of the local webhook; waits are recorded, not slept, and jitter is zero. */
function clientFor(config: Partial<WebhookClientConfig> & { path?: string } = {}, opts: WebhookClientOptions = {}): { client: WebhookClient; waits: number[] } {
  const waits: number[] = [];
  const client = new WebhookClient(
    { file: 'test', server: new URL(`http://127.0.0.1:${port}${config.path ?? '/review'}`), insecureSkipTlsVerify: false, ...config },
    {
      sleep: async (ms) => {
        waits.push(ms);
      },
      random: () => 0,
      ...opts,
    },
  );
  return { client, waits };
}

function reset(h: Handler): void {
  seen = [];
  handler = h;
}

function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

async function failure(p: Promise<unknown>): Promise<WebhookCallError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof WebhookCallError, String(e));
    return e;
  }
  assert.fail('the call succeeded');
}

test('posts JSON to the server URL\'s path (cleaned, without query) with client-go\'s headers and the user\'s bearer token', async () => {
  reset((_req, res) => json(res, 200, { ok: true }));
  const { client } = clientFor({ path: '/a//b/../authn/?x=1', token: 'static-token' }, { userAgent: 'kube-apiserver/v1.36.0 (linux/amd64) kubernetes/hearth' });
  try {
    const answer = await client.post({ kind: 'TokenReview', spec: { token: 't' } });
    assert.deepEqual(answer, { statusCode: 200, body: { ok: true } });
    assert.equal(seen.length, 1);
    assert.equal(seen[0].url, '/a/authn');
    assert.deepEqual(seen[0].body, { kind: 'TokenReview', spec: { token: 't' } });
    assert.equal(seen[0].headers['content-type'], 'application/json');
    assert.equal(seen[0].headers.accept, 'application/json, */*');
    assert.equal(seen[0].headers['user-agent'], 'kube-apiserver/v1.36.0 (linux/amd64) kubernetes/hearth');
    assert.equal(seen[0].headers.authorization, 'Bearer static-token');
  } finally {
    client.close();
  }
});

test('a tokenFile (trimmed) wins over token; basic auth when the user has a name and password', async () => {
  reset((_req, res) => json(res, 200, {}));
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, '\n from-file \n');
  const withFile = clientFor({ token: 'fallback', tokenFile }).client;
  const basic = clientFor({ username: 'apiserver', password: 's3cret' }).client;
  try {
    await withFile.post({});
    await basic.post({});
    assert.equal(seen[0].headers.authorization, 'Bearer from-file');
    assert.equal(seen[1].headers.authorization, `Basic ${Buffer.from('apiserver:s3cret').toString('base64')}`);
  } finally {
    withFile.close();
    basic.close();
  }
});

test('a 500 is retried with kube\'s backoff (500 ms ×1.5, 5 attempts) and the last error is the answer', async () => {
  reset((_req, res) => {
    res.writeHead(500, { 'Content-Type': 'text/plain' });
    res.end('boom');
  });
  const { client, waits } = clientFor();
  try {
    const e = await failure(client.post({}));
    assert.equal(e.message, 'an error on the server ("boom") has prevented the request from succeeding');
    assert.equal(seen.length, 5);
    assert.deepEqual(waits, [500, 750, 1125, 1687.5]);
  } finally {
    client.close();
  }
  assert.deepEqual(defaultRetryBackoff(), { durationMs: 500, factor: 1.5, jitter: 0.2, steps: 5 });
});

test('transient answers (429, 504, Retry-After, a Status with reason InternalError) are retried until one succeeds', async () => {
  const answers: [number, unknown, Record<string, string>?][] = [
    [429, 'slow down'],
    [504, 'gateway'],
    [503, 'later', { 'Retry-After': '1' }],
    [400, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'InternalError', message: 'etcd hiccup', code: 500 }],
    [200, { done: true }],
  ];
  reset((_req, res, n) => {
    const [status, body, headers] = answers[n - 1];
    json(res, status, body, headers);
  });
  const { client, waits } = clientFor();
  try {
    assert.deepEqual((await client.post({})).body, { done: true });
    assert.equal(seen.length, 5);
    assert.equal(waits.length, 4);
  } finally {
    client.close();
  }
});

test('what kube does not retry fails at once: 4xx, 503 without Retry-After, a refused connection', async () => {
  const { client, waits } = clientFor();
  try {
    for (const [status, message] of [
      [404, 'the server could not find the requested resource'],
      [401, 'the server has asked for the client to provide credentials'],
      [503, 'the server is currently unable to handle the request'],
      [418, 'the server responded with the status code 418 but did not return more information'],
    ] as const) {
      reset((_req, res) => json(res, status, 'nope'));
      const e = await failure(client.post({}));
      assert.equal(e.message, message);
      assert.equal(e.statusCode, status);
      assert.equal(seen.length, 1, `${status} is not retried`);
    }
    // A Status body's message is the error.
    reset((_req, res) => json(res, 403, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', message: 'no tokenreviews for you', code: 403 }));
    assert.equal((await failure(client.post({}))).message, 'no tokenreviews for you');
    assert.deepEqual(waits, []);
  } finally {
    client.close();
  }

  // A port nobody listens on.
  const probe = http.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const closedPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  const refused = new WebhookClient({ file: 'test', server: new URL(`http://127.0.0.1:${closedPort}/x`), insecureSkipTlsVerify: false }, { sleep: async () => assert.fail('no retry') });
  try {
    const e = await failure(refused.post({}));
    assert.equal(e.message, `Post "http://127.0.0.1:${closedPort}/x": dial tcp 127.0.0.1:${closedPort}: connect: connection refused`);
    assert.equal(e.retryable, false);
  } finally {
    refused.close();
  }
});

test('answers client-go cannot read: empty, not JSON; a call that outlives its timeout', async () => {
  const { client } = clientFor();
  const impatient = clientFor({}, { timeoutMs: 200 }).client;
  try {
    reset((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end();
    });
    assert.equal((await failure(client.post({}))).message, '0-length response with status code: 200 and content type: application/json');
    reset((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('<html>');
    });
    assert.match((await failure(client.post({}))).message, /^couldn't get version\/kind; json parse error: /);
    // The webhook never answers: the call ends at its timeout, and is not retried.
    reset(() => {});
    const e = await failure(impatient.post({}));
    assert.equal(e.message, `Post "http://127.0.0.1:${port}/review": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`);
    assert.equal(seen.length, 1);
  } finally {
    client.close();
    impatient.close();
  }
});

test('HTTPS: the kubeconfig\'s CA verifies the webhook, tls-server-name names what its certificate must say', async () => {
  const tlsServer = https.createServer({ key: pki.servingKeyPem, cert: pki.servingCertPem }, (_req, res) => json(res, 200, { secure: true }));
  await new Promise<void>((r) => tlsServer.listen(0, '127.0.0.1', r));
  const tlsPort = (tlsServer.address() as AddressInfo).port;
  const url = new URL(`https://127.0.0.1:${tlsPort}/`);
  const clients = {
    trusted: new WebhookClient({ file: 't', server: url, caPem: pki.caCertPem, insecureSkipTlsVerify: false }),
    byName: new WebhookClient({ file: 't', server: url, caPem: pki.caCertPem, tlsServerName: 'localhost', insecureSkipTlsVerify: false }),
    wrongName: new WebhookClient({ file: 't', server: url, caPem: pki.caCertPem, tlsServerName: 'idp.example.com', insecureSkipTlsVerify: false }),
    untrusted: new WebhookClient({ file: 't', server: url, insecureSkipTlsVerify: false }),
    insecure: new WebhookClient({ file: 't', server: url, insecureSkipTlsVerify: true }),
  };
  try {
    assert.deepEqual((await clients.trusted.post({})).body, { secure: true });
    assert.deepEqual((await clients.byName.post({})).body, { secure: true });
    assert.deepEqual((await clients.insecure.post({})).body, { secure: true });
    assert.match((await failure(clients.wrongName.post({}))).message, /^Post "https:\/\/127\.0\.0\.1:\d+\/": tls: failed to verify certificate: x509: certificate is valid for .*localhost.*, not idp\.example\.com$/);
    assert.equal((await failure(clients.untrusted.post({}))).message, `Post "https://127.0.0.1:${tlsPort}/": tls: failed to verify certificate: x509: certificate signed by unknown authority`);
  } finally {
    for (const c of Object.values(clients)) c.close();
    tlsServer.closeAllConnections();
    await new Promise<void>((r) => tlsServer.close(() => r()));
  }
});
