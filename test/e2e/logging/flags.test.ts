// --help, --version and flag refusals of the real program (npm start's bundle): --help lists
// every flag the parser accepts (cli/flags.ts's table, which parsing reads too), each with its
// type and default laid out as pflag's FlagUsages writes them, in kube's sections.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runHearth } from '../../helpers/hearth-process.ts';
import { FLAGS } from '../../../server/cli/flags.ts';

test('--help lists every flag the parser accepts, with its type, meaning and default', async () => {
  const r = await runHearth(['--help'], { timeoutMs: 30_000 });
  assert.equal(r.code, 0, r.stderr);
  const help = r.stdout;
  assert.match(help, /^Usage:\n {2}npm start -- \[flags\]$/m);
  // Each flag on a line of its own: `      --name type   meaning (default x)`, or `  -v, --v Level   ...`.
  const listed = new Map<string, string>();
  for (const line of help.split('\n')) {
    const m = /^(?: {2}(-\w), | {6})(--[\w-]+)(?: (\w+))? {3,}(\S.*)$/.exec(line);
    if (m) listed.set(m[2], line);
  }
  const accepted = FLAGS.map((f) => [f.name, ...(f.aliases ?? [])].find((n) => n.startsWith('--'))!);
  assert.deepEqual([...listed.keys()].sort(), [...accepted].sort(), 'every flag of the table, and nothing else');
  for (const spec of FLAGS) assert.ok(spec.usage.length > 0, `${spec.name} has a meaning`);

  // A few defaults, as pflag shows them (strings quoted, durations as Go prints them, bools only when true).
  assert.match(listed.get('--secure-port')!, /^ {6}--secure-port int {3,}\S.* \(default 6443\)$/);
  assert.match(listed.get('--data-dir')!, /^ {6}--data-dir string {3,}.* \(default "\.\/data"\)$/);
  assert.match(listed.get('--request-timeout')!, /^ {6}--request-timeout duration {3,}.* \(default 1m0s\)$/);
  assert.match(listed.get('--compaction-interval')!, / \(default 5m0s\)$/);
  assert.match(listed.get('--max-requests-inflight')!, / \(default 400\)$/);
  assert.match(listed.get('--enable-priority-and-fairness')!, /^ {6}--enable-priority-and-fairness {3,}.* \(default true\)$/);
  assert.match(listed.get('--log-format')!, /^ {6}--log-format string {3,}.* \(default "text"\)$/);
  assert.match(listed.get('--v')!, /^ {2}-v, --v Level {3,}number for the log level verbosity/);
  assert.match(listed.get('--help')!, /^ {2}-h, --help {3,}/);
  assert.doesNotMatch(listed.get('--initialize')!, /default/, 'a false bool shows no default');
  assert.doesNotMatch(listed.get('--token-auth-file')!, /default/, 'no default: none shown');
  // kube's sections.
  for (const section of ['Generic flags:', 'Secure serving flags:', 'Auditing flags:', 'Authentication flags:', 'Authorization flags:', 'Admission flags:', 'Logs flags:', 'Global flags:']) assert.match(help, new RegExp(`^${section}$`, 'm'));
  assert.ok(help.indexOf('Logs flags:') < help.indexOf('  -v, --v Level') && help.indexOf('  -v, --v Level') < help.indexOf('Global flags:'), '-v among the logs flags');
});

test('-h is --help; --version prints kube\'s version line', async () => {
  const short = await runHearth(['-h'], { timeoutMs: 30_000 });
  assert.equal(short.code, 0);
  assert.match(short.stdout, /^Logs flags:$/m);
  const version = await runHearth(['--version'], { timeoutMs: 30_000 });
  assert.deepEqual([version.code, version.stdout], [0, 'Kubernetes v1.36.0\n']);
});

test('a flag the table does not have, or a value its type refuses, stops the start with pflag\'s words', async () => {
  const unknown = await runHearth(['--no-such-flag'], { timeoutMs: 30_000 });
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^hearth: unknown flag: --no-such-flag$/m);
  assert.match(unknown.stderr, /npm start -- --help/);
  const level = await runHearth(['-v', 'loud'], { timeoutMs: 30_000 });
  assert.equal(level.code, 2);
  assert.match(level.stderr, /^hearth: invalid argument "loud" for "-v" flag: strconv\.ParseInt: parsing "loud": invalid syntax$/m);
  const format = await runHearth(['--log-format=yaml'], { timeoutMs: 30_000 });
  assert.equal(format.code, 2);
  assert.match(format.stderr, /^hearth: invalid argument "yaml" for "--log-format" flag: must be one of text, json$/m);
});
