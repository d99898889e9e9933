// The data-directory subcommands of the hearth program: `backup`, `restore` and `snapshots`
// (`npm run backup -- ...` or `node dist/server/main.js backup ...`). Each returns its exit code.
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { setPriority } from 'node:os';
import { backupDataDir, listSnapshots, type SnapshotProgress } from '../storage/backup/backup.ts';
import { restoreDataDir, DEFAULT_BUMP_REVISION } from '../storage/backup/restore.ts';

/** Nice value of a subcommand's process (and of the thread that copies the store: snapshot-worker.js). */
const BACKGROUND_NICE = 10;

const USAGE: Record<string, string> = {
  backup: 'usage: npm run backup -- --data-dir DIR --output PATH',
  restore: `usage: npm run restore -- --data-dir DIR --from PATH [--force] [--bump-revision N (default ${DEFAULT_BUMP_REVISION})]`,
  snapshots: 'usage: npm run snapshots -- [--data-dir DIR]',
};

export async function runOpsCommand(command: string, argv: string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        'data-dir': { type: 'string', default: './data' },
        output: { type: 'string' },
        from: { type: 'string' },
        force: { type: 'boolean' },
        'bump-revision': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (e) {
    return usage(command, (e as Error).message);
  }
  if (values.help) {
    console.log(USAGE[command]);
    return 0;
  }
  // Background work next to a server that serves: the server comes first for the CPU.
  try {
    setPriority(BACKGROUND_NICE);
  } catch {
    // Not permitted here: it runs at normal priority.
  }
  const dataDir = resolve(values['data-dir'] as string);
  const log = (line: string) => console.error(`hearth ${command}: ${line}`);
  try {
    switch (command) {
      case 'backup': {
        if (!values.output) return usage(command, '--output is required');
        const output = resolve(values.output as string);
        const m = await backupDataDir(dataDir, output, { onProgress: progressPrinter(), log });
        console.log(`backup of ${dataDir} written to ${output}: resourceVersion ${m.resourceVersion}, ${m.files['hearth.db'].size} bytes of store, sha256 ${m.files['hearth.db'].sha256}`);
        return 0;
      }
      case 'restore': {
        if (!values.from) return usage(command, '--from is required');
        const bump = values['bump-revision'] === undefined ? DEFAULT_BUMP_REVISION : Number(values['bump-revision']);
        if (!Number.isSafeInteger(bump) || bump < 0) return usage(command, '--bump-revision must be a whole number');
        const r = await restoreDataDir({ dataDir, from: resolve(values.from as string), force: !!values.force, bumpRevision: bump, log });
        console.log(`restored ${dataDir} to resourceVersion ${r.manifest.resourceVersion}; new writes continue above ${r.startRv}` + (r.startRv > Number(r.manifest.resourceVersion) ? ' (older resourceVersions answer 410 Gone, so clients relist)' : ''));
        console.log(`start it with: npm start -- --data-dir ${dataDir}`);
        return 0;
      }
      case 'snapshots': {
        const rows = listSnapshots(dataDir).map((s) => [s.name, s.manifest.createdAt, s.manifest.resourceVersion, String(s.size)]);
        printTable(['NAME', 'CREATED', 'RESOURCEVERSION', 'SIZE'], rows);
        return 0;
      }
      default:
        return usage(command, `unknown command ${command}`);
    }
  } catch (e) {
    log((e as Error).message);
    return 1;
  }
}

function usage(command: string, message: string): number {
  console.error(`hearth ${command}: ${message}\n${USAGE[command] ?? Object.values(USAGE).join('\n')}`);
  return 2;
}

/** Pages copied so far on a terminal (stderr), at most ten times a second; nothing otherwise. */
function progressPrinter(): ((p: SnapshotProgress) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  let last = 0;
  return ({ done, total }) => {
    const now = performance.now();
    if (done < total && now - last < 100) return;
    last = now;
    process.stderr.write(`\rcopying hearth.db: ${done}/${total} pages (${total ? Math.floor((100 * done) / total) : 100}%)${done >= total ? '\n' : ''}`);
  };
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const r of [header, ...rows]) console.log(r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd());
}
