// Where audit events go: the log backend (--audit-log-*: JSON lines or the legacy one-line text,
// to a file rotated as lumberjack rotates it, or stdout), the webhook backend
// (--audit-webhook-*: audit.k8s.io/v1 EventLists POSTed through server/webhook/'s client), and the
// modes both take: blocking (written before the request goes on), blocking-strict (a failure
// refuses the request) and batch (buffered, sent in batches). Follows
// k8s.io/apiserver/plugin/pkg/audit/log/backend.go, plugin/pkg/audit/buffered/buffered.go,
// plugin/pkg/audit/webhook/webhook.go and pkg/server/options/audit.go.
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { goQuote } from '../go/strconv.ts';
import type { WebhookClientConfig } from '../webhook/kubeconfig.ts';
import { WebhookCallError, WebhookClient, isRetryable, withExponentialBackoff } from '../webhook/client.ts';
import type { AuditLogOptions, AuditWebhookOptions } from './options.ts';
import { rfc3339NanoText, type AuditEvent } from './event.ts';

/** What backends report a failure to: apiserver_audit_error_total{plugin} (and the server's log). */
export type PluginErrorHandler = (plugin: string, message: string, events: number) => void;

/** One backend: takes an event's serialized stage (or the event, for the legacy text). */
export interface AuditBackend {
  /** false: the event was not stored (only blocking-strict backends make that refuse a request). */
  processEvent(ev: AuditEvent, json: string): boolean | Promise<boolean>;
  /** Sends what is buffered and stops. */
  shutdown(): Promise<void>;
}

const MEGABYTE = 1024 * 1024;
/** lumberjack's default when MaxSize is 0. */
const DEFAULT_MAX_SIZE_MEGABYTES = 100;
/** lumberjack's backupTimeFormat, in UTC. */
function backupTimestamp(d: Date): string {
  return d.toISOString().slice(0, 23).replace(/:/g, '-');
}

/**
 * A file written as lumberjack.Logger writes it: a write that would take the file past MaxSize
 * first moves it to `<name>-<UTC time>.<ext>`, then backups beyond MaxBackups or older than
 * MaxAge days are removed.
 */
export class RotatingFile {
  private fd: number;
  private size: number;
  private readonly maxBytes: number;

  constructor(
    readonly path: string,
    private readonly opts: { maxSizeMegabytes: number; maxBackups: number; maxAgeDays: number },
  ) {
    this.maxBytes = (opts.maxSizeMegabytes || DEFAULT_MAX_SIZE_MEGABYTES) * MEGABYTE;
    this.fd = RotatingFile.open(path);
    this.size = fstatSync(this.fd).size;
  }

  /** kube's ensureLogFile: the directory (0700) and the file (0600), created at start. */
  private static open(path: string): number {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    return openSync(path, 'a', 0o600);
  }

  /**
   * Lines written as lumberjack's Write would write them one by one (a line never straddles a
   * rotation), in as few writes as that allows. A line longer than MaxSize is not written:
   * lumberjack's error for it is returned, with how many such lines there were.
   */
  writeLines(lines: string[]): { failed: number; error?: string } {
    let failed = 0;
    let error: string | undefined;
    let chunk: Buffer[] = [];
    let chunkBytes = 0;
    const flushChunk = () => {
      if (!chunkBytes) return;
      writeSync(this.fd, chunk.length === 1 ? chunk[0] : Buffer.concat(chunk, chunkBytes));
      this.size += chunkBytes;
      chunk = [];
      chunkBytes = 0;
    };
    for (const line of lines) {
      const data = Buffer.from(line);
      if (data.length > this.maxBytes) {
        failed++;
        error = `write length ${data.length} exceeds maximum file size ${this.maxBytes}`;
        continue;
      }
      if (this.size + chunkBytes + data.length > this.maxBytes) {
        flushChunk();
        this.rotate();
      }
      chunk.push(data);
      chunkBytes += data.length;
    }
    flushChunk();
    return { failed, error };
  }

  private rotate(): void {
    closeSync(this.fd);
    const ext = extname(this.path);
    const prefix = basename(this.path, ext);
    renameSync(this.path, join(dirname(this.path), `${prefix}-${backupTimestamp(new Date())}${ext}`));
    this.fd = RotatingFile.open(this.path);
    this.size = 0;
    this.removeOldBackups(prefix, ext);
  }

  /** lumberjack's millRunOnce: backups newest first; those past MaxBackups, or older than MaxAge, go. */
  private removeOldBackups(prefix: string, ext: string): void {
    const { maxBackups, maxAgeDays } = this.opts;
    if (!maxBackups && !maxAgeDays) return;
    const dir = dirname(this.path);
    const pattern = new RegExp(`^${escapeRegExp(prefix)}-(\\d{4}-\\d{2}-\\d{2}T\\d{2}-\\d{2}-\\d{2}\\.\\d{3})${escapeRegExp(ext)}$`);
    const backups: { name: string; time: number }[] = [];
    for (const name of readdirSync(dir)) {
      const m = pattern.exec(name);
      if (!m) continue;
      const t = m[1].replace(/T(\d{2})-(\d{2})-(\d{2})/, 'T$1:$2:$3');
      backups.push({ name, time: Date.parse(`${t}Z`) });
    }
    backups.sort((a, b) => b.time - a.time);
    const cutoff = maxAgeDays ? Date.now() - maxAgeDays * 24 * 3600_000 : -Infinity;
    backups.forEach((b, i) => {
      if ((maxBackups && i >= maxBackups) || b.time < cutoff) {
        try {
          unlinkSync(join(dir, b.name));
        } catch {
          // Gone already.
        }
      }
    });
  }

  close(): void {
    closeSync(this.fd);
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** EventString: the legacy format's one line. */
export function legacyEventText(ev: AuditEvent): string {
  const quotedList = (l: string[]) => l.map(goQuote).join(',');
  let username = '<none>';
  let groups = '<none>';
  if (ev.user.username) {
    username = ev.user.username;
    if (ev.user.groups?.length) groups = quotedList(ev.user.groups);
  }
  let asUser = '<self>';
  let asGroups = '<lookup>';
  if (ev.impersonatedUser) {
    asUser = ev.impersonatedUser.username ?? '';
    if (ev.impersonatedUser.groups) asGroups = quotedList(ev.impersonatedUser.groups);
  }
  const namespace = ev.objectRef?.namespace || '<none>';
  const response = ev.responseStatus ? String(ev.responseStatus.code) : '<deferred>';
  const ip = ev.sourceIPs[0] ?? '<unknown>';
  const q = goQuote;
  return `${rfc3339NanoText(ev.requestReceivedMicros)} AUDIT: id=${q(ev.auditID)} stage=${q(ev.stage)} ip=${q(ip)} method=${q(ev.verb)} user=${q(username)} groups=${q(groups)} as=${q(asUser)} asgroups=${q(asGroups)} user-agent=${q(ev.userAgent ?? '')} namespace=${q(namespace)} uri=${q(ev.requestURI)} response="${response}"`;
}

/** The log backend's writer: the rotated file, or stdout for `-`. */
interface LineWriter {
  writeLines(lines: string[]): { failed: number; error?: string };
  close(): void;
}

function stdoutWriter(): LineWriter {
  return {
    writeLines: (lines) => {
      writeSync(1, lines.join(''));
      return { failed: 0 };
    },
    close: () => undefined,
  };
}

/** kube's batch defaults for the log backend (--audit-log-batch-*): a buffer of 10000 events. */
const LOG_BATCH_BUFFER_SIZE = 10_000;

/**
 * The log backend: one line per event, the lines of one turn of the event loop gathered into one
 * write (a write per event costs more than the rest of a GET's auditing). Blocking: a request's
 * response waits for the write holding its events (RequestReceived rides with it, blocking-strict
 * waits for that one too, and refuses the request when it fails); batch: nothing waits.
 */
export class LogBackend implements AuditBackend {
  private readonly writer: LineWriter;
  private pending: string[] = [];
  private flushScheduled = false;
  /** What requests waiting for the next write await (one promise per write, shared). */
  private written?: Promise<boolean>;
  private resolveWritten?: (ok: boolean) => void;
  /** After shutdown: events (a watch ending as the server stops) are dropped. */
  private closed = false;

  constructor(
    private readonly opts: AuditLogOptions,
    private readonly onError: PluginErrorHandler,
  ) {
    this.writer = opts.path === '-' ? stdoutWriter() : new RotatingFile(opts.path, opts);
  }

  private line(ev: AuditEvent, json: string): string {
    return this.opts.format === 'legacy' ? `${legacyEventText(ev)}\n` : `${json}\n`;
  }

  processEvent(ev: AuditEvent, json: string): boolean | Promise<boolean> {
    const mode = this.opts.mode;
    if (this.closed) return true;
    if (mode === 'batch' && this.pending.length >= LOG_BATCH_BUFFER_SIZE) {
      this.onError('buffered', 'audit buffer queue blocked', 1);
      return true;
    }
    this.pending.push(this.line(ev, json));
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
    if (mode === 'batch' || (mode === 'blocking' && ev.stage === 'RequestReceived')) return true;
    return (this.written ??= new Promise<boolean>((resolve) => (this.resolveWritten = resolve)));
  }

  private write(lines: string[]): boolean {
    try {
      const { failed, error } = this.writer.writeLines(lines);
      if (failed) this.onError('log', `Error writing audit event: ${error}`, failed);
      return failed === 0;
    } catch (e) {
      this.onError('log', `Error writing audit event: ${(e as Error).message}`, lines.length);
      return false;
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    const resolve = this.resolveWritten;
    this.written = this.resolveWritten = undefined;
    let ok = true;
    if (this.pending.length) {
      const lines = this.pending;
      this.pending = [];
      ok = this.write(lines);
    }
    resolve?.(ok || this.opts.mode !== 'blocking-strict');
  }

  shutdown(): Promise<void> {
    this.flush();
    this.closed = true;
    this.writer.close();
    return Promise.resolve();
  }
}

/** The webhook backend's client and its EventList POSTs with kube's backoff. */
export class WebhookBackend implements AuditBackend {
  private readonly client: WebhookClient;
  private buffer: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly opts: AuditWebhookOptions,
    config: WebhookClientConfig,
    private readonly onError: PluginErrorHandler,
    userAgent: string,
  ) {
    this.client = new WebhookClient(config, { userAgent, retryBackoff: { durationMs: opts.initialBackoffMs, factor: 1.5, jitter: 0.2, steps: 5 } });
  }

  /** One POST of an EventList, retried as kube's webhook.WithExponentialBackoff retries it. */
  private async send(items: string[]): Promise<boolean> {
    const body = Buffer.from(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[${items.join(',')}]}`);
    const attempt = async () => {
      try {
        await this.client.postOnce(body);
      } catch (e) {
        // An answer in 2xx with no JSON body is a success for a sink (client-go's Do().Error()).
        if (e instanceof WebhookCallError && e.statusCode !== undefined && e.statusCode >= 200 && e.statusCode <= 206) return;
        throw e;
      }
    };
    try {
      await withExponentialBackoff({ durationMs: this.opts.initialBackoffMs, factor: 1.5, jitter: 0.2, steps: 5 }, attempt, isRetryable);
      return true;
    } catch (e) {
      this.onError('webhook', `Error sending audit events: ${(e as Error).message}`, items.length);
      return false;
    }
  }

  processEvent(_ev: AuditEvent, json: string): boolean | Promise<boolean> {
    if (this.opts.mode !== 'batch') {
      const sent = this.send([json]);
      return this.opts.mode === 'blocking-strict' ? sent : sent.then(() => true);
    }
    if (this.stopped) return true;
    // buffered.go: events past the buffer are dropped and counted.
    if (this.buffer.length >= this.opts.batchBufferSize) {
      this.onError('buffered', 'audit buffer queue blocked', 1);
      return true;
    }
    this.buffer.push(json);
    if (this.buffer.length >= this.opts.batchMaxSize) this.sendBatch();
    else this.timer ??= setTimeout(() => this.sendBatch(), this.opts.batchMaxWaitMs);
    return true;
  }

  /** Sends up to batchMaxSize buffered events (buffered.go's collectEvents, then processEvents). */
  private sendBatch(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.buffer.length) {
      const batch = this.buffer.splice(0, this.opts.batchMaxSize);
      const p = this.send(batch).then(() => undefined);
      this.inFlight.add(p);
      void p.finally(() => this.inFlight.delete(p));
      if (this.buffer.length < this.opts.batchMaxSize) break;
    }
    if (this.buffer.length) this.timer = setTimeout(() => this.sendBatch(), this.opts.batchMaxWaitMs);
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    while (this.buffer.length) this.sendBatch();
    if (this.timer) clearTimeout(this.timer);
    await Promise.all([...this.inFlight]);
    this.client.close();
  }
}
