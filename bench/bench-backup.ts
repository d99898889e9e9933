// npm run bench:backup [-- --quick] [--objects=N]
// How much a backup holds up the server's writes: a hearth (its own process, loopback, temporary
// data dir) with a store of 100,000 ConfigMaps (10,000 with --quick) takes a steady stream of
// creates from 8 connections while
//   1. `hearth backup` (the built program, in a process of its own) copies the store, and
//   2. the server takes a scheduled snapshot itself (--snapshot-interval: a worker thread),
// and the writes during each are compared with the writes just before it: the longest gap
// between two acknowledged writes and the slowest write. The stall a backup causes is the
// slowest write during it less the slowest write without it (the machine's own worst waits —
// fsync, scheduling — happen either way). The copy's time and size are printed too.
// --trace-storage: the storage threads log each commit and checkpoint (HEARTH_STORAGE_TRACE), and
// the longest writer commit during and without each copy is printed: a copy that slowed the
// disk shows there, one that took the CPU does not.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, readdirSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHearth, stopHearth, request, createNamespace, percentile, configMap, type Server } from './bench-kit.ts';
import { DIST_MAIN } from '../scripts/build.mjs';
import type { LeanConnection } from './bench-client.ts';

const quick = process.argv.includes('--quick');
const objectsArg = process.argv.find((a) => a.startsWith('--objects='));
const OBJECTS = objectsArg ? Number(objectsArg.slice('--objects='.length)) : quick ? 10_000 : 100_000;
const WRITERS = 8;
/** Writes before each copy: the "without" figures. */
const BASELINE_MS = quick ? 3_000 : 8_000;
/** What follows a copy (the server's WAL, grown meanwhile, being copied back) counts as during it. */
const SETTLE_MS = 1_000;
const STALL_TARGET_MS = 50;
/** The whole run stops by itself after this long. */
const DEADLINE_MS = quick ? 5 * 60_000 : 20 * 60_000;
const traceStorage = process.argv.includes('--trace-storage');
const COMMAND = `node --import tsx bench/bench-backup.ts ${process.argv.slice(2).join(' ')}`.trim();

interface Write {
  start: number;
  end: number;
}

interface WriteFigures {
  n: number;
  /** The longest time between two consecutive acknowledged writes (any connection). */
  longestGapMs: number;
  p99: number;
  max: number;
}

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (bytes: number) => fmt(bytes / 1024 / 1024, 1);

/** Creates from WRITERS connections until stopped, each write's start and end kept. */
function steadyWrites(s: Server, prefix: string): { writes: Write[]; stop(): Promise<void> } {
  const writes: Write[] = [];
  let running = true;
  let next = 0;
  const worker = async (conn: LeanConnection) => {
    while (running) {
      const start = performance.now();
      const r = await request(s, 'POST', '/api/v1/namespaces/load/configmaps', configMap('load', `${prefix}-${next++}`), conn);
      if (r.status !== 201) throw new Error(`create: ${r.status} ${r.body}`);
      writes.push({ start, end: performance.now() });
    }
  };
  const done = Promise.all(s.conns.slice(1, 1 + WRITERS).map(worker));
  return {
    writes,
    async stop() {
      running = false;
      await done;
    },
  };
}

function figures(writes: Write[], from: number, to: number): WriteFigures {
  const inside = writes.filter((w) => w.end > from && w.start < to);
  const ends = inside.map((w) => w.end).sort((a, b) => a - b);
  let gap = 0;
  for (let i = 1; i < ends.length; i++) gap = Math.max(gap, ends[i] - ends[i - 1]);
  const lat = inside.map((w) => w.end - w.start).sort((a, b) => a - b);
  return { n: inside.length, longestGapMs: gap, p99: percentile(lat, 99), max: lat[lat.length - 1] ?? NaN };
}

async function fill(s: Server): Promise<void> {
  await createNamespace(s, 'fill');
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    s.conns.map(async (conn) => {
      for (let i = next++; i < OBJECTS; i = next++) {
        const r = await request(s, 'POST', '/api/v1/namespaces/fill/configmaps', configMap('fill', `cm-${i}`), conn);
        if (r.status !== 201) throw new Error(`create: ${r.status} ${r.body}`);
      }
    }),
  );
  console.log(`  ${OBJECTS} ConfigMaps created in ${fmt((performance.now() - t0) / 1000)} s`);
}

function runBackup(dataDir: string, output: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DIST_MAIN, 'backup', '--data-dir', dataDir, '--output', output], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`backup exited with ${code}: ${stderr}`))));
  });
}

function report(label: string, without: WriteFigures, during: WriteFigures, copySeconds: number, sizeBytes: number): number {
  const stall = during.max - without.max;
  console.log(`  ${label}: ${fmt(copySeconds, 2)} s, store copy ${mb(sizeBytes)} MB`);
  console.log(`    writes without: ${without.n}, longest gap ${fmt(without.longestGapMs)} ms, p99 ${fmt(without.p99)} ms, slowest ${fmt(without.max)} ms`);
  console.log(`    writes during:  ${during.n}, longest gap ${fmt(during.longestGapMs)} ms, p99 ${fmt(during.p99)} ms, slowest ${fmt(during.max)} ms`);
  return stall;
}

/** With --trace-storage: the writer thread's longest commit (wall, and its run-queue wait) in a window of this process's clock. */
function longestCommit(traceFile: string, from: number, to: number): string {
  if (!existsSync(traceFile)) return 'no trace';
  let longest = { wall: 0, wait: 0 };
  const [t0, t1] = [performance.timeOrigin + from, performance.timeOrigin + to];
  for (const line of readFileSync(traceFile, 'utf8').split('\n')) {
    const [kind, start, wall, , wait] = line.split(' ');
    if (kind === 'batch' && Number(start) >= t0 && Number(start) < t1 && Number(wall) > longest.wall) longest = { wall: Number(wall), wait: Number(wait) };
  }
  return `${fmt(longest.wall)} ms (${fmt(longest.wait)} ms of it waiting for a CPU)`;
}

function traceReport(dataDir: string, without: [number, number], during: [number, number]): void {
  if (!traceStorage) return;
  const file = join(dataDir, 'trace.writer.log');
  console.log(`    longest writer commit without: ${longestCommit(file, ...without)}; during: ${longestCommit(file, ...during)}`);
}

async function main(): Promise<void> {
  console.log(`hearth backup benchmark${quick ? ' (quick)' : ''} — node ${process.version}, loopback, ${OBJECTS} objects, ${WRITERS} writers`);
  console.log(`command: ${COMMAND}`);
  const root = mkdtempSync(join(tmpdir(), 'hearth-bench-backup-'));
  const dataDir = join(root, 'data');
  const servers: Server[] = [];
  const deadline = setTimeout(() => {
    console.error(`bench:backup did not finish within ${DEADLINE_MS / 60_000} min; stopping`);
    for (const s of servers) s.proc.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
    process.exit(2);
  }, DEADLINE_MS);
  const abort = (why: string) => {
    console.error(why);
    process.exit(2);
  };
  const results: { label: string; stall: number; gapDuring: number; gapWithout: number }[] = [];
  // The storage threads append their trace there (read back by traceReport).
  if (traceStorage) process.env.HEARTH_STORAGE_TRACE = join(dataDir, 'trace');
  try {
    // [1] the backup command, from another process.
    let s = await startHearth(dataDir, { connections: WRITERS + 1, args: ['--compaction-interval', '0'], onUnexpectedExit: abort });
    servers.push(s);
    await fill(s);
    await createNamespace(s, 'load');
    console.log(`  store: hearth.db ${mb(statSync(join(dataDir, 'hearth.db')).size)} MB`);
    let load = steadyWrites(s, 'backup');
    await sleep(BASELINE_MS);
    const started = performance.now();
    await runBackup(dataDir, join(root, 'backup'));
    const ended = performance.now();
    await sleep(SETTLE_MS);
    await load.stop();
    const stall = report('[1] npm run backup (another process)', figures(load.writes, started - BASELINE_MS, started), figures(load.writes, started, ended + SETTLE_MS), (ended - started) / 1000, statSync(join(root, 'backup', 'hearth.db')).size);
    traceReport(dataDir, [started - BASELINE_MS, started], [started, ended + SETTLE_MS]);
    results.push({ label: 'backup command', stall, gapDuring: figures(load.writes, started, ended + SETTLE_MS).longestGapMs, gapWithout: figures(load.writes, started - BASELINE_MS, started).longestGapMs });
    await stopHearth(s);
    servers.pop();

    // [2] a scheduled snapshot, taken by the server on its snapshot thread: the first one comes
    // one interval after start, with the writes already going.
    const intervalMs = BASELINE_MS + 2_000;
    let written: { at: number; seconds: number } | undefined;
    s = await startHearth(dataDir, {
      connections: WRITERS + 1,
      args: ['--compaction-interval', '0', '--snapshot-interval', `${intervalMs}ms`],
      onUnexpectedExit: abort,
      onOutput: (line) => {
        const m = /snapshot \S+ written at resourceVersion \d+ in ([\d.]+) s/.exec(line);
        if (m && !written) written = { at: performance.now(), seconds: Number(m[1]) };
      },
    });
    servers.push(s);
    load = steadyWrites(s, 'snapshot');
    while (!written) await sleep(100);
    await sleep(SETTLE_MS);
    await load.stop();
    const snapStart = written.at - written.seconds * 1000;
    const snapshots = join(dataDir, 'snapshots');
    const snapSize = statSync(join(snapshots, readdirSync(snapshots)[0], 'hearth.db')).size;
    const during = figures(load.writes, snapStart, written.at + SETTLE_MS);
    const without = figures(load.writes, snapStart - BASELINE_MS, snapStart);
    results.push({ label: 'scheduled snapshot', stall: report('[2] scheduled snapshot (in the server, its own thread)', without, during, written.seconds, snapSize), gapDuring: during.longestGapMs, gapWithout: without.longestGapMs });
    traceReport(dataDir, [snapStart - BASELINE_MS, snapStart], [snapStart, written.at + SETTLE_MS]);
    await stopHearth(s);
    servers.pop();
  } finally {
    clearTimeout(deadline);
    for (const s of servers) await stopHearth(s);
    rmSync(root, { recursive: true, force: true });
  }
  console.log(`\n──── summary (${COMMAND}) ────`);
  for (const r of results) {
    console.log(`${r.stall <= STALL_TARGET_MS ? 'ok  ' : 'FAIL'} ${r.label}: write stall (slowest write during − slowest without) ${fmt(r.stall)} ms (target ≤ ${STALL_TARGET_MS} ms); longest gap between acknowledged writes ${fmt(r.gapDuring)} ms during vs ${fmt(r.gapWithout)} ms without`);
  }
}

await main();
