// Bundles the server into dist/server/main.js, which `npm start` runs (prestart runs this, and prebackup, prerestore, presnapshots).
// Why a bundle rather than tsx at run time: tsx compiles every module on each start (about half
// a second of a 1.5 s start) and keeps a loader thread with its own heap. Plain JS so it runs
// without tsx; esbuild is the compiler tsx uses, so the code is the same, only compiled ahead.
// dist/server sits at the same depth as server/<dir>/, so the modules' `../../schemas` and
// `../../migrations` paths resolve as they do from source. Takes about 0.1 s.
import { build as esbuild } from 'esbuild';
import { copyFileSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DIST_MAIN = join(ROOT, 'dist', 'server', 'main.js');

/** Writes dist/server/main.js (and the storage workers it starts) from server/. */
export async function build() {
  const outdir = dirname(DIST_MAIN);
  mkdirSync(outdir, { recursive: true });
  const result = await esbuild({
    entryPoints: [join(ROOT, 'server', 'main.ts')],
    outfile: DIST_MAIN,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
    // main.js.map beside it: `npm start` runs node with --enable-source-maps, so a logged stack
    // names server/*.ts lines, not the bundle's.
    sourcemap: true,
    sourcesContent: false,
    write: false,
  });
  // Each file is written beside its place and renamed into it: a server starting from dist/ (a
  // test file's, while another test file builds) reads the old bundle or the new, never half of one.
  /**
   * @param {string} file
   * @param {(tmp: string) => void} write
   */
  const put = (file, write) => {
    const tmp = `${file}.${process.pid}.tmp`;
    write(tmp);
    renameSync(tmp, file);
  };
  for (const out of result.outputFiles) put(out.path, (tmp) => writeFileSync(tmp, out.contents));
  // The storage threads (writer and checkpointer; snapshots) load these files next to the module that starts them.
  for (const worker of ['sqlite/writer-worker.js', 'backup/snapshot-worker.js']) put(join(outdir, basename(worker)), (tmp) => copyFileSync(join(ROOT, 'server', 'storage', worker), tmp));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await build();
