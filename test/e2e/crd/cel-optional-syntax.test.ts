// cel-go's optional syntax in CRD rules, which kube-apiserver (1.29+) accepts: optional field
// selection `a.?b`, optional indexing `a[?k]` of maps and lists, optional list elements
// `[a, ?b]` and optional map entries `{?k: v}`, with selections and indexes chaining through
// optional values. Each CRD is written (its rules parsed, checked and costed), then objects that
// pass and fail its rules are created; misuse is refused when the CRD is written, with errors
// that point at the rule text.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { installRuleCrd, ruleCrd, str, type Rule } from '../../helpers/cel-crd.ts';

let s: TestServer;
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const GROUP = 'optsyntax.hearth.test';

const crd = (plural: string, kind: string, spec: Record<string, unknown>, rootRules: Rule[] = []) => ruleCrd(GROUP, plural, kind, spec, rootRules);

const widgets = crd(
  'widgets',
  'Widget',
  {
    type: 'object',
    properties: {
      replicas: { type: 'integer' },
      minReplicas: { type: 'integer' },
      template: { type: 'object', properties: { image: str(64), pullPolicy: str(16) } },
      ports: { type: 'array', maxItems: 8, items: { type: 'integer' } },
      labels: { type: 'object', maxProperties: 8, additionalProperties: str(63) },
    },
    'x-kubernetes-validations': [
      // .? on present and absent fields
      { rule: 'self.?replicas.orValue(1) >= self.?minReplicas.orValue(0)', message: 'replicas below minReplicas' },
      // chains: none stays none, a value is selected into
      { rule: "!self.?template.?pullPolicy.hasValue() || self.template.pullPolicy in ['Always', 'IfNotPresent']", message: 'unknown pullPolicy' },
      // [?k] on a map
      { rule: "self.?labels[?'tier'].orValue('web') != 'db' || self.?replicas.orValue(1) == 1", message: 'a db runs one replica' },
      // [?i] on a list, in range and out of range
      { rule: 'self.?ports[?0].orValue(80) < 1024', message: 'the first port must be privileged (80 when there is none)' },
      { rule: '!self.?ports[?3].hasValue()', message: 'at most 3 ports' },
      // optional list elements: kept only when they have a value
      {
        rule: '[?self.?replicas, ?self.?minReplicas].all(n, n <= 100)',
        messageExpression: "string([?self.?replicas, ?self.?minReplicas].filter(n, n > 100).size()) + ' replica count(s) above 100'",
      },
      // optional map entries: kept only when they have a value
      { rule: "size({?'image': self.?template.?image, ?'pullPolicy': self.?template.?pullPolicy}) != 1", message: 'image and pullPolicy go together' },
      // optionalOldSelf: oldSelf is an optional, and .? selects into its value
      { rule: 'self.?replicas.orValue(0) >= oldSelf.?replicas.orValue(0)', optionalOldSelf: true, message: 'replicas may not decrease' },
    ],
  },
  // from the root, through a spec that may be absent
  [{ rule: 'self.?spec.?replicas.orValue(1) != 0', message: 'replicas must not be zero' }],
);

async function created(kind: string, path: string, name: string, spec: unknown, dryRun = true) {
  const body: Record<string, unknown> = { apiVersion: `${GROUP}/v1`, kind, metadata: { name } };
  if (spec !== undefined) body.spec = spec;
  return s.request('POST', `${path}${dryRun ? '?dryRun=All' : ''}`, { body });
}
const WIDGETS = `/apis/${GROUP}/v1/namespaces/default/widgets`;
const widget = (name: string, spec?: unknown, dryRun = true) => created('Widget', WIDGETS, name, spec, dryRun);

/** "field: message" of each cause of a 422. */
function causes(r: { status: number; text: string; json(): any }): string[] {
  assert.equal(r.status, 422, r.text);
  return r.json().details.causes.map((c: any) => `${c.field}: ${c.message}`);
}

before(async () => {
  s = await startTestServer();
  await installRuleCrd(s, widgets);
});
after(async () => {
  await s.stop();
});

test('a.?b: optional.of the field when present, optional.none() when absent; chains through optionals', async () => {
  // every field absent: every .? is none and every orValue default applies
  assert.equal((await widget('empty', {})).status, 201);
  assert.equal((await widget('no-spec')).status, 201);
  const full = { replicas: 3, minReplicas: 2, template: { image: 'nginx', pullPolicy: 'Always' }, ports: [80, 8080], labels: { tier: 'web' } };
  const ok = await widget('full', full);
  assert.equal(ok.status, 201, ok.text);

  // present fields are read through .?
  assert.deepEqual(causes(await widget('below', { replicas: 1, minReplicas: 2 })), ['spec: Invalid value: replicas below minReplicas']);
  // an absent replicas is 1 (orValue), below a present minReplicas
  assert.deepEqual(causes(await widget('below-default', { minReplicas: 2 })), ['spec: Invalid value: replicas below minReplicas']);
  // self.?template.?pullPolicy: none when template is absent or has no pullPolicy, the value when present
  assert.equal((await widget('template-no-policy', { template: { image: 'x', pullPolicy: 'Always' } })).status, 201);
  assert.deepEqual(causes(await widget('bad-policy', { template: { image: 'x', pullPolicy: 'Sometimes' } })), ['spec: Invalid value: unknown pullPolicy']);
  // from the root through an absent spec, and a present one
  assert.deepEqual(causes(await widget('zero', { replicas: 0 })), ['<nil>: Invalid value: replicas must not be zero']);
});

test('a[?k] on maps (present and absent keys) and lists (in and out of range)', async () => {
  assert.equal((await widget('web', { replicas: 3, labels: { tier: 'web' } })).status, 201);
  assert.equal((await widget('untiered', { replicas: 3, labels: { app: 'x' } })).status, 201);
  assert.equal((await widget('db-one', { replicas: 1, labels: { tier: 'db' } })).status, 201);
  assert.deepEqual(causes(await widget('db-three', { replicas: 3, labels: { tier: 'db' } })), ['spec: Invalid value: a db runs one replica']);

  // ports[?0]: 80 when there is no first port; ports[?3]: none up to 3 ports
  assert.equal((await widget('no-ports', { ports: [] })).status, 201);
  assert.equal((await widget('three-ports', { ports: [443, 8080, 8443] })).status, 201);
  assert.deepEqual(causes(await widget('unprivileged', { ports: [8080] })), ['spec: Invalid value: the first port must be privileged (80 when there is none)']);
  assert.deepEqual(causes(await widget('four-ports', { ports: [80, 81, 82, 83] })), ['spec: Invalid value: at most 3 ports']);
});

test('optional list elements and map entries are kept only when they have a value', async () => {
  assert.equal((await widget('small', { replicas: 100 })).status, 201);
  assert.deepEqual(causes(await widget('one-big', { replicas: 101 })), ['spec: Invalid value: 1 replica count(s) above 100']);
  assert.deepEqual(causes(await widget('two-big', { replicas: 200, minReplicas: 150 })), ['spec: Invalid value: 2 replica count(s) above 100']);

  assert.equal((await widget('image-and-policy', { template: { image: 'x', pullPolicy: 'IfNotPresent' } })).status, 201);
  assert.equal((await widget('no-template-fields', { template: {} })).status, 201);
  assert.deepEqual(causes(await widget('image-only', { template: { image: 'x' } })), ['spec: Invalid value: image and pullPolicy go together']);
  assert.deepEqual(causes(await widget('policy-only', { template: { pullPolicy: 'Always' } })), ['spec: Invalid value: image and pullPolicy go together']);
});

test('oldSelf.?field with optionalOldSelf: none on create, the old value on update', async () => {
  const c = await widget('scaled', { replicas: 5 }, false);
  assert.equal(c.status, 201, c.text);
  const obj = c.json();
  const up = await s.request('PUT', `${WIDGETS}/scaled`, { body: { ...obj, spec: { replicas: 6 } } });
  assert.equal(up.status, 200, up.text);
  const down = await s.request('PUT', `${WIDGETS}/scaled`, { body: { ...up.json(), spec: { replicas: 4 } } });
  assert.deepEqual(causes(down), ['spec: Invalid value: replicas may not decrease']);
});

test('misused optional syntax is refused when the CRD is written, with errors at the rule text', async () => {
  const bad = crd('gadgets', 'Gadget', {
    type: 'object',
    properties: {
      name: str(63, { rule: "[?self].size() == 1" }, { rule: 'self.?first.hasValue()' }, { rule: 'has(self.?first)' }),
      count: {
        type: 'integer',
        'x-kubernetes-validations': [{ rule: "self > 0 || 'why?[?0]' == '' || self[?0].hasValue()" }, { rule: "{'a': 1, ?'b': self}.size() > 0" }],
      },
      tags: {
        type: 'array',
        maxItems: 4,
        items: str(16),
        'x-kubernetes-validations': [{ rule: "self.?spec.orValue('') == '' &&\n  self[?'first'].orValue('') == ''", message: 'two lines' }],
      },
    },
  });
  const r = await s.request('POST', CRDS, { body: bad });
  const p = 'spec.validation.openAPIV3Schema.properties[spec].properties';
  const got = causes(r).map((c) => c.replace(/Invalid value: apiextensions\.ValidationRule\{Rule:.*?, OptionalOldSelf:[^}]*\}: /s, ''));
  assert.deepEqual(got, [
    `${p}[name].x-kubernetes-validations[0].rule: compilation failed: ERROR: <input>:1:3: expected type 'optional_type(string)' but found 'string'\n | [?self].size() == 1\n | ..^`,
    `${p}[name].x-kubernetes-validations[1].rule: compilation failed: ERROR: <input>:1:5: type 'string' does not support field selection\n | self.?first.hasValue()\n | ....^`,
    `${p}[name].x-kubernetes-validations[2].rule: compilation failed: ERROR: <input>:1:9: invalid argument to has() macro\n | has(self.?first)\n | ........^`,
    `${p}[count].x-kubernetes-validations[0].rule: compilation failed: ERROR: <input>:1:37: found no matching overload for '_[?_]' applied to '(int, int)'\n | self > 0 || 'why?[?0]' == '' || self[?0].hasValue()\n | ....................................^`,
    `${p}[count].x-kubernetes-validations[1].rule: compilation failed: ERROR: <input>:1:16: expected type 'optional_type(int)' but found 'int'\n | {'a': 1, ?'b': self}.size() > 0\n | ...............^`,
    `${p}[tags].x-kubernetes-validations[0].rule: compilation failed: ERROR: <input>:1:5: type 'list(string)' does not support field selection\n | self.?spec.orValue('') == '' &&\n | ....^\nERROR: <input>:2:7: found no matching overload for '_[?_]' applied to '(list(string), string)'\n |   self[?'first'].orValue('') == ''\n | ......^`,
  ]);
  assert.equal((await s.request('GET', `${CRDS}/gadgets.${GROUP}`)).status, 404);

  // optional syntax inside string literals is text, not syntax
  const literal = crd('trinkets', 'Trinket', { type: 'object', properties: { name: str(63, { rule: "self != 'a.?b' && self != \"[?x]\" && self != r'''{?'k': v}'''", message: 'reserved name' }) } });
  const TRINKETS = await installRuleCrd(s, literal);
  assert.equal((await created('Trinket', TRINKETS, 'ok', { name: 'ab' })).status, 201);
  assert.deepEqual(causes(await created('Trinket', TRINKETS, 'reserved', { name: '[?x]' })), ['spec.name: Invalid value: "[?x]": reserved name']);
});

test('// comments in rules, also at the end of the text, and // inside string literals', async () => {
  const links = crd('links', 'Link', {
    type: 'object',
    properties: { url: str(256), hops: { type: 'integer' } },
    'x-kubernetes-validations': [
      { rule: "!has(self.url) || self.url.startsWith('https://') // TLS only", message: 'https only' },
      { rule: '// at most 3 hops\nself.?hops.orValue(0) <= 3 // (none: 0)', message: 'too many hops' },
    ],
  });
  const LINKS = await installRuleCrd(s, links);
  assert.equal((await created('Link', LINKS, 'ok', { url: 'https://example.com', hops: 2 })).status, 201);
  assert.deepEqual(causes(await created('Link', LINKS, 'plain', { url: 'http://example.com', hops: 4 })), ['spec: Invalid value: https only', 'spec: Invalid value: too many hops']);
});

test('or and orValue evaluate their argument only when the target is none, as cel-go does', async () => {
  const names = crd('names', 'Name', {
    type: 'object',
    properties: { primary: str(63), backup: str(63) },
    'x-kubernetes-validations': [
      // self.backup fails (no such key) when it is absent: reached only when primary is absent too
      { rule: "self.?primary.orValue(self.backup) != ''", message: 'a name is needed' },
      { rule: 'self.?primary.or(optional.of(self.backup)).hasValue()', message: 'a name or a backup is needed' },
    ],
  });
  const NAMES = await installRuleCrd(s, names);
  assert.equal((await created('Name', NAMES, 'primary-only', { primary: 'a' })).status, 201);
  assert.equal((await created('Name', NAMES, 'backup-only', { backup: 'b' })).status, 201);
  assert.deepEqual(causes(await created('Name', NAMES, 'empty-primary', { primary: '' })), ['spec: Invalid value: a name is needed']);
  // neither: the argument is evaluated, and its error refuses the object
  assert.equal((await created('Name', NAMES, 'neither', {})).status, 422);
});
