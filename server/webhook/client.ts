// A client for webhooks named by a kubeconfig, as kube's pkg/util/webhook GenericWebhook is one
// (the token authenticator, the authorization webhook and admission webhooks all use it): JSON
// POSTed to the cluster's server URL exactly (its path kept, trailing slash and query dropped, as
// client-go's REST client builds it), over one keep-alive agent per client, with kube's per-call
// timeout (defaultRequestTimeout, 30 s) and its retry (WithExponentialBackoff with
// DefaultRetryBackoffWithInitialDelay: 5 attempts, waits ×1.5 from the initial delay, jitter 0.2)
// for what DefaultShouldRetry calls transient: a connection reset, 500-class InternalError, 504
// Timeout, 429, and any answer that asks for a delay (Retry-After). A connection refused, a TLS
// failure or a 4xx fail at once. Errors read as client-go's do (`Post "URL": dial tcp ...:
// connect: connection refused`, NewGenericServerResponse's texts), so logs match kube's.
import * as http from 'node:http';
import * as https from 'node:https';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { WebhookClientConfig } from './kubeconfig.ts';

/** kube's defaultRequestTimeout: the whole of one call, connect to the answer's last byte. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** How much of an answer is read: a webhook that sends more is an error, so a call's cost is bounded. */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
/** Idle connections kept per webhook (client-go's MaxIdleConnsPerHost). */
const MAX_IDLE_CONNECTIONS = 25;
/** client-go's CachedFileTokenSource reads a tokenFile again after this long. */
const TOKEN_FILE_REFRESH_MS = 60_000;

/** wait.Backoff: the first wait, its growth, the random share added to each, the number of attempts. */
export interface RetryBackoff {
  durationMs: number;
  factor: number;
  jitter: number;
  steps: number;
}

/** kube's DefaultRetryBackoffWithInitialDelay (the webhooks' default initial delay is 500 ms). */
export function defaultRetryBackoff(initialDelayMs = 500): RetryBackoff {
  return { durationMs: initialDelayMs, factor: 1.5, jitter: 0.2, steps: 5 };
}

/** A call that failed: client-go's error text, and whether DefaultShouldRetry would try again. */
export class WebhookCallError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    /** The HTTP status of the answer, when there was one. */
    readonly statusCode?: number,
  ) {
    super(message);
  }
}

/** A 2xx answer: its status and its JSON body. */
export interface WebhookAnswer {
  statusCode: number;
  body: unknown;
}

export interface WebhookClientOptions {
  /** Per-call timeout (default 30 s). */
  timeoutMs?: number;
  retryBackoff?: RetryBackoff;
  /** The User-Agent header (client-go sends `<binary>/<version> (<os>/<arch>) kubernetes/<commit>`). */
  userAgent?: string;
  /** Waits between attempts; tests record them instead of waiting. */
  sleep?: (ms: number) => Promise<void>;
  /** [0, 1) for the jitter. */
  random?: () => number;
}

/** wait.Jitter: d plus up to maxFactor·d. */
function jittered(d: number, maxFactor: number, random: () => number): number {
  return maxFactor > 0 ? d + random() * maxFactor * d : d;
}

/**
 * kube's WithExponentialBackoff over wait.ExponentialBackoffWithContext: `attempt` runs up to
 * `steps` times while `shouldRetry` says its error is transient, waiting between runs; the last
 * error is what fails. `deadline` (epoch ms) stops the waits as the shared lookup's context does.
 */
export async function withExponentialBackoff<T>(backoff: RetryBackoff, attempt: () => Promise<T>, shouldRetry: (e: unknown) => boolean, opts: { deadline?: number; sleep?: (ms: number) => Promise<void>; random?: () => number } = {}): Promise<T> {
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const random = opts.random ?? Math.random;
  let duration = backoff.durationMs;
  let steps = backoff.steps;
  let lastError: unknown;
  while (steps > 0) {
    try {
      return await attempt();
    } catch (e) {
      if (!shouldRetry(e)) throw e;
      lastError = e;
    }
    if (steps === 1) break;
    steps--;
    const wait = jittered(duration, backoff.jitter, random);
    duration *= backoff.factor;
    // The context would end during the wait: the last error is the answer.
    if (opts.deadline !== undefined && Date.now() + wait >= opts.deadline) break;
    await sleep(wait);
  }
  throw lastError;
}

/** DefaultShouldRetry. */
export function isRetryable(e: unknown): boolean {
  return e instanceof WebhookCallError && e.retryable;
}

/**
 * Node's request errors in the words of Go's net/http and crypto/tls (what client-go's errors
 * say). `host` and `port` are where the connection went; `servername` what the certificate
 * must name.
 */
export function goNetError(e: NodeJS.ErrnoException & { address?: string; port?: number; cert?: { subjectaltname?: string } }, dialHost: string, dialPort: string | number, servername: string): string {
  const code = e.code ?? '';
  const host = dialHost.startsWith('[') ? dialHost.slice(1, -1) : dialHost;
  const addr = e.address ? (e.address.includes(':') ? `[${e.address}]:${e.port}` : `${e.address}:${e.port}`) : host.includes(':') ? `[${host}]:${dialPort}` : `${host}:${dialPort}`;
  switch (code) {
    case 'ECONNREFUSED':
      return `dial tcp ${addr}: connect: connection refused`;
    case 'EHOSTUNREACH':
      return `dial tcp ${addr}: connect: no route to host`;
    case 'ENETUNREACH':
      return `dial tcp ${addr}: connect: network is unreachable`;
    case 'ETIMEDOUT':
      return `dial tcp ${addr}: connect: connection timed out`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return `dial tcp: lookup ${host}: no such host`;
    case 'ECONNRESET':
      return e.message === 'socket hang up' ? 'EOF' : 'read: connection reset by peer';
    case 'EPIPE':
      return 'write: broken pipe';
    case 'ERR_UNEXPECTED_EOF':
      return 'unexpected EOF';
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'CERT_SIGNATURE_FAILURE':
      return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
    case 'CERT_HAS_EXPIRED':
    case 'CERT_NOT_YET_VALID':
      return 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid';
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `tls: failed to verify certificate: ${hostMismatch(e.cert?.subjectaltname ?? '', servername)}`;
    case 'ERR_SSL_WRONG_VERSION_NUMBER':
      return 'http: server gave HTTP response to HTTPS client';
    case 'EPROTO':
      if (/wrong version number/i.test(e.message)) return 'http: server gave HTTP response to HTTPS client';
  }
  if (/alert (certificate required|handshake failure|bad certificate)/i.test(e.message)) return `remote error: tls: ${/certificate required/i.test(e.message) ? 'certificate required' : /bad certificate/i.test(e.message) ? 'bad certificate' : 'handshake failure'}`;
  return e.message;
}

/** crypto/x509's HostnameError text. */
export function hostMismatch(subjectAltName: string, host: string): string {
  const sans = subjectAltName.split(', ').filter(Boolean);
  // Node spells IPv6 SANs in full; Go prints the short form.
  const canonical = (ip: string) => (ip.includes(':') ? new URL(`http://[${ip}]/`).hostname.slice(1, -1) : ip);
  const ips = sans.filter((s) => s.startsWith('IP Address:')).map((s) => canonical(s.slice('IP Address:'.length)));
  const dns = sans.filter((s) => s.startsWith('DNS:')).map((s) => s.slice(4));
  if (net.isIP(host)) {
    if (ips.length === 0) return `x509: cannot validate certificate for ${host} because it doesn't contain any IP SANs`;
    return `x509: certificate is valid for ${ips.join(', ')}, not ${host}`;
  }
  if (dns.length === 0) return `x509: certificate is not valid for any names, but wanted to match ${host}`;
  return `x509: certificate is valid for ${dns.join(', ')}, not ${host}`;
}

export interface RawAnswer {
  statusCode: number;
  contentType: string;
  retryAfter: string | undefined;
  body: Buffer;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * client-go's error for a non-2xx answer: the Status in its body when it has one, else
 * NewGenericServerResponse's; retryable as DefaultShouldRetry judges the resulting StatusError.
 */
export function statusError(ans: RawAnswer): WebhookCallError {
  const retryAfter = ans.retryAfter !== undefined && /^\d+$/.test(ans.retryAfter.trim()) ? Number(ans.retryAfter.trim()) : 0;
  let status: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(ans.body.toString('utf8'));
    if (isObject(parsed) && parsed.kind === 'Status') status = parsed;
  } catch {
    // not a Status
  }
  let reason: string;
  let message: string;
  let code = ans.statusCode;
  let retryAfterSeconds = retryAfter;
  if (status) {
    reason = typeof status.reason === 'string' ? status.reason : '';
    message = typeof status.message === 'string' ? status.message : '';
    if (typeof status.code === 'number') code = status.code;
    const details = isObject(status.details) ? status.details : undefined;
    retryAfterSeconds = details && typeof details.retryAfterSeconds === 'number' ? details.retryAfterSeconds : 0;
    if (!details && reason !== 'ServerTimeout') retryAfterSeconds = 0;
  } else {
    const text = /^text\//i.test(ans.contentType.trim()) ? ans.body.subarray(0, 2048).toString('utf8').trim() : 'unknown';
    [reason, message] = genericServerResponse(ans.statusCode, text);
  }
  const retryable = reason === 'InternalError' || reason === 'Timeout' || reason === 'TooManyRequests' || code === 429 || reason === 'ServerTimeout' || retryAfterSeconds > 0;
  return new WebhookCallError(message, retryable, ans.statusCode);
}

/** apimachinery's NewGenericServerResponse: [reason, message] for a status without a Status body. */
function genericServerResponse(code: number, serverMessage: string): [string, string] {
  switch (code) {
    case 409:
      return ['AlreadyExists', 'the server reported a conflict'];
    case 404:
      return ['NotFound', 'the server could not find the requested resource'];
    case 400:
      return ['BadRequest', 'the server rejected our request for an unknown reason'];
    case 401:
      return ['Unauthorized', 'the server has asked for the client to provide credentials'];
    case 403:
      return ['Forbidden', serverMessage];
    case 406:
      return ['NotAcceptable', serverMessage === '' || serverMessage === 'unknown' ? 'the server was unable to respond with a content type that the client supports' : serverMessage];
    case 415:
      return ['UnsupportedMediaType', serverMessage];
    case 405:
      return ['MethodNotAllowed', 'the server does not allow this method on the requested resource'];
    case 422:
      return ['Invalid', 'the server rejected our request due to an error in our request'];
    case 503:
      return ['ServiceUnavailable', 'the server is currently unable to handle the request'];
    case 504:
      return ['Timeout', 'the server was unable to return a response in the time allotted, but may still be processing the request'];
    case 429:
      return ['TooManyRequests', 'the server has received too many requests and has asked us to try again later'];
  }
  if (code >= 500) return ['InternalError', `an error on the server (${JSON.stringify(serverMessage)}) has prevented the request from succeeding`];
  return ['', `the server responded with the status code ${code} but did not return more information`];
}

/** The URL client-go's REST client posts to: the server's path, cleaned (no trailing slash), without query or fragment. */
function requestUrl(server: URL): URL {
  const u = new URL(server.href);
  let p = path.posix.normalize(`/${u.pathname}`);
  if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  u.pathname = p;
  u.search = '';
  u.hash = '';
  u.username = '';
  u.password = '';
  return u;
}

/** A webhook named by a kubeconfig: one agent, kube's timeout and retry. */
export class WebhookClient {
  /** Where calls go. */
  readonly url: URL;
  private readonly agent: http.Agent;
  private readonly timeoutMs: number;
  private readonly backoff: RetryBackoff;
  private readonly userAgent: string;
  private readonly sleep?: (ms: number) => Promise<void>;
  private readonly random?: () => number;
  private fileToken?: { value: string; readAt: number };

  constructor(
    readonly config: WebhookClientConfig,
    opts: WebhookClientOptions = {},
  ) {
    this.url = requestUrl(config.server);
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.backoff = opts.retryBackoff ?? defaultRetryBackoff();
    this.userAgent = opts.userAgent ?? 'hearth';
    this.sleep = opts.sleep;
    this.random = opts.random;
    // client-go's transport keeps up to 25 idle connections per host, closed after 90 s idle.
    const agentOptions = { keepAlive: true, maxFreeSockets: MAX_IDLE_CONNECTIONS, timeout: 90_000 };
    this.agent =
      this.url.protocol === 'https:'
        ? new https.Agent({
            ...agentOptions,
            ca: config.caPem,
            cert: config.clientCertPem,
            key: config.clientKeyPem,
            rejectUnauthorized: !config.insecureSkipTlsVerify,
            // SNI and the certificate check use tls-server-name when set; Node refuses an IP as SNI.
            ...(config.tlsServerName ? { servername: config.tlsServerName } : {}),
          })
        : new http.Agent(agentOptions);
  }

  /** The Authorization header the kubeconfig's user sends, if any. */
  private authorization(): string | undefined {
    const c = this.config;
    if (c.tokenFile) {
      const now = Date.now();
      if (!this.fileToken || now - this.fileToken.readAt >= TOKEN_FILE_REFRESH_MS) {
        try {
          const value = fs.readFileSync(c.tokenFile, 'utf8').trim();
          // An unreadable or empty file keeps the token read before (client-go logs and goes on).
          if (value) this.fileToken = { value, readAt: now };
        } catch {
          if (this.fileToken) this.fileToken.readAt = now;
        }
      }
      if (this.fileToken) return `Bearer ${this.fileToken.value}`;
    }
    if (c.token) return `Bearer ${c.token}`;
    if (c.username || c.password) return `Basic ${Buffer.from(`${c.username ?? ''}:${c.password ?? ''}`).toString('base64')}`;
    return undefined;
  }

  /**
   * POSTs `body` as JSON with kube's retry; the 2xx answer's JSON body, else the last
   * WebhookCallError. `deadline` (epoch ms) bounds the whole, waits included.
   */
  post(body: unknown, deadline?: number): Promise<WebhookAnswer> {
    const payload = Buffer.from(JSON.stringify(body));
    return withExponentialBackoff(this.backoff, () => this.postOnce(payload, deadline), isRetryable, { deadline, sleep: this.sleep, random: this.random });
  }

  /** One call (a connection the server closed while idle is tried once more, as Go's transport does). */
  async postOnce(payload: Buffer, deadline?: number): Promise<WebhookAnswer> {
    let raw: RawAnswer | undefined;
    // Each stale connection is closed when found, so this ends with a new one at the latest.
    for (let tries = 0; raw === undefined; tries++) {
      try {
        raw = await this.send(payload, deadline);
      } catch (e) {
        if (!(e instanceof StaleConnection)) throw e;
        if (tries > MAX_IDLE_CONNECTIONS) throw new WebhookCallError(`Post ${JSON.stringify(this.url.href)}: EOF`, false);
      }
    }
    if (raw.statusCode < 200 || raw.statusCode > 206) throw statusError(raw);
    if (raw.body.length === 0) throw new WebhookCallError(`0-length response with status code: ${raw.statusCode} and content type: ${raw.contentType}`, false, raw.statusCode);
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.body.toString('utf8'));
    } catch (e) {
      throw new WebhookCallError(`couldn't get version/kind; json parse error: ${(e as Error).message}`, false, raw.statusCode);
    }
    return { statusCode: raw.statusCode, body: parsed };
  }

  private send(payload: Buffer, deadline: number | undefined): Promise<RawAnswer> {
    const url = this.url;
    const display = `Post ${JSON.stringify(url.href)}`;
    const remaining = deadline === undefined ? this.timeoutMs : Math.min(this.timeoutMs, deadline - Date.now());
    const byClientTimeout = remaining === this.timeoutMs;
    return new Promise<RawAnswer>((resolve, reject) => {
      let settled = false;
      const finish = (err: Error | undefined, answer?: RawAnswer) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(answer!);
      };
      const headers: Record<string, string | number> = {
        'Content-Type': 'application/json',
        Accept: 'application/json, */*',
        'User-Agent': this.userAgent,
        'Content-Length': payload.length,
      };
      const authorization = this.authorization();
      if (authorization) headers.Authorization = authorization;
      const request = url.protocol === 'https:' ? https.request : http.request;
      const req = request(url, { method: 'POST', agent: this.agent, headers });
      // One deadline over connect, send and the whole answer, like http.Client's Timeout.
      const timer = setTimeout(
        () => {
          finish(new WebhookCallError(`${display}: context deadline exceeded${byClientTimeout ? ' (Client.Timeout exceeded while awaiting headers)' : ''}`, false));
          req.destroy();
        },
        Math.max(0, remaining),
      );
      req.on('error', (e: NodeJS.ErrnoException) => {
        // A kept-alive connection the server had closed: nothing reached it, so try a new one.
        if (req.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) return finish(new StaleConnection());
        const text = goNetError(e, url.hostname, url.port || (url.protocol === 'https:' ? '443' : '80'), this.config.tlsServerName ?? url.hostname.replace(/^\[|\]$/g, ''));
        // Only a connection reset is transient to kube (utilnet.IsConnectionReset).
        finish(new WebhookCallError(`${display}: ${text}`, e.code === 'ECONNRESET' && e.message !== 'socket hang up'));
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) {
            finish(new WebhookCallError(`${display}: the webhook's answer is larger than ${MAX_RESPONSE_BYTES} bytes`, false, res.statusCode));
            req.destroy();
            return;
          }
          chunks.push(c);
        });
        res.on('error', (e) => finish(new WebhookCallError(`${display}: ${e.message}`, false)));
        res.on('aborted', () => finish(new WebhookCallError(`${display}: unexpected EOF`, false)));
        res.on('end', () => {
          const retryAfter = res.headers['retry-after'];
          finish(undefined, { statusCode: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, body: Buffer.concat(chunks) });
        });
      });
      req.end(payload);
    });
  }

  /** Closes the kept-alive connections (the server's stop). */
  close(): void {
    this.agent.destroy();
  }
}

/** A request written to a kept-alive connection the server had already closed. */
class StaleConnection extends Error {}
