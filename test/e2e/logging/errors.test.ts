// A 500 as an operator and a client see it, from a real process (`npm start`'s bundle, run with
// --enable-source-maps): the log has the error line with the error's stack naming hearth's
// server/*.ts sources (not the bundle's lines); the client gets kube's InternalError Status and
// no stack.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminClient, startHearthProcess, stopHearthProcess, type HearthProcess } from '../../helpers/hearth-process.ts';
import { KLOG_HEADER, logMessage } from '../../helpers/log-lines.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'hearth-log-errors-'));
let p: HearthProcess | undefined;
after(async () => {
  if (p) await stopHearthProcess(p);
  rmSync(dataDir, { recursive: true, force: true });
});

test('a 500: logged once with its source-mapped stack, and the response carries none', async () => {
  // Two node ports: the third NodePort service finds the range full, which kube answers 500.
  p = await startHearthProcess(dataDir, ['--service-node-port-range', '31000-31001']);
  const admin = adminClient(dataDir);
  const service = (name: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { type: 'NodePort', ports: [{ port: 80 }] } });
  for (const name of ['one', 'two']) assert.equal((await admin('POST', `${p.url}/api/v1/namespaces/default/services`, service(name))).status, 201);
  const full = await admin('POST', `${p.url}/api/v1/namespaces/default/services`, service('three'));
  assert.equal(full.status, 500);
  assert.deepEqual([full.json.kind, full.json.reason, full.json.message], ['Status', 'InternalError', 'Internal error occurred: failed to allocate a nodePort: range is full']);
  const body = JSON.stringify(full.json);
  assert.doesNotMatch(body, /\.ts:\d+|\.js:\d+|\n\s+at /, 'no stack in the response');

  const server = p;
  const errorLine = await (async () => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      // The line and its stack: from its header to the ` >` that closes the stacktrace block.
      const m = /^E\d{4} [^\n]*"Internal error serving a request"[^\n]*stacktrace=<\n(?:\t[^\n]*\n)+ >$/m.exec(server.stderr);
      if (m) return m[0];
      if (Date.now() > deadline) throw new Error(`no error line in:\n${server.stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const [first, ...stack] = errorLine.split('\n');
  assert.match(first, KLOG_HEADER);
  assert.equal(logMessage(first), 'error: Internal error serving a request');
  assert.match(first, / err="Internal error occurred: failed to allocate a nodePort: range is full" verb="POST" URI="\/api\/v1\/namespaces\/default\/services" audit-ID="[0-9a-f-]{36}" stacktrace=<$/);
  const frames = stack.filter((l) => /^\t\s+at /.test(l));
  assert.ok(frames.length > 0, errorLine);
  assert.ok(frames.some((l) => /server\/[\w/.-]+\.ts:\d+:\d+/.test(l)), `a frame names a server/*.ts line:\n${errorLine}`);
  assert.ok(!frames.some((l) => /dist\/server\/main\.js:\d+/.test(l)), `no frame names the bundle:\n${errorLine}`);
  assert.equal(server.stderr.split('\n').filter((l) => l.includes('"Internal error serving a request"')).length, 1, 'logged once');
});
