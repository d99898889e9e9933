// The flow-control flags kube-apiserver refuses at start (ServerRunOptions.Validate, and
// FeatureOptions.ApplyTo for APF), refused by a real hearth process with kube's words before its
// data directory exists; and the in-flight limits of 0 APF-off takes as "no limit".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runHearth } from '../../helpers/hearth-process.ts';

test('bad in-flight limits and request timeout stop hearth at start with kube-apiserver\'s messages', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-apf-flags-'));
  try {
    const dataDir = join(dir, 'never');
    const cases: Array<[string[], string]> = [
      [['--max-requests-inflight', '-1'], '--max-requests-inflight can not be negative value'],
      [['--max-mutating-requests-inflight', '-5', '--request-timeout', '-1s'], '[--max-mutating-requests-inflight can not be negative value, --request-timeout can not be negative value]'],
      [['--max-requests-inflight', '0', '--max-mutating-requests-inflight', '0'], 'invalid configuration: MaxRequestsInFlight=0 and MaxMutatingRequestsInFlight=0; they must add up to something positive'],
    ];
    for (const [args, message] of cases) {
      const r = await runHearth(['--data-dir', dataDir, '--secure-port', '0', ...args]);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').at(-1), `hearth: ${message}`);
      assert.equal(existsSync(dataDir), false, 'nothing created');
    }
    // Without APF, 0 and 0 mean no limit at all: the server starts.
    const off = await runHearth(['--data-dir', dataDir, '--secure-port', '0', '--enable-priority-and-fairness=false', '--max-requests-inflight', '0', '--max-mutating-requests-inflight', '0']);
    assert.match(off.stdout, /kubectl get namespaces/, off.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
