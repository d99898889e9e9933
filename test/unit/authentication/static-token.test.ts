import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readGoCsv, readTokenFile, staticTokenAuthenticator } from '../../../server/authentication/static-token.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-tokenfile-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = (text: string) => {
  const path = join(dir, `tokens-${n++}.csv`);
  writeFileSync(path, text);
  return path;
};

test("readGoCsv reads records as Go's encoding/csv does", () => {
  assert.deepEqual(readGoCsv('a,b,c\n\nd,"e,f",""\r\n'), [['a', 'b', 'c'], ['d', 'e,f', '']], 'empty lines skipped, CRLF ends a line, quotes hold commas');
  assert.deepEqual(readGoCsv('a,"say ""hi""",c'), [['a', 'say "hi"', 'c']], 'a doubled quote is one quote; no final newline needed');
  assert.deepEqual(readGoCsv('a,"two\nlines",c\n'), [['a', 'two\nlines', 'c']], 'a quoted field spans lines');
  assert.deepEqual(readGoCsv(' a , b '), [[' a ', ' b ']], 'spaces are kept');
  assert.throws(() => readGoCsv('ok,1,2\nab"c,d,e\n'), { message: 'parse error on line 2, column 3: bare " in non-quoted-field' });
  assert.throws(() => readGoCsv('"a"b,c,d\n'), { message: 'parse error on line 1, column 3: extraneous or missing " in quoted-field' });
  assert.throws(() => readGoCsv('x,"open\nstill open\n'), { message: /^record on line 1; parse error on line 2, column \d+: extraneous or missing " in quoted-field$/ });
});

test("a token file's records name users; groups are the optional fourth column", () => {
  const warnings: string[] = [];
  const tokens = readTokenFile(file('t1,alice,1,"dev,ops"\nt2,bob,2\n,nobody,3\nt1,carol,4,\n'), (w) => warnings.push(w));
  assert.deepEqual(tokens.get('t2'), { name: 'bob', uid: '2', groups: [] });
  assert.deepEqual(tokens.get('t1'), { name: 'carol', uid: '4', groups: [''] }, 'a repeated token: the later record wins, as in kube');
  assert.equal(tokens.size, 2, 'the empty token is skipped');
  assert.equal(warnings.length, 2);
  assert.match(warnings[0], /^empty token has been found in token file '.*', record number '3'$/);
  assert.match(warnings[1], /^duplicate token has been found in token file '.*', record number '4'$/);
});

test("a token file kube refuses is an error with kube's message", () => {
  const short = file('t1,alice,1\nt2,bob\n');
  assert.throws(() => readTokenFile(short), { message: `token file '${short}' must have at least 3 columns (token, user name, user uid), found 2` });
  const missing = join(dir, 'absent.csv');
  assert.throws(() => readTokenFile(missing), { message: `open ${missing}: no such file or directory` });
  assert.throws(() => readTokenFile(file('t1,"bob,1\n')), { message: /extraneous or missing " in quoted-field/ });
});

test('static tokens are audience-agnostic: they answer only for the API audiences', async () => {
  const tokens = readTokenFile(file('t1,alice,1\n'));
  const plain = staticTokenAuthenticator(tokens);
  assert.deepEqual(await plain.authenticateToken('t1'), { user: { name: 'alice', uid: '1', groups: [] } });
  assert.equal(await plain.authenticateToken('t2'), undefined, 'an unknown token: no opinion');
  assert.equal(await plain.authenticateToken('t1', ['vault']), undefined, 'no API audiences: no audience is granted');
  const withAudiences = staticTokenAuthenticator(tokens, ['https://kubernetes.default.svc', 'hearth']);
  assert.deepEqual(await withAudiences.authenticateToken('t1', ['hearth', 'vault']), { user: { name: 'alice', uid: '1', groups: [] }, audiences: ['hearth'] });
  assert.equal(await withAudiences.authenticateToken('t1', ['vault']), undefined);
});
