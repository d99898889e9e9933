// A CRD conversion webhook for tests: HTTPS on 127.0.0.1 with its own CA and serving certificate
// (made with the server's PKI helpers), answering ConversionReviews (v1 or v1beta1, echoing the
// request's version). Its behaviour can be changed between calls to provoke every failure kube
// checks for; it records every request it received.
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { ensurePki } from '../../server/pki/certificates.ts';

export interface WebhookBehaviour {
  /** Converts one object to desiredAPIVersion (default: only apiVersion changes). */
  convert?: (obj: any, desiredAPIVersion: string) => any;
  /** Wait this long before answering (timeout tests). */
  delayMs?: number;
  /** Answer this HTTP status with this body instead of a review. */
  httpError?: { status: number; body?: string; contentType?: string };
  /** Answer result {status: Failure, message}. */
  failure?: { message?: string };
  /** Answer with this uid instead of the request's. */
  uid?: string;
  /** Keep only the first n converted objects (n greater than the count repeats the last one). */
  count?: number;
  /** Force this apiVersion on every converted object. */
  apiVersion?: string;
  /** Change each converted object's metadata (e.g. rename it, add labels). */
  mutateMetadata?: (meta: any, index: number) => void;
  /** Destroy the connection without answering. */
  closeConnection?: boolean;
  /** Replace the whole answer body (a value is JSON-encoded, a string sent as is). */
  rawResponse?: unknown;
}

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  review: any;
}

export interface ConversionWebhook {
  /** https://<host>:<port><path> */
  url: string;
  port: number;
  /** The CA certificate (PEM) and the same base64-encoded, as spec.conversion.webhook.clientConfig.caBundle. */
  caPem: string;
  caBundle: string;
  /** Requests received, in order. */
  requests: ReceivedRequest[];
  /** The reviews received (requests[i].review). */
  readonly reviews: any[];
  /** TLS connections accepted so far (keep-alive reuse shows as 1 for several requests). */
  readonly connections: number;
  setBehaviour(b: WebhookBehaviour): void;
  /** Forget recorded requests and connections. */
  reset(): void;
  close(): Promise<void>;
}

/** A CA nobody else uses (for bad-caBundle tests): its PEM and base64 caBundle. */
export async function createTestCa(): Promise<{ caPem: string; caBundle: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-webhook-ca-'));
  try {
    const pki = await ensurePki(dir);
    return { caPem: pki.caCertPem, caBundle: Buffer.from(pki.caCertPem).toString('base64') };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function defaultConvert(obj: any, desiredAPIVersion: string): any {
  return { ...obj, apiVersion: desiredAPIVersion };
}

/**
 * Starts the webhook. `host` is the loopback address to listen on (default 127.0.0.1; the
 * certificate covers 127.0.0.1, ::1 and localhost only, so 127.0.0.2 gives a hostname mismatch),
 * `sans` more names for its certificate (a Service's `<name>.<namespace>.svc`).
 */
export async function startConversionWebhook(opts: { path?: string; host?: string; sans?: string[]; behaviour?: WebhookBehaviour } = {}): Promise<ConversionWebhook> {
  // ensurePki's serving certificate already covers 127.0.0.1 and localhost.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-webhook-pki-'));
  let pki;
  try {
    pki = await ensurePki(dir, { extraSans: opts.sans });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }

  let behaviour: WebhookBehaviour = opts.behaviour ?? {};
  const requests: ReceivedRequest[] = [];
  let connections = 0;
  const sockets = new Set<TLSSocket>();

  const server = https.createServer({ key: pki.servingKeyPem, cert: pki.servingCertPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const b = behaviour;
      let review: any;
      try {
        review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        review = undefined;
      }
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, review });
      const answer = () => {
        if (b.closeConnection) {
          req.socket.destroy();
          return;
        }
        if (b.httpError) {
          res.writeHead(b.httpError.status, { 'Content-Type': b.httpError.contentType ?? 'text/plain; charset=utf-8' });
          res.end(b.httpError.body ?? '');
          return;
        }
        let body: string;
        if (b.rawResponse !== undefined) body = typeof b.rawResponse === 'string' ? b.rawResponse : JSON.stringify(b.rawResponse);
        else body = JSON.stringify(respond(review, b));
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(body);
      };
      if (b.delayMs) setTimeout(answer, b.delayMs);
      else answer();
    });
  });
  server.on('secureConnection', (s: TLSSocket) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  // Clients that reject the certificate abort the handshake; that is expected here.
  server.on('tlsClientError', () => {});

  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  const urlPath = opts.path ?? '/convert';

  return {
    url: `https://${host.includes(':') ? `[${host}]` : host}:${port}${urlPath}`,
    port,
    caPem: pki.caCertPem,
    caBundle: Buffer.from(pki.caCertPem).toString('base64'),
    requests,
    get reviews() {
      return requests.map((r) => r.review);
    },
    get connections() {
      return connections;
    },
    setBehaviour(b: WebhookBehaviour) {
      behaviour = b;
    },
    reset() {
      requests.length = 0;
      connections = 0;
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    },
  };
}

function respond(review: any, b: WebhookBehaviour): any {
  const request = review?.request ?? {};
  const desired: string = request.desiredAPIVersion;
  const convert = b.convert ?? defaultConvert;
  let converted: any[] = (Array.isArray(request.objects) ? request.objects : []).map((o: any) => convert(structuredClone(o), desired));
  if (b.apiVersion !== undefined) converted = converted.map((o) => ({ ...o, apiVersion: b.apiVersion }));
  if (b.mutateMetadata) converted.forEach((o, i) => b.mutateMetadata!((o.metadata ??= {}), i));
  if (b.count !== undefined) {
    const last = converted[converted.length - 1];
    converted = converted.slice(0, b.count);
    while (converted.length < b.count) converted.push(last);
  }
  const result = b.failure ? { status: 'Failure', ...(b.failure.message !== undefined ? { message: b.failure.message } : {}) } : { status: 'Success' };
  return {
    apiVersion: review?.apiVersion ?? 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    response: { uid: b.uid ?? request.uid, convertedObjects: converted, result },
  };
}
