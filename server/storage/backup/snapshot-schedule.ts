// Scheduled snapshots (--snapshot-interval, --snapshot-retention), as k3s takes etcd snapshots:
// every interval the server writes one into DATA_DIR/snapshots/ (the copy runs on a thread of its
// own, see snapshot-worker.js) and removes the oldest beyond the retention count.
import { readdirSync, rmSync, existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeSnapshot, listSnapshots, type SnapshotRun, type BackupManifest } from './backup.ts';
import { SNAPSHOTS_DIR } from '../data-dir/layout.ts';

/** k3s's default for --etcd-snapshot-retention. */
export const DEFAULT_SNAPSHOT_RETENTION = 5;

export class SnapshotScheduler {
  private timer?: NodeJS.Timeout;
  private running?: SnapshotRun;

  constructor(
    private readonly dataDir: string,
    private readonly intervalMs: number,
    private readonly retention: number,
    private readonly log: (line: string) => void,
  ) {}

  start(): void {
    if (this.intervalMs <= 0) return;
    this.removePartial();
    this.timer = setInterval(() => void this.takeOne(), this.intervalMs);
    this.timer.unref();
  }

  /** Stops the schedule; a snapshot under way is abandoned (and leaves nothing behind). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running?.cancel();
  }

  /** Takes a snapshot now (unless one is under way), then prunes. */
  async takeOne(): Promise<BackupManifest | undefined> {
    if (this.running) return undefined;
    const name = this.nameFor(new Date());
    const started = performance.now();
    try {
      this.running = writeSnapshot(this.dataDir, join(this.dataDir, SNAPSHOTS_DIR, name));
      const manifest = await this.running.done;
      this.log(`snapshot ${name} written at resourceVersion ${manifest.resourceVersion} in ${((performance.now() - started) / 1000).toFixed(2)} s`);
      await this.prune();
      return manifest;
    } catch (e) {
      this.log(`snapshot ${name} failed: ${(e as Error).message}`);
      return undefined;
    } finally {
      this.running = undefined;
    }
  }

  /** hearth-20250102T030405Z, with a suffix if two fall in one second. */
  private nameFor(at: Date): string {
    const base = `hearth-${at.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}`;
    let name = base;
    for (let i = 2; existsSync(join(this.dataDir, SNAPSHOTS_DIR, name)); i++) name = `${base}-${i}`;
    return name;
  }

  private async prune(): Promise<void> {
    const all = listSnapshots(this.dataDir);
    for (const old of all.slice(0, Math.max(0, all.length - this.retention))) {
      await rm(old.path, { recursive: true, force: true });
      this.log(`snapshot ${old.name} removed (retention ${this.retention})`);
    }
  }

  /** What a snapshot cut short by a crash left. */
  private removePartial(): void {
    const dir = join(this.dataDir, SNAPSHOTS_DIR);
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir)) if (name.includes('.partial-')) rmSync(join(dir, name), { recursive: true, force: true });
  }
}
