// hearth as users run it, in a child process: the bundle `npm start` builds (built once per test
// file from the current source), with npm start's environment and node options; its subcommands
// (backup, restore, snapshots) the same way; and an HTTPS client with the data directory's admin
// certificate.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import https from 'node:https';
import { createServer } from 'node:net';
import { startCommand, ROOT } from '../../bench/bench-kit.ts';
import { build, DIST_MAIN } from '../../scripts/build.mjs';

let built: Promise<void> | undefined;

async function command(args: string[]): Promise<{ file: string; args: string[]; env: NodeJS.ProcessEnv }> {
  await (built ??= build());
  const { env, nodeArgs } = startCommand();
  return { file: process.execPath, args: [...nodeArgs, DIST_MAIN, ...args], env: { ...process.env, ...env } };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export interface HearthProcess {
  child: ChildProcess;
  /** https://127.0.0.1:PORT */
  url: string;
  stdout: string;
  stderr: string;
}

/** Starts a server (port 0 unless args name one); resolves once it printed its KUBECONFIG line. */
export async function startHearthProcess(dataDir: string, args: string[] = []): Promise<HearthProcess> {
  const c = await command(['--data-dir', dataDir, ...(args.includes('--secure-port') ? [] : ['--secure-port', '0']), ...args]);
  const child = spawn(c.file, c.args, { cwd: ROOT, env: c.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const p: HearthProcess = { child, url: '', stdout: '', stderr: '' };
  child.stderr!.on('data', (d) => (p.stderr += d));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      p.stdout += d;
      const m = /at (https:\/\/\S+)/.exec(p.stdout);
      if (m && p.stdout.includes('kubectl get namespaces')) {
        p.url = m[1];
        resolve();
      }
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${p.stderr}`)));
  });
  return p;
}

export async function stopHearthProcess(p: HearthProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return p.child.exitCode;
  const exited = new Promise<number | null>((r) => p.child.once('exit', (code) => r(code)));
  p.child.kill(signal);
  return exited;
}

/**
 * Runs the program to its end (a subcommand, or a server start that must fail), bounded by timeoutMs,
 * as this user or as `uid` (a test run as root checks what another user may do). A server that
 * starts serving after all is stopped, so the caller sees that success (exit code 0 after SIGTERM).
 */
export async function runHearth(args: string[], opts: { timeoutMs?: number; uid?: number } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const c = await command(args);
  return new Promise((resolve) => {
    const child = spawn(c.file, c.args, { cwd: ROOT, env: c.env, stdio: ['ignore', 'pipe', 'pipe'], ...(opts.uid === undefined ? {} : { uid: opts.uid, gid: opts.uid }) });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => {
      stdout += d;
      if (stdout.includes('kubectl get namespaces')) child.kill('SIGTERM');
    });
    child.stderr!.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export type AdminRequest = (method: string, url: string, body?: unknown) => Promise<{ status: number; json: any }>;

/** Requests as the admin of dataDir's PKI (read now: a restart may re-issue certificates). */
export function adminClient(dataDir: string): AdminRequest {
  const read = (f: string) => readFileSync(join(dataDir, 'pki', f), 'utf8');
  const agent = new https.Agent({ keepAlive: false, ca: read('ca.crt'), cert: read('admin.crt'), key: read('admin.key') });
  return (method, url, body) =>
    new Promise((resolve, reject) => {
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
