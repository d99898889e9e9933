// Kubeconfig files for talking to this server: one cluster "hearth", one user, one context
// "hearth" set as current. The admin kubeconfig lives at DATA_DIR/admin.kubeconfig.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { stringify } from 'yaml';

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
  const userName = opts.userName ?? 'hearth-admin';
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

/** Render and write DATA_DIR/admin.kubeconfig for the admin client certificate; returns its path. */
export function writeAdminKubeconfig(
  dataDir: string,
  pki: { caCertPem: string; adminCertPem: string; adminKeyPem: string },
  server: string,
): string {
  const file = path.join(dataDir, 'admin.kubeconfig');
  writeKubeconfig(
    file,
    renderKubeconfig({ server, caCertPem: pki.caCertPem, clientCertPem: pki.adminCertPem, clientKeyPem: pki.adminKeyPem }),
  );
  return file;
}

function b64(s: string): string {
  return Buffer.from(s, 'utf8').toString('base64');
}
