// The authenticating proxy: a front proxy that has authenticated the user itself names them in
// request headers (X-Remote-User, X-Remote-Group, X-Remote-Extra-<key>…), and hearth believes
// those headers only on a connection whose client certificate chains to the
// --requestheader-client-ca-file CA and whose CN is in --requestheader-allowed-names (any CN when
// the list is empty). Follows kube's request/headerrequest/requestheader.go (the header reading
// and clearing) wrapped in request/x509's Verifier (the certificate and CN check), and the flags'
// checks of server/options/authentication.go (RequestHeaderAuthenticationOptions.Validate) and
// kube-apiserver's BuiltInAuthenticationOptions.Validate (the overlap with --client-ca-file).
// It is first in the chain, as in kube (request headers, then x509, then tokens).
import type { TLSSocket } from 'node:tls';
import { chainAnchoredIn, caFingerprints, type AuthResult, type Authenticator, type CredentialSource } from './authenticator.ts';
import type { UserInfo } from './user.ts';
import { readClientCaFile } from '../pki/client-ca.ts';

/** The --requestheader-* flags, as given. */
export interface RequestHeaderOptions {
  clientCaFile?: string;
  allowedNames?: readonly string[];
  usernameHeaders?: readonly string[];
  uidHeaders?: readonly string[];
  groupHeaders?: readonly string[];
  extraHeadersPrefix?: readonly string[];
}

/** What the authenticator and the extension-apiserver-authentication ConfigMap are made of. */
export interface RequestHeaderConfig {
  /** The CA bundle a proxy's certificate must chain to, PEM. */
  caPem: string;
  /** CNs allowed to act as a proxy; empty: any certificate the CA signed. */
  allowedNames: readonly string[];
  usernameHeaders: readonly string[];
  uidHeaders: readonly string[];
  groupHeaders: readonly string[];
  extraHeaderPrefixes: readonly string[];
}

/** Go's http.Header as the authenticator reads it: Node's rawHeaders keeps repeated fields apart. */
export interface RequestHeaderSource extends CredentialSource {
  readonly rawHeaders?: readonly string[];
}

/**
 * The flags checked as kube-apiserver checks them at start: a value that is only white space is
 * an error (kube's checkForWhiteSpaceOnly); a header list without the standard header is a
 * warning (API aggregation relies on it). Returns the errors; warnings go to `warn`.
 */
export function requestHeaderOptionErrors(o: RequestHeaderOptions, warn: (line: string) => void): string[] {
  const errors: string[] = [];
  const lists: [string, readonly string[] | undefined][] = [
    ['requestheader-username-headers', o.usernameHeaders],
    ['requestheader-uid-headers', o.uidHeaders],
    ['requestheader-group-headers', o.groupHeaders],
    ['requestheader-extra-headers-prefix', o.extraHeadersPrefix],
    ['requestheader-allowed-names', o.allowedNames],
  ];
  for (const [flag, values] of lists) {
    if (values?.some((v) => v.trim() === '')) errors.push(`empty value in ${JSON.stringify(flag)}`);
  }
  const standard: [string, readonly string[] | undefined, string, string][] = [
    ['requestheader-username-headers', o.usernameHeaders, 'X-Remote-User', 'header'],
    ['requestheader-uid-headers', o.uidHeaders, 'X-Remote-Uid', 'header'],
    ['requestheader-group-headers', o.groupHeaders, 'X-Remote-Group', 'header'],
    ['requestheader-extra-headers-prefix', o.extraHeadersPrefix, 'X-Remote-Extra-', 'header prefix'],
  ];
  for (const [flag, values, name, what] of standard) {
    if (values?.length && !values.some((v) => v.toLowerCase() === name.toLowerCase())) {
      warn(`--${flag} is set without specifying the standard ${name} ${what} - API aggregation will not work`);
    }
  }
  return errors;
}

/** kube's refusal when a CA both authenticates users and may vouch for a proxy, with no CN list to tell them apart. */
export const OVERLAPPING_CA_ERROR =
  '--requestheader-client-ca-file and --client-ca-file contain overlapping certificates; --requestheader-allowed-names must be specified to ensure regular client certificates cannot set authenticating proxy headers for arbitrary users';

/** Whether two PEM bundles hold one certificate in common (kube's certificatesOverlap). */
export function certificatesOverlap(a: string, b: string): boolean {
  const left = caFingerprints(a);
  for (const f of caFingerprints(b)) if (left.has(f)) return true;
  return false;
}

/**
 * The configuration the flags name, or undefined when --requestheader-client-ca-file is not set
 * (kube then has no request-header authenticator, whatever the other flags say). Reads the CA
 * file (kube's messages for a missing or empty one) and throws the first error kube reports.
 * `clientCaPem` is the --client-ca-file bundle, for kube's overlap check.
 */
export function loadRequestHeaderConfig(o: RequestHeaderOptions, clientCaPem: string | undefined, warn: (line: string) => void): RequestHeaderConfig | undefined {
  const errors = requestHeaderOptionErrors(o, warn);
  if (errors.length) throw new Error(errors.join(', '));
  if (!o.clientCaFile) return undefined;
  const caPem = readClientCaFile(o.clientCaFile, 'request-header');
  const allowedNames = [...(o.allowedNames ?? [])];
  if (clientCaPem !== undefined && allowedNames.length === 0 && certificatesOverlap(clientCaPem, caPem)) throw new Error(OVERLAPPING_CA_ERROR);
  return {
    caPem,
    allowedNames,
    usernameHeaders: [...(o.usernameHeaders ?? [])],
    uidHeaders: [...(o.uidHeaders ?? [])],
    groupHeaders: [...(o.groupHeaders ?? [])],
    extraHeaderPrefixes: [...(o.extraHeadersPrefix ?? [])],
  };
}

/** kube's x509 Verifier answer for a connection: no certificate, a refused one, or a proxy. */
type ProxyVerdict = 'none' | 'proxy' | { error: string };

/**
 * The request-header authenticator. A request on a connection without a client certificate gets
 * no opinion; one whose certificate does not chain to the proxy CA, or whose CN is not allowed,
 * an error (kube's union goes on to x509 and tokens, which may still name the user: the admin's
 * certificate is refused here and accepted by x509); a proxy's request without a user name
 * header, no opinion.
 */
export function requestHeaderAuthenticator(config: RequestHeaderConfig): Authenticator {
  const anchors = caFingerprints(config.caPem);
  // kube's trimHeaders: the header names as the flags give them, trimmed.
  const headers: HeaderNames = {
    username: config.usernameHeaders.map((h) => h.trim().toLowerCase()),
    uid: config.uidHeaders.map((h) => h.trim().toLowerCase()),
    groups: config.groupHeaders.map((h) => h.trim().toLowerCase()),
    extraPrefixes: config.extraHeaderPrefixes.map((h) => h.trim().toLowerCase()),
  };
  // The certificate is fixed for a connection's life: it is checked once per connection.
  const byConnection = new WeakMap<object, ProxyVerdict>();
  return {
    name: 'requestheader',
    authenticate(req) {
      let verdict = byConnection.get(req.socket);
      if (verdict === undefined) {
        verdict = verifyProxy(req.socket as TLSSocket, anchors, config.allowedNames);
        byConnection.set(req.socket, verdict);
      }
      if (verdict === 'none') return undefined;
      if (verdict !== 'proxy') return verdict;
      return userFromRequestHeaders(req, headers);
    },
  };
}

function verifyProxy(socket: TLSSocket, anchors: ReadonlySet<string>, allowedNames: readonly string[]): ProxyVerdict {
  if (typeof socket.getPeerCertificate !== 'function') return 'none';
  const cert = socket.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return 'none';
  // The listener verified the chain against every CA it trusts; this CA must be the one it ends at.
  if (!socket.authorized || !chainAnchoredIn(socket, anchors)) return { error: 'x509: certificate signed by unknown authority' };
  if (allowedNames.length === 0) return 'proxy';
  const cn = lastValue(cert.subject?.CN);
  if (allowedNames.includes(cn)) return 'proxy';
  return { error: `x509: subject with cn=${cn} is not in the allowed list` };
}

/** Go's pkix.Name.CommonName: the last CN of the subject, "" without one. */
function lastValue(v: string | string[] | undefined): string {
  if (Array.isArray(v)) return v[v.length - 1] ?? '';
  return v ?? '';
}

/** The header names the authenticator reads, lower-cased. */
export interface HeaderNames {
  username: readonly string[];
  uid: readonly string[];
  groups: readonly string[];
  extraPrefixes: readonly string[];
}

/**
 * The user the headers of a proxied request name (kube's requestHeaderAuthRequestHandler): the
 * first username header with a value (each header's first value, as Go's Header.Get), else no
 * opinion; the uid the same way; every non-empty value of every group header; every
 * `<prefix><key>` header's values under the key lower-cased and %-unescaped. The headers read
 * are then removed from the request, so nothing after authentication sees them.
 */
export function userFromRequestHeaders(req: RequestHeaderSource, names: HeaderNames): AuthResult {
  const fields = headerFields(req);
  const name = firstValue(fields, names.username);
  if (!name) return undefined;
  const uid = firstValue(fields, names.uid);
  const groups: string[] = [];
  for (const header of names.groups) {
    for (const [n, v] of fields) if (n === header && v !== '') groups.push(v);
  }
  // kube goes prefix by prefix, so a header two prefixes match counts under both keys.
  const extra: Record<string, string[]> = {};
  for (const prefix of names.extraPrefixes) {
    for (const [n, v] of fields) {
      if (!n.startsWith(prefix)) continue;
      (extra[unescapeExtraKey(n.slice(prefix.length))] ??= []).push(v);
    }
  }
  clearAuthenticationHeaders(req, names);
  const user: UserInfo = { name, groups, extra };
  if (uid) user.uid = uid;
  return { user };
}

/** The request's header fields, names lower-cased, repeated ones apart, in the order they came. */
function headerFields(req: RequestHeaderSource): [string, string][] {
  const fields: [string, string][] = [];
  const raw = req.rawHeaders;
  if (raw) {
    for (let i = 0; i + 1 < raw.length; i += 2) fields.push([raw[i].toLowerCase(), raw[i + 1]]);
    return fields;
  }
  // Without the raw list, repeated fields were joined with ", " on the way in.
  for (const [n, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    for (const value of Array.isArray(v) ? v : [v]) fields.push([n, value]);
  }
  return fields;
}

/** The first header of `headers` whose first value is not empty (kube's headerValue). */
function firstValue(fields: readonly [string, string][], headers: readonly string[]): string {
  for (const header of headers) {
    const field = fields.find(([n]) => n === header);
    if (field && field[1] !== '') return field[1];
  }
  return '';
}

/** Go's url.PathUnescape, or the key as it came when it is not well %-encoded (kube keeps it). */
export function unescapeExtraKey(encoded: string): string {
  if (!encoded.includes('%')) return encoded;
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    const c = encoded.charCodeAt(i);
    if (c !== 0x25) {
      bytes.push(...Buffer.from(encoded[i], 'utf8'));
      continue;
    }
    const hex = encoded.slice(i + 1, i + 3);
    if (!/^[0-9a-fA-F]{2}$/.test(hex)) return encoded;
    bytes.push(parseInt(hex, 16));
    i += 2;
  }
  return Buffer.from(bytes).toString('utf8');
}

/** kube's ClearAuthenticationHeaders: the user, uid and group headers, and every header an extra prefix matches. */
function clearAuthenticationHeaders(req: RequestHeaderSource, names: HeaderNames): void {
  const exact = new Set([...names.username, ...names.uid, ...names.groups]);
  const cleared = (n: string) => exact.has(n) || names.extraPrefixes.some((p) => n.startsWith(p));
  const headers = req.headers as Record<string, string | string[] | undefined>;
  for (const n of Object.keys(headers)) if (cleared(n.toLowerCase())) delete headers[n];
  // Node's rawHeaders is the request's own array; hearth's HTTP/2 request builds a fresh one per read.
  const raw = req.rawHeaders as string[] | undefined;
  if (Array.isArray(raw) && !Object.isFrozen(raw)) {
    let w = 0;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      if (cleared(raw[i].toLowerCase())) continue;
      raw[w++] = raw[i];
      raw[w++] = raw[i + 1];
    }
    raw.length = w;
  }
}
