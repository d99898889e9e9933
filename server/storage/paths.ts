// Files hearth ships beside server/ that storage reads at run time: the migrations and
// package.json (hearth's version, written into backups). This module sits two levels below the
// project root, as the bundle dist/server/main.js does, so the same relative paths resolve from
// the source and from the bundle: keep it at this depth.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** migrations/: numbered SQL files, applied in order at start. */
export const MIGRATIONS_DIR = join(ROOT, 'migrations');

/** package.json, whose version is hearth's. */
export const PACKAGE_JSON = join(ROOT, 'package.json');
