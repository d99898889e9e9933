// Backups (`hearth backup`) and scheduled snapshots: a directory holding a consistent copy of the
// store at one resourceVersion (hearth.db, made by SQLite's online backup API on a thread of its
// own: see snapshot-worker.js), the PKI (pki/) and manifest.json (resourceVersion, hearth
// version, schema migration level, time, and each file's size and sha256), which restore checks.
// The directory appears under its final name only once complete (written as NAME.partial-PID,
// flushed, then renamed).
import { Worker } from 'node:worker_threads';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { copyFile, chmod, writeFile, rename, open, stat, mkdir, rm } from 'node:fs/promises';
import { join, dirname } from 'node:path';
import { lockDataDir, DataDirInUseError, type DataDirLock } from '../data-dir/lock.ts';
import { STORE_FILE, PKI_DIR, SNAPSHOTS_DIR } from '../data-dir/layout.ts';
import { PACKAGE_JSON } from '../paths.ts';

export const MANIFEST_FILE = 'manifest.json';
const MANIFEST_FORMAT = 'hearth-backup/v1';

export interface BackupManifest {
  format: typeof MANIFEST_FORMAT;
  /** The newest resourceVersion the copy holds. */
  resourceVersion: string;
  hearthVersion: string;
  /** The newest migration applied to the store (migrations/NNN_*.sql). */
  schemaVersion: number;
  createdAt: string;
  /** Every file of the backup but the manifest, by path relative to it. */
  files: Record<string, { size: number; sha256: string }>;
}

/** workerData of snapshot-worker.js. */
export interface SnapshotWorkerData {
  source: string;
  dest: string;
}

export type SnapshotWorkerMessage =
  | { progress: { done: number; total: number } }
  | { done: { rv: number; schemaVersion: number; size: number; sha256: string } }
  | { error: string };

export interface SnapshotProgress {
  /** Pages copied so far, of total. */
  done: number;
  total: number;
}

/** hearth's own version. */
export const HEARTH_VERSION: string = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')).version;

/** A snapshot being written; cancel() stops it and leaves nothing behind. */
export interface SnapshotRun {
  done: Promise<BackupManifest>;
  cancel(): Promise<void>;
}

/**
 * Writes a snapshot of dataDir's store and PKI into `output` (which must not exist). The caller
 * makes sure that either a server holds dataDir or it does (see backupDataDir).
 */
export function writeSnapshot(dataDir: string, output: string, onProgress?: (p: SnapshotProgress) => void): SnapshotRun {
  const source = join(dataDir, STORE_FILE);
  if (!existsSync(source)) throw new Error(`there is no store to back up: ${source} does not exist`);
  if (existsSync(output)) throw new Error(`${output} already exists; a backup never overwrites one`);
  mkdirSync(dirname(output), { recursive: true });
  const partial = `${output}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  // The PKI's private keys go in it.
  mkdirSync(partial, { mode: 0o700 });
  const worker = new Worker(new URL('./snapshot-worker.js', import.meta.url), { workerData: { source, dest: join(partial, STORE_FILE) } satisfies SnapshotWorkerData, execArgv: [] });
  let cancelled = false;
  const copied = new Promise<{ rv: number; schemaVersion: number; size: number; sha256: string }>((resolve, reject) => {
    worker.on('message', (m: SnapshotWorkerMessage) => {
      if ('progress' in m) onProgress?.(m.progress);
      else if ('done' in m) resolve(m.done);
      else reject(new Error(`cannot copy ${source}: ${m.error}`));
    });
    worker.on('error', reject);
    worker.on('exit', () => reject(new Error(cancelled ? 'snapshot cancelled' : 'the snapshot thread stopped')));
  });
  // The rest is asynchronous file work: in the server, fsyncs must not hold up its event loop.
  const done = (async () => {
    try {
      const db = await copied;
      const files: BackupManifest['files'] = { [STORE_FILE]: { size: db.size, sha256: db.sha256 } };
      for (const name of listPki(dataDir)) {
        const from = join(dataDir, PKI_DIR, name);
        const to = join(partial, PKI_DIR, name);
        await mkdir(dirname(to), { recursive: true, mode: 0o700 });
        await copyFile(from, to);
        await chmod(to, (await stat(from)).mode & 0o777);
        await fsyncPath(to);
        files[`${PKI_DIR}/${name}`] = { size: (await stat(to)).size, sha256: await sha256Of(to) };
      }
      const manifest: BackupManifest = {
        format: MANIFEST_FORMAT,
        resourceVersion: String(db.rv),
        hearthVersion: HEARTH_VERSION,
        schemaVersion: db.schemaVersion,
        createdAt: new Date().toISOString(),
        files,
      };
      await writeFile(join(partial, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n');
      await fsyncPath(join(partial, MANIFEST_FILE));
      if (existsSync(join(partial, PKI_DIR))) await fsyncPath(join(partial, PKI_DIR));
      await fsyncPath(partial);
      await rename(partial, output);
      await fsyncPath(dirname(output));
      return manifest;
    } catch (e) {
      await rm(partial, { recursive: true, force: true });
      throw e;
    } finally {
      void worker.terminate();
    }
  })();
  return {
    done,
    async cancel() {
      cancelled = true;
      await worker.terminate();
      await done.catch(() => {});
    },
  };
}

/**
 * `hearth backup`: a snapshot of dataDir, whether a server runs on it or not. A running server
 * holds the directory's lock; the copy then reads beside it. A stopped directory is locked for
 * the copy's duration, so no server (or restore) starts on it meanwhile.
 */
export async function backupDataDir(dataDir: string, output: string, opts: { onProgress?: (p: SnapshotProgress) => void; log?: (line: string) => void } = {}): Promise<BackupManifest> {
  const log = opts.log ?? (() => {});
  if (!existsSync(join(dataDir, STORE_FILE))) throw new Error(`there is no store to back up: ${join(dataDir, STORE_FILE)} does not exist`);
  let lock: DataDirLock | undefined;
  try {
    lock = lockDataDir(dataDir);
    log(`${dataDir} is not in use: backing up the stopped store`);
  } catch (e) {
    if (!(e instanceof DataDirInUseError)) throw e;
    log(`backing up the running server${e.pid ? ` (pid ${e.pid})` : ''}`);
  }
  try {
    return await writeSnapshot(dataDir, output, opts.onProgress).done;
  } finally {
    lock?.release();
  }
}

export interface SnapshotListing {
  name: string;
  path: string;
  manifest: BackupManifest;
  /** Bytes of its files. */
  size: number;
}

/** The complete snapshots in dataDir/snapshots/, oldest first. */
export function listSnapshots(dataDir: string): SnapshotListing[] {
  const dir = join(dataDir, SNAPSHOTS_DIR);
  if (!existsSync(dir)) return [];
  const out: SnapshotListing[] = [];
  for (const name of readdirSync(dir)) {
    if (name.includes('.partial-')) continue;
    const path = join(dir, name);
    let manifest: BackupManifest;
    try {
      manifest = readManifest(path);
    } catch {
      continue;
    }
    out.push({ name, path, manifest, size: Object.values(manifest.files).reduce((n, f) => n + f.size, 0) });
  }
  return out.sort((a, b) => a.manifest.createdAt.localeCompare(b.manifest.createdAt) || a.name.localeCompare(b.name));
}

/** A backup's manifest, checked for shape (not yet against its files: see restore). */
export function readManifest(backupDir: string): BackupManifest {
  const file = join(backupDir, MANIFEST_FILE);
  let m: BackupManifest;
  try {
    m = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`${backupDir} is not a hearth backup: cannot read ${file}: ${(e as Error).message}`);
  }
  if (m?.format !== MANIFEST_FORMAT || typeof m.resourceVersion !== 'string' || typeof m.schemaVersion !== 'number' || typeof m.files !== 'object' || !m.files?.[STORE_FILE]) {
    throw new Error(`${file} is not a hearth backup manifest (format ${MANIFEST_FORMAT})`);
  }
  return m;
}

/** Relative paths of the files under dataDir/pki (none if there is no PKI). */
function listPki(dataDir: string): string[] {
  const dir = join(dataDir, PKI_DIR);
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true }) as string[]).filter((f) => statSync(join(dir, f)).isFile()).sort();
}

export async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** fsync of a file or a directory (so a rename or a new entry in it is durable). */
export async function fsyncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
