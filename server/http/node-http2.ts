// HTTP/2 through Node's node:http2 (nghttp2) instead of hearth's own stack (h2/), for
// --http2-implementation=node: the listener hands it the TLS sockets that negotiated h2, and the
// same request handler serves them. The listener's limits are kept where Node's module can apply
// them (h2/THREATS.md): the advertised settings (100 streams, 256 KiB stream window and frame,
// the 1 MiB header list), the connection window, a connection closed (GOAWAY) after 90 s without
// an open stream, a request body that does not arrive within the request timeout answered 504,
// and an answer not taken in within it reset. nghttp2 keeps its own flood guards (rapid reset,
// PING and SETTINGS floods, 32 SETTINGS entries). What only hearth's stack does: the header-block
// timeout, the 64 MiB connection output limit (Node refuses new streams past maxSessionMemory
// instead), and a slow watch reader's stream is ended, not reset. The connection limits, the TLS
// handshake timeout and the 429 for connections over the limits are the listener's, before ALPN.
import http2 from 'node:http2';
import type { TLSSocket } from 'node:tls';

const { NGHTTP2_NO_ERROR, NGHTTP2_CANCEL } = http2.constants;

export type NodeHttp2Handler = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void | PromiseLike<unknown>;

export interface NodeHttp2Options {
  maxConcurrentStreams: number;
  /** Per-stream receive window and largest frame read (SETTINGS_INITIAL_WINDOW_SIZE, SETTINGS_MAX_FRAME_SIZE). */
  streamWindow: number;
  /** SETTINGS_MAX_HEADER_LIST_SIZE, counted as RFC 9113 counts it (32 octets per field). */
  maxHeaderListSize: number;
  /** Unsent output a session may hold before nghttp2 refuses new streams on it. */
  sessionMemoryBytes: number;
  /** A connection with no open stream for this long is closed (GOAWAY NO_ERROR). */
  idleTimeoutMs: number;
  /** A request's body must be complete, and a complete answer taken in, within this long. */
  requestTimeoutMs: number;
  /** Answers a request whose body did not arrive in time (its body is failed first). */
  onRequestTimeout(req: http2.Http2ServerRequest, res: http2.Http2ServerResponse): void;
}

export interface NodeHttp2Server {
  /** Serves a TLS socket that negotiated h2. */
  serve(socket: TLSSocket): void;
  /** Ends every session at once (server shutdown). */
  destroyAll(): void;
}

export function nodeHttp2Server(handler: NodeHttp2Handler, opts: NodeHttp2Options): NodeHttp2Server {
  const server = http2.createServer({
    settings: {
      maxConcurrentStreams: opts.maxConcurrentStreams,
      initialWindowSize: opts.streamWindow,
      maxFrameSize: opts.streamWindow,
      enablePush: false,
      maxHeaderListSize: opts.maxHeaderListSize,
    },
    // Only the list's size bounds it, as in hearth's stack (each field counts at least 32 octets).
    maxHeaderListPairs: Math.floor(opts.maxHeaderListSize / 32),
    maxSessionMemory: Math.ceil(opts.sessionMemoryBytes / (1024 * 1024)),
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    // The connection window as hearth's stack raises it: what all streams together may hold.
    session.once('localSettings', () => session.setLocalWindowSize(opts.streamWindow * opts.maxConcurrentStreams));
    closeWhenIdle(session, opts.idleTimeoutMs);
  });
  server.on('request', (req, res) => {
    timeRequest(req, res, opts);
    return handler(req, res);
  });
  // A session's or stream's failure concerns only its client.
  server.on('sessionError', () => {});
  return {
    serve(socket) {
      socket.setNoDelay(true);
      server.emit('connection', socket);
    },
    destroyAll() {
      for (const s of sessions) s.destroy();
    },
  };
}

/** The session ends (GOAWAY NO_ERROR) after idleMs without an open stream. */
function closeWhenIdle(session: http2.ServerHttp2Session, idleMs: number): void {
  let open = 0;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(() => session.close(), idleMs);
    timer.unref();
  };
  session.on('stream', (stream) => {
    open++;
    clearTimeout(timer);
    stream.once('close', () => {
      if (--open === 0 && !session.closed) arm();
    });
  });
  session.once('close', () => clearTimeout(timer));
  arm();
}

/**
 * The request timeout, as hearth's stack keeps it: a body that has not arrived (no END_STREAM) in
 * time is failed and, when nothing was answered yet, answered (onRequestTimeout); the stream is
 * closed (RST_STREAM NO_ERROR once the answer is out). A complete answer the client has not taken
 * in by then is reset (CANCEL). A streaming answer under way (a watch) goes on. (The stream's own
 * events: the response's 'finish' comes only when the stream closes.)
 */
function timeRequest(req: http2.Http2ServerRequest, res: http2.Http2ServerResponse, opts: NodeHttp2Options): void {
  const stream = req.stream;
  if (!stream.endAfterHeaders) {
    const body = setTimeout(() => {
      if (stream.closed || stream.state.remoteClose) return;
      req.destroy(Object.assign(new Error('request timed out'), { code: 'ECONNRESET' }));
      if (!res.headersSent) opts.onRequestTimeout(req, res);
      else if (!stream.writableEnded) return;
      closeWhenSent(stream);
    }, opts.requestTimeoutMs);
    body.unref();
    stream.once('close', () => clearTimeout(body));
  }
  stream.once('finish', () => {
    if (stream.closed) return;
    const undelivered = setTimeout(() => stream.close(NGHTTP2_CANCEL), opts.requestTimeoutMs);
    undelivered.unref();
    stream.once('close', () => clearTimeout(undelivered));
  });
}

/** RST_STREAM NO_ERROR once the answer and its END_STREAM are out (nghttp2 sends a reset ahead of pending DATA). */
function closeWhenSent(stream: http2.ServerHttp2Stream): void {
  const close = () => setImmediate(() => stream.close(NGHTTP2_NO_ERROR));
  if (stream.writableFinished) close();
  else stream.once('finish', close);
}
