// Runs hearth as users do, in a child process: the bundle `npm start` builds, with npm start's
// environment and node options, on a data directory that outlives it (restarts, kill -9).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import https from 'node:https';
import { createServer } from 'node:net';
import { startCommand } from '../../scripts/bench-kit.ts';
import { build, DIST_MAIN } from '../../scripts/build.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  child: ChildProcess;
  stdout: string;
  stderr: string;
}

let built: Promise<void> | undefined;

/** The server's command line, run as this user, or as `uid` (a test run as root checks what another user may do). */
function spawnServer(dataDir: string, port: number, args: string[], uid?: number): ChildProcess {
  const { env, nodeArgs } = startCommand();
  return spawn(process.execPath, [...nodeArgs, DIST_MAIN, '--data-dir', dataDir, '--secure-port', String(port), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(uid === undefined ? {} : { uid, gid: uid }),
  });
}

/** Starts the server and resolves once it prints its KUBECONFIG line; rejects with its stderr if it exits first. */
export async function startServerProcess(dataDir: string, port: number, args: string[] = []): Promise<ServerProcess> {
  await (built ??= build());
  const child = spawnServer(dataDir, port, args);
  const p: ServerProcess = { child, stdout: '', stderr: '' };
  child.stderr!.on('data', (d) => (p.stderr += d));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      p.stdout += d;
      if (p.stdout.includes('kubectl get namespaces')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${p.stderr}`)));
  });
  return p;
}

/** Runs a start that must fail: its exit code and what it printed (never resolves before it exits). */
export async function failedStart(dataDir: string, port: number, args: string[] = [], opts: { uid?: number } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  await (built ??= build());
  const child = spawnServer(dataDir, port, args, opts.uid);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => {
    stdout += d;
    // It served after all: stop it, so the caller sees the success (exit code 0 after SIGTERM).
    if (stdout.includes('kubectl get namespaces')) child.kill('SIGTERM');
  });
  child.stderr!.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  return { code, stdout, stderr };
}

export async function stopServerProcess(p: ServerProcess, signal: NodeJS.Signals): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise((r) => p.child.once('exit', r));
  p.child.kill(signal);
  await exited;
}

/** Requests as the admin of the cluster in dataDir (its client certificate), one connection each. */
export function adminClient(dataDir: string) {
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
