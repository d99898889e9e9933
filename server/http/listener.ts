// The TLS listener: HTTP/2 (ALPN h2) with HTTP/1.1 as the fallback, as kube-apiserver serves.
// client-go multiplexes a process's requests and watches over HTTP/2 connections, so one TLS
// session carries many watch streams and the frames of many streams leave in few TLS writes.
// HTTP/2 is hearth's own (h2/connection.ts); HTTP/1.1 is Node's http server.
import http from 'node:http';
import tls from 'node:tls';
import net from 'node:net';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { H2Connection } from './h2/connection.ts';
import type { H2Request, H2Response } from './h2/messages.ts';

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
 * Unsent bytes an HTTP/2 connection's socket may hold before its streams stop handing it data.
 * Past it, data waits on each stream, and a watch stream is reset on its own past 8 MiB.
 */
const SOCKET_BUFFER_LIMIT = 16 * 1024 * 1024;
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
  /** The port bindPort took: the TLS server serves its connections. */
  bound: BoundPort;
}

/**
 * A listening socket whose connections wait, unread, until listen() serves them. The server
 * binds first, so a taken port fails before the data directory is created or touched, and
 * serves once its certificates exist (a client that connects meanwhile is served then).
 */
export interface BoundPort {
  port: number;
  /** Hands each connection (those that came before it too) to serve. */
  attach(serve: (socket: Socket) => void): void;
  close(): Promise<void>;
}

export async function bindPort(port: number, host: string): Promise<BoundPort> {
  const early: Socket[] = [];
  let serve: (socket: Socket) => void = (socket) => early.push(socket);
  // pauseOnConnect: nothing is read until the TLS server takes the socket over.
  const server = net.createServer({ pauseOnConnect: true }, (socket) => serve(socket));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    attach(s) {
      serve = s;
      for (const socket of early.splice(0)) s(socket);
    },
    close() {
      for (const socket of early.splice(0)) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface Listener {
  port: number;
  /** Stops accepting and ends every connection at once (open watches included). */
  close(): Promise<void>;
}

/** HTTP/1.1 request line and headers, in bytes (HTTP/2 has its own, counted per RFC 9113). */
const MAX_HEADER_BYTES = 1 << 20;

export type RequestHandler = (req: IncomingMessage | H2Request, res: ServerResponse | H2Response) => void;

export async function listen(handler: RequestHandler, opts: ListenerOptions): Promise<Listener> {
  const server = tls.createServer({
    key: opts.key,
    cert: opts.cert,
    ca: opts.ca,
    // Client certificates are optional; the x509 authenticator reads the verification result.
    requestCert: true,
    rejectUnauthorized: false,
    minVersion: 'TLSv1.2',
    ciphers: CIPHERS,
    honorCipherOrder: true,
    ALPNProtocols: ['h2', 'http/1.1'],
  });
  // HTTP/1.1: keep-alive, and no request timeout — watches last up to an hour.
  // Headers up to 1 MiB, as kube-apiserver's Go server allows (MaxHeaderBytes 1 << 20; Node's
  // default is 16 KiB): large bearer tokens and impersonation headers fit; past it, 431.
  const h1 = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, handler as (req: IncomingMessage, res: ServerResponse) => void);
  h1.keepAliveTimeout = 65_000;
  h1.headersTimeout = 66_000;
  h1.requestTimeout = 0;
  h1.setTimeout(0);

  const sockets = new Set<Socket>();
  const connections = new Set<H2Connection>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('secureConnection', (socket: tls.TLSSocket) => {
    if (socket.alpnProtocol !== 'h2') {
      socket.setNoDelay(true);
      h1.emit('connection', socket);
      return;
    }
    const c = new H2Connection(socket, handler as (req: H2Request, res: H2Response) => void, {
      maxConcurrentStreams: MAX_CONCURRENT_STREAMS,
      streamWindow: UPLOAD_BUFFER_PER_STREAM,
      idleTimeoutMs: HTTP2_IDLE_TIMEOUT_MS,
      socketBufferLimit: SOCKET_BUFFER_LIMIT,
    });
    connections.add(c);
    socket.once('close', () => connections.delete(c));
  });
  // A failed handshake concerns only its client.
  server.on('tlsClientError', () => {});

  opts.bound.attach((socket) => server.emit('connection', socket));
  const port = opts.bound.port;

  let closing: Promise<void> | undefined;
  return {
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        void opts.bound.close().then(resolve);
        for (const c of connections) c.destroy();
        for (const s of sockets) s.destroy();
      });
      return closing;
    },
  };
}
