// Restarts on the same data directory keep certificates, objects and the resourceVersion
// sequence; acknowledged writes survive a kill -9. Runs the server as users do, in a child
// process: the bundle npm start builds, with npm start's environment and node options.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startHearthProcess, stopHearthProcess, adminClient as client, type HearthProcess } from '../../helpers/hearth-process.ts';

const start = (dataDir: string, port: number): Promise<HearthProcess> => startHearthProcess(dataDir, ['--secure-port', String(port)]);
const stop = stopHearthProcess;

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


