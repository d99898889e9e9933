// --enable-admission-plugins, --disable-admission-plugins and --admission-control-config-file as
// kube-apiserver reads them: a bad name or file stops the start, with kube's message, before the
// data directory is made.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runHearth } from '../../helpers/hearth-process.ts';

const scratch = mkdtempSync(join(tmpdir(), 'hearth-admission-flags-'));

async function refused(args: string[], messages: string[]): Promise<void> {
  const dataDir = join(scratch, `data-${Math.random().toString(36).slice(2)}`);
  const r = await runHearth(['--data-dir', dataDir, '--secure-port', '0', ...args], { timeoutMs: 60_000 });
  assert.notEqual(r.code, 0, `${args.join(' ')} started: ${r.stdout}`);
  for (const m of messages) assert.ok(r.stderr.includes(m), `${args.join(' ')}: wanted ${JSON.stringify(m)} in:\n${r.stderr}`);
  assert.equal(existsSync(dataDir), false, 'nothing is written when the flags are refused');
}

test('unknown plugins, a plugin in both lists and one hearth lacks stop the start with kube messages', async () => {
  await refused(
    ['--enable-admission-plugins', 'Bogus,PodNodeSelector,ServiceAccount', '--disable-admission-plugins=ServiceAccount,Nope'],
    [
      'enable-admission-plugins plugin "Bogus" is unknown',
      'disable-admission-plugins plugin "Nope" is unknown',
      '[ServiceAccount] in enable-admission-plugins and disable-admission-plugins overlapped',
      'enable-admission-plugins: [PodNodeSelector] not supported by hearth yet',
    ],
  );
});

test('an admission configuration file that cannot be read, or is not one, stops the start', async () => {
  const missing = join(scratch, 'missing.yaml');
  await refused(['--admission-control-config-file', missing], [`unable to read admission control configuration from "${missing}": open ${missing}: no such file or directory`]);
  const wrongKind = join(scratch, 'wrong-kind.yaml');
  writeFileSync(wrongKind, 'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n');
  await refused(['--admission-control-config-file', wrongKind], ['no kind "AuthenticationConfiguration" is registered for version "apiserver.config.k8s.io/v1"']);
});
