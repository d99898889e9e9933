// The client of webhooks named by an API object's `clientConfig` (`url`, or `service` +
// `caBundle`): admission webhooks and CRD conversion webhooks, as kube's
// apiserver/pkg/util/webhook ClientManager builds their REST clients. Requests go to the URL's
// cleaned path with `?timeout=` (the REST client's Timeout parameter), over one keep-alive agent
// per (origin, caBundle), kept in an LRU of kube's size (200, its clientCache); HTTP/1.1 only, as
// kube forces for webhooks. One deadline bounds connect, send and the whole answer (the call's
// context). Errors read as Go's net/http and client-go's say them (client.ts has those texts).
//
// A `service` reference is dialled where kube-apiserver's resolver sends it (resolveService):
// the Service's endpoints when it has a ready one for the port (kube's endpoint routing, what
// --enable-aggregator-routing selects), else its cluster IP, while the certificate is checked
// against, and the Host header names, `<name>.<namespace>.svc`.
import * as https from 'node:https';
import * as path from 'node:path';
import { X509Certificate } from 'node:crypto';
import { goNetError, statusError } from './client.ts';
import { goDuration } from '../go/time.ts';

const MAX_AGENTS = 200; // kube's webhook client cache size
const agents = new Map<string, https.Agent>();

/** The keep-alive agent for one webhook origin trusting one CA bundle (the default roots when none). */
export function agentFor(origin: string, caPem: string | undefined): https.Agent {
  const key = `${origin}\n${caPem ?? ''}`;
  let agent = agents.get(key);
  if (agent) {
    agents.delete(key); // move to the back: most recently used
    agents.set(key, agent);
    return agent;
  }
  // Evicted agents are only forgotten: a caller may still be using one, and their idle sockets
  // are unref'd and closed by the webhook's own keep-alive timeout.
  if (agents.size >= MAX_AGENTS) agents.delete(agents.keys().next().value!);
  agent = new https.Agent({ keepAlive: true, ca: caPem, ALPNProtocols: ['http/1.1'] });
  agents.set(key, agent);
  return agent;
}

/** Close every webhook connection (server stop, tests). */
export function closeClientConfigAgents(): void {
  for (const a of agents.values()) a.destroy();
  agents.clear();
}

export interface Endpoint {
  /** What Go's url.Error prints: scheme://host + cleaned path + ?timeout=. */
  display: string;
  /** The host the certificate must name (for a Service: `<name>.<namespace>.svc`). */
  hostname: string;
  port: number;
  path: string;
  origin: string;
  /** A `service` reference: dialled where the Service resolves to, at each request. */
  service?: { namespace: string; name: string; port: number };
}

/** Where a connection goes when it is not to the endpoint's own host and port. */
export interface DialTarget {
  host: string;
  port: number;
}

/** The request URL kube's REST client builds: the URL's path cleaned (path.Join), its query replaced by ?timeout=. */
export function endpointFor(rawUrl: string, timeoutMs: number): Endpoint | string {
  let u: URL;
  try {
    u = new URL(rawUrl);
  } catch {
    return `Unparsable URL: parse ${JSON.stringify(rawUrl)}: invalid URI for request`;
  }
  if (u.protocol !== 'https:') return `unsupported protocol scheme ${JSON.stringify(u.protocol.replace(/:$/, ''))}`;
  // Go keeps the authority as written (an explicit :443 included); WHATWG drops default ports.
  const authority = /^https:\/\/(?:[^@/?#]*@)?([^/?#]*)/i.exec(rawUrl)?.[1] ?? u.host;
  let p = path.posix.normalize(`/${u.pathname}`);
  if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  const reqPath = `${p}?timeout=${goDuration(timeoutMs)}`;
  const hostname = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  return { display: `https://${authority}${reqPath}`, hostname, port: u.port ? Number(u.port) : 443, path: reqPath, origin: u.origin };
}

/** The endpoint of a `service` reference (kube's client for a service: https://name.namespace.svc:port/path). */
export function serviceEndpointFor(service: { namespace?: unknown; name?: unknown; path?: unknown; port?: unknown }, timeoutMs: number): Endpoint | string {
  const port = typeof service.port === 'number' ? service.port : 443;
  const ep = endpointFor(`https://${String(service.name)}.${String(service.namespace)}.svc:${port}${typeof service.path === 'string' ? service.path : ''}`, timeoutMs);
  if (typeof ep !== 'string') ep.service = { namespace: String(service.namespace), name: String(service.name), port };
  return ep;
}

/** caBundle (base64 of PEM) → PEM, undefined when empty, or an error when no certificate parses. */
export function caPemFrom(caBundle: unknown): { pem?: string; error?: string } {
  if (typeof caBundle !== 'string' || caBundle === '') return {};
  const pem = Buffer.from(caBundle, 'base64').toString('utf8');
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  let ok = 0;
  for (const b of blocks) {
    try {
      new X509Certificate(b);
      ok++;
    } catch {
      // Go's AppendCertsFromPEM skips unparsable blocks too
    }
  }
  if (ok === 0) return { error: blocks.length === 0 ? 'unable to load root certificates: unable to parse bytes as PEM block' : 'unable to load root certificates: no valid certificate authority data seen' };
  return { pem };
}

export interface HttpAnswer {
  status: number;
  contentType: string;
  body: Buffer;
}

/** The call's deadline passed (the context's "context deadline exceeded"). */
export class DeadlineExceeded extends Error {}

/** How much of an answer is read: more is an error, so a call's cost stays bounded. */
const MAX_ANSWER_BYTES = 10 * 1024 * 1024;

/** POSTs a JSON body; the answer whatever its status, or the connection's error (DeadlineExceeded at the deadline). */
export function postJson(agent: https.Agent, ep: Endpoint, body: Buffer, timeoutMs: number, dial: DialTarget | undefined, userAgent: string): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | undefined, answer?: HttpAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(answer!);
    };
    const req = https.request({
      agent,
      hostname: dial?.host ?? ep.hostname,
      port: dial?.port ?? ep.port,
      // Dialled elsewhere, the certificate is still checked against (and the Host header names) the endpoint's host, as Go's client does.
      ...(dial ? { servername: ep.hostname } : {}),
      path: ep.path,
      method: 'POST',
      headers: {
        ...(dial ? { Host: `${ep.hostname}:${ep.port}` } : {}),
        'Content-Type': 'application/json',
        Accept: 'application/json, */*',
        'User-Agent': userAgent,
        'Content-Length': body.length,
      },
    });
    // One deadline over connect, send and the whole answer, like the call's context.
    const timer = setTimeout(() => {
      finish(new DeadlineExceeded());
      req.destroy();
    }, timeoutMs);
    req.on('error', (e) => finish(e));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_ANSWER_BYTES) {
          finish(new Error(`the webhook's answer is larger than ${MAX_ANSWER_BYTES} bytes`));
          req.destroy();
          return;
        }
        chunks.push(c);
      });
      res.on('error', (e) => finish(e));
      res.on('end', () => finish(undefined, { status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks) }));
      res.on('aborted', () => finish(Object.assign(new Error('unexpected EOF'), { code: 'ERR_UNEXPECTED_EOF' })));
    });
    req.end(body);
  });
}

/** A failed call in Go's words (without the `Post "URL": ` prefix). */
export function callErrorText(e: unknown, ep: Endpoint, dial: DialTarget | undefined): string {
  if (e instanceof DeadlineExceeded) return 'context deadline exceeded';
  if (!(e instanceof Error)) return String(e);
  return goNetError(e, dial?.host ?? ep.hostname, dial?.port ?? ep.port, ep.hostname);
}

/** client-go's error text for a non-2xx answer: the Status in its body, else NewGenericServerResponse's. */
export function httpStatusErrorText(ans: HttpAnswer): string {
  return statusError({ statusCode: ans.status, contentType: ans.contentType, retryAfter: undefined, body: ans.body }).message;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Where kube-apiserver's resolver sends a `service` reference: ExternalName Services at their
 * external name and the reference's port; ClusterIP, NodePort and LoadBalancer ones at a ready
 * address of their Endpoints for the Service port named by the reference (endpoint routing),
 * else at the cluster IP and port (ClusterIP routing, reached through a proxy on the node);
 * otherwise its error text.
 */
export function resolveService(svc: unknown, name: string, port: number, endpoints?: unknown): DialTarget | string {
  if (!isObject(svc)) return `service ${JSON.stringify(name)} not found`;
  const spec = isObject(svc.spec) ? svc.spec : {};
  const type = typeof spec.type === 'string' ? spec.type : '';
  if (type === 'ExternalName') return { host: String(spec.externalName ?? ''), port };
  if (type !== 'ClusterIP' && type !== 'NodePort' && type !== 'LoadBalancer') return `unsupported service type ${JSON.stringify(type)}`;
  const svcPort = (Array.isArray(spec.ports) ? spec.ports : []).find((p) => isObject(p) && p.port === port) as Record<string, unknown> | undefined;
  const viaEndpoints = endpointAddress(endpoints, typeof svcPort?.name === 'string' ? svcPort.name : '');
  if (viaEndpoints) return viaEndpoints;
  if (type === 'ClusterIP' && spec.clusterIP === 'None') return 'cannot route to service with ClusterIP "None"';
  if (!svcPort) return `no service port ${port} found for service ${JSON.stringify(name)}`;
  return { host: String(spec.clusterIP ?? ''), port };
}

/** A ready address of an Endpoints object for the port of that name (kube's ResolveEndpoint picks one at random). */
function endpointAddress(endpoints: unknown, portName: string): DialTarget | undefined {
  if (!isObject(endpoints) || !Array.isArray(endpoints.subsets)) return undefined;
  for (const subset of endpoints.subsets) {
    if (!isObject(subset) || !Array.isArray(subset.addresses) || subset.addresses.length === 0) continue;
    const p = (Array.isArray(subset.ports) ? subset.ports : []).find((x) => isObject(x) && (x.name ?? '') === portName) as Record<string, unknown> | undefined;
    if (!p || typeof p.port !== 'number') continue;
    const addresses = subset.addresses.filter((a): a is Record<string, unknown> => isObject(a) && typeof a.ip === 'string');
    if (addresses.length === 0) continue;
    const chosen = addresses[Math.floor(Math.random() * addresses.length)]!;
    return { host: String(chosen.ip), port: p.port };
  }
  return undefined;
}
