// The CEL libraries kube-apiserver's environment has beyond the standard ones, as CRD rules use
// them through the API: the format library (1.31+), the semver library (1.33+, with the
// normalize argument), the two-variable comprehensions (1.32+), cel-go's ext.Lists at version 3
// (1.34+) and the optional library's functions. Each CRD is written (its rules compiled, checked
// and costed), then objects that pass and fail its rules are created.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { installRuleCrd, ruleCrd, str, type Rule } from '../../helpers/cel-crd.ts';
import { LABEL_VALUE } from '../../helpers/kube-messages.ts';

let s: TestServer;
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const GROUP = 'libs.hearth.test';

const crd = (plural: string, kind: string, spec: Record<string, unknown>, rootRules: Rule[] = []) => ruleCrd(GROUP, plural, kind, spec, rootRules);

const hosts = crd('hosts', 'Host', {
  type: 'object',
  properties: {
    name: str(63, { rule: '!format.dns1123Label().validate(self).hasValue()', message: 'name must be a DNS label' }),
    // the kube documentation's messageExpression: the validation's own messages
    label: str(63, { rule: '!format.named("labelValue").value().validate(self).hasValue()', messageExpression: 'format.labelValue().validate(self).orValue([]).join(", ")' }),
    endpoint: str(256, { rule: '!format.uri().validate(self).hasValue()', messageExpression: 'format.uri().validate(self).value()[0]' }),
    id: str(64, { rule: '!format.uuid().validate(self).hasValue()', message: 'id must be a UUID' }),
    prefix: str(63, { rule: '!format.dns1123LabelPrefix().validate(self).hasValue()', message: 'prefix must be a DNS label prefix' }),
    formatName: str(32, { rule: 'format.named(self).hasValue()', message: 'unknown format' }),
  },
});

const releases = crd('releases', 'Release', {
  type: 'object',
  properties: {
    version: str(64, { rule: 'isSemver(self, true)', message: 'version must be a semantic version' }),
    minVersion: str(64),
    strict: str(64, { rule: 'semver(self).major() >= 1', message: 'strict must be 1.0.0 or later' }),
  },
  'x-kubernetes-validations': [
    {
      rule: '!has(self.minVersion) || !has(self.version) || !semver(self.version, true).isLessThan(semver(self.minVersion, true))',
      message: 'version must not be below minVersion',
    },
    { rule: '!has(self.version) || semver(self.version, true).compareTo(semver("1.0.0-rc.1")) != 0', message: '1.0.0-rc.1 is withdrawn' },
  ],
});

const routes = crd('routes', 'Route', {
  type: 'object',
  properties: {
    ports: {
      type: 'array',
      maxItems: 16,
      items: { type: 'integer' },
      'x-kubernetes-validations': [
        { rule: 'self.all(i, p, i == 0 || self[i - 1] < p)', message: 'ports must increase' },
        { rule: 'self.transformList(i, p, p > 1024, i).size() <= 1', message: 'at most one unprivileged port' },
      ],
    },
    weights: {
      type: 'object',
      maxProperties: 8,
      additionalProperties: { type: 'integer' },
      'x-kubernetes-validations': [
        { rule: 'self.exists(k, w, k == "default" && w > 0)', message: 'a positive default weight is required' },
        { rule: 'self.existsOne(k, w, w >= 50)', message: 'exactly one backend takes half or more' },
        // (a weight shared by two backends is an error: transformMapEntry refuses duplicate keys)
        { rule: 'self.transformMapEntry(k, w, {w: k}).size() == self.size()' },
        { rule: 'self.transformMap(k, w, k != "default", w * 2).all(k, w, w <= 200)', message: 'weights above 100' },
      ],
    },
  },
});

const sorted = crd('rosters', 'Roster', {
  type: 'object',
  properties: {
    names: {
      type: 'array',
      maxItems: 16,
      items: { type: 'string', maxLength: 32 },
      'x-kubernetes-validations': [
        { rule: 'self.distinct() == self', message: 'names must be unique' },
        { rule: 'self.sort() == self', message: 'names must be sorted' },
      ],
    },
    groups: {
      type: 'array',
      maxItems: 8,
      items: { type: 'array', maxItems: 8, items: { type: 'string', maxLength: 32 } },
      'x-kubernetes-validations': [{ rule: 'self.flatten().size() <= 10', message: 'at most 10 members' }],
    },
    ranks: {
      type: 'array',
      maxItems: 16,
      items: { type: 'object', required: ['name', 'rank'], properties: { name: { type: 'string', maxLength: 32 }, rank: { type: 'integer' } } },
      'x-kubernetes-validations': [
        { rule: 'self.sortBy(r, r.rank).map(r, r.name) == self.map(r, r.name)', message: 'ranks must be in order' },
        { rule: 'self.size() < 2 || self.slice(0, 2).reverse()[0].rank > 0', message: 'the second rank must be positive' },
        // (a literal bound: lists.range() of a computed size has no cost bound, see the last test)
        { rule: 'lists.range(16).all(i, i >= self.size() || self[i].rank >= i)', message: 'rank below position' },
      ],
    },
  },
});

async function created(path: string, kind: string, name: string, spec: unknown) {
  return s.request('POST', `${path}?dryRun=All`, { body: { apiVersion: `${GROUP}/v1`, kind, metadata: { name }, spec } });
}
const HOSTS = `/apis/${GROUP}/v1/namespaces/default/hosts`;
const RELEASES = `/apis/${GROUP}/v1/namespaces/default/releases`;
const ROUTES = `/apis/${GROUP}/v1/namespaces/default/routes`;
const ROSTERS = `/apis/${GROUP}/v1/namespaces/default/rosters`;

/** "field: message" of each cause of a 422. */
function causes(r: { status: number; text: string; json(): any }): string[] {
  assert.equal(r.status, 422, r.text);
  return r.json().details.causes.map((c: any) => `${c.field}: ${c.message}`);
}

before(async () => {
  s = await startTestServer();
  for (const c of [hosts, releases, routes, sorted]) await installRuleCrd(s, c);
});
after(async () => {
  await s.stop();
});

test('format library: validate() is none for a good value and lists apimachinery messages for a bad one', async () => {
  const good = { name: 'web-1', label: 'v1.2_x', endpoint: 'https://example.com/x', id: '123e4567-e89b-12d3-a456-426614174000', prefix: 'web-', formatName: 'dns1035Label' };
  const ok = await created(HOSTS, 'Host', 'good', good);
  assert.equal(ok.status, 201, ok.text);

  assert.deepEqual(causes(await created(HOSTS, 'Host', 'bad-name', { ...good, name: 'Web_1' })), ['spec.name: Invalid value: "Web_1": name must be a DNS label']);
  assert.deepEqual(causes(await created(HOSTS, 'Host', 'dotted', { ...good, name: 'web.1' })), ['spec.name: Invalid value: "web.1": name must be a DNS label']);
  assert.deepEqual(causes(await created(HOSTS, 'Host', 'bad-id', { ...good, id: 'not-a-uuid' })), ['spec.id: Invalid value: "not-a-uuid": id must be a UUID']);
  assert.deepEqual(causes(await created(HOSTS, 'Host', 'bad-prefix', { ...good, prefix: '-web' })), ['spec.prefix: Invalid value: "-web": prefix must be a DNS label prefix']);
  assert.deepEqual(causes(await created(HOSTS, 'Host', 'bad-format', { ...good, formatName: 'dns' })), ['spec.formatName: Invalid value: "dns": unknown format']);
  // messageExpressions show the validations' own messages
  assert.deepEqual(causes(await created(HOSTS, 'Host', 'bad-label', { ...good, label: '-x-' })), [
    `spec.label: Invalid value: "-x-": ${LABEL_VALUE}`,
  ]);
  assert.deepEqual(causes(await created(HOSTS, 'Host', 'bad-uri', { ...good, endpoint: 'example.com/x' })), ['spec.endpoint: Invalid value: "example.com/x": parse "example.com/x": invalid URI for request']);
  assert.deepEqual(causes(await created(HOSTS, 'Host', 'bad-port', { ...good, endpoint: 'http://example.com:http/' })), [
    'spec.endpoint: Invalid value: "http://example.com:http/": parse "http://example.com:http/": invalid port ":http" after host',
  ]);
});

test('semver library: parsing, normalization and ordering by precedence', async () => {
  const ok = await created(RELEASES, 'Release', 'r1', { version: '1.10.0', minVersion: 'v1.9', strict: '1.0.0+build.5' });
  assert.equal(ok.status, 201, ok.text);
  // numeric, not string, comparison of the parts
  assert.deepEqual(causes(await created(RELEASES, 'Release', 'r2', { version: '1.9.0', minVersion: '1.10.0' })), ['spec: Invalid value: version must not be below minVersion']);
  // a pre-release precedes its release
  assert.deepEqual(causes(await created(RELEASES, 'Release', 'r3', { version: '2.0.0-alpha.10', minVersion: '2.0.0' })), ['spec: Invalid value: version must not be below minVersion']);
  assert.equal((await created(RELEASES, 'Release', 'r4', { version: '2.0.0-alpha.10', minVersion: '2.0.0-alpha.9' })).status, 201);
  // build metadata takes no part in comparisons
  assert.deepEqual(causes(await created(RELEASES, 'Release', 'r5', { version: '1.0.0-rc.1+b7' })), ['spec: Invalid value: 1.0.0-rc.1 is withdrawn']);
  // (normalization turns "one" into "0one", which semver() then refuses: a runtime error of the rule that parses it)
  assert.deepEqual(causes(await created(RELEASES, 'Release', 'r6', { version: 'one.two' })), [
    'spec: Invalid value: "object": Invalid character(s) found in major number "0one" evaluating rule: 1.0.0-rc.1 is withdrawn',
    'spec.version: Invalid value: "one.two": version must be a semantic version',
  ]);
  // without normalization a short or "v" version is not a semver: the rule fails with blang/semver's error
  assert.deepEqual(causes(await created(RELEASES, 'Release', 'r7', { strict: 'v1.2.3' })), [
    'spec.strict: Invalid value: "string": Invalid character(s) found in major number "v1" evaluating rule: strict must be 1.0.0 or later',
  ]);
  assert.deepEqual(causes(await created(RELEASES, 'Release', 'r8', { strict: '0.9.0' })), ['spec.strict: Invalid value: "0.9.0": strict must be 1.0.0 or later']);
});

test('two-variable comprehensions over lists (index, value) and maps (key, value)', async () => {
  const ok = await created(ROUTES, 'Route', 'ok', { ports: [80, 443, 8080], weights: { default: 60, canary: 40 } });
  assert.equal(ok.status, 201, ok.text);
  assert.deepEqual(causes(await created(ROUTES, 'Route', 'unordered', { ports: [443, 80] })), ['spec.ports: Invalid value: ports must increase']);
  assert.deepEqual(causes(await created(ROUTES, 'Route', 'unprivileged', { ports: [80, 8080, 8443] })), ['spec.ports: Invalid value: at most one unprivileged port']);
  assert.deepEqual(causes(await created(ROUTES, 'Route', 'no-default', { weights: { canary: 60, main: 40 } })), ['spec.weights: Invalid value: a positive default weight is required']);
  assert.deepEqual(causes(await created(ROUTES, 'Route', 'split', { weights: { default: 10, a: 45, b: 44 } })), ['spec.weights: Invalid value: exactly one backend takes half or more']);
  assert.deepEqual(causes(await created(ROUTES, 'Route', 'heavy', { weights: { default: 40, a: 101 } })), ['spec.weights: Invalid value: weights above 100']);
  // cel.@mapInsert's error on a duplicate key is the rule's runtime error
  assert.deepEqual(causes(await created(ROUTES, 'Route', 'dup', { weights: { default: 50, a: 25, b: 25 } })), [
    'spec.weights: Invalid value: "object": insert failed: key 25 already exists evaluating rule: self.transformMapEntry(k, w, {w: k}).size() == self.size()',
  ]);
});

test('ext.Lists functions: distinct, sort, sortBy, flatten, slice, reverse, lists.range', async () => {
  const ok = await created(ROSTERS, 'Roster', 'ok', {
    names: ['ann', 'bob', 'cy'],
    groups: [['a', 'b'], ['c']],
    ranks: [{ name: 'x', rank: 1 }, { name: 'y', rank: 2 }, { name: 'z', rank: 5 }],
  });
  assert.equal(ok.status, 201, ok.text);
  assert.deepEqual(causes(await created(ROSTERS, 'Roster', 'dups', { names: ['ann', 'ann'] })), ['spec.names: Invalid value: names must be unique']);
  assert.deepEqual(causes(await created(ROSTERS, 'Roster', 'unsorted', { names: ['bob', 'ann'] })), ['spec.names: Invalid value: names must be sorted']);
  assert.deepEqual(causes(await created(ROSTERS, 'Roster', 'big', { groups: [['a', 'b', 'c', 'd', 'e', 'f'], ['g', 'h', 'i', 'j', 'k']] })), ['spec.groups: Invalid value: at most 10 members']);
  assert.deepEqual(causes(await created(ROSTERS, 'Roster', 'order', { ranks: [{ name: 'x', rank: 2 }, { name: 'y', rank: 1 }] })), ['spec.ranks: Invalid value: ranks must be in order']);
  assert.deepEqual(causes(await created(ROSTERS, 'Roster', 'zero', { ranks: [{ name: 'x', rank: 0 }, { name: 'y', rank: 0 }] })), [
    'spec.ranks: Invalid value: the second rank must be positive',
    'spec.ranks: Invalid value: rank below position',
  ]);
  assert.deepEqual(causes(await created(ROSTERS, 'Roster', 'low', { ranks: [{ name: 'x', rank: 1 }, { name: 'y', rank: 1 }, { name: 'z', rank: 1 }] })), ['spec.ranks: Invalid value: rank below position']);
});

test('misused library functions are refused when the CRD is written, in cel-go words', async () => {
  const bad = crd('gizmos', 'Gizmo', {
    type: 'object',
    properties: {
      count: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'semver(self).major() == 1' }] },
      name: str(63, { rule: 'format.dns1123Label().validate(self, 1).hasValue()' }, { rule: 'self.reverse() == self' }),
      tags: { type: 'array', maxItems: 4, items: { type: 'integer' }, 'x-kubernetes-validations': [{ rule: 'self.all(i, i, i > 0)' }, { rule: 'self.flatten().size() > 0' }, { rule: 'self.all(i, 1, true)' }] },
    },
  });
  const r = await s.request('POST', CRDS, { body: bad });
  const p = 'spec.validation.openAPIV3Schema.properties[spec].properties';
  const got = causes(r).map((c) => c.replace(/Invalid value: apiextensions\.ValidationRule\{[^}]*\}: /, ''));
  assert.deepEqual(got, [
    `${p}[count].x-kubernetes-validations[0].rule: compilation failed: ERROR: <input>:1:1: found no matching overload for 'semver' applied to '(int)'\n | semver(self).major() == 1\n | ^`,
    `${p}[name].x-kubernetes-validations[0].rule: compilation failed: ERROR: <input>:1:22: found no matching overload for 'validate' applied to 'kubernetes.NamedFormat.(string, int)'\n | format.dns1123Label().validate(self, 1).hasValue()\n | .....................^`,
    `${p}[name].x-kubernetes-validations[1].rule: compilation failed: ERROR: <input>:1:5: found no matching overload for 'reverse' applied to 'string.()'\n | self.reverse() == self\n | ....^`,
    `${p}[tags].x-kubernetes-validations[0].rule: compilation failed: ERROR: <input>:1:13: duplicate variable name: i\n | self.all(i, i, i > 0)\n | ............^`,
    `${p}[tags].x-kubernetes-validations[1].rule: compilation failed: ERROR: <input>:1:5: found no matching overload for 'flatten' applied to 'list(int).()'\n | self.flatten().size() > 0\n | ....^`,
    `${p}[tags].x-kubernetes-validations[2].rule: compilation failed: ERROR: <input>:1:13: argument must be a simple name\n | self.all(i, 1, true)\n | ............^`,
  ]);

  // lists.range() of a value that is not a literal has no cost bound (cel-go estimates math.MaxUint64)
  const costly = crd('gizmos', 'Gizmo', { type: 'object', properties: { n: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'lists.range(self).size() >= 0' }] } } });
  const c = await s.request('POST', CRDS, { body: costly });
  assert.ok(causes(c).some((m) => m.includes('estimated rule cost exceeds budget by factor of more than 100x')), c.text);
  assert.equal((await s.request('GET', `${CRDS}/gizmos.${GROUP}`)).status, 404);
});

test('list and map literals must be of one type (kube compiles rules with HomogeneousAggregateLiterals)', async () => {
  const bad = crd('mixes', 'Mix', {
    type: 'object',
    properties: {
      count: { type: 'integer', 'x-kubernetes-validations': [{ rule: "self in [1, 'two', 3]" }, { rule: '[self, 2.0].size() == 2' }, { rule: "{'a': self, 1: 2}.size() == 2" }, { rule: "{'a': [1], 'b': ['x']}.size() == 2" }] },
    },
  });
  const r = await s.request('POST', CRDS, { body: bad });
  assert.equal(r.status, 422, r.text);
  const p = 'spec.validation.openAPIV3Schema.properties[spec].properties';
  const got = causes(r).map((c) => c.replace(/Invalid value: apiextensions\.ValidationRule\{Rule:.*?, OptionalOldSelf:[^}]*\}: /s, ''));
  assert.deepEqual(got, [
    `${p}[count].x-kubernetes-validations[0].rule: compilation failed: ERROR: <input>:1:13: expected type 'int' but found 'string'\n | self in [1, 'two', 3]\n | ............^`,
    `${p}[count].x-kubernetes-validations[1].rule: compilation failed: ERROR: <input>:1:8: expected type 'int' but found 'double'\n | [self, 2.0].size() == 2\n | .......^`,
    `${p}[count].x-kubernetes-validations[2].rule: compilation failed: ERROR: <input>:1:13: expected type 'string' but found 'int'\n | {'a': self, 1: 2}.size() == 2\n | ............^`,
    `${p}[count].x-kubernetes-validations[3].rule: compilation failed: ERROR: <input>:1:17: expected type 'list(int)' but found 'list(string)'\n | {'a': [1], 'b': ['x']}.size() == 2\n | ................^`,
  ]);
  assert.equal((await s.request('GET', `${CRDS}/mixes.${GROUP}`)).status, 404);

  // One type throughout, or dyn (an int-or-string field, dyn()) joining the rest: compiled and enforced.
  const good = crd('blends', 'Blend', {
    type: 'object',
    properties: {
      count: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self in [1, 2, 3]', message: 'count must be 1, 2 or 3' }] },
      port: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-validations': [{ rule: "self in [dyn(80), 'http']", message: 'port must be 80 or http' }] },
    },
  });
  const BLENDS = await installRuleCrd(s, good);
  assert.equal((await created(BLENDS, 'Blend', 'ok', { count: 2, port: 'http' })).status, 201);
  assert.deepEqual(causes(await created(BLENDS, 'Blend', 'bad', { count: 4, port: 81 })), ['spec.count: Invalid value: 4: count must be 1, 2 or 3', 'spec.port: Invalid value: 81: port must be 80 or http']);
});
