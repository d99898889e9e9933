// The kubeconfig file that names a webhook (--authentication-token-webhook-config-file, the
// authorization webhook's, admission webhooks'), read as kube's pkg/util/webhook LoadKubeconfig
// reads it through client-go's clientcmd: the explicit path must exist (`stat PATH: ...`), the
// YAML decodes into clientcmd's v1 Config (case-sensitive keys, unknown keys ignored, *-data
// fields base64), relative file paths resolve against the kubeconfig's own folder
// (ResolveLocalPaths), the current context's user and cluster are checked as DirectClientConfig's
// ConfirmUsable checks them ("invalid configuration: ..."), and the TLS material is loaded as
// client-go's transport loads it (TLSConfigFor). Every refusal is client-go's message, so a bad
// file stops the start in kube's words.
//
// Not supported (refused at start, never silently ignored): exec and auth-provider credential
// plugins, proxy-url, impersonation (`as`). kube's webhooks rarely use them.
import { aggregateErrors as aggregate } from '../go/errors.ts';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import YAML from 'yaml';
import { goPathError } from '../go/os.ts';
import { goQuote } from '../go/strconv.ts';

/** What a webhook client needs of a kubeconfig: where, how to trust it, who to be. */
export interface WebhookClientConfig {
  /** The kubeconfig file, as named. */
  file: string;
  /** The current context's cluster server, with a scheme added as client-go adds one. */
  server: URL;
  /** PEM of the CAs that verify the server (certificate-authority-data, else the file); undefined: the system's roots. */
  caPem?: string;
  insecureSkipTlsVerify: boolean;
  /** tls-server-name: the name the server's certificate is checked against, instead of the URL's host. */
  tlsServerName?: string;
  /** Client certificate and key (PEM), for webhooks that authenticate their callers. */
  clientCertPem?: string;
  clientKeyPem?: string;
  /** A bearer token: the user's `token`. */
  token?: string;
  /** The user's tokenFile (absolute), read again when older than a minute; it wins over `token` while readable, as in client-go. */
  tokenFile?: string;
  /** Basic authentication. */
  username?: string;
  password?: string;
}

interface ClusterEntry {
  server: string;
  'tls-server-name': string;
  'insecure-skip-tls-verify': boolean;
  'certificate-authority': string;
  'certificate-authority-data': Buffer | undefined;
  'proxy-url': string;
  /** Any key at all was set (client-go tells an empty cluster from one without a server). */
  set: boolean;
}

interface UserEntry {
  'client-certificate': string;
  'client-certificate-data': Buffer | undefined;
  'client-key': string;
  'client-key-data': Buffer | undefined;
  token: string;
  tokenFile: string;
  username: string;
  password: string;
  exec: boolean;
  'auth-provider': boolean;
  as: string;
}

interface ContextEntry {
  cluster: string;
  user: string;
}

/** A decoded kubeconfig: the three maps and the current context. */
interface Kubeconfig {
  clusters: Map<string, ClusterEntry>;
  users: Map<string, UserEntry>;
  contexts: Map<string, ContextEntry>;
  currentContext: string;
}

/** The error client-go's loader and validation would return; its message is kube's. */
export class KubeconfigError extends Error {}

/**
 * The webhook client configuration of a kubeconfig file, or a KubeconfigError with client-go's
 * message for a file client-go refuses.
 */
export function loadWebhookKubeconfig(file: string): WebhookClientConfig {
  try {
    fs.statSync(file);
  } catch (e) {
    throw new KubeconfigError(goPathError('stat', file, e));
  }
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new KubeconfigError(`error loading config file ${goQuote(file)}: ${goPathError('open', file, e)}`);
  }
  let config: Kubeconfig;
  try {
    config = decodeKubeconfig(text);
  } catch (e) {
    throw new KubeconfigError(`error loading config file ${goQuote(file)}: ${(e as Error).message}`);
  }
  resolveLocalPaths(config, path.dirname(path.resolve(file)));
  return clientConfigOf(config, file);
}

// ---- decoding (sigs.k8s.io/yaml into clientcmd's v1 types) ----

type JsonKind = 'string' | 'number' | 'bool' | 'array' | 'object';

function jsonKindOf(v: unknown): JsonKind {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number' || typeof v === 'bigint') return 'number';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return 'array';
  return 'object';
}

/** encoding/json's UnmarshalTypeError text. */
function typeError(v: unknown, struct: string, field: string, goType: string): Error {
  return new Error(`json: cannot unmarshal ${jsonKindOf(v)} into Go struct field ${struct}.${field} of type ${goType}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(o: Record<string, unknown>, key: string, struct: string, field: string): string {
  const v = o[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw typeError(v, struct, `${field}.${key}`, 'string');
  return v;
}

function bool(o: Record<string, unknown>, key: string, struct: string, field: string): boolean {
  const v = o[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw typeError(v, struct, `${field}.${key}`, 'bool');
  return v;
}

/** A []byte field: standard base64, newlines ignored (encoding/json's rule). */
function bytes(o: Record<string, unknown>, key: string, struct: string, field: string): Buffer | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw typeError(v, struct, `${field}.${key}`, '[]uint8');
  const bad = base64ErrorAt(v);
  if (bad !== undefined) throw new Error(`illegal base64 data at input byte ${bad}`);
  const decoded = Buffer.from(v.replace(/[\r\n]/g, ''), 'base64');
  return decoded.length ? decoded : undefined;
}

/** The input byte Go's base64.StdEncoding reports as illegal, or undefined when the text decodes. */
function base64ErrorAt(s: string): number | undefined {
  let quantum = 0;
  let padding = 0;
  let lastIndex = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\r' || c === '\n') continue;
    lastIndex = i;
    if (c === '=') {
      if (quantum < 2) return i;
      padding++;
      if (quantum + padding > 4) return i;
      continue;
    }
    if (padding > 0 || !/[A-Za-z0-9+/]/.test(c)) return i;
    quantum = (quantum + 1) % 4;
  }
  if (padding > 0) return quantum + padding === 4 ? undefined : lastIndex;
  if (quantum === 1) return lastIndex;
  // Unpadded input of 2 or 3 characters in the last quantum: StdEncoding wants its padding.
  if (quantum !== 0) return s.length;
  return undefined;
}

/** The named entries of a list (clusters, users, contexts), a repeated name refused as client-go's conversion refuses it. */
function namedList<T>(top: Record<string, unknown>, key: string, listType: string, itemKey: string, itemType: string, decode: (v: Record<string, unknown>, field: string) => T): Map<string, T> {
  const out = new Map<string, T>();
  const list = top[key];
  if (list === undefined || list === null) return out;
  if (!Array.isArray(list)) throw typeError(list, 'Config', key, `[]v1.${listType}`);
  for (const item of list) {
    if (item === null) continue;
    if (!isObject(item)) throw typeError(item, 'Config', key, `v1.${listType}`);
    const name = str(item, 'name', listType, key);
    const body = item[itemKey];
    if (body !== undefined && body !== null && !isObject(body)) throw typeError(body, listType, `${key}.${itemKey}`, `v1.${itemType}`);
    if (out.has(name)) throw new Error(`error converting *[]${listType} into *map[string]*api.${itemType}: duplicate name ${goQuote(name)} in list`);
    out.set(name, decode(isObject(body) ? body : {}, `${key}.${itemKey}`));
  }
  return out;
}

function decodeKubeconfig(text: string): Kubeconfig {
  let doc: unknown;
  try {
    // go-yaml v2 (under sigs.k8s.io/yaml) reads YAML 1.1: yes/no are booleans.
    doc = YAML.parse(text, { version: '1.1' });
  } catch (e) {
    const err = e as Error & { linePos?: { line: number }[] };
    const line = err.linePos?.[0]?.line;
    throw new Error(`error converting YAML to JSON: yaml: ${line !== undefined ? `line ${line}: ` : ''}${err.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}`);
  }
  if (doc === undefined || doc === null) doc = {};
  if (!isObject(doc)) throw new Error(`json: cannot unmarshal ${jsonKindOf(doc)} into Go value of type v1.Config`);
  const clusters = namedList(doc, 'clusters', 'NamedCluster', 'cluster', 'Cluster', (c, field): ClusterEntry => ({
    server: str(c, 'server', 'Cluster', field),
    'tls-server-name': str(c, 'tls-server-name', 'Cluster', field),
    'insecure-skip-tls-verify': bool(c, 'insecure-skip-tls-verify', 'Cluster', field),
    'certificate-authority': str(c, 'certificate-authority', 'Cluster', field),
    'certificate-authority-data': bytes(c, 'certificate-authority-data', 'Cluster', field),
    'proxy-url': str(c, 'proxy-url', 'Cluster', field),
    set: Object.values(c).some((v) => v !== null && v !== undefined && v !== '' && v !== false),
  }));
  const users = namedList(doc, 'users', 'NamedAuthInfo', 'user', 'AuthInfo', (u, field): UserEntry => ({
    'client-certificate': str(u, 'client-certificate', 'AuthInfo', field),
    'client-certificate-data': bytes(u, 'client-certificate-data', 'AuthInfo', field),
    'client-key': str(u, 'client-key', 'AuthInfo', field),
    'client-key-data': bytes(u, 'client-key-data', 'AuthInfo', field),
    token: str(u, 'token', 'AuthInfo', field),
    tokenFile: str(u, 'tokenFile', 'AuthInfo', field),
    username: str(u, 'username', 'AuthInfo', field),
    password: str(u, 'password', 'AuthInfo', field),
    exec: isObject(u.exec),
    'auth-provider': isObject(u['auth-provider']),
    as: str(u, 'as', 'AuthInfo', field),
  }));
  const contexts = namedList(doc, 'contexts', 'NamedContext', 'context', 'Context', (c, field): ContextEntry => ({
    cluster: str(c, 'cluster', 'Context', field),
    user: str(c, 'user', 'Context', field),
  }));
  const currentContext = doc['current-context'];
  if (currentContext !== undefined && currentContext !== null && typeof currentContext !== 'string') throw typeError(currentContext, 'Config', 'current-context', 'string');
  return { clusters, users, contexts, currentContext: currentContext ?? '' };
}

/** clientcmd's ResolveLocalPaths: a relative file path is relative to the kubeconfig's folder. */
function resolveLocalPaths(config: Kubeconfig, base: string): void {
  const resolved = (p: string) => (p === '' || path.isAbsolute(p) ? p : path.join(base, p));
  for (const c of config.clusters.values()) c['certificate-authority'] = resolved(c['certificate-authority']);
  for (const u of config.users.values()) {
    u['client-certificate'] = resolved(u['client-certificate']);
    u['client-key'] = resolved(u['client-key']);
    u.tokenFile = resolved(u.tokenFile);
  }
}

// ---- DirectClientConfig: the current context's user and cluster ----


function canOpen(file: string): unknown {
  try {
    fs.closeSync(fs.openSync(file, 'r'));
    return undefined;
  } catch (e) {
    return e;
  }
}

const EMPTY_CLUSTER = 'cluster has no server defined';

function clusterErrors(name: string, c: ClusterEntry | undefined): string[] {
  if (!c || !c.set) return [EMPTY_CLUSTER];
  const errs: string[] = [];
  if (c.server === '') errs.push(name === '' ? 'default cluster has no server defined' : `no server found for cluster ${goQuote(name)}`);
  if (c['proxy-url'] !== '') errs.push(`hearth's webhook client does not support proxy-url (cluster ${goQuote(name)})`);
  if (c['certificate-authority'] !== '' && c['certificate-authority-data']) errs.push(`certificate-authority-data and certificate-authority are both specified for ${name}. certificate-authority-data will override.`);
  if (c['certificate-authority'] !== '') {
    const e = canOpen(c['certificate-authority']);
    if (e) errs.push(`unable to read certificate-authority ${c['certificate-authority']} for ${name} due to ${goPathError('open', c['certificate-authority'], e)}`);
  }
  return errs;
}

function userErrors(name: string, u: UserEntry | undefined): string[] {
  if (!u) return [];
  const errs: string[] = [];
  const methods: string[] = [];
  if (u.token !== '') methods.push('token');
  if (u.username !== '' || u.password !== '') methods.push('basicAuth');
  const hasCert = u['client-certificate'] !== '' || u['client-certificate-data'] !== undefined;
  if (hasCert) {
    if (u['client-certificate'] !== '' && u['client-certificate-data']) errs.push(`client-cert-data and client-cert are both specified for ${name}. client-cert-data will override.`);
    if (u['client-key'] !== '' && u['client-key-data']) errs.push(`client-key-data and client-key are both specified for ${name}; client-key-data will override`);
    if (u['client-key'] === '' && !u['client-key-data']) errs.push(`client-key-data or client-key must be specified for ${name} to use the clientCert authentication method.`);
    for (const [label, file] of [['client-cert', u['client-certificate']], ['client-key', u['client-key']]] as const) {
      if (file === '') continue;
      const e = canOpen(file);
      if (e) errs.push(`unable to read ${label} ${file} for ${name} due to ${goPathError('open', file, e)}`);
    }
  }
  if (methods.length > 1) errs.push(`more than one authentication method found for ${name}; found [${methods.join(' ')}], only one is allowed`);
  if (u.exec) errs.push(`hearth's webhook client does not support exec credential plugins (user ${goQuote(name)})`);
  if (u['auth-provider']) errs.push(`hearth's webhook client does not support auth-provider plugins (user ${goQuote(name)})`);
  if (u.as !== '') errs.push(`hearth's webhook client does not support impersonation (user ${goQuote(name)})`);
  return errs;
}

function readOrThrow(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (e) {
    throw new KubeconfigError(goPathError('open', file, e));
  }
}

/** client-go's error for CA data that gives no certificate (createErrorParsingCAData), else the PEM. */
function caPemOf(data: Buffer): string {
  const text = data.toString('utf8');
  const blocks = text.match(/-----BEGIN [A-Z0-9 ]+-----[\s\S]*?-----END [A-Z0-9 ]+-----/g) ?? [];
  let ok = 0;
  for (const b of blocks) {
    if (!b.startsWith('-----BEGIN CERTIFICATE-----')) continue;
    try {
      new X509Certificate(b);
      ok++;
    } catch {
      // AppendCertsFromPEM skips a block that does not parse
    }
  }
  if (ok === 0) throw new KubeconfigError(`unable to load root certificates: ${blocks.length === 0 ? 'unable to parse bytes as PEM block' : 'no valid certificate authority data seen'}`);
  return text;
}

/** tls.X509KeyPair's checks, in its words. */
function checkKeyPair(certPem: string, keyPem: string): void {
  if (!/-----BEGIN [A-Z0-9 ]*CERTIFICATE-----/.test(certPem)) throw new KubeconfigError('tls: failed to find any PEM data in certificate input');
  if (!/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(keyPem)) throw new KubeconfigError('tls: failed to find any PEM data in key input');
  try {
    new X509Certificate(certPem);
  } catch (e) {
    throw new KubeconfigError(`tls: failed to parse certificate: ${(e as Error).message}`);
  }
  try {
    createPrivateKey(keyPem);
  } catch (e) {
    throw new KubeconfigError(`tls: failed to parse private key: ${(e as Error).message}`);
  }
  try {
    tls.createSecureContext({ cert: certPem, key: keyPem });
  } catch {
    throw new KubeconfigError('tls: private key does not match public key');
  }
}

/** rest.DefaultServerURL: a server without a scheme gets https:// when TLS is configured, else http://. */
function serverUrl(server: string, defaultTls: boolean): URL {
  let parsed: URL | undefined;
  try {
    parsed = new URL(server);
  } catch {
    parsed = undefined;
  }
  if (!parsed || parsed.host === '') {
    try {
      parsed = new URL(`${defaultTls ? 'https' : 'http'}://${server}`);
    } catch (e) {
      throw new KubeconfigError(`parse ${goQuote(server)}: ${(e as Error).message}`);
    }
    if (parsed.pathname !== '' && parsed.pathname !== '/') throw new KubeconfigError(`host must be a URL or a host:port pair: ${goQuote(server)}`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new KubeconfigError(`unsupported protocol scheme ${goQuote(parsed.protocol.slice(0, -1))}`);
  return parsed;
}

function clientConfigOf(config: Kubeconfig, file: string): WebhookClientConfig {
  const errs: string[] = [];
  const contextName = config.currentContext;
  const context = config.contexts.get(contextName);
  if (contextName !== '' && !context) errs.push(`context was not found for specified context: ${contextName}`);
  const userName = context?.user ?? '';
  const user = config.users.get(userName);
  errs.push(...userErrors(userName, user));
  const clusterName = context?.cluster ?? '';
  const cluster = config.clusters.get(clusterName);
  errs.push(...clusterErrors(clusterName, cluster));
  // A config with nothing usable in it says so (client-go's ErrEmptyConfig).
  if (errs.length === 1 && errs[0] === EMPTY_CLUSTER) throw new KubeconfigError('invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable');
  if (errs.length) throw new KubeconfigError(`invalid configuration: ${aggregate(errs)}`);
  const c = cluster!;

  // The transport's TLS (client-go's TLSConfigFor): data wins over a file.
  const caData = c['certificate-authority-data'] ?? (c['certificate-authority'] ? readOrThrow(c['certificate-authority']) : undefined);
  if (caData && c['insecure-skip-tls-verify']) throw new KubeconfigError('specifying a root certificates file with the insecure flag is not allowed');
  const out: WebhookClientConfig = {
    file,
    server: serverUrl(c.server, !!caData || !!(user && (user['client-certificate'] || user['client-certificate-data'])) || c['insecure-skip-tls-verify']),
    insecureSkipTlsVerify: c['insecure-skip-tls-verify'],
  };
  if (caData) out.caPem = caPemOf(caData);
  if (c['tls-server-name']) out.tlsServerName = c['tls-server-name'];
  if (user) {
    const certData = user['client-certificate-data'] ?? (user['client-certificate'] ? readOrThrow(user['client-certificate']) : undefined);
    const keyData = user['client-key-data'] ?? (user['client-key'] ? readOrThrow(user['client-key']) : undefined);
    if (certData && keyData) {
      out.clientCertPem = certData.toString('utf8');
      out.clientKeyPem = keyData.toString('utf8');
      checkKeyPair(out.clientCertPem, out.clientKeyPem);
    }
    if (user.token) out.token = user.token;
    if (user.tokenFile) {
      // Read now, so a missing file stops the start as it does kube's (unless a token stands in for it).
      if (!user.token) readOrThrow(user.tokenFile);
      out.tokenFile = user.tokenFile;
    }
    if (user.username || user.password) {
      out.username = user.username;
      out.password = user.password;
    }
  }
  return out;
}
