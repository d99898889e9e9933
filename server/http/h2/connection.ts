// hearth's own HTTP/2 server connection (RFC 9113) over a TLS socket that negotiated h2.
//
// Why not node:http2: a watch fan-out writes one event batch to every watch stream, and through
// node:http2 each of those writes is a Writable write with its own native request, callback and
// garbage, so 1,000 watchers made the fan-out the main thread's largest cost. Here a stream write
// appends a DATA frame to its connection's output, and each connection leaves in one TLS write
// per turn of the event loop (or when the fan-out flushes it).
//
// Requests reach the handler as the (req, res) pair koa takes (messages.ts). Flow control is kept
// both ways: what the peer may send us is returned as the handler reads it, and what we send stays
// within the peer's stream and connection windows; data past the windows waits on the stream (its
// writableLength), which is how a slow watch reader is noticed.
import type { TLSSocket } from 'node:tls';
import { encodeInteger, HpackDecoder, HpackEncoder, HpackError } from './hpack.ts';
import {
  DEFAULT_MAX_FRAME_SIZE,
  DEFAULT_WINDOW,
  ErrorCode,
  Flag,
  FRAME_HEADER_LENGTH,
  FrameReader,
  FrameTooLargeError,
  FrameType,
  goAwayPayload,
  MAX_FRAME_SIZE_LIMIT,
  MAX_WINDOW,
  PREFACE,
  rstStreamPayload,
  Setting,
  settingsPayload,
  unpadded,
  windowIncrement,
  windowUpdatePayload,
  writeFrameHeader,
} from './frames.ts';
import { H2Request, H2Response, type H2Handler } from './messages.ts';
import { connectionSpecific, contentLength, requestHeaders } from './fields.ts';
import { fallbackLogger } from '../../logging/logger.ts';

export interface H2Options {
  /** SETTINGS_MAX_CONCURRENT_STREAMS we advertise and enforce. */
  maxConcurrentStreams: number;
  /** Our per-stream receive window (SETTINGS_INITIAL_WINDOW_SIZE) and largest frame we read. */
  streamWindow: number;
  /** A connection with no open stream for this long is closed with GOAWAY. */
  idleTimeoutMs: number;
  /** Bytes the TLS socket may hold unsent before streams stop handing it data. */
  socketBufferLimit: number;
  /**
   * Response bytes a connection may hold unsent (its socket's and its streams' together) before a
   * live streaming response on it (a watch) counts as read too slowly (H2Response.connectionOverBufferLimit).
   */
  connectionBufferLimit: number;
  /** A header block started (HEADERS without END_HEADERS) must end within this long, or the connection ends. */
  headerTimeoutMs: number;
  /**
   * A request's body must be complete within this long of its headers, and a complete response
   * (end() called) delivered within this long of its end; see onRequestTimeout.
   */
  requestTimeoutMs: number;
  /** Answers a request whose body did not arrive in time, when no response has started (the body is aborted first). */
  onRequestTimeout(req: H2Request, res: H2Response): void;
}

/**
 * A request's headers have two limits:
 *
 * - MAX_HEADER_LIST_SIZE bounds the decoded header list, counted as RFC 9113 §6.5.2 counts
 *   SETTINGS_MAX_HEADER_LIST_SIZE (name + value + 32 octets per field), and is advertised with that
 *   setting. It is the value Go's http2 server advertises and enforces for kube-apiserver
 *   (http.DefaultMaxHeaderBytes, 1 MiB, plus 32 octets for each of 10 typical fields). A request over
 *   it is answered 431 (Request Header Fields Too Large) without reaching the handler, as Go answers
 *   it; its block is still decoded in full, so the HPACK dynamic table stays in step with the
 *   client's, and the connection goes on.
 * - MAX_HEADER_BLOCK bounds the raw HEADERS + CONTINUATION bytes gathered before they are decoded,
 *   as a bound on memory: the same advertised limit, counted on the encoded bytes as they arrive
 *   (an encoder writes a field in fewer bytes than the name, value and 32 octets it is charged in
 *   the list, so a block past it holds a list past it too). Past it the connection ends with GOAWAY
 *   ENHANCE_YOUR_CALM, as Go's server ends it (PROTOCOL_ERROR there) once a fragment is more than
 *   twice what the list may still take. A block is decoded whole, but the fields past the list
 *   limit are not kept: one-byte indexed fields naming a 4 KB table entry over and over (a 1 MiB
 *   block of them decodes to ~4 GB of header list) cost decoding time, not memory.
 */
export const MAX_HEADER_LIST_SIZE = (1 << 20) + 10 * 32;
const MAX_HEADER_BLOCK = MAX_HEADER_LIST_SIZE;
/**
 * CONTINUATION frames one header block may take, empty ones included (CVE-2024-27316: each frame
 * costs work and, kept, memory, while adding nothing to the block's size). Enough for a block at
 * MAX_HEADER_BLOCK sent in frames of the smallest size a peer may use (16 KiB): nghttp2 (Node's
 * http2) allows 8, with a 64 KiB header list; Go decodes each fragment as it comes and keeps none.
 */
const MAX_CONTINUATION_FRAMES = Math.ceil(MAX_HEADER_BLOCK / DEFAULT_MAX_FRAME_SIZE);
/**
 * Control frames (SETTINGS and PING ACKs, RST_STREAM, WINDOW_UPDATE, GOAWAY) that may wait behind
 * a socket the peer does not read before the connection is closed: Go's maxQueuedControlFrames;
 * and of them, PING and SETTINGS ACKs (the ones a peer has us send at will): nghttp2's 1000.
 */
const MAX_QUEUED_CONTROL_FRAMES = 10_000;
const MAX_QUEUED_ACKS = 1000;
/**
 * Entries one SETTINGS frame may hold (nghttp2's limit; Go's is 100): a frame of our largest size
 * would otherwise hold 43,690, each walking every stream. Repeated entries are refused as Go does.
 */
const MAX_SETTINGS_ENTRIES = 32;
/**
 * Streams the client resets while their handler still runs (or waits to run), or has us reset
 * with a stream error, are counted in a token bucket: RESET_BURST at once, then
 * RESET_RATE_PER_SECOND; past it, GOAWAY ENHANCE_YOUR_CALM (CVE-2023-44487, CVE-2025-8671).
 * nghttp2's defaults (Node's http2).
 */
const RESET_BURST = 1000;
const RESET_RATE_PER_SECOND = 33;
/**
 * Handlers a connection runs at once, as Go's http2 server bounds them since CVE-2023-44487: a
 * stream reset by the client frees its stream slot but not its handler's; new streams wait for a
 * handler slot, and more waiting than this many times MAX_CONCURRENT_STREAMS ends the connection.
 */
const WAITING_HANDLERS_PER_STREAM_SLOT = 4;
/** How many streams reset by this side are remembered, to ignore the frames already on their way. */
const RESET_STREAMS_REMEMBERED = 1024;
/** The body of a 431 answer (Go's http2 server sends an HTML line too). */
const HEADER_LIST_TOO_LARGE_BODY = Buffer.from('<h1>HTTP Error 431</h1><p>Request Header Fields Too Large</p>');
/** Response bytes a stream holds before write() asks the writer to wait ('drain'). */
const STREAM_HIGH_WATER = 64 * 1024;
/** Frame headers (and small payloads) of one turn are written into an arena of this size to start with. */
const ARENA_SIZE = 16 * 1024;
/** Payloads up to this size are copied next to their frame header rather than written as their own piece. */
const INLINE_PAYLOAD = 512;

const enum StreamState {
  /** Request still arriving (no END_STREAM from the peer yet). */
  Open,
  /** Request complete; the response is still being sent. */
  HalfClosedRemote,
  Closed,
}

export class H2Stream {
  state = StreamState.Open;
  /** What we may still send on this stream (the peer's window for it). */
  sendWindow: number;
  /** What the peer may still send on this stream. */
  recvWindow: number;
  /** Received bytes the handler has read but we have not returned with WINDOW_UPDATE. */
  recvConsumed = 0;
  /** The request's content-length, or -1 without one: its DATA must add up to it (RFC 9113 §8.1.1). */
  declaredLength = -1;
  /** Request body bytes received so far (DATA payloads without their padding). */
  receivedLength = 0;
  /** Response bytes waiting for window (or for the socket to drain). */
  pending: Buffer[] = [];
  pendingBytes = 0;
  /** end() was called: END_STREAM follows the pending bytes. */
  endPending = false;
  /** END_STREAM is sent. */
  localEnded = false;
  /** Someone saw write() return false and waits for 'drain'. */
  needDrain = false;
  headersSent = false;
  /** The handler has returned (and its promise settled): a reset now costs nothing more. */
  handlerDone = false;
  /** The request timeout (see H2Options.requestTimeoutMs), while one is armed. */
  timer: NodeJS.Timeout | undefined;
  req!: H2Request;
  res!: H2Response;

  constructor(
    readonly conn: H2Connection,
    readonly id: number,
    sendWindow: number,
    recvWindow: number,
  ) {
    this.sendWindow = sendWindow;
    this.recvWindow = recvWindow;
  }
}

/** Header blocks are gathered across CONTINUATION frames before they are decoded. */
interface OpenHeaderBlock {
  streamId: number;
  endStream: boolean;
  /** The non-empty fragments (empty CONTINUATION frames are counted, not kept). */
  chunks: Buffer[];
  size: number;
  continuations: number;
}

class ConnectionError extends Error {
  constructor(readonly code: ErrorCode, message: string) {
    super(message);
  }
}

class StreamError extends Error {
  constructor(readonly streamId: number, readonly code: ErrorCode, message: string) {
    super(message);
  }
}

const EMPTY = Buffer.alloc(0);

/** Every live connection, so a fan-out can send what it wrote at once (flushAll). */
const dirty = new Set<H2Connection>();
let tickScheduled = false;

/** Sends every connection's queued frames now (a watch fan-out calls this to pay its sends itself). */
export function flushAll(): void {
  for (const c of dirty) c.flush();
  dirty.clear();
}

function flushTick(): void {
  tickScheduled = false;
  flushAll();
}

export class H2Connection {
  private readonly decoder = new HpackDecoder();
  private readonly encoder = new HpackEncoder();
  private readonly streams = new Map<number, H2Stream>();
  /** The client's bytes split into frames; frames longer than our SETTINGS_MAX_FRAME_SIZE end the connection. */
  private readonly reader: FrameReader;
  private prefaceSeen = false;
  /** The start of the client's preface, while it is incomplete. */
  private prefaceStart: Buffer = EMPTY;
  private headerBlock: OpenHeaderBlock | undefined;
  private lastStreamId = 0;
  /**
   * Streams this side reset, newest last: frames the peer sent before it saw the RST_STREAM are
   * ignored (RFC 9113 §5.1), not answered with STREAM_CLOSED or, for trailers, a connection
   * error. Bounded: a peer has at most MAX_CONCURRENT_STREAMS open, so only recent ones matter.
   */
  private readonly resetByUs = new Set<number>();
  private open = 0;
  /** Peer settings that shape what we send. */
  private peerInitialWindow = DEFAULT_WINDOW;
  private peerMaxFrameSize = DEFAULT_MAX_FRAME_SIZE;
  /** A table size the peer lowered its decoder to: announced at the start of our next header block. */
  private tableSizeUpdate: number | undefined;
  private connSendWindow = DEFAULT_WINDOW;
  private connRecvWindow: number;
  private connRecvConsumed = 0;
  private readonly connRecvTarget: number;
  /** Streams with data waiting for connection window or the socket. */
  private readonly waiting = new Set<H2Stream>();
  private socketBlocked = false;
  /** Pairs of (arena offset, payload): each payload goes out after the arena bytes before it. */
  private out: Array<number | Buffer> = [];
  private outBytes = 0;
  private arena = Buffer.allocUnsafe(ARENA_SIZE);
  private arenaPos = 0;
  /** The peer sent GOAWAY: the connection ends when its last stream does. */
  private goingAway = false;
  /** Our GOAWAY is sent (or the socket is gone): nothing more is read or written. */
  private closed = false;
  private idleTimer: NodeJS.Timeout | undefined;
  /** Ends a header block that does not complete in time (H2Options.headerTimeoutMs). */
  private headerTimer: NodeJS.Timeout | undefined;
  /** Response bytes waiting on streams (the sum of their pendingBytes). */
  private pendingBytes = 0;
  /** Control frames, and ACKs, queued since the socket last had nothing unsent (MAX_QUEUED_CONTROL_FRAMES, MAX_QUEUED_ACKS). */
  private queuedControlFrames = 0;
  private queuedAcks = 0;
  /** Handlers running (their promise not settled), and streams waiting for one to finish. */
  private runningHandlers = 0;
  private readonly waitingHandlers: H2Stream[] = [];
  /** Tokens of the early-reset bucket, and when it was last filled (performance.now()). */
  private resetTokens = RESET_BURST;
  private resetFilledAt = performance.now();

  constructor(
    readonly socket: TLSSocket,
    private readonly handler: H2Handler,
    private readonly opts: H2Options,
  ) {
    this.reader = new FrameReader((type, flags, id, buf, start, end) => this.onFrameRead(type, flags, id, buf, start, end), { maxPayload: opts.streamWindow, keepBuffer: false });
    this.connRecvTarget = opts.streamWindow * opts.maxConcurrentStreams;
    this.connRecvWindow = this.connRecvTarget;
    socket.setNoDelay(true);
    socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('close', () => this.onSocketClose());
    socket.on('error', () => socket.destroy());
    socket.on('drain', () => this.onSocketDrain());
    // Our preface: SETTINGS, then the connection window raised to what all streams may hold.
    const settings = settingsPayload([
      [Setting.MAX_CONCURRENT_STREAMS, opts.maxConcurrentStreams],
      [Setting.INITIAL_WINDOW_SIZE, opts.streamWindow],
      [Setting.MAX_FRAME_SIZE, opts.streamWindow],
      [Setting.ENABLE_PUSH, 0],
      [Setting.MAX_HEADER_LIST_SIZE, MAX_HEADER_LIST_SIZE],
    ]);
    this.frame(FrameType.SETTINGS, 0, 0, settings);
    this.windowUpdate(0, this.connRecvTarget - DEFAULT_WINDOW);
    this.armIdle();
  }

  // ───────────── output ─────────────

  /**
   * Queues one frame; it leaves with the connection's next flush. Frame headers and small
   * payloads are written into the arena; larger payloads (DATA) are kept by reference, and
   * `out` records where they fall between arena runs.
   */
  private frame(type: FrameType, flags: number, streamId: number, payload?: Buffer): void {
    if (this.closed) return;
    if (type !== FrameType.DATA && type !== FrameType.HEADERS && type !== FrameType.CONTINUATION && this.controlFrameQueued(type, flags)) return;
    const length = payload ? payload.length : 0;
    const inline = length <= INLINE_PAYLOAD;
    const need = FRAME_HEADER_LENGTH + (inline ? length : 0);
    if (this.arenaPos + need > this.arena.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.arena.length * 2, this.arenaPos + need));
      this.arena.copy(grown, 0, 0, this.arenaPos);
      this.arena = grown;
    }
    const a = this.arena;
    let p = this.arenaPos;
    writeFrameHeader(a, p, length, type, flags, streamId);
    p += FRAME_HEADER_LENGTH;
    if (length) {
      if (inline) {
        payload!.copy(a, p);
        p += length;
      } else this.out.push(p, payload!);
    }
    this.arenaPos = p;
    this.outBytes += FRAME_HEADER_LENGTH + length;
    if (!dirty.has(this)) {
      dirty.add(this);
      if (!tickScheduled) {
        tickScheduled = true;
        process.nextTick(flushTick);
      }
    }
  }

  /**
   * Writes the queued frames to the socket as one writev: TLS copies the pieces into one native
   * buffer and encrypts them in one go. Nothing is gathered into a Buffer here: measured with
   * 1,000 watch streams, gathering (even into reused buffers) cost more CPU than the writev's
   * pieces, and fresh Buffers are external memory whose churn has V8 collect old space often.
   */
  flush(): void {
    if (this.outBytes === 0 || this.closed) return;
    // The arena is reused; what the socket may still hold is a copy.
    const heads = Buffer.allocUnsafe(this.arenaPos);
    this.arena.copy(heads, 0, 0, this.arenaPos);
    const out = this.out;
    const socket = this.socket;
    this.out = [];
    this.outBytes = 0;
    this.arenaPos = 0;
    if (out.length === 0) socket.write(heads);
    else {
      socket.cork();
      let run = 0;
      for (let i = 0; i < out.length; i += 2) {
        const at = out[i] as number;
        if (at > run) socket.write(heads.subarray(run, at));
        run = at;
        socket.write(out[i + 1] as Buffer);
      }
      if (heads.length > run) socket.write(heads.subarray(run));
      socket.uncork();
    }
    if (!this.socketBlocked && socket.writableLength > this.opts.socketBufferLimit) this.socketBlocked = true;
  }

  /**
   * Counts a control frame against MAX_QUEUED_CONTROL_FRAMES; false once the connection is closed
   * for it (a peer that has us answer PINGs and SETTINGS it never reads, as Go closes it).
   */
  private controlFrameQueued(type: FrameType, flags: number): boolean {
    if (this.socket.writableLength === 0) this.queuedControlFrames = this.queuedAcks = 0;
    const ack = (type === FrameType.PING || type === FrameType.SETTINGS) && (flags & Flag.ACK) !== 0;
    if (++this.queuedControlFrames <= MAX_QUEUED_CONTROL_FRAMES && (!ack || ++this.queuedAcks <= MAX_QUEUED_ACKS)) return false;
    this.destroy();
    return true;
  }

  private windowUpdate(streamId: number, increment: number): void {
    this.frame(FrameType.WINDOW_UPDATE, 0, streamId, windowUpdatePayload(increment));
  }

  private rst(streamId: number, code: ErrorCode): void {
    this.resetByUs.add(streamId);
    if (this.resetByUs.size > RESET_STREAMS_REMEMBERED) this.resetByUs.delete(this.resetByUs.values().next().value as number);
    this.frame(FrameType.RST_STREAM, 0, streamId, rstStreamPayload(code));
  }

  /** Ends the connection: GOAWAY with `code`, then the socket once it is sent. */
  private goAway(code: ErrorCode, debug = ''): void {
    if (this.closed) return;
    this.frame(FrameType.GOAWAY, 0, 0, goAwayPayload(this.lastStreamId, code, debug));
    this.flush();
    this.closed = true;
    dirty.delete(this);
    clearTimeout(this.idleTimer);
    clearTimeout(this.headerTimer);
    this.closeAllStreams();
    this.socket.end();
    // A peer that never closes its side is not waited for.
    setTimeout(() => this.socket.destroy(), 1000).unref();
  }

  /** Sends response headers: a HEADERS frame, with CONTINUATION frames past the peer's frame size. */
  sendHeaders(s: H2Stream, status: number, headers: Array<[string, string]>, endStream: boolean): void {
    if (s.state === StreamState.Closed) return;
    s.headersSent = true;
    const parts = [this.encoder.status(status), this.encoder.encode(headers)];
    if (this.tableSizeUpdate !== undefined) {
      parts.unshift(encodeInteger(this.tableSizeUpdate, 5, 0x20)); // dynamic table size update (RFC 7541 §6.3)
      this.tableSizeUpdate = undefined;
    }
    const block = Buffer.concat(parts);
    const max = this.peerMaxFrameSize;
    const endFlag = endStream ? Flag.END_STREAM : 0;
    if (block.length <= max) this.frame(FrameType.HEADERS, endFlag | Flag.END_HEADERS, s.id, block);
    else {
      this.frame(FrameType.HEADERS, endFlag, s.id, block.subarray(0, max));
      for (let off = max; off < block.length; off += max) {
        const end = Math.min(off + max, block.length);
        this.frame(FrameType.CONTINUATION, end === block.length ? Flag.END_HEADERS : 0, s.id, block.subarray(off, end));
      }
    }
    if (endStream) this.localEnd(s);
  }

  /** Response body bytes; `end` ends the stream after them. Returns false past the high-water mark. */
  sendData(s: H2Stream, data: Buffer | undefined, end: boolean): boolean {
    if (s.state === StreamState.Closed || s.localEnded || s.endPending) return false;
    if (data && data.length) {
      s.pending.push(data);
      s.pendingBytes += data.length;
      this.pendingBytes += data.length;
    }
    if (end) s.endPending = true;
    this.drainStream(s);
    // A complete response the peer does not take in: given up after the request timeout.
    if (s.endPending && s.timer === undefined && (s.state as StreamState) !== StreamState.Closed) this.armStreamTimer(s);
    if (s.pendingBytes >= STREAM_HIGH_WATER) {
      s.needDrain = true;
      return false;
    }
    return true;
  }

  /** Frames as much of a stream's pending data as the windows and the socket allow. */
  private drainStream(s: H2Stream): void {
    while (s.pendingBytes > 0) {
      if (this.socketBlocked) return this.wait(s);
      const room = Math.min(s.sendWindow, this.connSendWindow, this.peerMaxFrameSize);
      if (room <= 0) {
        // Blocked on the stream window: a WINDOW_UPDATE for the stream resumes it.
        if (this.connSendWindow <= 0) this.wait(s);
        return;
      }
      let chunk = s.pending[0];
      if (chunk.length > room) {
        s.pending[0] = chunk.subarray(room);
        chunk = chunk.subarray(0, room);
      } else s.pending.shift();
      s.pendingBytes -= chunk.length;
      this.pendingBytes -= chunk.length;
      s.sendWindow -= chunk.length;
      this.connSendWindow -= chunk.length;
      const last = s.pendingBytes === 0 && s.endPending;
      this.frame(FrameType.DATA, last ? Flag.END_STREAM : 0, s.id, chunk);
      if (last) return this.localEnd(s);
    }
    if (s.endPending && !s.localEnded) {
      this.frame(FrameType.DATA, Flag.END_STREAM, s.id);
      return this.localEnd(s);
    }
    if (s.needDrain) {
      s.needDrain = false;
      s.res.emit('drain');
    }
  }

  private wait(s: H2Stream): void {
    this.waiting.add(s);
  }

  /** Gives waiting streams their turn, in the order they started waiting. */
  private resumeWaiting(): void {
    for (const s of this.waiting) {
      if (this.socketBlocked || this.connSendWindow <= 0) return;
      this.waiting.delete(s);
      this.drainStream(s);
    }
  }

  private onSocketDrain(): void {
    this.socketBlocked = false;
    this.resumeWaiting();
  }

  /** END_STREAM is queued: the stream closes once the request is complete too. */
  private localEnd(s: H2Stream): void {
    s.localEnded = true;
    s.endPending = false;
    s.res.finishedSending();
    if (s.state === StreamState.HalfClosedRemote) this.closeStream(s);
    else if (s.state === StreamState.Open) {
      // The response is complete before the request: the rest of the request is not wanted
      // (RFC 9113 §8.1: RST_STREAM NO_ERROR after a complete response).
      this.rst(s.id, ErrorCode.NO_ERROR);
      this.closeStream(s);
    }
  }

  /** Resets a stream from our side (a watch whose reader fell behind; a handler's failure). */
  reset(s: H2Stream, code: ErrorCode): void {
    if (s.state === StreamState.Closed) return;
    this.rst(s.id, code);
    this.closeStream(s);
  }

  private closeStream(s: H2Stream): void {
    if (s.state === StreamState.Closed) return;
    s.state = StreamState.Closed;
    this.streams.delete(s.id);
    this.waiting.delete(s);
    clearTimeout(s.timer);
    this.pendingBytes -= s.pendingBytes;
    s.pending = [];
    s.pendingBytes = 0;
    this.open--;
    // Body bytes no one read still count against the connection window: they are returned.
    const unread = s.req.discard();
    if (unread) this.consumedConnectionOnly(unread);
    s.req.closed();
    s.res.closed();
    if (this.open === 0 && !this.closed) {
      if (this.goingAway) this.goAway(ErrorCode.NO_ERROR);
      else this.armIdle();
    }
  }

  private closeAllStreams(): void {
    for (const s of [...this.streams.values()]) {
      if (s.state !== StreamState.Closed && !s.req.readableEnded) s.req.abort();
      this.closeStream(s);
    }
  }

  /** The request timeout of a stream whose body is still to come, or whose complete response is not sent yet. */
  private armStreamTimer(s: H2Stream): void {
    s.timer = setTimeout(() => this.streamTimedOut(s), this.opts.requestTimeoutMs);
    s.timer.unref();
  }

  /**
   * kube-apiserver times out requests that are not long-running after 60 s: a request whose body
   * has not arrived is answered (504 Timeout) when no response has started, and a response that
   * could not be delivered is reset. A streaming response under way (a watch) goes on.
   */
  private streamTimedOut(s: H2Stream): void {
    s.timer = undefined;
    if (s.state === StreamState.Closed || this.closed) return;
    if (s.state === StreamState.Open && !s.headersSent) {
      s.req.abort('request timed out');
      this.opts.onRequestTimeout(s.req, s.res);
    } else if (s.endPending) this.reset(s, ErrorCode.CANCEL);
  }

  private armIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.open === 0) this.goAway(ErrorCode.NO_ERROR);
    }, this.opts.idleTimeoutMs);
    this.idleTimer.unref();
  }

  /** The request body was read this far: its window is given back to the peer. */
  consumed(s: H2Stream, n: number): void {
    this.consumedConnectionOnly(n);
    if (s.state !== StreamState.Open) return;
    s.recvConsumed += n;
    if (s.recvConsumed >= this.opts.streamWindow / 2) {
      this.windowUpdate(s.id, s.recvConsumed);
      s.recvWindow += s.recvConsumed;
      s.recvConsumed = 0;
    }
  }

  /** Whether the connection holds more unsent response bytes (streams' and socket's) than H2Options.connectionBufferLimit. */
  get overBufferLimit(): boolean {
    return this.pendingBytes + this.socket.writableLength > this.opts.connectionBufferLimit;
  }

  /** Takes no new stream (GOAWAY NO_ERROR once the open ones end, then the socket closes). */
  shutdown(): void {
    if (this.closed) return;
    this.goingAway = true;
    if (this.open === 0) this.goAway(ErrorCode.NO_ERROR);
  }

  /** Closes the connection at once (server shutdown). */
  destroy(): void {
    this.onSocketClose();
    this.socket.destroy();
  }

  private onSocketClose(): void {
    this.closed = true;
    dirty.delete(this);
    clearTimeout(this.idleTimer);
    clearTimeout(this.headerTimer);
    this.closeAllStreams();
  }

  // ───────────── input ─────────────

  private onData(d: Buffer): void {
    if (this.closed) return;
    try {
      if (!this.prefaceSeen) {
        const rest = this.readPreface(d);
        if (rest === undefined) return;
        d = rest;
      }
      this.reader.push(d);
    } catch (e) {
      if (e instanceof ConnectionError) return this.goAway(e.code, e.message);
      if (e instanceof FrameTooLargeError) return this.goAway(ErrorCode.FRAME_SIZE_ERROR, 'frame too large');
      if (e instanceof HpackError) return this.goAway(ErrorCode.COMPRESSION_ERROR, e.message);
      throw e;
    }
  }

  /** The client's connection preface, however it is split: the bytes after it, or undefined until it is whole. */
  private readPreface(d: Buffer): Buffer | undefined {
    const buf = this.prefaceStart.length ? Buffer.concat([this.prefaceStart, d]) : d;
    const n = Math.min(buf.length, PREFACE.length);
    if (buf.compare(PREFACE, 0, n, 0, n) !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'invalid connection preface');
    if (buf.length < PREFACE.length) {
      this.prefaceStart = buf;
      return undefined;
    }
    this.prefaceSeen = true;
    this.prefaceStart = EMPTY;
    return buf.subarray(PREFACE.length);
  }

  /** One frame from the reader: its payload is buf[start, end), valid during the call. */
  private onFrameRead(type: number, flags: number, id: number, buf: Buffer, start: number, end: number): void {
    // (after our GOAWAY, the rest of what was read is dropped)
    if (this.closed) return;
    try {
      this.onFrame(type, flags, id, buf.subarray(start, end));
    } catch (e) {
      if (!(e instanceof StreamError)) throw e;
      const s = this.streams.get(e.streamId);
      if (s) {
        // A reset the client provoked counts as one it sent (CVE-2025-8671, "MadeYouReset").
        if (!s.handlerDone) this.countEarlyReset();
        // The request will not complete: a handler reading its body gets an error, not an end.
        if (!s.req.readableEnded) s.req.abort(e.message);
        this.reset(s, e.code);
      } else this.rst(e.streamId, e.code);
    }
  }

  private onFrame(type: number, flags: number, id: number, payload: Buffer): void {
    if (this.headerBlock && type !== FrameType.CONTINUATION) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'expected CONTINUATION');
    switch (type) {
      case FrameType.DATA:
        return this.onDataFrame(flags, id, payload);
      case FrameType.HEADERS:
        return this.onHeaders(flags, id, payload);
      case FrameType.CONTINUATION:
        return this.onContinuation(flags, id, payload);
      case FrameType.PRIORITY:
        if (id === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PRIORITY on stream 0');
        if (payload.length !== 5) throw new StreamError(id, ErrorCode.FRAME_SIZE_ERROR, 'PRIORITY size');
        return;
      case FrameType.RST_STREAM:
        return this.onRst(id, payload);
      case FrameType.SETTINGS:
        return this.onSettings(flags, id, payload);
      case FrameType.PUSH_PROMISE:
        throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PUSH_PROMISE from a client');
      case FrameType.PING:
        if (id !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PING on a stream');
        if (payload.length !== 8) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'PING size');
        if (!(flags & Flag.ACK)) this.frame(FrameType.PING, Flag.ACK, 0, Buffer.from(payload));
        return;
      case FrameType.GOAWAY:
        if (id !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'GOAWAY on a stream');
        this.goingAway = true;
        if (this.open === 0) this.goAway(ErrorCode.NO_ERROR);
        return;
      case FrameType.WINDOW_UPDATE:
        return this.onWindowUpdate(id, payload);
      default:
        // Unknown frame types are ignored (RFC 9113 §4.1).
        return;
    }
  }

  /** The payload without its padding (PADDED flag). */
  private unpad(flags: number, payload: Buffer, id: number): Buffer {
    const data = unpadded(flags, payload);
    if (data === undefined) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, payload.length < 1 ? 'padding' : `padding longer than the frame on stream ${id}`);
    return data;
  }

  private onDataFrame(flags: number, id: number, payload: Buffer): void {
    if (id === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'DATA on stream 0');
    // The whole frame counts against the windows, padding included.
    if (payload.length > this.connRecvWindow) throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'connection window exceeded');
    this.connRecvWindow -= payload.length;
    const s = this.streams.get(id);
    if (!s || s.state !== StreamState.Open) {
      if (id > this.lastStreamId) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'DATA on an idle stream');
      // A stream that is gone: its bytes still count for the connection, and are returned.
      this.consumedConnectionOnly(payload.length);
      if (this.resetByUs.has(id)) return;
      throw new StreamError(id, ErrorCode.STREAM_CLOSED, 'DATA on a closed stream');
    }
    if (payload.length > s.recvWindow) {
      // The stream is reset; the frame still counted against the connection window.
      this.consumedConnectionOnly(payload.length);
      throw new StreamError(id, ErrorCode.FLOW_CONTROL_ERROR, 'stream window exceeded');
    }
    s.recvWindow -= payload.length;
    const data = this.unpad(flags, payload, id);
    s.receivedLength += data.length;
    if (s.declaredLength >= 0 && s.receivedLength > s.declaredLength) {
      // Malformed (RFC 9113 §8.1.1): the handler never sees bytes past the content-length.
      this.consumedConnectionOnly(payload.length);
      throw new StreamError(id, ErrorCode.PROTOCOL_ERROR, `request body longer than its content-length of ${s.declaredLength}`);
    }
    const padding = payload.length - data.length;
    if (padding) this.consumed(s, padding);
    // Copied: the reader's buffer is reused for the next frames.
    if (data.length) s.req.push(Buffer.from(data));
    if (flags & Flag.END_STREAM) this.remoteEnd(s);
  }

  private consumedConnectionOnly(n: number): void {
    this.connRecvConsumed += n;
    if (this.connRecvConsumed >= this.connRecvTarget / 2) {
      this.windowUpdate(0, this.connRecvConsumed);
      this.connRecvWindow += this.connRecvConsumed;
      this.connRecvConsumed = 0;
    }
  }

  private remoteEnd(s: H2Stream): void {
    // A body shorter than its content-length is malformed (RFC 9113 §8.1.1): the request errors rather than ends.
    if (s.declaredLength >= 0 && s.receivedLength !== s.declaredLength) {
      throw new StreamError(s.id, ErrorCode.PROTOCOL_ERROR, `request body of ${s.receivedLength} bytes, its content-length is ${s.declaredLength}`);
    }
    s.state = StreamState.HalfClosedRemote;
    if (!s.endPending) {
      clearTimeout(s.timer);
      s.timer = undefined;
    }
    s.req.pushEnd();
    if (s.localEnded) this.closeStream(s);
  }

  private onHeaders(flags: number, id: number, payload: Buffer): void {
    if (id === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'HEADERS on stream 0');
    let block = this.unpad(flags, payload, id);
    if (flags & Flag.PRIORITY) {
      if (block.length < 5) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'HEADERS priority');
      block = block.subarray(5);
    }
    const hb: OpenHeaderBlock = { streamId: id, endStream: (flags & Flag.END_STREAM) !== 0, chunks: [], size: 0, continuations: 0 };
    if (flags & Flag.END_HEADERS) {
      hb.chunks.push(block);
      return this.onHeaderBlock(hb);
    }
    // Kept past this frame: copied, as the reader's buffer is reused.
    this.addFragment(hb, block);
    this.headerBlock = hb;
    this.headerTimer = setTimeout(() => this.goAway(ErrorCode.ENHANCE_YOUR_CALM, 'header block not completed in time'), this.opts.headerTimeoutMs);
    this.headerTimer.unref();
  }

  private onContinuation(flags: number, id: number, payload: Buffer): void {
    const hb = this.headerBlock;
    if (!hb || hb.streamId !== id) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'unexpected CONTINUATION');
    if (++hb.continuations > MAX_CONTINUATION_FRAMES) throw new ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, 'too many CONTINUATION frames');
    this.addFragment(hb, payload);
    if (flags & Flag.END_HEADERS) {
      this.headerBlock = undefined;
      clearTimeout(this.headerTimer);
      this.onHeaderBlock(hb);
    }
  }

  /** A fragment of an open header block, counted against MAX_HEADER_BLOCK before anything is kept. */
  private addFragment(hb: OpenHeaderBlock, fragment: Buffer): void {
    hb.size += fragment.length;
    if (hb.size > MAX_HEADER_BLOCK) throw new ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, 'header block too large');
    if (fragment.length) hb.chunks.push(Buffer.from(fragment));
  }

  private onHeaderBlock(hb: OpenHeaderBlock): void {
    const id = hb.streamId;
    // Every block is decoded, even for a stream refused below: the decoder's table must follow the peer's.
    const fields = this.decoder.decode(hb.chunks.length === 1 ? hb.chunks[0] : Buffer.concat(hb.chunks, hb.size), MAX_HEADER_LIST_SIZE);
    const existing = this.streams.get(id);
    if (existing || id <= this.lastStreamId) {
      // Trailers end a request body; anything else on a known stream is an error. Trailers hold
      // no pseudo-header fields (RFC 9113 §8.1): with one, the request is malformed.
      if (existing && existing.state === StreamState.Open && hb.endStream) {
        if (fields.some(([name]) => name.charCodeAt(0) === 58 /* : */)) throw new StreamError(id, ErrorCode.PROTOCOL_ERROR, 'pseudo-header field in trailers');
        return this.remoteEnd(existing);
      }
      if (existing) throw new StreamError(id, ErrorCode.PROTOCOL_ERROR, 'HEADERS on an open stream');
      if (this.resetByUs.has(id)) return; // trailers sent before our RST_STREAM arrived
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'HEADERS on a closed stream');
    }
    if ((id & 1) === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'even stream id from a client');
    this.lastStreamId = id;
    if (this.goingAway) return;
    if (this.open >= this.opts.maxConcurrentStreams) throw new StreamError(id, ErrorCode.REFUSED_STREAM, 'too many streams');
    if (this.decoder.lastListSize > MAX_HEADER_LIST_SIZE) return this.headerListTooLarge(id, fields, hb.endStream);
    const headers = requestHeaders(fields);
    if (!headers) throw new StreamError(id, ErrorCode.PROTOCOL_ERROR, 'malformed request headers');
    const notForHttp2 = connectionSpecific(headers);
    if (notForHttp2 !== undefined) {
      // Go's http2 server answers these 400 (checkValidHTTP2RequestHeaders), as http.Error writes it.
      return this.answerUnhandled(id, headers, hb.endStream, 400, 'text/plain; charset=utf-8', Buffer.from(`${notForHttp2}\n`), { 'x-content-type-options': 'nosniff' });
    }
    const declaredLength = contentLength(headers);
    if (declaredLength === undefined) throw new StreamError(id, ErrorCode.PROTOCOL_ERROR, 'malformed content-length');
    // A request without DATA has an empty body: only a content-length of 0 (or none) agrees with it.
    if (hb.endStream && declaredLength > 0) throw new StreamError(id, ErrorCode.PROTOCOL_ERROR, 'content-length without a body');
    const s = this.openStream(id, headers, hb.endStream, fields);
    s.declaredLength = declaredLength;
    this.dispatch(s);
  }

  /**
   * Runs the stream's handler, or has the stream wait for a handler slot: handlers of streams the
   * client reset keep their slot until they return (see WAITING_HANDLERS_PER_STREAM_SLOT).
   */
  private dispatch(s: H2Stream): void {
    if (this.runningHandlers < this.opts.maxConcurrentStreams) return this.runHandler(s);
    if (this.waitingHandlers.length >= WAITING_HANDLERS_PER_STREAM_SLOT * this.opts.maxConcurrentStreams) {
      throw new ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, 'too many handlers of reset streams still running');
    }
    this.waitingHandlers.push(s);
  }

  private runHandler(s: H2Stream): void {
    this.runningHandlers++;
    let result: void | PromiseLike<unknown> = undefined;
    try {
      result = this.handler(s.req, s.res);
    } catch (e) {
      fallbackLogger().error(e, 'http2: request handler failed');
      this.reset(s, ErrorCode.INTERNAL_ERROR);
    }
    if (result && typeof result.then === 'function') {
      const done = () => this.handlerDone(s);
      result.then(done, done);
    } else this.handlerDone(s);
  }

  private handlerDone(s: H2Stream): void {
    s.handlerDone = true;
    this.runningHandlers--;
    while (this.runningHandlers < this.opts.maxConcurrentStreams && this.waitingHandlers.length > 0) {
      const next = this.waitingHandlers.shift()!;
      // (a stream reset while it waited never runs)
      if (next.state !== StreamState.Closed) this.runHandler(next);
    }
  }

  private openStream(id: number, headers: Record<string, string>, endStream: boolean, fields: Array<[string, string]> = []): H2Stream {
    const s = new H2Stream(this, id, this.peerInitialWindow, this.opts.streamWindow);
    this.streams.set(id, s);
    this.open++;
    clearTimeout(this.idleTimer);
    s.req = new H2Request(s, headers, this.socket, fields);
    s.res = new H2Response(s);
    if (endStream) {
      s.state = StreamState.HalfClosedRemote;
      s.req.pushEnd();
    } else this.armStreamTimer(s);
    return s;
  }

  /**
   * A request whose header list is over MAX_HEADER_LIST_SIZE: answered 431 here, never dispatched.
   * The stream is opened (its id is used) and ends with the answer; a body that follows is refused
   * with the usual RST_STREAM NO_ERROR after a complete response.
   */
  private headerListTooLarge(id: number, fields: Array<[string, string]>, endStream: boolean): void {
    // Only the pseudo-header fields are kept: the request object needs a method and a path.
    const headers: Record<string, string> = Object.create(null);
    for (const [name, value] of fields) if (name.charCodeAt(0) === 58 /* : */ && value.length <= 8192) headers[name] ??= value;
    this.answerUnhandled(id, headers, endStream, 431, 'text/html; charset=utf-8', HEADER_LIST_TOO_LARGE_BODY);
  }

  /** A request answered here, never dispatched: the stream is opened (its id is used) and ends with the answer. */
  private answerUnhandled(id: number, headers: Record<string, string>, endStream: boolean, status: number, contentType: string, body: Buffer, extra: Record<string, string> = {}): void {
    const s = this.openStream(id, headers, endStream);
    s.res.writeHead(status, { 'content-type': contentType, ...extra, 'content-length': body.length });
    s.res.end(body);
  }

  private onRst(id: number, payload: Buffer): void {
    if (id === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'RST_STREAM on stream 0');
    if (payload.length !== 4) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'RST_STREAM size');
    if (id > this.lastStreamId) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'RST_STREAM on an idle stream');
    const s = this.streams.get(id);
    if (!s) return;
    if (!s.handlerDone) this.countEarlyReset();
    if (!s.req.readableEnded) s.req.abort();
    this.closeStream(s);
  }

  /** A stream reset while its handler runs or waits (by the client, or by us for its error): one token of the bucket. */
  private countEarlyReset(): void {
    const now = performance.now();
    this.resetTokens = Math.min(RESET_BURST, this.resetTokens + ((now - this.resetFilledAt) / 1000) * RESET_RATE_PER_SECOND);
    this.resetFilledAt = now;
    if (this.resetTokens < 1) throw new ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, 'too many streams reset while being handled');
    this.resetTokens--;
  }

  private onSettings(flags: number, id: number, payload: Buffer): void {
    if (id !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'SETTINGS on a stream');
    if (flags & Flag.ACK) {
      if (payload.length !== 0) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'SETTINGS ACK with a payload');
      return;
    }
    if (payload.length % 6 !== 0) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'SETTINGS size');
    if (payload.length / 6 > MAX_SETTINGS_ENTRIES) throw new ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, 'too many SETTINGS entries');
    for (let i = 6; i < payload.length; i += 6) {
      for (let j = 0; j < i; j += 6) if (payload.readUInt16BE(j) === payload.readUInt16BE(i)) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'repeated SETTINGS entry');
    }
    for (let i = 0; i < payload.length; i += 6) {
      const key = payload.readUInt16BE(i);
      const value = payload.readUInt32BE(i + 2);
      switch (key) {
        case Setting.HEADER_TABLE_SIZE:
          // Our encoder never indexes; a smaller decoder table is acknowledged in the next block.
          if (value < 4096) this.tableSizeUpdate = value;
          break;
        case Setting.ENABLE_PUSH:
          if (value > 1) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'ENABLE_PUSH');
          break;
        case Setting.INITIAL_WINDOW_SIZE: {
          if (value > MAX_WINDOW) throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'INITIAL_WINDOW_SIZE');
          const delta = value - this.peerInitialWindow;
          this.peerInitialWindow = value;
          for (const s of this.streams.values()) {
            s.sendWindow += delta;
            if (s.sendWindow > MAX_WINDOW) throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'stream window overflow');
          }
          if (delta > 0) for (const s of this.streams.values()) if (s.pendingBytes || s.endPending) this.drainStream(s);
          break;
        }
        case Setting.MAX_FRAME_SIZE:
          if (value < DEFAULT_MAX_FRAME_SIZE || value > MAX_FRAME_SIZE_LIMIT) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'MAX_FRAME_SIZE');
          this.peerMaxFrameSize = value;
          break;
        default:
          // MAX_CONCURRENT_STREAMS (we push nothing), MAX_HEADER_LIST_SIZE and unknown settings: nothing to do.
          break;
      }
    }
    this.frame(FrameType.SETTINGS, Flag.ACK, 0);
  }

  private onWindowUpdate(id: number, payload: Buffer): void {
    if (payload.length !== 4) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'WINDOW_UPDATE size');
    const increment = windowIncrement(payload);
    if (id === 0) {
      if (increment === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'WINDOW_UPDATE of 0');
      this.connSendWindow += increment;
      if (this.connSendWindow > MAX_WINDOW) throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'connection window overflow');
      return this.resumeWaiting();
    }
    if (id > this.lastStreamId) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'WINDOW_UPDATE on an idle stream');
    const s = this.streams.get(id);
    if (!s) return;
    if (increment === 0) throw new StreamError(id, ErrorCode.PROTOCOL_ERROR, 'WINDOW_UPDATE of 0');
    s.sendWindow += increment;
    if (s.sendWindow > MAX_WINDOW) throw new StreamError(id, ErrorCode.FLOW_CONTROL_ERROR, 'stream window overflow');
    if (s.pendingBytes || s.endPending) this.drainStream(s);
  }
}
