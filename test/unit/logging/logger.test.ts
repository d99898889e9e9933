// hearth's log formats: klog's text header and quoting (k8s.io/klog/v2 textlogger and
// internal/serialize), component-base/logs/json's fields, V(level) gating, Go duration strings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Duration, fallbackLogger, goDurationString, klogHeader, Logger, newLogger, setProcessLogger } from '../../../server/logging/logger.ts';
import { KLOG_HEADER, leadingQuoted, logMessage } from '../../helpers/log-lines.ts';

// 2026-11-29 20:24:57.123456 in local time (klog's header is local time, as Go's time.Now()).
const AT = new Date(2026, 10, 29, 20, 24, 57, 123).getTime() + 0.456;

function capture(options: { verbosity?: number; format?: 'text' | 'json' } = {}): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  return { logger: new Logger({ verbosity: options.verbosity ?? 0, format: options.format ?? 'text', sink: (l) => lines.push(l), pid: 12345, now: () => AT }, 'httplog'), lines };
}

test('text: klog\'s header (severity, MMDD, time with microseconds, pid in 7 columns, source) then the quoted message', () => {
  assert.equal(klogHeader('I', AT, 12345, 'httplog'), 'I1129 20:24:57.123456   12345 httplog] ');
  assert.equal(klogHeader('E', new Date(2026, 0, 2, 3, 4, 5, 6).getTime(), 1, 'x'), 'E0102 03:04:05.006000       1 x] ');
  const { logger, lines } = capture();
  logger.info('Store opened', 'file', '/data/hearth.db', 'bytes', 4096, 'fresh', true);
  assert.deepEqual(lines, ['I1129 20:24:57.123456   12345 httplog] "Store opened" file="/data/hearth.db" bytes=4096 fresh=true']);
  const m = KLOG_HEADER.exec(lines[0]);
  assert.ok(m, 'klog\'s header regex reads it');
  assert.deepEqual([m[1], m[2], m[3], m[8], m[9]], ['I', '11', '29', '12345', 'httplog']);
});

test('text: values quoted as klog quotes them (%q; multi-line strings as a <-block; errors and durations as their text)', () => {
  const { logger, lines } = capture();
  logger.info('say "hi"\n', 'q', 'a "b"\tc', 'multi', 'line 1\nline 2', 'trailing', 'x\n', 'err', new Error('boom'), 'latency', new Duration(1_234_567), 'nil', undefined, 'obj', { a: [1] }, 'odd');
  assert.equal(
    lines[0],
    'I1129 20:24:57.123456   12345 httplog] "say \\"hi\\"\\n" q="a \\"b\\"\\tc" multi=<\n\tline 1\n\tline 2\n > trailing=<\n\tx\n > err="boom" latency="1.234567ms" nil=<nil> obj="{\\"a\\":[1]}" odd="(MISSING)"',
  );
  assert.equal(leadingQuoted(lines[0].slice(lines[0].indexOf('] ') + 2))?.value, 'say "hi"\n', 'the message unquotes back');
});

test('text: an error line is E with err="..." and the stack (source-mapped: it names this .ts file) on the lines after', () => {
  const { logger, lines } = capture();
  const err = new Error('disk full');
  logger.error(err, 'Internal error serving a request', 'verb', 'POST');
  const [first, ...rest] = lines[0].split('\n');
  assert.equal(first, 'E1129 20:24:57.123456   12345 httplog] "Internal error serving a request" err="disk full" verb="POST" stacktrace=<');
  assert.equal(rest[0], '\tError: disk full');
  assert.match(rest[1], /^\t\s+at .*test\/unit\/logging\/logger\.test\.ts:\d+:\d+/, 'the frame names the TypeScript source');
  assert.equal(rest[rest.length - 1], ' >');
  assert.equal(logMessage(lines[0]), 'error: Internal error serving a request');
  // Not an Error: its text, and no stack.
  logger.error('plain', 'Failed');
  assert.equal(lines[1], 'E1129 20:24:57.123456   12345 httplog] "Failed" err="plain"');
});

test('json: component-base\'s fields: ts (epoch ms), caller, msg, v or err, the key/values; a stacktrace field for errors', () => {
  const { logger, lines } = capture({ format: 'json', verbosity: 4 });
  logger.v(3).info('HTTP', 'verb', 'LIST', 'latency', new Duration(2_500_000_000), 'resp', 200);
  logger.warning('skipped', 'n', 1n);
  logger.error(new Error('boom'), 'Compaction failed', 'rv', 7);
  const [info, warning, error] = lines.map((l) => JSON.parse(l));
  assert.deepEqual(Object.keys(info), ['ts', 'caller', 'msg', 'v', 'verb', 'latency', 'resp']);
  assert.deepEqual(info, { ts: AT, caller: 'httplog', msg: 'HTTP', v: 3, verb: 'LIST', latency: '2.5s', resp: 200 });
  assert.deepEqual(warning, { ts: AT, caller: 'httplog', msg: 'skipped', v: 0, n: '1' });
  assert.deepEqual(Object.keys(error), ['ts', 'caller', 'msg', 'err', 'rv', 'stacktrace']);
  assert.equal(error.err, 'boom');
  assert.match(error.stacktrace, /^Error: boom\n\s+at .*logger\.test\.ts:\d+/);
  assert.ok(lines.every((l) => !l.includes('\n')), 'one line per entry');
});

test('V(level): written at -v=level and above; above -v a shared no-op that formats nothing', () => {
  const { logger, lines } = capture({ verbosity: 2 });
  assert.equal(logger.enabled(2), true);
  assert.equal(logger.enabled(3), false);
  assert.equal(logger.v(3), logger.v(9), 'one no-op for every disabled level');
  assert.equal(logger.v(3).enabled, false);
  let formatted = false;
  logger.v(3).info('never', 'value', { toJSON: () => ((formatted = true), 'x') });
  logger.v(2).info('request');
  logger.v(0).info('always');
  assert.equal(formatted, false);
  assert.deepEqual(lines.map(logMessage), ['request', 'always']);
  const quiet = capture({ verbosity: 0 });
  quiet.logger.v(1).info('hidden');
  quiet.logger.v(2).info('hidden');
  assert.deepEqual(quiet.lines, []);
});

test('lines(): a component\'s (line) => void; its warning:/error: prefixes become the severity', () => {
  const { logger, lines } = capture();
  const log = logger.lines();
  log('reloaded authentication config');
  log('warning: skipped reconcile-protected clusterrole');
  log('error: bootstrap failed');
  assert.deepEqual(lines.map((l) => l[0]), ['I', 'W', 'E']);
  assert.deepEqual(lines.map(logMessage), ['reloaded authentication config', 'warning: skipped reconcile-protected clusterrole', 'error: bootstrap failed']);
});

test('newLogger: the defaults are -v=0 and text; named() keeps the sink and level under another source', () => {
  const lines: string[] = [];
  const logger = newLogger({}, (l) => lines.push(l));
  assert.equal(logger.verbosity, 0);
  assert.equal(logger.format, 'text');
  logger.named('compactor').info('Compacted');
  assert.match(lines[0], new RegExp(`^I\\d{4} \\d{2}:\\d{2}:\\d{2}\\.\\d{6} +${process.pid} compactor\\] "Compacted"$`));
});

test('Go\'s time.Duration.String()', () => {
  const cases: [number, string][] = [
    [0, '0s'],
    [1, '1ns'],
    [999, '999ns'],
    [1500, '1.5µs'],
    [1_000_000, '1ms'],
    [7_670_252, '7.670252ms'],
    [1e9, '1s'],
    [2.5e9, '2.5s'],
    [60e9, '1m0s'],
    [62.5e9, '1m2.5s'],
    [3600e9, '1h0m0s'],
    [3723.000000001e9, '1h2m3.000000001s'],
    [-1500, '-1.5µs'],
  ];
  for (const [ns, want] of cases) assert.equal(goDurationString(ns), want, `${ns}ns`);
  assert.equal(Duration.ofMillis(300_000).toString(), '5m0s');
});

test('setProcessLogger: what is logged without a server\'s logger takes the process\'s format', () => {
  const before = fallbackLogger();
  const { logger, lines } = capture({ format: 'json' });
  setProcessLogger(logger);
  try {
    fallbackLogger().error(new Error('late'), 'watch failed');
    assert.equal(JSON.parse(lines[0]).msg, 'watch failed');
  } finally {
    setProcessLogger(before);
  }
});
