// An admission webhook for tests: HTTPS on 127.0.0.1 with its own CA and serving certificate,
// answering AdmissionReviews (v1 or v1beta1, echoing the request's version) with what the test's
// handler decides: allow, deny with a status, patch, answer slowly, or close the connection
// ("down"). It records every review it received, by path, so one server can play several
// webhooks (`/mutate`, `/validate`...).
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { ensurePki } from '../../server/pki/certificates.ts';

/** What tests read of the objects in a review. */
export interface ReviewedObject {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  data?: Record<string, string>;
  spec?: { replicas?: number };
}

/** An AdmissionReview as a webhook receives it. */
export interface ReceivedAdmissionReview {
  apiVersion: string;
  kind: string;
  request: {
    uid: string;
    kind: { group: string; version: string; kind: string };
    resource: { group: string; version: string; resource: string };
    subResource?: string;
    requestKind: { group: string; version: string; kind: string };
    requestResource: { group: string; version: string; resource: string };
    requestSubResource?: string;
    name?: string;
    namespace?: string;
    operation: string;
    userInfo: { username: string; uid?: string; groups: string[]; extra: Record<string, string[]> };
    object: ReviewedObject | null;
    oldObject: ReviewedObject | null;
    dryRun: boolean;
    options: { kind: string; apiVersion: string } | null;
  };
}

/** One AdmissionReview as received. */
export interface ReceivedReview {
  path: string;
  /** The URL's query (kube's `timeout=10s`). */
  query: string;
  headers: Record<string, string | string[] | undefined>;
  review: ReceivedAdmissionReview;
}

/** What the webhook answers: a response (uid filled in unless given), or a behaviour. */
export type AdmissionAnswer =
  | { allowed: true; patch?: unknown[]; warnings?: string[]; auditAnnotations?: Record<string, string> }
  | { allowed: false; status?: { code?: number; reason?: string; message?: string }; warnings?: string[] }
  | { delayMs: number; then?: AdmissionAnswer }
  | { down: true }
  | { raw: unknown; httpStatus?: number };

export type AdmissionHandler = (review: ReceivedAdmissionReview, path: string) => AdmissionAnswer;

export interface AdmissionWebhook {
  /** https://127.0.0.1:<port> (add a path). */
  base: string;
  port: number;
  caPem: string;
  /** The CA, base64, as clientConfig.caBundle. */
  caBundle: string;
  /** Reviews received, in order. */
  received: ReceivedReview[];
  /** The reviews received at one path. */
  reviewsAt(path: string): ReceivedAdmissionReview[];
  /** TLS connections accepted (keep-alive shows as fewer connections than reviews). */
  readonly connections: number;
  /** The handler for every path (default: allow). */
  handle(h: AdmissionHandler): void;
  reset(): void;
  close(): Promise<void>;
}

/** An RFC 6902 patch as the response carries it: base64 of its JSON. */
export function encodePatch(patch: unknown[]): string {
  return Buffer.from(JSON.stringify(patch)).toString('base64');
}

/** Starts the webhook; `sans` are more names for its certificate (a Service's `<name>.<namespace>.svc`). */
export async function startAdmissionWebhook(opts: { sans?: string[] } = {}): Promise<AdmissionWebhook> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-admission-webhook-pki-'));
  let pki;
  try {
    pki = await ensurePki(dir, { extraSans: opts.sans });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  let handler: AdmissionHandler = () => ({ allowed: true });
  const received: ReceivedReview[] = [];
  let connections = 0;
  const sockets = new Set<TLSSocket>();
  const timers = new Set<NodeJS.Timeout>();

  const server = https.createServer({ key: pki.servingKeyPem, cert: pki.servingCertPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let review: ReceivedAdmissionReview;
      try {
        review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ReceivedAdmissionReview;
      } catch {
        review = { apiVersion: '', kind: '', request: {} as ReceivedAdmissionReview['request'] };
      }
      const url = new URL(req.url ?? '/', 'https://webhook');
      received.push({ path: url.pathname, query: url.search.slice(1), headers: req.headers, review });
      const reply = (answer: AdmissionAnswer): void => {
        if ('down' in answer) {
          req.socket.destroy();
          return;
        }
        if ('delayMs' in answer) {
          const t = setTimeout(() => {
            timers.delete(t);
            if (!res.destroyed) reply(answer.then ?? { allowed: true });
          }, answer.delayMs);
          timers.add(t);
          return;
        }
        if ('raw' in answer) {
          res.writeHead(answer.httpStatus ?? 200, { 'Content-Type': 'application/json' });
          res.end(typeof answer.raw === 'string' ? answer.raw : JSON.stringify(answer.raw));
          return;
        }
        const response: Record<string, unknown> = { uid: review.request.uid, allowed: answer.allowed };
        if (answer.allowed && answer.patch) {
          response.patchType = 'JSONPatch';
          response.patch = encodePatch(answer.patch);
        }
        if (!answer.allowed && answer.status) response.status = answer.status;
        if (answer.warnings) response.warnings = answer.warnings;
        if (answer.allowed && answer.auditAnnotations) response.auditAnnotations = answer.auditAnnotations;
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ apiVersion: review.apiVersion || 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
      };
      reply(handler(review, url.pathname));
    });
  });
  server.on('secureConnection', (s: TLSSocket) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    base: `https://127.0.0.1:${port}`,
    port,
    caPem: pki.caCertPem,
    caBundle: Buffer.from(pki.caCertPem).toString('base64'),
    received,
    reviewsAt: (p) => received.filter((r) => r.path === p).map((r) => r.review),
    get connections() {
      return connections;
    },
    handle(h) {
      handler = h;
    },
    reset() {
      received.length = 0;
      connections = 0;
      handler = () => ({ allowed: true });
    },
    close() {
      for (const t of timers) clearTimeout(t);
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    },
  };
}
