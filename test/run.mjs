// Runs every test file under test/ (unit/ and e2e/, however deep) in one `node --test`: Node 20's
// test runner does not expand globs, so `test/*.test.ts` would not reach the subfolders. Arguments,
// if any, narrow the run to those files or folders (`node test/run.mjs test/unit/go`).
// HEARTH_CHECK_STORED_JSON=1 compares every reuse of an object's stored JSON with JSON.stringify,
// to catch an object changed after it was stored (server/storage/rows/codec.ts).
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TEST_DIR = join(ROOT, 'test');

/**
 * The *.test.ts files below dir (or dir itself), in a stable order (helpers and fixtures hold none).
 * @param {string} dir
 * @returns {string[]}
 */
function testFiles(dir) {
  if (statSync(dir).isFile()) return dir.endsWith('.test.ts') ? [dir] : [];
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((e) => (e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : []));
}

const roots = process.argv.length > 2 ? process.argv.slice(2).map((p) => resolve(p)) : [TEST_DIR];
const files = roots.flatMap(testFiles).map((f) => relative(ROOT, f));
if (files.length === 0) {
  console.error(`no *.test.ts under ${roots.join(', ')}`);
  process.exit(1);
}
const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...files], {
  cwd: ROOT,
  stdio: 'inherit',
  env: { ...process.env, HEARTH_CHECK_STORED_JSON: '1' },
});
child.on('exit', (code, signal) => process.exit(signal ? 1 : (code ?? 1)));
