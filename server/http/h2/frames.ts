// The HTTP/2 frame codec (RFC 9113 §4, §6): the wire constants, frame headers and the fixed
// payloads (SETTINGS, WINDOW_UPDATE, RST_STREAM, GOAWAY, padding), and FrameReader, which splits a
// connection's bytes into frames. One codec for the server (connection.ts), the benchmarks' lean
// client (bench/bench-client.ts) and the tests' raw-frame client (test/helpers/h2-frames.ts):
// what a frame means to each of them (the protocol's rules, the errors) stays with each.

export const FRAME_HEADER_LENGTH = 9;
export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

// (Plain enums, not const enums: a frame's type and error code are named by reverse mapping in
// messages; esbuild inlines the values in the bundle either way.)

export enum FrameType {
  DATA = 0x0,
  HEADERS = 0x1,
  PRIORITY = 0x2,
  RST_STREAM = 0x3,
  SETTINGS = 0x4,
  PUSH_PROMISE = 0x5,
  PING = 0x6,
  GOAWAY = 0x7,
  WINDOW_UPDATE = 0x8,
  CONTINUATION = 0x9,
}

export enum Flag {
  END_STREAM = 0x1,
  // ACK (SETTINGS, PING) is END_STREAM's bit (DATA, HEADERS): RFC 9113 defines flags per frame type.
  // eslint-disable-next-line @typescript-eslint/no-duplicate-enum-values
  ACK = 0x1,
  END_HEADERS = 0x4,
  PADDED = 0x8,
  PRIORITY = 0x20,
}

/** RFC 9113 §7. */
export enum ErrorCode {
  NO_ERROR = 0x0,
  PROTOCOL_ERROR = 0x1,
  INTERNAL_ERROR = 0x2,
  FLOW_CONTROL_ERROR = 0x3,
  SETTINGS_TIMEOUT = 0x4,
  STREAM_CLOSED = 0x5,
  FRAME_SIZE_ERROR = 0x6,
  REFUSED_STREAM = 0x7,
  CANCEL = 0x8,
  COMPRESSION_ERROR = 0x9,
  CONNECT_ERROR = 0xa,
  ENHANCE_YOUR_CALM = 0xb,
  INADEQUATE_SECURITY = 0xc,
  HTTP_1_1_REQUIRED = 0xd,
}

export enum Setting {
  HEADER_TABLE_SIZE = 0x1,
  ENABLE_PUSH = 0x2,
  MAX_CONCURRENT_STREAMS = 0x3,
  INITIAL_WINDOW_SIZE = 0x4,
  MAX_FRAME_SIZE = 0x5,
  MAX_HEADER_LIST_SIZE = 0x6,
}

export const DEFAULT_WINDOW = 65_535;
export const DEFAULT_MAX_FRAME_SIZE = 16_384;
export const MAX_FRAME_SIZE_LIMIT = 16_777_215;
export const MAX_WINDOW = 2 ** 31 - 1;

// ───────────── writing ─────────────

/** Writes a frame header at b[at, at + 9): 24-bit length, type, flags, 31-bit stream id (the reserved bit clear). */
export function writeFrameHeader(b: Buffer, at: number, length: number, type: number, flags: number, streamId: number): void {
  b[at] = length >>> 16;
  b[at + 1] = (length >>> 8) & 0xff;
  b[at + 2] = length & 0xff;
  b[at + 3] = type;
  b[at + 4] = flags;
  b.writeUInt32BE(streamId & 0x7fffffff, at + 5);
}

const EMPTY = Buffer.alloc(0);

/** One frame, header and payload, in a buffer of its own. */
export function encodeFrame(type: number, flags: number, streamId: number, payload: Buffer = EMPTY): Buffer {
  const b = Buffer.allocUnsafe(FRAME_HEADER_LENGTH + payload.length);
  writeFrameHeader(b, 0, payload.length, type, flags, streamId);
  payload.copy(b, FRAME_HEADER_LENGTH);
  return b;
}

/** A SETTINGS payload: each entry a 16-bit identifier and a 32-bit value, in the order given. */
export function settingsPayload(entries: ReadonlyArray<readonly [number, number]>): Buffer {
  const b = Buffer.allocUnsafe(entries.length * 6);
  for (let i = 0; i < entries.length; i++) {
    b.writeUInt16BE(entries[i][0], i * 6);
    b.writeUInt32BE(entries[i][1], i * 6 + 2);
  }
  return b;
}

/** A WINDOW_UPDATE payload (the reserved bit clear). */
export function windowUpdatePayload(increment: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(increment & 0x7fffffff, 0);
  return b;
}

/** An RST_STREAM payload. */
export function rstStreamPayload(code: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(code, 0);
  return b;
}

/** A GOAWAY payload: the last stream id, the error code and the debug data. */
export function goAwayPayload(lastStreamId: number, code: number, debug = ''): Buffer {
  const b = Buffer.allocUnsafe(8 + Buffer.byteLength(debug));
  b.writeUInt32BE(lastStreamId & 0x7fffffff, 0);
  b.writeUInt32BE(code, 4);
  b.write(debug, 8);
  return b;
}

// ───────────── reading ─────────────

/** The entries of a SETTINGS payload, by identifier (a repeated one: its last value). */
export function parseSettings(payload: Buffer): Map<number, number> {
  const m = new Map<number, number>();
  for (let i = 0; i + 6 <= payload.length; i += 6) m.set(payload.readUInt16BE(i), payload.readUInt32BE(i + 2));
  return m;
}

/** The error code of an RST_STREAM or GOAWAY payload. */
export function errorCodeOf(type: number, payload: Buffer): number {
  return type === FrameType.GOAWAY ? payload.readUInt32BE(4) : payload.readUInt32BE(0);
}

/** A WINDOW_UPDATE payload's increment (the reserved bit dropped). */
export function windowIncrement(payload: Buffer): number {
  return payload.readUInt32BE(0) & 0x7fffffff;
}

/**
 * A DATA or HEADERS payload without its padding (PADDED: the first byte says how many bytes of
 * padding end the frame); undefined when the padding does not fit in the frame (PROTOCOL_ERROR).
 */
export function unpadded(flags: number, payload: Buffer): Buffer | undefined {
  if (!(flags & Flag.PADDED)) return payload;
  if (payload.length < 1) return undefined;
  const padLength = payload[0];
  if (padLength >= payload.length) return undefined;
  return payload.subarray(1, payload.length - padLength);
}

/** A frame's payload is buf[start, end): buf is valid only during the call (FrameReader reuses it). */
export type FrameHandler = (type: number, flags: number, streamId: number, buf: Buffer, start: number, end: number) => void;

/** Thrown by FrameReader.push for a frame longer than its maxPayload, as soon as the frame's header is read. */
export class FrameTooLargeError extends Error {
  constructor(readonly length: number) {
    super(`frame of ${length} bytes`);
  }
}

export interface FrameReaderOptions {
  /** The longest payload accepted (the receiver's SETTINGS_MAX_FRAME_SIZE); longer throws FrameTooLargeError. */
  maxPayload?: number;
  /**
   * Keep the buffer that gathers frames split across reads for the next one (default true): a
   * client that reads a busy connection makes no garbage that way. A server with many idle
   * connections lets it go once the frame is whole.
   */
  keepBuffer?: boolean;
}

/**
 * Splits the bytes read from an HTTP/2 connection into frames. Frames whole within a read are
 * handed over in place; one split across reads is gathered in a buffer of the reader's own, so
 * the reads' buffers may be reused (a shared read buffer). Nothing is allocated for frames that
 * arrive whole: a thousand watch streams read ~300 MB/s on the same two cores as the server (the
 * garbage collector was a fifth of the watcher process's time).
 */
export class FrameReader {
  private partial: Buffer = EMPTY;
  private partialLen = 0;
  private readonly maxPayload: number;
  private readonly keepBuffer: boolean;

  constructor(private readonly onFrame: FrameHandler, opts: FrameReaderOptions = {}) {
    this.maxPayload = opts.maxPayload ?? MAX_FRAME_SIZE_LIMIT;
    this.keepBuffer = opts.keepBuffer ?? true;
  }

  push(d: Buffer): void {
    let pos = 0;
    if (this.partialLen > 0) {
      if (this.partialLen < FRAME_HEADER_LENGTH) {
        pos = Math.min(FRAME_HEADER_LENGTH - this.partialLen, d.length);
        this.append(d, 0, pos);
        if (this.partialLen < FRAME_HEADER_LENGTH) return;
      }
      const p = this.partial;
      const total = FRAME_HEADER_LENGTH + this.payloadLength(p, 0);
      const take = Math.min(total - this.partialLen, d.length - pos);
      this.append(d, pos, pos + take);
      pos += take;
      if (this.partialLen < total) return;
      this.partialLen = 0;
      const f = this.partial;
      if (!this.keepBuffer) this.partial = EMPTY;
      this.onFrame(f[3], f[4], f.readUInt32BE(5) & 0x7fffffff, f, FRAME_HEADER_LENGTH, total);
    }
    while (d.length - pos >= FRAME_HEADER_LENGTH) {
      const len = this.payloadLength(d, pos);
      if (d.length - pos < FRAME_HEADER_LENGTH + len) break;
      this.onFrame(d[pos + 3], d[pos + 4], d.readUInt32BE(pos + 5) & 0x7fffffff, d, pos + FRAME_HEADER_LENGTH, pos + FRAME_HEADER_LENGTH + len);
      pos += FRAME_HEADER_LENGTH + len;
    }
    // The rest outlives the (possibly shared) read buffer: copied.
    if (pos < d.length) this.append(d, pos, d.length);
  }

  /** The payload length in the frame header at b[at]; a frame past maxPayload throws. */
  private payloadLength(b: Buffer, at: number): number {
    const len = (b[at] << 16) | (b[at + 1] << 8) | b[at + 2];
    if (len > this.maxPayload) throw new FrameTooLargeError(len);
    return len;
  }

  private append(d: Buffer, from: number, to: number): void {
    const need = this.partialLen + (to - from);
    if (need > this.partial.length) {
      // Room for the whole frame once its header is known, for its header until then; a buffer
      // that is kept grows by doubling, from 64 KiB.
      let size = Math.max(need, FRAME_HEADER_LENGTH);
      if (this.partialLen >= FRAME_HEADER_LENGTH) size = Math.max(size, FRAME_HEADER_LENGTH + this.payloadLength(this.partial, 0));
      else if (this.partialLen === 0 && to - from >= FRAME_HEADER_LENGTH) size = Math.max(size, FRAME_HEADER_LENGTH + this.payloadLength(d, from));
      if (this.keepBuffer) size = Math.max(size, this.partial.length * 2, 64 * 1024);
      const bigger = Buffer.allocUnsafe(size);
      this.partial.copy(bigger, 0, 0, this.partialLen);
      this.partial = bigger;
    }
    d.copy(this.partial, this.partialLen, from, to);
    this.partialLen = need;
  }
}
