// The TLS listener: HTTP/2 (ALPN h2) with HTTP/1.1 as the fallback, as kube-apiserver serves.
// client-go multiplexes a process's requests and watches over HTTP/2 connections, so one TLS
// session carries many watch streams and the frames of many streams leave in few TLS writes.
// HTTP/2 is hearth's own (h2/connection.ts), or with --http2-implementation=node Node's
// node:http2 (node-http2.ts); HTTP/1.1 is Node's http server, handed the sockets that negotiated
// it. Node enforces its HTTP/1.1 timeouts only on servers that listen(), so the handshake, header
// and request timeouts are kept here (guard* functions), with the connection limits; the threat
// model is h2/THREATS.md.
import http from 'node:http';
import tls from 'node:tls';
import net from 'node:net';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { H2Connection, MAX_HEADER_LIST_SIZE } from './h2/connection.ts';
import type { H2Handler, H2Request, H2Response } from './h2/messages.ts';
import { nodeHttp2Server, type NodeHttp2Handler } from './node-http2.ts';
import { ApiError, tooManyRequests } from '../errors.ts';
import { ADMIN_GROUP, userFromPeerCertificate } from '../pki/certificates.ts';

/**
 * kube-apiserver's default (--http2-max-streams-per-connection unset) since the CVE-2023-44487
 * fix: it matches Go's client default, and a Go client opens another connection when one is full.
 */
export const MAX_CONCURRENT_STREAMS = 100;
/**
 * Which HTTP/2 serves connections that negotiated h2: hearth's own (h2/, the default: about 3×
 * lower watch delivery latency at 1,000 watchers) or Node's node:http2 (node-http2.ts).
 */
export type Http2Implementation = 'hearth' | 'node';
/** Per-stream upload window and largest frame read, as kube-apiserver sizes them (99% of objects fit). */
const UPLOAD_BUFFER_PER_STREAM = 256 * 1024;
/** An HTTP/2 connection with no open stream for this long is closed (Go's http2.Server IdleTimeout in kube-apiserver). */
const HTTP2_IDLE_TIMEOUT_MS = 90_000;
/**
 * Unsent bytes an HTTP/2 connection's socket may hold before its streams stop handing it data.
 * Past it, data waits on each stream, and a watch stream is reset on its own past 8 MiB.
 */
const SOCKET_BUFFER_LIMIT = 16 * 1024 * 1024;
/** Unsent response bytes an HTTP/2 connection may hold, all streams together, before its watches are reset. */
const CONNECTION_BUFFER_LIMIT = 4 * SOCKET_BUFFER_LIMIT;
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
  /** Defaults: DEFAULT_CONNECTION_LIMITS (tests set small timeouts and limits). */
  limits?: Partial<ConnectionLimits>;
  /** Default 'hearth'. */
  http2Implementation?: Http2Implementation;
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

/**
 * How long a client may take over each phase of a request, and how many connections it may hold:
 * against clients that hold connections open (slowloris) or open ever more of them.
 */
export interface ConnectionLimits {
  /**
   * The TLS handshake must end within this long of the TCP accept. Go's server allows the smallest
   * of its read timeouts, kube-apiserver's ReadHeaderTimeout of 32 s.
   */
  tlsHandshakeTimeoutMs: number;
  /**
   * An HTTP/1.1 request line and headers must arrive within this long (of the handshake, or of the
   * previous response plus the keep-alive wait), and an HTTP/2 header block begun must end within
   * it: kube-apiserver's ReadHeaderTimeout, 32 s.
   */
  headerTimeoutMs: number;
  /**
   * A request's body must be complete within this long of its headers, else it is answered 504
   * (no answer started) or its connection closed (HTTP/1.1, answer sent); over HTTP/2 a complete
   * response not taken in within this long is reset. kube-apiserver's --request-timeout, 60 s.
   */
  requestTimeoutMs: number;
  /** How long an HTTP/1.1 connection waits for its next request (Node's keep-alive timer, which restarts with each byte). */
  keepAliveTimeoutMs: number;
  /** Connections at once, in total and from one client address; past them a connection is refused (429). */
  maxConnections: number;
  maxConnectionsPerClient: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  tlsHandshakeTimeoutMs: 32_000,
  headerTimeoutMs: 32_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 65_000,
  maxConnections: defaultMaxConnections(),
  maxConnectionsPerClient: 1000,
};

export interface Listener {
  port: number;
  /** Stops accepting and ends every connection at once (open watches included). */
  close(): Promise<void>;
}

/** HTTP/1.1 request line and headers, in bytes (HTTP/2 has its own, counted per RFC 9113). */
const MAX_HEADER_BYTES = 1 << 20;

/** A request handler; the promise it may return settles when it is done with the request. */
export type RequestHandler = (req: IncomingMessage | H2Request | Http2ServerRequest, res: ServerResponse | H2Response | Http2ServerResponse) => void | PromiseLike<unknown>;

export async function listen(handler: RequestHandler, opts: ListenerOptions): Promise<Listener> {
  const limits: ConnectionLimits = { ...DEFAULT_CONNECTION_LIMITS, ...opts.limits };
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
    // (Node's own handshake timer restarts with every byte: guardHandshake's does not)
    handshakeTimeout: limits.tlsHandshakeTimeoutMs,
  });
  // HTTP/1.1: keep-alive, and no timeout of Node's on the request (watches last up to an hour):
  // guardHttp1Requests times the request's headers and body.
  // Headers up to 1 MiB, as kube-apiserver's Go server allows (MaxHeaderBytes 1 << 20; Node's
  // default is 16 KiB): large bearer tokens and impersonation headers fit; past it, 431.
  const h1 = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, handler as (req: IncomingMessage, res: ServerResponse) => void);
  h1.keepAliveTimeout = limits.keepAliveTimeoutMs;
  h1.requestTimeout = 0;
  h1.setTimeout(0);
  guardHttp1Requests(h1, limits);
  // Connections past the limits, told so.
  const refuser = http.createServer((req, res) => answerStatus(res, tooManyConnections(req.socket), { connection: 'close' }));

  const sockets = new Set<Socket>();
  const counts = new ConnectionCounts();
  const handshaking: Handshakes = new Map();
  const h2 = opts.http2Implementation === 'node' ? nodeHttp2(handler, limits) : hearthHttp2(handler, limits);
  server.on('connection', (socket: Socket) => {
    if (!admitConnection(socket, counts, handshaking, limits)) return;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('secureConnection', (socket: tls.TLSSocket) => {
    const refused = handshakeDone(socket, handshaking);
    if (socket.alpnProtocol !== 'h2') return serveHttp1(refused ? refuser : h1, socket, limits);
    h2.serve(socket, refused);
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
        h2.destroyAll();
        for (const s of sockets) s.destroy();
      });
      return closing;
    },
  };
}

// ───────────── HTTP/2 ─────────────

/** The HTTP/2 side of the listener: it serves the TLS sockets that negotiated h2. */
interface Http2Side {
  /** `refused`: the connection is over the limits (its first request is answered 429, then it goes away). */
  serve(socket: tls.TLSSocket, refused: boolean): void;
  /** Ends every HTTP/2 connection at once (open watches included). */
  destroyAll(): void;
}

/** hearth's own HTTP/2 (h2/). */
function hearthHttp2(handler: RequestHandler, limits: ConnectionLimits): Http2Side {
  const connections = new Set<H2Connection>();
  return {
    serve(socket, refused) {
      const c: H2Connection = new H2Connection(socket, refused ? refuseStreams((): H2Connection => c) : (handler as H2Handler), {
        maxConcurrentStreams: MAX_CONCURRENT_STREAMS,
        streamWindow: UPLOAD_BUFFER_PER_STREAM,
        idleTimeoutMs: HTTP2_IDLE_TIMEOUT_MS,
        socketBufferLimit: SOCKET_BUFFER_LIMIT,
        connectionBufferLimit: CONNECTION_BUFFER_LIMIT,
        headerTimeoutMs: limits.headerTimeoutMs,
        requestTimeoutMs: limits.requestTimeoutMs,
        onRequestTimeout: (_req, res) => answerStatus(res, requestTimedOut()),
      });
      connections.add(c);
      socket.once('close', () => connections.delete(c));
    },
    destroyAll() {
      for (const c of connections) c.destroy();
    },
  };
}

/** Node's node:http2 (--http2-implementation=node), given the same limits where it takes them. */
function nodeHttp2(handler: RequestHandler, limits: ConnectionLimits): Http2Side {
  const options = {
    maxConcurrentStreams: MAX_CONCURRENT_STREAMS,
    streamWindow: UPLOAD_BUFFER_PER_STREAM,
    maxHeaderListSize: MAX_HEADER_LIST_SIZE,
    sessionMemoryBytes: CONNECTION_BUFFER_LIMIT,
    idleTimeoutMs: HTTP2_IDLE_TIMEOUT_MS,
    requestTimeoutMs: limits.requestTimeoutMs,
    onRequestTimeout: (_req: Http2ServerRequest, res: Http2ServerResponse) => answerStatus(res, requestTimedOut()),
  };
  const serving = nodeHttp2Server(handler as NodeHttp2Handler, options);
  // Connections over the limits: their first request is answered 429, then GOAWAY once it is sent.
  const refusing = nodeHttp2Server((req, res) => {
    req.stream.session?.close();
    answerStatus(res, tooManyConnections(req.socket));
  }, options);
  return {
    serve: (socket, refused) => (refused ? refusing : serving).serve(socket),
    destroyAll() {
      serving.destroyAll();
      refusing.destroyAll();
    },
  };
}

// ───────────── limits and timeouts (see ConnectionLimits) ─────────────

/**
 * Connections in total by default: what the process's open-files limit leaves after a reserve for
 * the store, its threads and the process's own files (so that a connection flood never makes
 * opening a file fail), at most 10,000; 1,000 where the limit cannot be read.
 */
function defaultMaxConnections(): number {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (m) return Math.max(16, Math.min(10_000, Number(m[1]) - 256));
  } catch {
    // not Linux
  }
  return 1000;
}

/**
 * Connections past the limits that are still told why (TLS, then a 429): past these many more, a
 * connection is closed as soon as it is accepted.
 */
const REFUSALS_AT_ONCE = 64;

/** Open connections, in total and by client address. */
class ConnectionCounts {
  total = 0;
  private readonly byClient = new Map<string, number>();

  of(client: string): number {
    return this.byClient.get(client) ?? 0;
  }
  add(client: string): void {
    this.total++;
    this.byClient.set(client, this.of(client) + 1);
  }
  remove(client: string): void {
    this.total--;
    const n = this.of(client) - 1;
    if (n > 0) this.byClient.set(client, n);
    else this.byClient.delete(client);
  }
}

/** Connections in their TLS handshake, by address and port: its timer, and whether it is over the limits. */
type Handshakes = Map<string, { timer: NodeJS.Timeout; refused: boolean }>;
const peerKey = (socket: Socket) => `${socket.remoteAddress}|${socket.remotePort}`;

/**
 * A TCP connection just accepted: counted, and its handshake timed (guardHandshake). One over the
 * limits is marked to be refused once its handshake is done; one far past them is closed now.
 */
function admitConnection(socket: Socket, counts: ConnectionCounts, handshaking: Handshakes, limits: ConnectionLimits): boolean {
  const client = socket.remoteAddress ?? '';
  const total = counts.total;
  const fromClient = counts.of(client);
  if (total >= limits.maxConnections + REFUSALS_AT_ONCE || fromClient >= limits.maxConnectionsPerClient + REFUSALS_AT_ONCE) {
    socket.destroy();
    return false;
  }
  counts.add(client);
  socket.once('close', () => counts.remove(client));
  guardHandshake(socket, handshaking, limits.tlsHandshakeTimeoutMs, total >= limits.maxConnections || fromClient >= limits.maxConnectionsPerClient);
  return true;
}

/** The TLS handshake must end in time, however slowly its bytes come (Node's timer restarts with each). */
function guardHandshake(socket: Socket, handshaking: Handshakes, ms: number, refused: boolean): void {
  const key = peerKey(socket);
  const timer = setTimeout(() => socket.destroy(), ms);
  timer.unref();
  handshaking.set(key, { timer, refused });
  socket.once('close', () => {
    clearTimeout(timer);
    if (handshaking.get(key)?.timer === timer) handshaking.delete(key);
  });
}

/**
 * The handshake is done: its timer stops. Returns whether the connection is to be refused: over
 * the limits, unless its client certificate is a system:masters one (as kube-apiserver never
 * turns those away for load).
 */
function handshakeDone(socket: tls.TLSSocket, handshaking: Handshakes): boolean {
  const key = peerKey(socket);
  const pending = handshaking.get(key);
  if (!pending) return false;
  handshaking.delete(key);
  clearTimeout(pending.timer);
  if (!pending.refused) return false;
  return !(socket.authorized && userFromPeerCertificate(socket.getPeerCertificate())?.groups.includes(ADMIN_GROUP));
}

/** The 429 of a connection over the limits. */
function tooManyConnections(socket: Socket): ApiError {
  return tooManyRequests(`Too many connections from ${socket.remoteAddress}, please try again later.`, 1);
}

/** An HTTP/2 connection over the limits: its first request is answered 429, then it goes away (GOAWAY). */
function refuseStreams(connection: () => H2Connection): (req: H2Request, res: H2Response) => void {
  return (req, res) => {
    connection().shutdown();
    answerStatus(res, tooManyConnections(req.socket));
  };
}

/** kube-apiserver's answer to a request that is not done in time (its timeout filter's Status). */
function requestTimedOut(): ApiError {
  return new ApiError(504, 'Timeout', 'Timeout: request did not complete within the allotted timeout', {});
}

/** An error answered by the listener itself, as a JSON Status. */
function answerStatus(res: { writeHead(status: number, headers: Record<string, string | number>): unknown; end(body: Buffer): unknown }, err: ApiError, headers: Record<string, string> = {}): void {
  const body = Buffer.from(JSON.stringify(err.toStatus()));
  res.writeHead(err.code, { 'content-type': 'application/json', 'content-length': body.length, ...err.headers, ...headers });
  res.end(body);
}

/** The deadline of an HTTP/1.1 socket's current phase (its request's headers, or its body). */
const http1Deadlines = new WeakMap<Socket, NodeJS.Timeout>();

function armHttp1Deadline(socket: Socket, ms: number, onExpiry: () => void): void {
  clearTimeout(http1Deadlines.get(socket));
  const timer = setTimeout(onExpiry, ms);
  timer.unref();
  http1Deadlines.set(socket, timer);
}

/** Hands a socket that negotiated HTTP/1.1 to `server`; its first request's headers are timed. */
function serveHttp1(server: http.Server, socket: tls.TLSSocket, limits: ConnectionLimits): void {
  socket.setNoDelay(true);
  socket.once('close', () => clearTimeout(http1Deadlines.get(socket)));
  armHttp1Deadline(socket, limits.headerTimeoutMs, () => socket.destroy());
  server.emit('connection', socket);
}

/**
 * Times the requests of an HTTP/1.1 server: the body from its headers (requestTimeoutMs), then the
 * next request's headers from the end of the answer (the keep-alive wait plus headerTimeoutMs).
 * A header deadline passed closes the connection, as Go's server does.
 */
function guardHttp1Requests(server: http.Server, limits: ConnectionLimits): void {
  const nextRequest = (socket: Socket) => armHttp1Deadline(socket, limits.keepAliveTimeoutMs + limits.headerTimeoutMs, () => socket.destroy());
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    armHttp1Deadline(socket, limits.requestTimeoutMs, () => {
      if (req.complete) {
        if (res.writableFinished) nextRequest(socket);
      } else if (!res.headersSent) {
        // The handler waits for a body that does not come: answered, and the connection closed.
        answerStatus(res, requestTimedOut(), { connection: 'close' });
      } else if (res.writableFinished) socket.destroy();
      // (an answer under way, such as a watch, goes on)
    });
    res.once('finish', () => {
      if (req.complete) nextRequest(socket);
    });
  });
}
