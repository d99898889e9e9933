// Starts a real hearth on a free loopback port with a fresh data directory, and talks to it
// over HTTPS the way clients do: with the admin client certificate and the cluster CA.
import https from 'node:https';
import { mkdtempSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { test, before, after } from 'node:test';
import YAML from 'yaml';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { startServer, type RunningServer, type ServerOptions } from '../../server/server.ts';

export interface TestServer extends RunningServer {
  request(method: string, path: string, opts?: RequestOptions): Promise<TestResponse>;
  kubectl(args: string[], opts?: { binary?: string; input?: string }): Promise<{ code: number; stdout: string; stderr: string }>;
  /** A JSON watch as the admin: its events until `until` says stop (or the stream ends); a non-200 answer is its one "event". */
  watch(path: string, until: (events: any[]) => boolean): Promise<{ events: any[]; status: number }>;
  stop(): Promise<void>;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw body bytes; wins over body. */
  raw?: Buffer | string;
  headers?: Record<string, string>;
  /** Send no client certificate (anonymous). */
  anonymous?: boolean;
}

export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  raw: Buffer;
  json(): any;
}

/**
 * Controllers for tests that count what a store holds: everything but the two that put a
 * `default` ServiceAccount and `kube-root-ca.crt` into every namespace and the bootstrap signer,
 * which publishes kube-public/cluster-info at start (as kube's own storage tests run without
 * kube-controller-manager). `--controllers` takes the same list, comma-joined.
 */
export const WITHOUT_NAMESPACE_CONTENT = ['*', '-root-ca-certificate-publisher-controller', '-serviceaccount-controller', '-bootstrap-signer-controller'];

/** `options`: any further ServerOptions (flags such as the service ranges; a `log` to read what it logs). */
export async function startTestServer(opts: { dataDir?: string; eventTtlMs?: number; options?: Partial<ServerOptions> } = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'hearth-test-'));
  const server = await startServer({ dataDir, securePort: 0, bindAddress: '127.0.0.1', eventTtlMs: opts.eventTtlMs, log: () => {}, ...opts.options });
  const agent = new https.Agent({ keepAlive: true, ca: server.pki.caCertPem, cert: server.pki.adminCertPem, key: server.pki.adminKeyPem });
  const anonAgent = new https.Agent({ keepAlive: true, ca: server.pki.caCertPem });
  const request = (method: string, path: string, ro: RequestOptions = {}) =>
    new Promise<TestResponse>((resolve, reject) => {
      const headers: Record<string, string> = { ...(ro.headers ?? {}) };
      let payload: Buffer | undefined;
      if (ro.raw !== undefined) payload = Buffer.isBuffer(ro.raw) ? ro.raw : Buffer.from(ro.raw);
      else if (ro.body !== undefined) {
        payload = Buffer.from(JSON.stringify(ro.body));
        headers['content-type'] ??= 'application/json';
      }
      if (payload) headers['content-length'] = String(payload.length);
      const req = https.request(`${server.url}${path}`, { method, headers, agent: ro.anonymous ? anonAgent : agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const text = raw.toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, raw, json: () => JSON.parse(text) });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      if (payload) req.write(payload);
      req.end();
    });
  const kubectl = (args: string[], ko: { binary?: string; input?: string } = {}) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(ko.binary ?? KUBECTL, ['--kubeconfig', server.kubeconfigPath, ...args], { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
        resolve({ code: err ? ((err as any).code ?? 1) : 0, stdout, stderr });
      });
      if (ko.input !== undefined) child.stdin!.end(ko.input);
    });
  const watch = (path: string, until: (events: any[]) => boolean) =>
    new Promise<{ events: any[]; status: number }>((resolve, reject) => {
      const events: any[] = [];
      const req = https.request(`${server.url}${path}`, { agent: false, ca: server.pki.caCertPem, cert: server.pki.adminCertPem, key: server.pki.adminKeyPem }, (res) => {
        let buf = '';
        if (res.statusCode !== 200) {
          res.on('data', (d) => (buf += d));
          res.on('end', () => {
            events.push(JSON.parse(buf));
            resolve({ events, status: res.statusCode! });
          });
          return;
        }
        res.on('data', (d) => {
          buf += d;
          let nl;
          while ((nl = buf.indexOf('\n')) >= 0) {
            events.push(JSON.parse(buf.slice(0, nl)));
            buf = buf.slice(nl + 1);
            if (until(events)) {
              req.destroy();
              resolve({ events, status: res.statusCode! });
              return;
            }
          }
        });
        res.on('end', () => resolve({ events, status: res.statusCode! }));
      });
      req.on('error', (e) => (events.length ? undefined : reject(e)));
      req.end();
    });
  return {
    ...server,
    request,
    kubectl,
    watch,
    async stop() {
      agent.destroy();
      anonAgent.destroy();
      await server.close();
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The calling file's test server: started in a `before` hook, stopped in an `after` hook. Call it
 * at a file's top level (`const s = useTestServer();`); the object it returns stands for the
 * started server, so tests use it as a TestServer. Reading it before the server is up throws, and
 * Node 20 starts a file's top-level `before` hooks together rather than in turn: a file that must
 * prepare the server before its tests (namespaces, CRDs) starts it in its own hook with
 * startTestServer instead.
 */
export function useTestServer(opts?: Parameters<typeof startTestServer>[0]): TestServer {
  let server: TestServer | undefined;
  before(async () => {
    server = await startTestServer(opts);
  });
  after(async () => {
    await server?.stop();
  });
  return new Proxy({} as TestServer, {
    get(_target, prop) {
      if (!server) throw new Error(`the test server is not started yet (read its ${String(prop)} inside a test or hook)`);
      return Reflect.get(server, prop);
    },
  });
}

/** A write that must fail validation: asserts a 422 Invalid and returns its causes as [field, message]. */
export async function invalidCauses(s: TestServer, method: string, path: string, body: unknown, headers?: Record<string, string>): Promise<[string, string][]> {
  const r = await s.request(method, path, { body, headers });
  if (r.status !== 422 || r.json().reason !== 'Invalid') throw new Error(`expected 422 Invalid, got ${r.status}: ${r.text}`);
  return r.json().details.causes.map((c: { field: string; message: string }) => [c.field, c.message]);
}

export const KUBECTL = '/usr/bin/kubectl';
export const KUBECTL_VERSIONS: Record<string, string> = {
  default: '/usr/bin/kubectl',
  '1.27': '/usr/lib/google-cloud-sdk/bin/kubectl.1.27',
  '1.33': '/usr/lib/google-cloud-sdk/bin/kubectl.1.33',
};

/** kubectl binaries present on this machine; tests name the missing ones when they skip. */
export function availableKubectls(): { version: string; path: string }[] {
  return Object.entries(KUBECTL_VERSIONS).filter(([, p]) => existsSync(p)).map(([version, path]) => ({ version, path }));
}

/** The kubectl binaries to test with; the missing ones are named in a skipped test (CI has them all). */
export function kubectlsToTest(): { version: string; path: string }[] {
  const kubectls = availableKubectls();
  const missing = Object.entries(KUBECTL_VERSIONS).filter(([v]) => !kubectls.some((k) => k.version === v));
  if (missing.length) {
    test(`kubectl binaries missing on this machine: ${missing.map(([, p]) => p).join(', ')}`, { skip: 'binary not installed here; CI has it' }, () => {});
  }
  return kubectls;
}

/** Writes manifests (objects as YAML, strings as they are) into a fresh temporary directory, removed after
 *  the calling file's tests; returns each file's path. */
export function manifestWriter(prefix: string): (name: string, obj: unknown) => string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return (name, obj) => {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(file, typeof obj === 'string' ? obj : YAML.stringify(obj));
    return file;
  };
}
