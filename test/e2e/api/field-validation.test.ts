// fieldValidation=Ignore|Warn|Strict for unknown and duplicate fields, over HTTP and through
// kubectl's --validate modes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { useTestServer, availableKubectls, manifestWriter } from '../../helpers/server.ts';
import { duplicateJsonFields, duplicateYamlFields } from '../../../server/http/duplicate-fields.ts';

const s = useTestServer();

const JSON_DUP = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup-NAME","labels":{"a":"1","a":"2"}},"data":{"k":"v"},"bogus":1}';

test('duplicate field paths in JSON and YAML bodies', () => {
  assert.deepEqual(duplicateJsonFields('{"a":1,"b":{"c":1,"c":2},"d":[{"e":1,"e":2},{"e":3}],"a":3}'), ['b.c', 'd[0].e', 'a']);
  assert.deepEqual(duplicateJsonFields('{"x\\"y":1,"x\\"y":2,"s":"{\\"q\\":1,\\"q\\":2}"}'), ['x"y'], 'escaped keys; strings are not parsed as JSON');
  assert.deepEqual(duplicateJsonFields('{"a":[[1,2],[3]],"b":{}}'), []);
  assert.deepEqual(duplicateYamlFields('a: 1\nb:\n  c: 1\n  c: 2\nd:\n- e: 1\n  e: 2\n'), ['b.c', 'd[0].e']);
});

test('duplicate JSON fields: given the parsed body, the key-count shortcut finds what the scan finds', () => {
  const texts = [
    '{"a":1,"b":{"c":1,"c":2},"d":[{"e":1,"e":2},{"e":3}],"a":3}',
    '{"x\\"y":1,"x\\"y":2,"s":"{\\"q\\":1,\\"q\\":2}"}',
    '{"a":[[1,2],[3]],"b":{},"c":"x:y\\\\","d":{"k\\\\":"\\"}"}}',
    '{"deep":{"deeper":[{"x":{"y":1,"y":1}}]}}',
    '{ "spaced" : { "k" : "v" } , "spaced" : 2 }',
  ];
  for (const t of texts) assert.deepEqual(duplicateJsonFields(t, JSON.parse(t)), duplicateJsonFields(t), t);
  assert.deepEqual(duplicateJsonFields('{"deep":{"deeper":[{"x":{"y":1,"y":1}}]}}', JSON.parse('{"deep":{"deeper":[{"x":{"y":1,"y":1}}]}}')), ['deep.deeper[0].x.y']);
});

test('Warn (default): unknown and duplicate fields produce one warning each; the last duplicate wins; unknown fields are not stored', async () => {
  const r = await s.request('POST', '/api/v1/namespaces/default/configmaps', { raw: JSON_DUP.replace('NAME', 'warn'), headers: { 'content-type': 'application/json' } });
  assert.equal(r.status, 201);
  const warnings = ([] as string[]).concat(r.headers.warning as any).join('\n');
  assert.match(warnings, /duplicate field \\"metadata.labels.a\\"/);
  assert.match(warnings, /unknown field \\"bogus\\"/);
  assert.equal(r.json().metadata.labels.a, '2');
  assert.equal(r.json().bogus, undefined);
});

test('Strict: 400 naming every problem, nothing written; Ignore: silent', async () => {
  const strict = await s.request('POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Strict', { raw: JSON_DUP.replace('NAME', 'strict'), headers: { 'content-type': 'application/json' } });
  assert.equal(strict.status, 400);
  assert.equal(strict.json().reason, 'BadRequest');
  assert.match(strict.json().message, /^strict decoding error: /);
  assert.match(strict.json().message, /duplicate field "metadata.labels.a"/);
  assert.match(strict.json().message, /unknown field "bogus"/);
  assert.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps/dup-strict')).status, 404);

  const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dup-yaml\ndata:\n  k: a\n  k: b\n';
  const y = await s.request('POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Strict', { raw: yaml, headers: { 'content-type': 'application/yaml' } });
  assert.equal(y.status, 400);
  assert.match(y.json().message, /duplicate field "data.k"/);

  const ignore = await s.request('POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Ignore', { raw: JSON_DUP.replace('NAME', 'ignore'), headers: { 'content-type': 'application/json' } });
  assert.equal(ignore.status, 201);
  assert.equal(ignore.headers.warning, undefined);
  assert.equal((await s.request('GET', '/api/v1/namespaces/default/configmaps?fieldValidation=Bogus')).status, 200, 'reads ignore it');
  const bogus = await s.request('POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Bogus', { body: { metadata: { name: 'x' } } });
  assert.equal(bogus.status, 422); // kube's ValidateCreateOptions
  assert.equal(bogus.json().details.kind, 'CreateOptions');
});

test('patches report duplicate and unknown fields too', async () => {
  await s.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'patch-dup' } } });
  const r = await s.request('PATCH', '/api/v1/namespaces/default/configmaps/patch-dup?fieldValidation=Strict', { raw: '{"data":{"a":"1","a":"2"}}', headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(r.status, 400);
  assert.match(r.json().message, /duplicate field "data.a"/);
});

const write = manifestWriter('hearth-validate-');
for (const { version, path } of availableKubectls()) {
  describe(`kubectl ${version} --validate`, () => {
    const manifest = (name: string) => {
      return write(`${version}-${name}`, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  k: v\nbogus: 1\n`);
    };
    const tag = version.replace('.', '-');
    test('strict (and true, the default) rejects unknown fields', async () => {
      for (const mode of ['strict', 'true']) {
        const r = await s.kubectl(['create', '-f', manifest(`v-${mode}-${tag}`), `--validate=${mode}`], { binary: path });
        assert.notEqual(r.code, 0, `--validate=${mode} should fail`);
        assert.match(r.stderr, /unknown field "bogus"/);
      }
    });
    test('warn creates the object and prints the warning; ignore and false are silent', async () => {
      const w = await s.kubectl(['create', '-f', manifest(`v-warn-${tag}`), '--validate=warn'], { binary: path });
      assert.equal(w.code, 0, w.stderr);
      assert.match(w.stderr, /Warning: unknown field "bogus"/);
      for (const mode of ['ignore', 'false']) {
        const r = await s.kubectl(['create', '-f', manifest(`v-${mode}-${tag}`), `--validate=${mode}`], { binary: path });
        assert.equal(r.code, 0, r.stderr);
        assert.doesNotMatch(r.stderr, /unknown field/);
      }
    });
  });
}
