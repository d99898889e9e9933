// Restarts on the same data directory keep certificates, objects and the resourceVersion
// sequence; acknowledged writes survive a kill -9. Runs the server as users do, in a child
// process: the bundle npm start builds, with npm start's environment and node options.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import https from 'node:https';
import { createServer } from 'node:net';
import { startCommand } from '../scripts/bench-kit.ts';
import { build, DIST_MAIN } from '../scripts/build.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as any).port;
      srv.close(() => resolve(port));
    });
  });
}

interface Proc {
  child: ChildProcess;
  stdout: string;
}

let built: Promise<void> | undefined;

async function start(dataDir: string, port: number): Promise<Proc> {
  await (built ??= build());
  const { env, nodeArgs } = startCommand();
  const child = spawn(process.execPath, [...nodeArgs, DIST_MAIN, '--data-dir', dataDir, '--secure-port', String(port)], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const p: Proc = { child, stdout: '' };
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      p.stdout += d;
      if (p.stdout.includes('kubectl get namespaces')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
  });
  return p;
}

async function stop(p: Proc, signal: NodeJS.Signals): Promise<void> {
  if (p.child.exitCode !== null) return;
  const exited = new Promise((r) => p.child.once('exit', r));
  p.child.kill(signal);
  await exited;
}

function client(dataDir: string) {
  const read = (f: string) => readFileSync(join(dataDir, 'pki', f), 'utf8');
  const agent = new https.Agent({ keepAlive: false, ca: read('ca.crt'), cert: read('admin.crt'), key: read('admin.key') });
  return (method: string, url: string, body?: unknown) =>
    new Promise<{ status: number; json: any }>((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const req = https.request(url, { method, agent, headers: payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {} }, (res) => {
        let t = '';
        res.on('data', (c) => (t += c));
        res.on('end', () => resolve({ status: res.statusCode!, json: t.startsWith('{') ? JSON.parse(t) : t }));
      });
      req.on('error', reject);
      if (payload) req.write(payload);
      req.end();
    });
}

test('prints the KUBECONFIG line; a restart keeps certificates, objects and the resourceVersion sequence', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-restart-'));
  const port = await freePort();
  const url = `https://127.0.0.1:${port}`;
  try {
    let p = await start(dataDir, port);
    assert.match(p.stdout, new RegExp(`export KUBECONFIG=${join(dataDir, 'admin.kubeconfig').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}; kubectl get namespaces`));
    const caBefore = readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8');
    const req = client(dataDir);
    const created = await req('POST', `${url}/api/v1/namespaces/default/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'keep' }, data: { a: '1' } });
    assert.equal(created.status, 201);
    const rv1 = Number(created.json.metadata.resourceVersion);
    assert.equal((await req('GET', `${url}/readyz`)).status, 200);
    await stop(p, 'SIGTERM');

    p = await start(dataDir, port);
    assert.equal(readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8'), caBefore, 'the CA is reused');
    const req2 = client(dataDir); // same client certificate still valid
    const got = await req2('GET', `${url}/api/v1/namespaces/default/configmaps/keep`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.json, created.json);
    const next = await req2('POST', `${url}/api/v1/namespaces/default/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after' } });
    assert.ok(Number(next.json.metadata.resourceVersion) > rv1, 'new writes continue the sequence');
    const namespaces = (await req2('GET', `${url}/api/v1/namespaces`)).json.items.map((n: any) => n.metadata.name);
    assert.equal(namespaces.filter((n: string) => n === 'default').length, 1, 'bootstrap does not duplicate');

    // Acknowledged writes are durable: kill -9 right after the responses.
    const acked: string[] = [];
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const r = await req2('POST', `${url}/api/v1/namespaces/default/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `durable-${i}` } });
        if (r.status === 201) acked.push(r.json.metadata.name);
      }),
    );
    await stop(p, 'SIGKILL');
    p = await start(dataDir, port);
    const names = new Set((await client(dataDir)('GET', `${url}/api/v1/namespaces/default/configmaps`)).json.items.map((i: any) => i.metadata.name));
    for (const n of acked) assert.ok(names.has(n), `${n} was acknowledged but lost`);
    await stop(p, 'SIGTERM');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a data file written by a newer hearth is refused with a clear message', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-newer-'));
  try {
    const { default: Database } = await import('better-sqlite3');
    mkdirSync(dataDir, { recursive: true });
    const db = new Database(join(dataDir, 'hearth.db'));
    db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    db.prepare('INSERT INTO schema_migrations VALUES (999, ?, ?)').run('999_future.sql', new Date().toISOString());
    db.close();
    const port = await freePort();
    await assert.rejects(start(dataDir, port), /written by a newer hearth/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});


