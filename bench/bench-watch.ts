// npm run bench:watch [-- --quick]
// Watch, snapshot-list and compaction benchmarks, each against a hearth server in its own process
// on loopback with a temporary data dir:
//   1. delivery latency p50/p99 (write sent → event received) for 1,000 concurrent watchers of one
//      collection while ~500 creates/s arrive, and a check that every watcher got every event in
//      resourceVersion order with no gaps or duplicates. The measured 10 s follow 3 s of the same
//      writes with the watchers attached: the delivery path's cold start (JIT, socket buffers)
//      is printed apart from the steady state the target is judged on.
//   2. server RSS per idle watcher (0 vs 1,000 open watches)
//   Both run twice: first over HTTP/2 as client-go watches (streams multiplexed on a connection
//   until the server's SETTINGS_MAX_CONCURRENT_STREAMS — 100, kube-apiserver's default — is
//   reached, then a new connection: 1,000 watchers on 10 connections), on a server of its own;
//   then over HTTP/1.1 with one TLS connection per watcher, for comparison. The targets are
//   judged on HTTP/2.
//   3. exact-resourceVersion list of 10,000 ConfigMaps read from the log (median of 5)
//   4. the longest writer stall while 1,000,000 log rows are compacted (log built directly in the
//      SQLite file, then POST /admin/compact under a steady stream of creates) and the freed pages
//      given back to the filesystem (incremental vacuum slices), and the file's size before/after
//   5. the space given back: 100,000 ConfigMaps created, 90% deleted, compacted; the file's size
//      at its largest, after, and against what the remaining rows hold (target ≤ 3×)
// The watchers live in a child process (this file with --watcher-child) on raw TLS sockets (a
// lean HTTP/2 client, or HTTP/1.1 de-chunked by hand) that parse only each event's type,
// resourceVersion and send timestamp, so the client costs little next to the server. Both
// processes stamp times as performance.timeOrigin + performance.now(); their offset is measured
// over IPC and corrected.
// --quick: 200 watchers for 5 s, 200,000 log rows, 10,000 objects in [5], short RSS settling (the
// per-watcher RSS figure is then within GC noise: use the full run for it). --cpu-prof=DIR profiles
// the servers and the watcher process. --only=watch runs only [1+2], --only=compaction [4],
// --only=space [5]; --h2-only only its HTTP/2 run; --watchers=N changes the number of watchers.
// BENCH_WATCH_DEBUG=1 prints progress.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync, existsSync, statSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import tls from 'node:tls';
import Database from 'better-sqlite3';
import { LeanConnection, LeanH2Session, WatchStream, type TlsCredentials } from './bench-client.ts';
import { startHearth, stopHearth, request, createNamespace, serverCpuSeconds, rssKb, percentile, configMap, type Server } from './bench-kit.ts';
import { encodeObject } from '../server/storage/rows/codec.ts';

const SELF = fileURLToPath(import.meta.url);
const ROOT = join(dirname(SELF), '..');
const quick = process.argv.includes('--quick');
const COMMAND = `node --import tsx bench/bench-watch.ts ${process.argv.slice(2).filter((a) => a !== '--watcher-child').join(' ')}`.trim();

/** --only=watch: only [1+2] (no list or compaction part); --h2-only: only its HTTP/2 run; --watchers=N. */
const watchOnly = process.argv.includes('--only=watch');
const h2Only = process.argv.includes('--h2-only');
const watchersArg = process.argv.find((a) => a.startsWith('--watchers='))?.slice('--watchers='.length);
const WATCHERS = watchersArg ? Number(watchersArg) : quick ? 200 : 1000;
const WRITE_RATE = 500;
const WRITE_SECONDS = quick ? 5 : 10;
/** Writes at the same rate with the watchers attached before the measured ones (reported apart). */
const WATCH_WARMUP_SECONDS = quick ? 2 : 3;
const WRITE_CONNS = 32;
const LIST_SIZE = 10_000;
const LIST_UPDATES = 2_000;
const COMPACT_ROWS = process.argv.some((a) => a.startsWith('--compact-rows=')) ? Number(process.argv.find((a) => a.startsWith('--compact-rows='))!.slice(15)) : quick ? 200_000 : 1_000_000;
const COMPACT_KEYS = 2_000;
const CREATE_CONCURRENCY = 16;
/** [5]: objects created, then all but every tenth deleted. */
const SPACE_OBJECTS = quick ? 10_000 : 100_000;
const RSS_SETTLE_MS = quick ? 6_000 : 30_000;
/** The whole run stops by itself after this long ([1+2] runs twice: HTTP/2, then HTTP/1.1). */
const RUN_DEADLINE_MS = 15 * 60_000;

const debug = process.env.BENCH_WATCH_DEBUG ? (...a: unknown[]) => console.error(`[debug ${(performance.now() / 1000).toFixed(1)}s]`, ...a) : () => {};
const clock = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number, d = 1) => n.toFixed(d);

// ───────────────────────────── histogram (shared by both roles) ─────────────────────────────

const BUCKET_MS = 0.05;
const BUCKETS = 60_000 / BUCKET_MS; // up to 60 s

class Histogram {
  readonly counts = new Uint32Array(BUCKETS + 1);
  n = 0;
  max = 0;
  negative = 0;
  add(ms: number): void {
    if (ms < 0) {
      this.negative++;
      ms = 0;
    }
    if (ms > this.max) this.max = ms;
    this.counts[Math.min(BUCKETS, Math.floor(ms / BUCKET_MS))]++;
    this.n++;
  }
  /** The figures so far, then a fresh start (the order check is not affected). */
  restart(): LatencyFigures {
    const figures = { n: this.n, p50: this.percentile(50), p99: this.percentile(99), p999: this.percentile(99.9), max: this.max };
    this.counts.fill(0);
    this.n = 0;
    this.max = 0;
    this.negative = 0;
    return figures;
  }
  percentile(p: number): number {
    const want = Math.ceil((p / 100) * this.n);
    let seen = 0;
    for (let i = 0; i <= BUCKETS; i++) {
      seen += this.counts[i];
      if (seen >= want && seen > 0) return (i + 1) * BUCKET_MS;
    }
    return this.max;
  }
}

// ───────────────────────────── watcher child process ─────────────────────────────

/** How the watchers reach the server: HTTP/2 streams multiplexed as client-go does, or one HTTP/1.1 connection each. */
type Protocol = 'h2' | 'http/1.1';

type ChildRequest =
  | { op: 'clock' }
  | { op: 'open'; protocol: Protocol; url: string; creds: TlsCredentials; path: string; count: number; offsetMs: number }
  | { op: 'progress' }
  | { op: 'restart-latencies' }
  | { op: 'cpu' }
  | { op: 'verify'; expected: number[] };

interface LatencyFigures {
  n: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

interface VerifyResult {
  watchers: number;
  events: number;
  bytes: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  negative: number;
  failures: string[];
  cpuSeconds: number;
  wallSeconds: number;
}

const CRLF = Buffer.from('\r\n');
/** One read buffer for every watcher socket (tls onread): reads are handled synchronously, leftovers copied. */
const READ_BUF = Buffer.allocUnsafe(256 * 1024);

/** A watch on its own HTTP/1.1 TLS connection: raw socket, de-chunked by hand. */
class H1Watcher extends WatchStream {
  private socket!: tls.TLSSocket;
  private headDone = false;
  private rest: Buffer | null = null;
  /** Data bytes of the current chunk still to come; then `skip` bytes of CRLF. */
  private chunkLeft = 0;
  private skip = 0;

  open(host: string, port: number, secureContext: tls.SecureContext, head: string): Promise<void> {
    return new Promise((resolve, reject) => {
      // onread: decrypted bytes land in one reused buffer and reach onData without a Buffer and a
      // stream 'data' event per TLS record.
      const onread = {
        buffer: READ_BUF,
        callback: (nread: number, buf: Buffer) => {
          try {
            this.onData(buf.subarray(0, nread), resolve, reject);
          } catch (e) {
            this.fail(`client parse error: ${(e as Error).message}`);
          }
          return true;
        },
      };
      // No ALPN offered: the server answers HTTP/1.1.
      const options = { host, port, secureContext, servername: 'localhost', onread };
      this.socket = tls.connect(options as tls.ConnectionOptions, () => {
        this.socket.setNoDelay(true);
        this.socket.write(head);
      });
      this.socket.once('error', reject);
      this.socket.on('close', () => {
        if (!this.ended) this.fail('connection closed by the server before the end of the stream');
        this.ended = true;
      });
    });
  }

  close(): void {
    this.ended = true;
    this.socket.destroy();
  }

  private onData(d: Buffer, opened: () => void, refused: (e: Error) => void): void {
    const now = clock();
    this.bytes += d.length;
    const buf = this.rest ? Buffer.concat([this.rest, d]) : d;
    this.rest = null;
    let pos = 0;
    if (!this.headDone) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) {
        this.rest = Buffer.from(buf);
        return;
      }
      const head = buf.toString('latin1', 0, end);
      if (head.slice(9, 12) !== '200' || !/transfer-encoding:\s*chunked/i.test(head)) {
        refused(new Error(`watch refused: ${head.split('\r\n')[0]}`));
        return;
      }
      this.headDone = true;
      opened();
      pos = end + 4;
    }
    while (pos < buf.length) {
      if (this.skip > 0) {
        const s = Math.min(this.skip, buf.length - pos);
        pos += s;
        this.skip -= s;
        continue;
      }
      if (this.chunkLeft > 0) {
        const take = Math.min(this.chunkLeft, buf.length - pos);
        this.body(buf, pos, pos + take, now);
        pos += take;
        this.chunkLeft -= take;
        if (this.chunkLeft === 0) this.skip = 2;
        continue;
      }
      const eol = buf.indexOf(CRLF, pos);
      if (eol < 0) {
        // Bytes of the (reused) read buffer must be copied to outlive the callback.
        this.rest = Buffer.from(buf.subarray(pos));
        return;
      }
      const size = parseInt(buf.toString('latin1', pos, eol), 16);
      pos = eol + 2;
      if (!(size > 0)) {
        this.ended = true;
        this.fail('stream ended (zero-length chunk) before the benchmark did');
        return;
      }
      this.chunkLeft = size;
    }
  }
}

/**
 * Opens `count` watch streams the way client-go's HTTP/2 transport does: streams on one
 * connection until the server's SETTINGS_MAX_CONCURRENT_STREAMS is reached, then a new connection.
 */
async function openH2Watchers(m: Extract<ChildRequest, { op: 'open' }>, hist: Histogram, secureContext: tls.SecureContext): Promise<{ streams: WatchStream[]; sessions: LeanH2Session[] }> {
  const streams: WatchStream[] = [];
  const sessions: LeanH2Session[] = [];
  const opened: Promise<void>[] = [];
  let session: LeanH2Session | undefined;
  for (let i = 0; i < m.count; i++) {
    if (!session || session.openStreams >= session.maxConcurrentStreams) {
      session = await LeanH2Session.open(m.url, secureContext, READ_BUF);
      sessions.push(session);
    }
    const w = new WatchStream(hist, m.offsetMs);
    streams.push(w);
    opened.push(
      new Promise<void>((resolve, reject) => {
        session!.request(m.path, 'application/json', {
          headers: (status) => (status === 200 ? resolve() : reject(new Error(`watch refused: :status ${status}`))),
          data: (buf, start, end) => {
            w.bytes += end - start;
            w.body(buf, start, end, clock());
          },
          end: (why) => {
            if (!w.ended) w.fail(`stream ended before the benchmark did: ${why}`);
            w.ended = true;
            reject(new Error(`watch stream ended: ${why}`));
          },
        });
      }),
    );
  }
  await Promise.all(opened);
  return { streams, sessions };
}

async function watcherChild(): Promise<void> {
  const hist = new Histogram();
  let watchers: WatchStream[] = [];
  let closeAll = () => {};
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  const send = (m: unknown) => process.send!(m);
  process.on('disconnect', () => process.exit(0));
  process.on('message', async (m: ChildRequest) => {
    try {
      if (m.op === 'clock') send({ op: 'clock', t: clock() });
      else if (m.op === 'cpu') {
        const u = process.cpuUsage();
        send({ op: 'cpu', seconds: (u.user + u.system) / 1e6 });
      } else if (m.op === 'open') {
        const u = new URL(m.url);
        const started = performance.now();
        // One secure context for all: parsing the PEMs per connection would dominate opening.
        const secureContext = tls.createSecureContext({ ca: m.creds.ca, cert: m.creds.cert, key: m.creds.key });
        let connections: number;
        if (m.protocol === 'h2') {
          const { streams, sessions } = await openH2Watchers(m, hist, secureContext);
          watchers = streams;
          connections = sessions.length;
          closeAll = () => {
            for (const w of streams) w.ended = true;
            for (const s of sessions) s.close();
          };
        } else {
          const head = `GET ${m.path} HTTP/1.1\r\nHost: ${u.host}\r\nAccept: application/json\r\n\r\n`;
          const h1 = Array.from({ length: m.count }, () => new H1Watcher(hist, m.offsetMs));
          watchers = h1;
          connections = h1.length;
          let next = 0;
          // A bounded number of TLS handshakes at a time.
          await Promise.all(
            Array.from({ length: 32 }, async () => {
              while (next < h1.length) await h1[next++].open(u.hostname, Number(u.port), secureContext, head);
            }),
          );
          closeAll = () => {
            for (const w of h1) w.close();
          };
        }
        send({ op: 'open', ms: performance.now() - started, connections });
      } else if (m.op === 'restart-latencies') {
        send({ op: 'restart-latencies', figures: hist.restart() });
      } else if (m.op === 'progress') {
        let min = Infinity;
        let ended = 0;
        for (const w of watchers) {
          min = Math.min(min, w.n);
          if (w.ended) ended++;
        }
        send({ op: 'progress', min, ended });
      } else if (m.op === 'verify') {
        const failures: string[] = [];
        let events = 0;
        let bytes = 0;
        const exp = m.expected;
        watchers.forEach((w, i) => {
          events += w.n;
          bytes += w.bytes;
          const problems = [...w.failures];
          if (w.n !== exp.length) problems.push(`received ${w.n} events, expected ${exp.length}`);
          for (let j = 0; j < Math.min(w.n, exp.length); j++) {
            if (w.rvs[j] !== exp[j]) {
              problems.push(`event #${j}: resourceVersion ${w.rvs[j]}, expected ${exp[j]}`);
              break;
            }
          }
          if (problems.length && failures.length < 20) failures.push(`watcher ${i}: ${problems.join('; ')}`);
        });
        const cpu = process.cpuUsage(cpu0);
        const result: VerifyResult = {
          watchers: watchers.length,
          events,
          bytes,
          p50: hist.percentile(50),
          p99: hist.percentile(99),
          p999: hist.percentile(99.9),
          max: hist.max,
          negative: hist.negative,
          failures,
          cpuSeconds: (cpu.user + cpu.system) / 1e6,
          wallSeconds: (performance.now() - wall0) / 1000,
        };
        closeAll();
        send({ op: 'verify', result });
      }
    } catch (e) {
      send({ op: 'error', message: (e as Error).message });
    }
  });
  send({ op: 'ready' });
}

// ───────────────────────────── server process helpers ─────────────────────────────

const children = new Set<ChildProcess>();
/** Temporary data dirs, removed even when the run is aborted. */
const tempDirs = new Set<string>();

function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(d);
  return d;
}

/** --cpu-prof=DIR (as in bench.ts): each benchmark server writes a V8 CPU profile there when it stops. */
const CPU_PROF_DIR = process.argv.find((a) => a.startsWith('--cpu-prof='))?.slice('--cpu-prof='.length);

/** Makes the server collect garbage on SIGUSR2, for RSS readings (settledRssKb). */
const GC_ON_SIGNAL = ['--expose-gc', '--import', 'data:text/javascript,process.on("SIGUSR2",()=>{globalThis.gc();globalThis.gc()})'];

async function startBenchServer(dataDir: string, connections: number): Promise<Server> {
  const nodeArgs = [...GC_ON_SIGNAL, ...(CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : []), ...(process.env.HEARTH_STORAGE_TRACE ? MAIN_THREAD_TRACE : [])];
  const s = await startHearth(dataDir, { connections, nodeArgs, args: ['--compaction-interval', '0'], onUnexpectedExit: abort, onOutput: (l) => debug(`server: ${l}`) });
  children.add(s.proc);
  s.proc.on('exit', () => children.delete(s.proc));
  return s;
}

/** Replaces the server's client connections: the server closes keep-alive connections idle for 65 s. */
async function freshConnections(s: Server, n = s.conns.length): Promise<void> {
  for (const c of s.conns) c.close();
  s.conns = await Promise.all(Array.from({ length: n }, () => LeanConnection.open(s.url, s.creds)));
}

function abort(why: string): never {
  console.error(`bench-watch: ${why}; stopping`);
  for (const c of children) c.kill('SIGKILL');
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
  process.exit(3);
}

async function listRv(s: Server, ns: string): Promise<number> {
  const r = await request(s, 'GET', `/api/v1/namespaces/${ns}/configmaps?limit=1`);
  if (r.status !== 200) throw new Error(`list: ${r.status} ${r.body}`);
  return Number(JSON.parse(r.body).metadata.resourceVersion);
}

/** Creates ConfigMaps with CREATE_CONCURRENCY clients until `count` are made or `until()` says stop; records each create's latency. */
async function createMany(
  s: Server,
  ns: string,
  opts: { count?: number; until?: () => boolean; prefix: string; record?: (start: number, end: number) => void },
): Promise<number> {
  let next = 0;
  let done = 0;
  const worker = async (conn: LeanConnection) => {
    for (;;) {
      if (opts.until?.()) return;
      const i = next++;
      if (opts.count !== undefined && i >= opts.count) return;
      const start = performance.now();
      const r = await request(s, 'POST', `/api/v1/namespaces/${ns}/configmaps`, configMap(ns, `${opts.prefix}-${i}`, { 'config.yaml': 'x'.repeat(200), mode: 'fast' }), conn);
      opts.record?.(start, performance.now());
      if (r.status !== 201) throw new Error(`create: ${r.status} ${r.body}`);
      done++;
    }
  };
  await Promise.all(s.conns.slice(0, CREATE_CONCURRENCY).map(worker));
  return done;
}

/**
 * RSS once the process has been idle for a while. Left alone, V8 gives garbage pages back in
 * steps (its memory reducer, about 8 and 25 s after allocation stops), and garbage from before a
 * reading (warm-up creates, opening watches) can be there or gone: readings a few MB apart, which
 * is several KB per watcher. So the server collects garbage every 2 s while it settles (SIGUSR2,
 * see startBenchServer), both readings wait the same time, and each is the median of 5 samples.
 */
async function settledRssKb(pid: number): Promise<number> {
  for (let waited = 0; waited < RSS_SETTLE_MS; waited += 2000) {
    process.kill(pid, 'SIGUSR2');
    await sleep(2000);
  }
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    samples.push(rssKb(pid));
    await sleep(200);
  }
  return samples.sort((a, b) => a - b)[2];
}

// ───────────────────────────── the watcher child, seen from the main process ─────────────────────────────

class WatcherPool {
  private constructor(private readonly proc: ChildProcess) {}

  static async start(): Promise<WatcherPool> {
    // With --cpu-prof=DIR the watcher process is profiled too (is the client what lags?).
    const prof = CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : [];
    const proc = spawn(process.execPath, [...prof, '--import', 'tsx', SELF, '--watcher-child'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.add(proc);
    proc.on('exit', () => children.delete(proc));
    const pool = new WatcherPool(proc);
    await pool.next('ready');
    return pool;
  }

  get pid(): number {
    return this.proc.pid!;
  }

  private next(op: string): Promise<any> {
    return new Promise((resolve, reject) => {
      const onMessage = (m: any) => {
        if (m.op === op || m.op === 'error') {
          this.proc.off('message', onMessage);
          this.proc.off('exit', onExit);
          if (m.op === 'error') reject(new Error(`watcher process: ${m.message}`));
          else resolve(m);
        }
      };
      const onExit = (c: number) => reject(new Error(`watcher process exited with ${c}`));
      this.proc.on('message', onMessage);
      this.proc.once('exit', onExit);
    });
  }

  ask(m: ChildRequest): Promise<any> {
    const reply = this.next(m.op);
    this.proc.send(m);
    return reply;
  }

  /** childClock - mainClock, from the IPC round trip with the smallest delay. */
  async clockOffset(): Promise<{ offset: number; rtt: number }> {
    let best = { offset: 0, rtt: Infinity };
    for (let i = 0; i < 50; i++) {
      const t0 = clock();
      const { t } = await this.ask({ op: 'clock' });
      const t1 = clock();
      if (t1 - t0 < best.rtt) best = { offset: t - (t0 + t1) / 2, rtt: t1 - t0 };
    }
    return best;
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.proc.disconnect();
    await exited;
  }
}

// ───────────────────────────── 1 + 2: watch fan-out and idle watcher memory ─────────────────────────────

interface WatchFigures {
  protocol: Protocol;
  /** TLS connections the watchers used. */
  connections: number;
  watchers: number;
  rssBaseKb: number;
  rssWatchersKb: number;
  openMs: number;
  /** Measured creates (after the warm-up's). */
  writes: number;
  warmupWrites: number;
  /** Delivery latency during the warm-up: the fan-out's and the watchers' cold start. */
  cold: LatencyFigures;
  writeSeconds: number;
  createP50: number;
  createP99: number;
  deliveryWaitMs: number;
  /** Watcher process CPU from the first write until every event was received, per second of that window. */
  clientCpuPerSecond: number;
  result: VerifyResult;
  offset: { offset: number; rtt: number };
  serverCpuPerSecond: number;
  /** The server's main thread alone (requests and watch fan-out; storage runs on threads of its own). */
  mainThreadCpuPerSecond: number;
}

/** CPU seconds of the server's main thread (its thread id is the process id). */
function mainThreadCpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

async function watchBench(s: Server, protocol: Protocol): Promise<WatchFigures> {
  await createNamespace(s, 'w');
  await createNamespace(s, 'warm');
  // Warm the create path so the baseline is a steady-state server, not a fresh one.
  const warmEnd = performance.now() + 1500;
  await createMany(s, 'warm', { prefix: 'warm', until: () => performance.now() > warmEnd });

  const pool = await WatcherPool.start();
  try {
    const offset = await pool.clockOffset();
    debug('baseline RSS');
    const rssBaseKb = await settledRssKb(s.proc.pid!);
    const fromRv = await listRv(s, 'w');
    const path = `/api/v1/namespaces/w/configmaps?watch=1&resourceVersion=${fromRv}`;
    debug('opening watchers');
    const opened = await pool.ask({ op: 'open', protocol, url: s.url, creds: s.creds, path, count: WATCHERS, offsetMs: offset.offset });
    debug('watchers open; RSS');
    const rssWatchersKb = await settledRssKb(s.proc.pid!);
    debug('writes');

    // ~WRITE_RATE creates/s, paced; each carries its send time in data["bench-t"]. Every
    // watcher must get every one of them, in order, warm-up included.
    const rvs: number[] = [];
    const writes = (seconds: number) => pacedCreates(s, seconds, rvs);
    // Warm-up under the same load, watchers attached: the fan-out and the watchers' code paths
    // start cold (the create path was warmed above, before any watcher), and the first seconds
    // of delivery are that cold start. It is reported apart; the target is judged on the steady
    // state that follows it.
    await writes(WATCH_WARMUP_SECONDS);
    await caughtUp(pool, rvs.length, WATCHERS);
    const cold: LatencyFigures = (await pool.ask({ op: 'restart-latencies' })).figures;
    const clientCpu0: number = (await pool.ask({ op: 'cpu' })).seconds;
    const start = performance.now();
    const cpu0 = serverCpuSeconds(s.proc.pid!);
    const mainCpu0 = mainThreadCpuSeconds(s.proc.pid!);
    const measured = await writes(WRITE_SECONDS);
    const writeSeconds = measured.seconds;
    const createLat = measured.createLatencies;
    const serverCpuPerSecond = (serverCpuSeconds(s.proc.pid!) - cpu0) / writeSeconds;
    const mainThreadCpuPerSecond = (mainThreadCpuSeconds(s.proc.pid!) - mainCpu0) / writeSeconds;
    rvs.sort((a, b) => a - b);

    // Let every watcher catch up (bounded), then check each one's sequence against the writes.
    debug(`writes done: ${rvs.length}`);
    const waitStart = performance.now();
    await caughtUp(pool, rvs.length, WATCHERS);
    const deliveryWaitMs = performance.now() - waitStart;
    const clientCpuPerSecond = ((await pool.ask({ op: 'cpu' })).seconds - clientCpu0) / ((performance.now() - start) / 1000);
    const { result } = await pool.ask({ op: 'verify', expected: rvs });
    createLat.sort((a, b) => a - b);
    return {
      protocol,
      connections: opened.connections,
      watchers: WATCHERS,
      rssBaseKb,
      rssWatchersKb,
      openMs: opened.ms,
      writes: measured.count,
      warmupWrites: rvs.length - measured.count,
      cold,
      writeSeconds,
      createP50: percentile(createLat, 50),
      createP99: percentile(createLat, 99),
      deliveryWaitMs,
      clientCpuPerSecond,
      result,
      offset,
      serverCpuPerSecond,
      mainThreadCpuPerSecond,
    };
  } finally {
    await pool.stop();
  }
}

/** Until every watcher has `count` events (or all ended), bounded at two minutes. */
async function caughtUp(pool: WatcherPool, count: number, watchers: number): Promise<void> {
  const waitStart = performance.now();
  for (;;) {
    const p = await pool.ask({ op: 'progress' });
    debug('progress', p);
    if (p.min >= count || p.ended === watchers || performance.now() - waitStart > 120_000) return;
    await sleep(100);
  }
}

/** ~WRITE_RATE ConfigMap creates/s into the watched namespace for `seconds`; their resourceVersions are appended to `rvs`. */
async function pacedCreates(s: Server, seconds: number, rvs: number[]): Promise<{ count: number; seconds: number; createLatencies: number[] }> {
  await freshConnections(s);
  const createLat: number[] = [];
  const free = s.conns.slice(0, WRITE_CONNS);
  const first = rvs.length;
  let sent = 0;
  let inFlight = 0;
  let failure: Error | undefined;
  const start = performance.now();
  const end = start + seconds * 1000;
  const launch = (conn: LeanConnection) => {
    const i = first + sent++;
    inFlight++;
    const t = clock();
    const body = Buffer.from(JSON.stringify(configMap('w', `w-${i}`, { 'bench-t': String(t), mode: 'watched' })));
    conn.request('POST', '/api/v1/namespaces/w/configmaps', body).then(
      (r) => {
        inFlight--;
        createLat.push(clock() - t);
        if (r.status !== 201) failure ??= new Error(`create: ${r.status} ${r.body}`);
        else rvs.push(Number(JSON.parse(r.body.toString()).metadata.resourceVersion));
        free.push(conn);
        pump();
      },
      (e) => {
        inFlight--;
        failure ??= e;
      },
    );
  };
  const pump = () => {
    const now = performance.now();
    if (now >= end) return;
    const due = Math.floor(((now - start) / 1000) * WRITE_RATE);
    while (sent < due && free.length) launch(free.pop()!);
  };
  const timer = setInterval(pump, 1);
  await sleep(seconds * 1000);
  clearInterval(timer);
  while (inFlight > 0) await sleep(5);
  if (failure) throw failure;
  return { count: rvs.length - first, seconds: (performance.now() - start) / 1000, createLatencies: createLat };
}

/** Runs [1+2] for one protocol and prints its figures. */
async function watchSection(s: Server, protocol: Protocol, failures: string[]): Promise<WatchFigures> {
  const how = protocol === 'h2' ? 'HTTP/2 streams as client-go opens them: a new connection when one reaches the server\'s SETTINGS_MAX_CONCURRENT_STREAMS' : 'HTTP/1.1, one TLS connection per watcher';
  console.log(`\n[1+2] ${WATCHERS} watchers (${how}), ~${WRITE_RATE} creates/s for ${WRITE_SECONDS} s …`);
  const w = await watchBench(s, protocol);
  failures.push(...w.result.failures.map((f) => `watch (${protocol}): ${f}`));
  const r = w.result;
  console.log(`  ${WATCHERS} watches on ${w.connections} TLS connection${w.connections === 1 ? '' : 's'}, opened in ${fmt(w.openMs, 0)} ms; clock offset watcher-main ${fmt(w.offset.offset, 3)} ms (IPC rtt ${fmt(w.offset.rtt, 3)} ms)`);
  console.log(`  writes: ${w.writes} in ${fmt(w.writeSeconds, 1)} s = ${fmt(w.writes / w.writeSeconds, 0)}/s (create p50 ${fmt(w.createP50, 1)} ms, p99 ${fmt(w.createP99, 1)} ms); server CPU ${fmt(w.serverCpuPerSecond * 100, 0)}% of a core (main thread ${fmt(w.mainThreadCpuPerSecond * 100, 0)}%)`);
  console.log(`  delivered ${r.events} events (${fmt(r.bytes / 1e6, 1)} MB); catch-up wait after the last write ${fmt(w.deliveryWaitMs, 0)} ms; watcher process CPU ${fmt(w.clientCpuPerSecond * 100, 0)}% of a core meanwhile`);
  console.log(`  delivery latency during the ${WATCH_WARMUP_SECONDS} s warm-up (${w.warmupWrites} creates, watchers attached; cold start, not judged): p50 ${fmt(w.cold.p50, 2)} ms, p99 ${fmt(w.cold.p99, 2)} ms, max ${fmt(w.cold.max, 1)} ms`);
  console.log(`  delivery latency p50 ${fmt(r.p50, 2)} ms, p99 ${fmt(r.p99, 2)} ms, p99.9 ${fmt(r.p999, 2)} ms, max ${fmt(r.max, 1)} ms${r.negative ? ` (${r.negative} negative, clamped)` : ''}`);
  console.log(`  order/gap/duplicate check: ${r.failures.length ? `FAILED for ${r.failures.length}${r.failures.length >= 20 ? '+' : ''} watchers` : `ok (every watcher got all ${w.writes + w.warmupWrites} events in order)`}`);
  for (const f of r.failures.slice(0, 5)) console.log(`    ${f}`);
  console.log(`  server RSS: ${fmt(w.rssBaseKb / 1024, 1)} MB idle → ${fmt(w.rssWatchersKb / 1024, 1)} MB with ${WATCHERS} idle watchers = ${fmt((w.rssWatchersKb - w.rssBaseKb) / WATCHERS, 1)} KB each`);
  return w;
}

// ───────────────────────────── 3: exact-resourceVersion list from the log ─────────────────────────────

interface ListFigures {
  exactMedian: number;
  exactAll: number[];
  currentMedian: number;
  failures: string[];
}

async function exactListBench(s: Server): Promise<ListFigures> {
  const ns = 'snap';
  await freshConnections(s);
  await createNamespace(s, ns);
  await createMany(s, ns, { count: LIST_SIZE, prefix: 's' });
  const oldRv = await listRv(s, ns);
  // Update LIST_UPDATES of them: the snapshot at oldRv now differs from the current table.
  let next = 0;
  await Promise.all(
    s.conns.slice(0, CREATE_CONCURRENCY).map(async (conn) => {
      for (;;) {
        const i = next++;
        if (i >= LIST_UPDATES) return;
        const name = `s-${Math.floor((i * LIST_SIZE) / LIST_UPDATES)}`;
        const r = await request(s, 'PATCH', `/api/v1/namespaces/${ns}/configmaps/${name}`, { data: { mode: 'updated' } }, conn, 'application/merge-patch+json');
        if (r.status !== 200) throw new Error(`patch: ${r.status} ${r.body}`);
      }
    }),
  );
  const failures: string[] = [];
  const timeList = async (query: string, check: boolean): Promise<number> => {
    const t = performance.now();
    const r = await s.conns[0].request('GET', `/api/v1/namespaces/${ns}/configmaps${query}`);
    const ms = performance.now() - t;
    if (r.status !== 200) {
      failures.push(`list${query}: ${r.status} ${r.body.toString().slice(0, 200)}`);
      return ms;
    }
    if (check) {
      const list = JSON.parse(r.body.toString());
      const items: any[] = list.items;
      const names = new Set(items.map((o) => o.metadata.name));
      const newer = items.filter((o) => Number(o.metadata.resourceVersion) > oldRv).length;
      const updated = items.filter((o) => o.data?.mode !== 'fast').length;
      if (list.metadata.resourceVersion !== String(oldRv)) failures.push(`exact list answered resourceVersion ${list.metadata.resourceVersion}, asked ${oldRv}`);
      if (items.length !== LIST_SIZE || names.size !== LIST_SIZE || newer || updated) {
        failures.push(`exact list: ${items.length} items, ${names.size} names, ${newer} newer than ${oldRv}, ${updated} updated (want ${LIST_SIZE}, ${LIST_SIZE}, 0, 0)`);
      }
    }
    return ms;
  };
  const exactAll: number[] = [];
  const current: number[] = [];
  for (let i = 0; i < 5; i++) {
    exactAll.push(await timeList(`?resourceVersion=${oldRv}&resourceVersionMatch=Exact`, i === 0));
    current.push(await timeList('', false));
  }
  const sorted = [...exactAll].sort((a, b) => a - b);
  return { exactMedian: sorted[2], exactAll, currentMedian: [...current].sort((a, b) => a - b)[2], failures: [...new Set(failures)] };
}

// ───────────────────────────── 4: writer stall during compaction ─────────────────────────────

/** --only=compaction: only [4]; --compact-rows=N overrides the log size. */
const compactionOnly = process.argv.includes('--only=compaction');
/**
 * Creates are timed in a window this long before the compaction and another after it: the
 * machine's own worst waits (fsync, scheduling), which a create sees with or without compaction.
 */
const CONTROL_MS = 3000;
/** What follows the compaction (the checkpointer catching up on the WAL it wrote) counts as during it. */
const SETTLE_MS = 1000;
/** --trace-storage[=DIR]: the storage threads log every commit, slice and checkpoint (HEARTH_STORAGE_TRACE); printed next to the slowest creates, the raw logs kept in DIR. */
const traceStorageArg = process.argv.find((a) => a === '--trace-storage' || a.startsWith('--trace-storage='));
const traceStorage = traceStorageArg !== undefined;
const traceKeepDir = traceStorageArg?.split('=')[1];

/**
 * With --trace-storage, the server's main thread logs (in the storage threads' trace format) its
 * garbage collections and every event-loop stall over 10 ms, with its run-queue wait over the
 * stall (CPU starvation vs work of its own).
 */
const MAIN_THREAD_TRACE = [
  '--import',
  `data:text/javascript,${encodeURIComponent(`
import { appendFileSync, readFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
const file = process.env.HEARTH_STORAGE_TRACE + '.main.log';
const wait = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[1]) / 1e6;
let lines = [];
const add = (kind, start, ms, w, d) => lines.push([kind, (performance.timeOrigin + start).toFixed(2), ms.toFixed(2), 0, w.toFixed(2), d].join(' '));
new PerformanceObserver((l) => { for (const e of l.getEntries()) add('gc', e.startTime, e.duration, 0, e.detail?.kind ?? ''); }).observe({ entryTypes: ['gc'] });
let last = performance.now(), lastWait = wait();
setInterval(() => {
  const now = performance.now(), w = wait();
  if (now - last > 15) add('lag', last + 5, now - last - 5, w - lastWait, '');
  last = now; lastWait = w;
  if (lines.length > 100) { appendFileSync(file, lines.join('\\n') + '\\n'); lines = []; }
}, 5).unref();
setInterval(() => { if (lines.length) { appendFileSync(file, lines.join('\\n') + '\\n'); lines = []; } }, 500).unref();
`)}`,
];

interface TraceSpan {
  thread: string;
  kind: string;
  /** Epoch ms. */
  start: number;
  wall: number;
  cpu: number;
  wait: number;
  details: string[];
}

function printStorageTrace(dataDir: string, creates: { start: number; end: number }[], compactStart: number): void {
  const spans: TraceSpan[] = [];
  for (const thread of ['main', 'writer', 'checkpointer']) {
    const f = join(dataDir, `trace.${thread}.log`);
    if (!existsSync(f)) continue;
    if (traceKeepDir) copyFileSync(f, join(traceKeepDir, `trace.${thread}.log`));
    for (const line of readFileSync(f, 'utf8').split('\n')) {
      const [kind, start, wall, cpu, wait, ...details] = line.split(' ');
      if (kind) spans.push({ thread, kind, start: Number(start), wall: Number(wall), cpu: Number(cpu), wait: Number(wait), details });
    }
  }
  const t0 = performance.timeOrigin + compactStart;
  const during = spans.filter((x) => x.start >= t0);
  // /proc's per-thread CPU time is only brought up to date at scheduler ticks, too coarse for
  // millisecond spans; its run-queue wait is exact, so busy = wall − wait is CPU plus I/O.
  console.log(`  storage trace since the compaction began (ms; wall, run-queue wait of the thread (CPU starvation), busy = wall − wait):`);
  for (const kind of [...new Set(during.map((x) => x.kind))]) {
    const of = during.filter((x) => x.kind === kind);
    const q = (k: 'wall' | 'wait' | 'busy') => {
      const v = of.map((x) => (k === 'busy' ? x.wall - x.wait : x[k])).sort((a, b) => a - b);
      return `${k} p50 ${fmt(percentile(v, 50), 2)} p99 ${fmt(percentile(v, 99), 2)} max ${fmt(v[v.length - 1], 2)}`;
    };
    console.log(`    ${kind.padEnd(7)} n=${String(of.length).padEnd(6)} ${q('wall')}; ${q('wait')}; ${q('busy')}`);
  }
  // Distinct moments only: creates that waited for the same thing end together.
  const slowest = [...creates].sort((a, b) => b.end - b.start - (a.end - a.start)).filter((c, i, all) => all.findIndex((o) => Math.abs(o.end - c.end) < 20) === i).slice(0, 5);
  console.log(`  slowest creates during compaction, with the storage spans that overlap them:`);
  for (const c of slowest) {
    const s0 = performance.timeOrigin + c.start;
    const s1 = performance.timeOrigin + c.end;
    console.log(`    at +${fmt(s0 - t0, 0)} ms: ${fmt(c.end - c.start, 1)} ms`);
    for (const x of spans.filter((x) => x.start < s1 && x.start + x.wall > s0)) {
      console.log(`      ${x.thread.slice(0, 6)} ${x.kind.padEnd(7)} +${fmt(x.start - s0, 1).padStart(6)} wall ${fmt(x.wall, 2).padStart(6)} wait ${fmt(x.wait, 2).padStart(6)}  ${x.details.join(' ')}`);
    }
  }
}

function serverIo(pid: number): { wchar: number; cpu: number } {
  const wchar = Number(/wchar:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? NaN);
  return { wchar, cpu: serverCpuSeconds(pid) };
}

async function compactionOnlyMain(): Promise<void> {
  console.log(`\n[4] compaction of ${COMPACT_ROWS} log rows under 16 concurrent creators … (${new Date().toISOString()})`);
  const c = await compactionBench();
  printCompaction(c);
  compactionSummary(c);
  if (c.failures.length) process.exitCode = 1;
}

function printCompaction(c: CompactionFigures): void {
  console.log(`  log built in ${fmt(c.buildSeconds, 1)} s; compaction took ${fmt(c.compactSeconds, 1)} s: ${c.removedEvents} events removed in ${c.slices} slices, longest slice ${fmt(c.longestSliceMs, 2)} ms, longest writer pause ${fmt(c.longestPauseMs, 2)} ms; WAL file ${fmt(c.walMb, 1)} MB afterwards; server wrote ${fmt(c.writtenMb, 0)} MB (WAL, database, sockets) and used ${fmt(c.cpuSeconds, 1)} s CPU meanwhile`);
  const line = (l: CompactionFigures['during']) => `p50 ${fmt(l.p50, 2)} ms, p99 ${fmt(l.p99, 2)} ms, p99.9 ${fmt(l.p999, 2)} ms, max ${fmt(l.max, 1)} ms (${l.n} creates)`;
  console.log(`  create latency without compaction (${CONTROL_MS / 1000} s before it and ${CONTROL_MS / 1000} s after it): ${line(c.baseline)}`);
  console.log(`  create latency during it (and ${SETTLE_MS / 1000} s after): ${line(c.during)}`);
  console.log(`  space given back after it: ${c.pagesReleased} pages in ${c.vacuumSlices} vacuum slices (longest ${fmt(c.longestVacuumMs, 2)} ms); hearth.db ${fmt(c.fileMbBefore, 1)} MB before, ${fmt(c.fileMbAfter, 1)} MB after`);
  for (const f of c.failures) console.log(`    ${f}`);
}

function compactionSummary(c: CompactionFigures): void {
  console.log(`${mark(c.longestSliceMs <= 20)} compaction of ${COMPACT_ROWS} rows, longest slice (server): ${fmt(c.longestSliceMs, 2)} ms (target ≤ 20 ms)`);
  console.log(`${mark(c.stallMs <= 20)} compaction writer stall (client: worst create during − worst create without, same stream of creates): ${fmt(c.during.max, 1)} − ${fmt(c.baseline.max, 1)} = ${fmt(c.stallMs, 1)} ms (target ≤ 20 ms)`);
  console.log(`info compaction writer stall (server: longest stretch of compaction work on the writer thread): ${fmt(c.longestPauseMs, 2)} ms; worst create during − p50 without: ${fmt(c.during.max - c.baseline.p50, 1)} ms`);
  console.log(`${mark(c.longestVacuumMs <= 20)} incremental vacuum after the compaction, longest slice (server): ${fmt(c.longestVacuumMs, 2)} ms over ${c.vacuumSlices} slices (target ≤ 20 ms; its stall is in the client figure above); hearth.db ${fmt(c.fileMbBefore, 1)} → ${fmt(c.fileMbAfter, 1)} MB`);
}

interface CompactionFigures {
  rows: number;
  buildSeconds: number;
  compactSeconds: number;
  removedEvents: number;
  slices: number;
  longestSliceMs: number;
  /** The longest the writer thread spent on compaction work at a stretch (slices, and the WAL tail copies they cause). */
  longestPauseMs: number;
  /** Creates in the CONTROL_MS windows before and after the compaction. */
  baseline: { n: number; p50: number; p99: number; p999: number; max: number };
  /** Creates during the compaction and SETTLE_MS after it. */
  during: { n: number; p50: number; p99: number; p999: number; max: number };
  /** What compaction added to the worst create: worst during − worst without. */
  stallMs: number;
  /** The WAL file's size after the compaction: the furthest it grew (it is reused from its start, not shrunk). */
  walMb: number;
  /** Pages given back after the compaction (incremental vacuum slices), and the longest slice. */
  pagesReleased: number;
  vacuumSlices: number;
  longestVacuumMs: number;
  /** hearth.db before the compaction and once the checkpointer has cut it after. */
  fileMbBefore: number;
  fileMbAfter: number;
  /** Server process over the compaction (creates included): bytes it passed to write calls (WAL, database and, a little, sockets: /proc/PID/io wchar), and CPU seconds. */
  writtenMb: number;
  cpuSeconds: number;
  failures: string[];
}

function buildLog(file: string, rows: number): void {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  const seq = (db.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'events'`).get() as { seq: number } | undefined)?.seq ?? 0;
  const insertEvent = db.prepare('INSERT INTO events (rv, type, res, ns, name, uid, prev_rv, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const upsert = db.prepare(`INSERT INTO objects (res, ns, name, rv, uid, data) VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (res, ns, name) DO UPDATE SET rv = excluded.rv, uid = excluded.uid, data = excluded.data`);
  const uids = Array.from({ length: COMPACT_KEYS }, () => randomUUID());
  const created = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const objectAt = (i: number, rv: number) => {
    const k = i % COMPACT_KEYS;
    return {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `c-${k}`, namespace: 'compact', uid: uids[k], resourceVersion: String(rv), creationTimestamp: created, labels: { app: 'bench' } },
      data: { n: String(i) },
    };
  };
  const insertRange = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const rv = seq + 1 + i;
      const k = i % COMPACT_KEYS;
      insertEvent.run(rv, i < COMPACT_KEYS ? 1 : 2, 'configmaps', 'compact', `c-${k}`, uids[k], i < COMPACT_KEYS ? null : rv - COMPACT_KEYS, encodeObject(objectAt(i, rv)));
    }
  });
  for (let from = 0; from < rows; from += 50_000) insertRange(from, Math.min(rows, from + 50_000));
  db.transaction(() => {
    // The newest version of each key is its current object.
    for (let i = Math.max(0, rows - COMPACT_KEYS); i < rows; i++) {
      const rv = seq + 1 + i;
      const k = i % COMPACT_KEYS;
      upsert.run('configmaps', 'compact', `c-${k}`, rv, uids[k], encodeObject(objectAt(i, rv)));
    }
    const last = seq + rows;
    // AUTOINCREMENT's high-water mark: the server reads its resourceVersion from here.
    if (db.prepare(`UPDATE sqlite_sequence SET seq = ? WHERE name = 'events'`).run(last).changes === 0) {
      db.prepare(`INSERT INTO sqlite_sequence (name, seq) VALUES ('events', ?)`).run(last);
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

async function compactionBench(): Promise<CompactionFigures> {
  const dataDir = tempDir('hearth-bench-compact-');
  try {
    // First start: PKI, schema (migrations) and the namespaces; then build the log offline.
    let s = await startBenchServer(dataDir, 1);
    await createNamespace(s, 'compact');
    await createNamespace(s, 'cw');
    await stopHearth(s);
    const t0 = performance.now();
    buildLog(join(dataDir, 'hearth.db'), COMPACT_ROWS);
    const buildSeconds = (performance.now() - t0) / 1000;
    const fileMbBefore = statSync(join(dataDir, 'hearth.db')).size / 1024 / 1024;

    if (traceStorage) process.env.HEARTH_STORAGE_TRACE = join(dataDir, 'trace');
    s = await startBenchServer(dataDir, CREATE_CONCURRENCY + 1);
    delete process.env.HEARTH_STORAGE_TRACE;
    const failures: string[] = [];
    const count = await s.conns[0].request('GET', '/api/v1/namespaces/compact/configmaps?limit=1');
    const remaining = Number(JSON.parse(count.body.toString()).metadata.remainingItemCount ?? 0) + 1;
    if (remaining !== COMPACT_KEYS) failures.push(`built log: ${remaining} ConfigMaps served, expected ${COMPACT_KEYS}`);
    // Steady creates: warm-up, a window without compaction, compaction while they continue, and
    // another window without it once the compaction's aftermath (SETTLE_MS, counted as during) is over.
    const samples: { start: number; end: number }[] = [];
    let phase: 'warm' | 'base' | 'compact' | 'after' | 'stop' = 'warm';
    const creates = createMany(
      { ...s, conns: s.conns.slice(1) },
      'cw',
      { prefix: 'cw', until: () => phase === 'stop', record: (start, end) => phase !== 'warm' && samples.push({ start, end }) },
    );
    await sleep(2000);
    phase = 'base';
    const baseStart = performance.now();
    await sleep(CONTROL_MS);
    const io0 = serverIo(s.proc.pid!);
    const compactStart = performance.now();
    phase = 'compact';
    const r = await s.conns[0].request('POST', '/admin/compact');
    const compactEnd = performance.now();
    const io1 = serverIo(s.proc.pid!);
    phase = 'after';
    await sleep(SETTLE_MS + CONTROL_MS);
    const afterEnd = performance.now();
    phase = 'stop';
    await creates;
    if (r.status !== 200) throw new Error(`compact: ${r.status} ${r.body}`);
    const c = JSON.parse(r.body.toString());
    if (c.removedEvents < COMPACT_ROWS - COMPACT_KEYS) failures.push(`compaction removed ${c.removedEvents} events, expected at least ${COMPACT_ROWS - COMPACT_KEYS}`);
    // Every current object stays; the history below the compacted version is gone (410).
    const after = await s.conns[0].request('GET', '/api/v1/namespaces/compact/configmaps?limit=1');
    const left = Number(JSON.parse(after.body.toString()).metadata.remainingItemCount ?? 0) + 1;
    if (left !== COMPACT_KEYS) failures.push(`after compaction: ${left} ConfigMaps served, expected ${COMPACT_KEYS}`);
    const old = await s.conns[0].request('GET', `/api/v1/namespaces/compact/configmaps?resourceVersion=${Number(c.compactedResourceVersion) - 1}&resourceVersionMatch=Exact`);
    if (old.status !== 410) failures.push(`list below the compacted version: ${old.status}, expected 410`);
    const wal = join(dataDir, 'hearth.db-wal');
    const walMb = existsSync(wal) ? statSync(wal).size / 1024 / 1024 : 0;
    const fileMbAfter = (await settledSize(join(dataDir, 'hearth.db'))) / 1024 / 1024;
    await stopHearth(s);

    const stats = (lat: number[]) => {
      lat.sort((a, b) => a - b);
      return { n: lat.length, p50: percentile(lat, 50), p99: percentile(lat, 99), p999: percentile(lat, 99.9), max: lat[lat.length - 1] ?? NaN };
    };
    const without = (x: { start: number; end: number }) => (x.start >= baseStart && x.end <= compactStart) || (x.start >= compactEnd + SETTLE_MS && x.end <= afterEnd);
    const baseline = stats(samples.filter(without).map((x) => x.end - x.start));
    const during = stats(samples.filter((x) => x.end > compactStart && x.start < compactEnd + SETTLE_MS).map((x) => x.end - x.start));
    if (traceStorage) printStorageTrace(dataDir, samples.filter((x) => x.end > compactStart && x.start < compactEnd), compactStart);
    return {
      rows: COMPACT_ROWS,
      buildSeconds,
      compactSeconds: (compactEnd - compactStart) / 1000,
      removedEvents: c.removedEvents,
      slices: c.slices,
      longestSliceMs: c.longestSliceMs,
      longestPauseMs: c.longestPauseMs,
      baseline,
      during,
      stallMs: during.max - baseline.max,
      walMb,
      pagesReleased: c.pagesReleased,
      vacuumSlices: c.vacuumSlices,
      longestVacuumMs: c.longestVacuumMs,
      fileMbBefore,
      fileMbAfter,
      writtenMb: (io1.wchar - io0.wchar) / 1024 / 1024,
      cpuSeconds: io1.cpu - io0.cpu,
      failures,
    };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A file's size once it has not changed for a second (the checkpointer cuts hearth.db after a vacuum); at most 60 s. */
async function settledSize(file: string): Promise<number> {
  let last = statSync(file).size;
  for (let stable = 0, waited = 0; stable < 4 && waited < 60_000; waited += 250) {
    await sleep(250);
    const size = statSync(file).size;
    stable = size === last ? stable + 1 : 0;
    last = size;
  }
  return last;
}

// ───────────────────────────── 5: space given back ─────────────────────────────

/** --only=space: only [5]. */
const spaceOnly = process.argv.includes('--only=space');

interface SpaceFigures {
  objects: number;
  kept: number;
  /** hearth.db once every object was written (and the WAL copied back). */
  fullMb: number;
  /** After deleting 90%, before compacting: deletes alone give nothing back. */
  deletedMb: number;
  /** After the compaction and its vacuum slices. */
  afterMb: number;
  /** What the remaining rows hold: the bytes of objects' and events' data. */
  rowsMb: number;
  pagesReleased: number;
  vacuumSlices: number;
  longestVacuumMs: number;
  failures: string[];
}

/** Deletes ConfigMaps by name from CREATE_CONCURRENCY connections. */
async function deleteMany(s: Server, ns: string, names: string[]): Promise<void> {
  let next = 0;
  const worker = async (conn: LeanConnection) => {
    for (let i = next++; i < names.length; i = next++) {
      const r = await request(s, 'DELETE', `/api/v1/namespaces/${ns}/configmaps/${names[i]}`, undefined, conn);
      if (r.status !== 200) throw new Error(`delete ${names[i]}: ${r.status} ${r.body}`);
    }
  };
  await Promise.all(s.conns.slice(0, CREATE_CONCURRENCY).map(worker));
}

async function spaceBench(): Promise<SpaceFigures> {
  const dataDir = tempDir('hearth-bench-space-');
  const file = join(dataDir, 'hearth.db');
  const mb = (bytes: number) => bytes / 1024 / 1024;
  try {
    const s = await startBenchServer(dataDir, CREATE_CONCURRENCY + 1);
    const failures: string[] = [];
    try {
      await createNamespace(s, 'space');
      await createMany({ ...s, conns: s.conns.slice(1) }, 'space', { count: SPACE_OBJECTS, prefix: 'o' });
      const fullMb = mb(await settledSize(file));
      const names = Array.from({ length: SPACE_OBJECTS }, (_, i) => `o-${i}`);
      await deleteMany({ ...s, conns: s.conns.slice(1) }, 'space', names.filter((_, i) => i % 10 !== 0));
      const deletedMb = mb(await settledSize(file));
      const r = await request(s, 'POST', '/admin/compact');
      if (r.status !== 200) throw new Error(`compact: ${r.status} ${r.body}`);
      const c = JSON.parse(r.body);
      const afterMb = mb(await settledSize(file));
      const db = new Database(file, { readonly: true });
      const rowsMb = mb(db.prepare('SELECT (SELECT coalesce(sum(length(data)), 0) FROM objects) + (SELECT coalesce(sum(length(data)), 0) FROM events)').pluck().get() as number);
      db.close();
      const kept = Number(JSON.parse((await request(s, 'GET', '/api/v1/namespaces/space/configmaps?limit=1')).body).metadata.remainingItemCount ?? 0) + 1;
      if (kept !== SPACE_OBJECTS / 10) failures.push(`${kept} ConfigMaps left, expected ${SPACE_OBJECTS / 10}`);
      return { objects: SPACE_OBJECTS, kept, fullMb, deletedMb, afterMb, rowsMb, pagesReleased: c.pagesReleased, vacuumSlices: c.vacuumSlices, longestVacuumMs: c.longestVacuumMs, failures };
    } finally {
      await stopHearth(s);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function printSpace(f: SpaceFigures): void {
  console.log(`  hearth.db with ${f.objects} objects: ${fmt(f.fullMb, 1)} MB; after deleting ${f.objects - f.kept}: ${fmt(f.deletedMb, 1)} MB; after compacting: ${fmt(f.afterMb, 1)} MB (${f.pagesReleased} pages given back in ${f.vacuumSlices} slices, longest ${fmt(f.longestVacuumMs, 2)} ms); the remaining rows hold ${fmt(f.rowsMb, 1)} MB`);
  for (const x of f.failures) console.log(`    ${x}`);
}

function spaceSummary(f: SpaceFigures): void {
  const ratio = f.afterMb / f.rowsMb;
  console.log(`${mark(ratio <= 3 && f.failures.length === 0)} file after deleting 90% of ${f.objects} objects and compacting: ${fmt(f.fullMb, 1)} → ${fmt(f.afterMb, 1)} MB, ${fmt(ratio, 2)}× what the remaining rows hold (target ≤ 3×); longest vacuum slice ${fmt(f.longestVacuumMs, 2)} ms (target ≤ 20 ms)`);
}

async function spaceOnlyMain(): Promise<void> {
  console.log(`\n[5] space given back: ${SPACE_OBJECTS} ConfigMaps created, 90% deleted, compacted … (${new Date().toISOString()})`);
  const f = await spaceBench();
  printSpace(f);
  spaceSummary(f);
  if (f.failures.length) process.exitCode = 1;
}

// ───────────────────────────── main ─────────────────────────────

async function main(): Promise<void> {
  console.log(`hearth watch/list/compaction benchmark${quick ? ' (quick)' : ''} — node ${process.version}, loopback`);
  console.log(`command: ${COMMAND}`);
  if (compactionOnly) return compactionOnlyMain();
  if (spaceOnly) return spaceOnlyMain();
  const failures: string[] = [];

  // HTTP/2 first, on a server of its own (a clean RSS baseline); then HTTP/1.1 for comparison on
  // the server that goes on to [3].
  const watch = new Map<Protocol, WatchFigures>();
  const h2Dir = tempDir('hearth-bench-watch-h2-');
  const s2 = await startBenchServer(h2Dir, WRITE_CONNS);
  try {
    watch.set('h2', await watchSection(s2, 'h2', failures));
  } finally {
    await stopHearth(s2);
    rmSync(h2Dir, { recursive: true, force: true });
  }
  const watchDone = () => {
    console.log(`\n──── summary (${COMMAND}) ────`);
    watchSummary(watch);
    reportFailures(failures);
  };
  if (watchOnly && h2Only) return watchDone();

  const dataDir = tempDir('hearth-bench-watch-');
  let l: ListFigures;
  const s = await startBenchServer(dataDir, WRITE_CONNS);
  try {
    if (!h2Only) watch.set('http/1.1', await watchSection(s, 'http/1.1', failures));
    if (watchOnly) return watchDone();

    console.log(`\n[3] exact-resourceVersion list of ${LIST_SIZE} after ${LIST_UPDATES} updates …`);
    l = await exactListBench(s);
    failures.push(...l.failures.map((f) => `list: ${f}`));
    console.log(`  exact list: median ${fmt(l.exactMedian, 0)} ms (runs ${l.exactAll.map((x) => fmt(x, 0)).join(', ')}); current-table list median ${fmt(l.currentMedian, 0)} ms`);
    for (const f of l.failures) console.log(`    ${f}`);
  } finally {
    await stopHearth(s);
    rmSync(dataDir, { recursive: true, force: true });
  }

  console.log(`\n[4] compaction of ${COMPACT_ROWS} log rows under 16 concurrent creators …`);
  const c = await compactionBench();
  failures.push(...c.failures.map((f) => `compaction: ${f}`));
  printCompaction(c);

  console.log(`\n[5] space given back: ${SPACE_OBJECTS} ConfigMaps created, 90% deleted, compacted …`);
  const space = await spaceBench();
  failures.push(...space.failures.map((f) => `space: ${f}`));
  printSpace(space);

  console.log(`\n──── summary (${COMMAND}) ────`);
  watchSummary(watch);
  console.log(`${mark(l.exactMedian <= 300 && l.failures.length === 0)} exact-rv list of ${LIST_SIZE} from the log: median ${fmt(l.exactMedian, 0)} ms (target ≤ 300 ms)`);
  compactionSummary(c);
  spaceSummary(space);
  reportFailures(failures);
}

const mark = (ok: boolean) => (ok ? 'ok  ' : 'MISS');

function reportFailures(failures: string[]): void {
  if (failures.length) {
    console.log(`\nFAILED checks:`);
    for (const f of failures.slice(0, 20)) console.log(`  ${f}`);
    process.exitCode = 1;
  }
}

function watchSummary(watch: Map<Protocol, WatchFigures>): void {
  for (const [protocol, w] of watch) {
    // The targets are judged on HTTP/2, the way client-go watches; HTTP/1.1 is shown for comparison.
    const judged = protocol === 'h2';
    const perWatcherKb = (w.rssWatchersKb - w.rssBaseKb) / WATCHERS;
    const how = `${protocol === 'h2' ? 'HTTP/2' : 'HTTP/1.1'}, ${WATCHERS} watchers on ${w.connections} connection${w.connections === 1 ? '' : 's'}`;
    console.log(`${judged ? mark(w.result.p99 <= 50) : 'info'} watch delivery (${how}) @ ${fmt(w.writes / w.writeSeconds, 0)} writes/s: p50 ${fmt(w.result.p50, 2)} ms, p99 ${fmt(w.result.p99, 2)} ms (target p99 ≤ 50 ms)`);
    console.log(`${mark(w.result.failures.length === 0)} watch completeness/order (${protocol}): ${w.result.failures.length ? `${w.result.failures.length} watchers failed` : 'every watcher, every event, in order'}`);
    console.log(`${quick || !judged ? 'info' : mark(perWatcherKb <= 10)} server RSS per idle watcher (${how}): ${fmt(perWatcherKb, 1)} KB (target ≤ 10 KB)${quick ? ' — quick run: within GC noise, see the full run' : ''}`);
  }
}

process.on('exit', (code) => {
  // Node's code for "the event loop emptied with the top-level await unsettled": a request whose connection closed silently.
  if (code === 13) console.error('bench-watch: stalled with work pending (a connection closed without answering?)');
});

if (process.argv.includes('--watcher-child')) {
  await watcherChild();
} else {
  const deadline = setTimeout(() => abort(`still running after ${RUN_DEADLINE_MS / 60_000} min`), RUN_DEADLINE_MS);
  deadline.unref();
  process.on('SIGINT', () => abort('interrupted'));
  process.on('SIGTERM', () => abort('terminated'));
  try {
    await main();
  } catch (e) {
    console.error(e);
    for (const c of children) c.kill('SIGKILL');
    process.exitCode = 1;
  }
}
