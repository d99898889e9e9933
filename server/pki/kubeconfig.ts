// Kubeconfig files for talking to this server: one cluster "hearth", one user, one context
// "hearth" set as current. The admin kubeconfig lives at DATA_DIR/admin.kubeconfig; it is written
// when missing, and afterwards only its "hearth" cluster and "hearth-admin" user are kept correct,
// so a user's edits (namespace, context names, their own users and clusters) survive restarts.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { stringify, parseDocument, isMap, isSeq, YAMLSeq, type YAMLMap, type Document } from 'yaml';

export const KUBECONFIG_CLUSTER = 'hearth';
export const KUBECONFIG_CONTEXT = 'hearth';

export interface KubeconfigOptions {
  /** e.g. https://127.0.0.1:6443 */
  server: string;
  caCertPem: string;
  clientCertPem?: string;
  clientKeyPem?: string;
  token?: string;
  /** Name of the user entry; default "hearth-admin". */
  userName?: string;
  /** Default namespace of the context. */
  namespace?: string;
}

/**
 * A kubeconfig YAML with one cluster "hearth" (server URL, certificate-authority-data), one user
 * (client-certificate-data + client-key-data, and/or token), one context "hearth" set as current.
 * The *-data fields are base64 of the PEM text, as kubectl expects.
 */
export function renderKubeconfig(opts: KubeconfigOptions): string {
  if (!opts.server) throw new Error('kubeconfig: server URL is required');
  if ((opts.clientCertPem === undefined) !== (opts.clientKeyPem === undefined)) {
    throw new Error('kubeconfig: clientCertPem and clientKeyPem must be given together');
  }
  const userName = opts.userName ?? ADMIN_KUBECONFIG_USER;
  const user: Record<string, string> = {};
  if (opts.clientCertPem !== undefined && opts.clientKeyPem !== undefined) {
    user['client-certificate-data'] = b64(opts.clientCertPem);
    user['client-key-data'] = b64(opts.clientKeyPem);
  }
  if (opts.token !== undefined) user['token'] = opts.token;

  const context: Record<string, string> = { cluster: KUBECONFIG_CLUSTER, user: userName };
  if (opts.namespace) context['namespace'] = opts.namespace;

  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: KUBECONFIG_CLUSTER, cluster: { server: opts.server, 'certificate-authority-data': b64(opts.caCertPem) } }],
    users: [{ name: userName, user }],
    contexts: [{ name: KUBECONFIG_CONTEXT, context }],
    'current-context': KUBECONFIG_CONTEXT,
    preferences: {},
  };
  return stringify(doc, { lineWidth: 0 });
}

/** Write a kubeconfig with mode 0600 (atomically; creates the parent directory). */
export function writeKubeconfig(file: string, content: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    fs.writeFileSync(tmp, content, { mode: 0o600 });
    fs.chmodSync(tmp, 0o600);
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * The URL clients on this machine should use for a server bound to `bindAddress`:
 * 0.0.0.0 / 127.0.0.1 / "" → https://127.0.0.1:PORT; :: / ::1 → https://[::1]:PORT;
 * any other IPv6 address in brackets; anything else (IPv4, host name) as given.
 */
export function serverUrlFor(bindAddress: string, port: number): string {
  let host = bindAddress.trim();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host === '' || host === '0.0.0.0' || host === '127.0.0.1') return `https://127.0.0.1:${port}`;
  if (net.isIPv6(host)) {
    const canonical = new URL(`http://[${host.replace(/%.*$/, '')}]/`).hostname;
    if (canonical === '[::]' || canonical === '[::1]') return `https://[::1]:${port}`;
    return `https://${canonical}:${port}`;
  }
  return `https://${host}:${port}`;
}

export const ADMIN_KUBECONFIG_USER = 'hearth-admin';

/**
 * Writes DATA_DIR/admin.kubeconfig for the admin client certificate if it is missing; otherwise
 * sets the server address, the CA and the admin credentials in its "hearth" cluster and
 * "hearth-admin" user (adding them, and a context using them, if they are gone) and leaves the
 * rest as the user wrote it. A file that is not a kubeconfig is kept beside it as
 * admin.kubeconfig.invalid and written anew. Returns the path.
 */
export function writeAdminKubeconfig(
  dataDir: string,
  pki: { caCertPem: string; adminCertPem: string; adminKeyPem: string },
  server: string,
): string {
  const file = path.join(dataDir, 'admin.kubeconfig');
  const fresh = { server, caCertPem: pki.caCertPem, clientCertPem: pki.adminCertPem, clientKeyPem: pki.adminKeyPem };
  let existing: string | undefined;
  try {
    existing = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  if (existing === undefined) {
    writeKubeconfig(file, renderKubeconfig(fresh));
    return file;
  }
  const updated = reconcileKubeconfig(existing, fresh);
  if (updated === undefined) {
    fs.renameSync(file, `${file}.invalid`);
    writeKubeconfig(file, renderKubeconfig(fresh));
  } else if (updated !== existing) {
    writeKubeconfig(file, updated);
  }
  return file;
}

/** existing with hearth's own entries made correct (see writeAdminKubeconfig); existing itself if they were; undefined if it is not a kubeconfig. */
export function reconcileKubeconfig(existing: string, want: { server: string; caCertPem: string; clientCertPem: string; clientKeyPem: string }): string | undefined {
  const doc = parseDocument(existing);
  if (doc.errors.length || !isMap(doc.contents)) return undefined;
  let changed = false;
  const set = (node: Document | YAMLMap, keys: string[], value: unknown) => {
    if (node.getIn(keys) === value) return;
    node.setIn(keys, value);
    changed = true;
  };
  const drop = (node: YAMLMap, keys: string[]) => {
    if (node.hasIn(keys)) changed = node.deleteIn(keys) || changed;
  };
  /** The entries of the list under `key`. */
  const list = (key: string): YAMLSeq => {
    const seq = doc.get(key);
    if (isSeq(seq)) return seq;
    const created = new YAMLSeq();
    doc.set(key, created);
    changed = true;
    return created;
  };
  /** The entry named `name` in the list under `key` (added if missing). */
  const entry = (key: string, name: string, body: object): YAMLMap => {
    const seq = list(key);
    const found = seq.items.find((i): i is YAMLMap => isMap(i) && i.get('name') === name);
    if (found) return found;
    const added = doc.createNode({ name, ...body }) as YAMLMap;
    seq.items.push(added);
    changed = true;
    return added;
  };
  const cluster = entry('clusters', KUBECONFIG_CLUSTER, { cluster: {} });
  set(cluster, ['cluster', 'server'], want.server);
  set(cluster, ['cluster', 'certificate-authority-data'], b64(want.caCertPem));
  // kubectl refuses an entry with both a file and inline data.
  drop(cluster, ['cluster', 'certificate-authority']);
  const user = entry('users', ADMIN_KUBECONFIG_USER, { user: {} });
  set(user, ['user', 'client-certificate-data'], b64(want.clientCertPem));
  set(user, ['user', 'client-key-data'], b64(want.clientKeyPem));
  drop(user, ['user', 'client-certificate']);
  drop(user, ['user', 'client-key']);
  // Any context using the hearth cluster will do (the user may have renamed ours); else "hearth" again.
  const contexts = list('contexts').items.filter(isMap);
  const ours = contexts.find((c) => c.getIn(['context', 'cluster']) === KUBECONFIG_CLUSTER) ?? entry('contexts', KUBECONFIG_CONTEXT, { context: { cluster: KUBECONFIG_CLUSTER, user: ADMIN_KUBECONFIG_USER } });
  const current = doc.get('current-context');
  if (!list('contexts').items.some((c) => isMap(c) && c.get('name') === current)) set(doc, ['current-context'], ours.get('name'));
  return changed ? doc.toString({ lineWidth: 0 }) : existing;
}

function b64(s: string): string {
  return Buffer.from(s, 'utf8').toString('base64');
}
