// The TLS listener: HTTP/2 (ALPN h2) with HTTP/1.1 as the fallback, as kube-apiserver serves.
// client-go multiplexes a process's requests and watches over HTTP/2 connections, so one TLS
// session carries many watch streams and the frames of many streams leave in few TLS writes.
import http2 from 'node:http2';
import tls from 'node:tls';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * kube-apiserver's default (--http2-max-streams-per-connection unset) since the CVE-2023-44487
 * fix: it matches Go's client default, and a Go client opens another connection when one is full.
 */
export const MAX_CONCURRENT_STREAMS = 100;
/** Per-stream upload window and largest frame read, as kube-apiserver sizes them (99% of objects fit). */
const UPLOAD_BUFFER_PER_STREAM = 256 * 1024;
/** An HTTP/2 connection with no open stream for this long is closed (Go's http2.Server IdleTimeout in kube-apiserver). */
const HTTP2_IDLE_TIMEOUT_MS = 90_000;
/**
 * Unsent response bytes a session may hold before it refuses new streams. Each watch stream is
 * closed on its own past 8 MiB of backlog; this bounds a connection as a whole.
 */
const MAX_SESSION_MEMORY_MB = 256;
/**
 * The server picks the cipher suite, preferring AES-128-GCM for TLS 1.3 as Go's crypto/tls does
 * on hardware with AES instructions (kube-apiserver negotiates TLS_AES_128_GCM_SHA256 with a client
 * that offers AES-GCM first). It is also the cheapest suite to encrypt watch streams with.
 */
const CIPHERS = ['TLS_AES_128_GCM_SHA256', ...tls.DEFAULT_CIPHERS.split(':').filter((c) => c !== 'TLS_AES_128_GCM_SHA256')].join(':');

export interface ListenerOptions {
  key: string;
  cert: string;
  /** CA that client certificates are checked against (the result is socket.authorized). */
  ca: string;
  port: number;
  host: string;
}

export interface Listener {
  server: http2.Http2SecureServer;
  port: number;
  /** Stops accepting and ends every connection and session at once (open watches included). */
  close(): Promise<void>;
}

export type RequestHandler = (req: IncomingMessage | http2.Http2ServerRequest, res: ServerResponse | http2.Http2ServerResponse) => void;

export async function listen(handler: RequestHandler, opts: ListenerOptions): Promise<Listener> {
  const server = http2.createSecureServer(
    {
      key: opts.key,
      cert: opts.cert,
      ca: opts.ca,
      // Client certificates are optional; the x509 authenticator reads the verification result.
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.2',
      ciphers: CIPHERS,
      honorCipherOrder: true,
      allowHTTP1: true,
      maxSessionMemory: MAX_SESSION_MEMORY_MB,
      settings: {
        maxConcurrentStreams: MAX_CONCURRENT_STREAMS,
        initialWindowSize: UPLOAD_BUFFER_PER_STREAM,
        maxFrameSize: UPLOAD_BUFFER_PER_STREAM,
        enablePush: false,
      },
    },
    handler as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void,
  );
  // HTTP/1.1 (allowHTTP1): keep-alive as before, and no request timeout — watches last up to an hour.
  const h1 = server as unknown as { keepAliveTimeout: number; headersTimeout: number; requestTimeout: number };
  h1.keepAliveTimeout = 65_000;
  h1.headersTimeout = 66_000;
  h1.requestTimeout = 0;
  // No inactivity timeout for HTTP/2 sessions either: a quiet watch is not an idle connection.
  server.setTimeout(0);

  const sockets = new Set<Socket>();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('session', (session: http2.ServerHttp2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    // The connection-level upload window grows with the streams it may carry, as kube-apiserver's does.
    session.setLocalWindowSize(UPLOAD_BUFFER_PER_STREAM * MAX_CONCURRENT_STREAMS);
    idleClose(session);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  return {
    server,
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sessions) s.destroy();
        for (const s of sockets) s.destroy();
      });
      return closing;
    },
  };
}

/** Closes a session (GOAWAY, then the connection) once it has had no open stream for HTTP2_IDLE_TIMEOUT_MS. */
function idleClose(session: http2.ServerHttp2Session): void {
  let open = 0;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(() => {
      if (open === 0 && !session.closed && !session.destroyed) session.close();
    }, HTTP2_IDLE_TIMEOUT_MS);
    timer.unref();
  };
  session.on('stream', (stream: http2.ServerHttp2Stream) => {
    open++;
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    stream.once('close', () => {
      if (--open === 0 && !session.closed && !session.destroyed) arm();
    });
  });
  session.once('close', () => clearTimeout(timer));
  arm();
}
