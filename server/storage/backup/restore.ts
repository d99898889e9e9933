// `hearth restore`: makes a data directory a server starts from out of a backup or snapshot
// (backup.ts), with the backup's CA and objects.
//
// Clients that watched the old server may hold resourceVersions newer than the backup's. Were
// the restored server to hand out those numbers again for other changes, an informer resuming a
// watch from one would silently miss everything in between. So restore does what
// `etcdutl snapshot restore --bump-revision --mark-compacted` does (the etcd and Kubernetes
// guidance, kubernetes/kubernetes#118501): the resourceVersion sequence jumps by a large amount
// (1,000,000,000 by default, the figure that guidance uses), and everything up to the new start is
// marked compacted, so a list or watch from any older resourceVersion answers 410 Gone and
// clients relist. The compaction this leaves pending removes the old history at the next run.
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, copyFileSync, chmodSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { lockDataDir } from '../data-dir/lock.ts';
import { loadMigrations } from '../sqlite/database.ts';
import { readManifest, sha256Of, fsyncPath, type BackupManifest } from './backup.ts';
import { STORE_FILE, PKI_DIR } from '../data-dir/layout.ts';

export const DEFAULT_BUMP_REVISION = 1_000_000_000;

export interface RestoreOptions {
  dataDir: string;
  /** The backup directory (hearth backup's --output, or one of DATA_DIR/snapshots/). */
  from: string;
  /** Replace a store (or a different CA) the directory already holds. */
  force?: boolean;
  /** How far the resourceVersion sequence jumps (0: not at all, and nothing is marked compacted). */
  bumpRevision?: number;
  log?: (line: string) => void;
}

export interface RestoreResult {
  manifest: BackupManifest;
  /** The resourceVersion the restored server continues from (its next write is one above). */
  startRv: number;
}

export async function restoreDataDir(opts: RestoreOptions): Promise<RestoreResult> {
  const log = opts.log ?? (() => {});
  const bump = opts.bumpRevision ?? DEFAULT_BUMP_REVISION;
  const manifest = readManifest(opts.from);
  const newest = loadMigrations().at(-1)?.version ?? 0;
  if (manifest.schemaVersion > newest) {
    throw new Error(`${opts.from} was written by a newer hearth (${manifest.hearthVersion}, schema version ${manifest.schemaVersion}; this one knows up to ${newest}): upgrade hearth to restore it`);
  }
  const lock = lockDataDir(opts.dataDir);
  const storeFile = join(opts.dataDir, STORE_FILE);
  const pkiDir = join(opts.dataDir, PKI_DIR);
  const stagedStore = `${storeFile}.restoring`;
  const stagedPki = `${pkiDir}.restoring`;
  try {
    if (!opts.force) refuseToReplace(opts, manifest);
    // Staged beside their final places and checked there: what is checked is what is installed.
    rmSync(stagedStore, { force: true });
    rmSync(stagedPki, { recursive: true, force: true });
    copyFileSync(join(opts.from, STORE_FILE), stagedStore);
    await verifyFile(stagedStore, STORE_FILE, manifest);
    checkStore(stagedStore, manifest);
    const pkiFiles = Object.keys(manifest.files).filter((f) => f.startsWith(`${PKI_DIR}/`));
    for (const f of pkiFiles) {
      const to = join(stagedPki, f.slice(PKI_DIR.length + 1));
      mkdirSync(dirname(to), { recursive: true, mode: 0o700 });
      copyFileSync(join(opts.from, f), to);
      chmodSync(to, statSync(join(opts.from, f)).mode & 0o777);
      await verifyFile(to, f, manifest);
    }
    const startRv = bumpResourceVersions(stagedStore, Number(manifest.resourceVersion), bump);
    await fsyncPath(stagedStore);

    // Install. A stale WAL (or rollback journal) must never meet the new file: SQLite would
    // apply the old server's pages to it.
    for (const suffix of ['-wal', '-shm', '-journal']) rmSync(`${storeFile}${suffix}`, { force: true });
    if (pkiFiles.length) {
      rmSync(pkiDir, { recursive: true, force: true });
      renameSync(stagedPki, pkiDir);
    }
    renameSync(stagedStore, storeFile);
    await fsyncPath(opts.dataDir);
    log(`restored resourceVersion ${manifest.resourceVersion} from ${opts.from} into ${opts.dataDir}`);
    return { manifest, startRv };
  } finally {
    rmSync(stagedStore, { force: true });
    rmSync(stagedPki, { recursive: true, force: true });
    lock.release();
  }
}

/** Refuses a directory with a store, or with a CA other than the backup's (its clients would be locked out). */
function refuseToReplace(opts: RestoreOptions, manifest: BackupManifest): void {
  const storeFile = join(opts.dataDir, STORE_FILE);
  if (existsSync(storeFile) && statSync(storeFile).size > 0) {
    throw new Error(`${opts.dataDir} already has a store (${storeFile}); restoring replaces it and everything written since the backup: pass --force to do so`);
  }
  const caFile = join(opts.dataDir, PKI_DIR, 'ca.crt');
  const backupCa = join(opts.from, PKI_DIR, 'ca.crt');
  if (manifest.files[`${PKI_DIR}/ca.crt`] && existsSync(caFile) && !readFileSync(caFile).equals(readFileSync(backupCa))) {
    throw new Error(`${caFile} is not the CA of the backup; restoring replaces it, and clients that trust the current CA will no longer trust the server: pass --force to do so`);
  }
}

async function verifyFile(file: string, name: string, manifest: BackupManifest): Promise<void> {
  const want = manifest.files[name];
  const size = statSync(file).size;
  if (size !== want.size) throw new Error(`${name} in the backup is ${size} bytes, its manifest says ${want.size}: the backup is damaged or incomplete`);
  const sha = await sha256Of(file);
  if (sha !== want.sha256) throw new Error(`${name} in the backup does not match its checksum in the manifest (sha256 ${sha}, expected ${want.sha256}): the backup is damaged`);
}

/** integrity_check, and the resourceVersion the manifest names. */
function checkStore(file: string, manifest: BackupManifest): void {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const problems = db.pragma('integrity_check') as { integrity_check: string }[];
    if (problems.length !== 1 || problems[0].integrity_check !== 'ok') {
      throw new Error(`the backup's store fails PRAGMA integrity_check: ${problems.slice(0, 5).map((p) => p.integrity_check).join('; ')}`);
    }
    const rv = (db.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'events'`).pluck().get() as number | undefined) ?? 0;
    if (String(rv) !== manifest.resourceVersion) throw new Error(`the backup's store is at resourceVersion ${rv}, its manifest says ${manifest.resourceVersion}`);
  } catch (e) {
    if ((e as { code?: string }).code?.startsWith('SQLITE_')) throw new Error(`the backup's store cannot be read: ${(e as Error).message}`);
    throw e;
  } finally {
    db.close();
  }
}

/** Moves the sequence on by `bump` and marks everything below compacted (see the file header); returns where it continues. */
function bumpResourceVersions(file: string, rv: number, bump: number): number {
  if (bump <= 0) return rv;
  const start = rv + bump;
  const db = new Database(file);
  try {
    db.transaction(() => {
      db.prepare(`UPDATE sqlite_sequence SET seq = ? WHERE name = 'events'`).run(start);
      if (db.prepare(`SELECT 1 FROM sqlite_sequence WHERE name = 'events'`).get() === undefined) db.prepare(`INSERT INTO sqlite_sequence (name, seq) VALUES ('events', ?)`).run(start);
      // compaction_done_rv stays: the compaction is left pending, and the next run finishes it.
      db.prepare(`INSERT INTO meta (key, value) VALUES ('compacted_rv', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`).run(String(start));
      if (db.prepare(`SELECT 1 FROM meta WHERE key = 'compaction_done_rv'`).get() === undefined) db.prepare(`INSERT INTO meta (key, value) VALUES ('compaction_done_rv', '0')`).run();
    })();
  } finally {
    db.close();
  }
  return start;
}
