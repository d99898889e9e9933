// A real SubjectAccessReview webhook for tests: HTTPS on loopback with its own CA (not hearth's),
// requiring a client certificate from that CA, as kube's authorization webhooks are deployed. It
// records every review it receives (path, client certificate CN, body), answers with what the
// test's `answer` says, can go down and come back on the same port, and writes the kubeconfig
// hearth names it by (CA and client certificate by paths relative to the kubeconfig).
import https from 'node:https';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import YAML from 'yaml';
import { ensurePki, type ServerPki } from '../../server/pki/certificates.ts';

/** A received body, read field by field. */
export interface Loose {
  [key: string]: Loose;
}

export interface ReceivedReview {
  path: string;
  clientCN: string | undefined;
  userAgent: string | undefined;
  review: Loose;
}

/** What the webhook answers a review with: [HTTP status, body (an object is sent as JSON)]. */
export type ReviewAnswer = (review: Loose) => [number, unknown];

export interface AuthorizationWebhook {
  readonly port: number;
  readonly pki: ServerPki;
  readonly received: ReceivedReview[];
  /** The reviews received for this user (spec.user). */
  reviewsOf(user: string): ReceivedReview[];
  /** A kubeconfig naming this webhook at https://127.0.0.1:PORT/authorize; returns its path. */
  writeKubeconfig(name: string): string;
  /** Serves (again) on its port. */
  listen(): Promise<void>;
  /** Stops serving: calls fail with "connection refused". */
  down(): Promise<void>;
  close(): Promise<void>;
}

/** An allowing, denying or undecided status of the version asked, with a reason. */
export function reviewStatus(review: Loose, status: Record<string, unknown>): unknown {
  return { apiVersion: review.apiVersion, kind: 'SubjectAccessReview', status };
}

export async function startAuthorizationWebhook(answer: ReviewAnswer): Promise<AuthorizationWebhook> {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-authz-webhook-'));
  const pkiDir = mkdtempSync(join(tmpdir(), 'hearth-authz-webhook-pki-'));
  let pki: ServerPki;
  try {
    pki = await ensurePki(pkiDir);
  } finally {
    rmSync(pkiDir, { recursive: true, force: true });
  }
  const received: ReceivedReview[] = [];
  const sockets = new Set<TLSSocket>();
  let port = 0;
  let server: https.Server | undefined;

  const listen = async () => {
    const srv = https.createServer({ key: pki.servingKeyPem, cert: pki.servingCertPem, ca: pki.caCertPem, requestCert: true, rejectUnauthorized: true }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Loose;
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        received.push({ path: req.url ?? '', clientCN: peer?.subject?.CN === undefined ? undefined : String(peer.subject.CN), userAgent: req.headers['user-agent'], review });
        const [code, body] = answer(review);
        res.writeHead(code, { 'Content-Type': 'application/json' });
        res.end(typeof body === 'string' ? body : JSON.stringify(body));
      });
    });
    srv.on('secureConnection', (s: TLSSocket) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => srv.listen(port, '127.0.0.1', resolve));
    port = (srv.address() as AddressInfo).port;
    server = srv;
  };
  const down = async () => {
    const srv = server;
    if (!srv) return;
    server = undefined;
    const closed = new Promise<void>((resolve) => srv.close(() => resolve()));
    for (const s of sockets) s.destroy();
    await closed;
  };
  await listen();

  return {
    get port() {
      return port;
    },
    pki,
    received,
    reviewsOf: (user) => received.filter((r) => String(r.review.spec?.user) === user),
    writeKubeconfig(name) {
      const file = join(dir, name);
      writeFileSync(join(dir, 'webhook-ca.crt'), pki.caCertPem);
      writeFileSync(join(dir, 'webhook-client.crt'), pki.adminCertPem);
      writeFileSync(join(dir, 'webhook-client.key'), pki.adminKeyPem);
      writeFileSync(
        file,
        YAML.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [{ name: 'authz', cluster: { server: `https://127.0.0.1:${port}/authorize`, 'certificate-authority': 'webhook-ca.crt' } }],
          users: [{ name: 'apiserver', user: { 'client-certificate': 'webhook-client.crt', 'client-key': 'webhook-client.key' } }],
          contexts: [{ name: 'webhook', context: { cluster: 'authz', user: 'apiserver' } }],
          'current-context': 'webhook',
        }),
      );
      return file;
    },
    listen,
    down,
    async close() {
      await down();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
