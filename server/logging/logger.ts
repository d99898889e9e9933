// hearth's own log: a small structured logger shaped like klog/logr as kube components use them
// (k8s.io/klog/v2's InfoS/ErrorS and V(level), k8s.io/component-base/logs' --log-format).
// `text` writes klog's header (`I1129 20:24:57.123456   12345 source] "msg" key="value"`) and
// klog's key/value quoting (internal/serialize: strings %q, multi-line strings as `key=<` blocks);
// `json` writes component-base/logs/json's zap fields (ts in epoch milliseconds, caller, msg, v,
// the key/values, err). Where klog names the calling file:line, hearth names the logger's source
// (a component's name): finding the caller would cost a stack capture on every line.
//
// Cheap when off: V(level) hands back a shared no-op when the level is above -v, so a disabled
// line costs one comparison and no formatting.
import { goQuote } from '../go/strconv.ts';
import { DEFAULT_LOGGING_OPTIONS, type LoggingOptions } from './options.ts';

/** Where formatted lines go (one call per line, without the trailing newline). */
export type LogSink = (line: string) => void;

/** What a V(level) returns: info lines at that level, or nothing when -v is below it. */
export interface InfoLogger {
  readonly enabled: boolean;
  info(msg: string, ...keysAndValues: unknown[]): void;
}

type Severity = 'I' | 'W' | 'E';

const NOOP: InfoLogger = { enabled: false, info() {} };

/** A Go time.Duration as a log value: klog prints its String() quoted, zap's StringDurationEncoder the same string. */
export class Duration {
  constructor(readonly nanoseconds: number) {}
  static ofMillis(ms: number): Duration {
    return new Duration(ms * 1e6);
  }
  toString(): string {
    return goDurationString(this.nanoseconds);
  }
  toJSON(): string {
    return this.toString();
  }
}

/** Go's time.Duration.String() for a count of nanoseconds (rounded to whole ones): 0s, 850ns, 1.5µs, 2.345678ms, 1m2.5s. */
export function goDurationString(ns: number): string {
  let u = Math.round(ns);
  if (u === 0) return '0s';
  const neg = u < 0;
  if (neg) u = -u;
  let out: string;
  if (u < 1e3) out = `${u}ns`;
  else if (u < 1e6) out = `${fraction(u, 3)}µs`;
  else if (u < 1e9) out = `${fraction(u, 6)}ms`;
  else {
    const whole = Math.floor(u / 1e9);
    const frac = trimmedFraction(u % 1e9, 9);
    const h = Math.floor(whole / 3600);
    const m = Math.floor(whole / 60) % 60;
    const s = whole % 60;
    out = `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}${frac}s`;
  }
  return neg ? `-${out}` : out;
}

function fraction(v: number, digits: number): string {
  const scale = 10 ** digits;
  return `${Math.floor(v / scale)}${trimmedFraction(v % scale, digits)}`;
}

function trimmedFraction(v: number, digits: number): string {
  if (v === 0) return '';
  return `.${String(v).padStart(digits, '0').replace(/0+$/, '')}`;
}

/** Where the clock is read: the wall clock with microseconds (klog's header has them). */
function nowMillis(): number {
  return performance.timeOrigin + performance.now();
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));

/** klog's header: severity, MMDD, hh:mm:ss.uuuuuu (local time), the pid right-aligned in 7, the source, `] `. */
export function klogHeader(severity: Severity, epochMillis: number, pid: number, source: string): string {
  const d = new Date(Math.floor(epochMillis));
  const micros = Math.floor((epochMillis - Math.floor(epochMillis / 1000) * 1000) * 1000);
  return `${severity}${pad2(d.getMonth() + 1)}${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}.${String(micros).padStart(6, '0')} ${String(pid).padStart(7, ' ')} ${source}] `;
}

/** klog's rendering of one value after `key=`. */
function klogValue(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return klogString(v);
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(v);
    case 'undefined':
      return '<nil>';
    default:
      if (v === null) return '<nil>';
      // errors and Stringers (Duration): their text, quoted, as klog prints error and fmt.Stringer values
      if (v instanceof Error) return klogString(v.message);
      if (v instanceof Duration) return goQuote(v.toString());
      return klogString(safeJson(v));
  }
}

/** A string value: %q on one line; a multi-line one as klog's `<` block (tab-indented lines, ` >` closing). */
function klogString(s: string): string {
  if (!s.includes('\n')) return goQuote(s);
  const body = s.endsWith('\n') ? s.slice(0, -1) : s;
  return `<\n\t${body.split('\n').join('\n\t')}\n >`;
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/** A JSON-safe value for the json format. */
function jsonValue(v: unknown): unknown {
  if (v instanceof Error) return v.message;
  if (v instanceof Duration) return v.toString();
  if (typeof v === 'bigint') return v.toString();
  return v === undefined ? null : v;
}

/** An error's stack, as the source maps name it (node --enable-source-maps; tsx in tests); else its message. */
export function stackOf(err: unknown): string | undefined {
  if (!(err instanceof Error) || typeof err.stack !== 'string') return undefined;
  return err.stack;
}

export interface LoggerConfig extends LoggingOptions {
  sink: LogSink;
  /** The process id the text header shows (the real pid unless a test fixes it). */
  pid?: number;
  /** The clock in epoch milliseconds (tests fix it). */
  now?: () => number;
}

/** The default sink: stderr, as kube components log (klog and the json format both write there). */
export const stderrSink: LogSink = (line) => {
  process.stderr.write(`${line}\n`);
};

export class Logger {
  private readonly levels: InfoLogger[] = [];
  private readonly pid: number;
  private readonly now: () => number;

  constructor(
    private readonly config: LoggerConfig,
    /** What the header's source (json: caller) names. */
    readonly source = 'hearth',
  ) {
    this.pid = config.pid ?? process.pid;
    this.now = config.now ?? nowMillis;
    // V(0)..V(verbosity) are made once; V(level) above -v is the shared no-op.
    for (let level = 0; level <= Math.min(config.verbosity, 10); level++) {
      this.levels.push({ enabled: true, info: (msg, ...kv) => this.write('I', level, msg, kv) });
    }
  }

  get verbosity(): number {
    return this.config.verbosity;
  }

  get format(): 'text' | 'json' {
    return this.config.format;
  }

  /** The same log under another source name (a component's). */
  named(source: string): Logger {
    return new Logger(this.config, source);
  }

  /** klog.V(level).Enabled(). */
  enabled(level: number): boolean {
    return level <= this.config.verbosity;
  }

  /** klog.V(level): a logger whose info lines are written only at -v=level and above. */
  v(level: number): InfoLogger {
    if (level > this.config.verbosity) return NOOP;
    return this.levels[level] ?? this.levels[this.levels.length - 1];
  }

  /** klog.InfoS: always written (level 0). */
  info(msg: string, ...keysAndValues: unknown[]): void {
    this.write('I', 0, msg, keysAndValues);
  }

  /** klog.Warning's severity with InfoS's shape (W in text; json has no warning level: an info line). */
  warning(msg: string, ...keysAndValues: unknown[]): void {
    this.write('W', 0, msg, keysAndValues);
  }

  /** klog.ErrorS: the error's text as err="...", its stack (source-mapped) as a stacktrace value. */
  error(err: unknown, msg: string, ...keysAndValues: unknown[]): void {
    this.write('E', 0, msg, keysAndValues, err ?? undefined, true);
  }

  /**
   * The `(line: string) => void` hearth's components take: each line becomes an info message
   * (a `warning: ` or `error: ` prefix becomes the line's severity).
   */
  lines(): LogSink {
    return (line) => {
      if (line.startsWith('warning: ')) this.write('W', 0, line.slice(9), []);
      else if (line.startsWith('error: ')) this.write('E', 0, line.slice(7), []);
      else this.write('I', 0, line, []);
    };
  }

  private write(severity: Severity, level: number, msg: string, kv: readonly unknown[], err?: unknown, withErr = false): void {
    const ts = this.now();
    const stack = withErr ? stackOf(err) : undefined;
    if (this.config.format === 'json') {
      // zapr's fields: ts, caller, msg, then v (info lines) or err (error lines), then the key/values.
      const entry: Record<string, unknown> = { ts, caller: this.source, msg };
      if (withErr) entry.err = err === undefined ? null : err instanceof Error ? err.message : String(err);
      else entry.v = level;
      for (let i = 0; i < kv.length; i += 2) entry[String(kv[i])] = i + 1 < kv.length ? jsonValue(kv[i + 1]) : '(MISSING)';
      if (stack !== undefined) entry.stacktrace = stack;
      this.config.sink(JSON.stringify(entry));
      return;
    }
    let line = klogHeader(severity, ts, this.pid, this.source) + goQuote(msg);
    if (withErr && err !== undefined) line += ` err=${klogString(err instanceof Error ? err.message : String(err))}`;
    for (let i = 0; i < kv.length; i += 2) line += ` ${String(kv[i])}=${i + 1 < kv.length ? klogValue(kv[i + 1]) : '"(MISSING)"'}`;
    if (stack !== undefined) line += ` stacktrace=${klogString(stack)}`;
    this.config.sink(line);
  }
}

/** A logger from the command line's options (defaults: -v=0, text) writing to sink (default stderr). */
export function newLogger(options: Partial<LoggingOptions> = {}, sink: LogSink = stderrSink, source = 'hearth'): Logger {
  return new Logger({ ...DEFAULT_LOGGING_OPTIONS, ...options, sink }, source);
}

let fallback: Logger | undefined;
/**
 * The log of code given none (a component built outside a server, as unit tests build them, and
 * the few places a bug is reported from far below the server's wiring): the process's log as
 * main.ts set it (-v, --log-format), else stderr at -v=0 in text. A server passes its own down.
 */
export function fallbackLogger(): Logger {
  return (fallback ??= newLogger());
}

/** main.ts, which owns the process: the command line's log becomes the fallback, so every line of the process has one format. */
export function setProcessLogger(logger: Logger): void {
  fallback = logger;
}
