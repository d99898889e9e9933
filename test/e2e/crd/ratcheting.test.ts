// CRD validation ratcheting (kube's CRDValidationRatcheting, GA in 1.33): after a CRD's schema is
// tightened, objects stored under the old schema can still be updated as long as the values the
// new schema rejects do not change. Schema errors on unchanged values are dropped; failures of
// CEL rules that do not read oldSelf become warnings. Creates and changed values are checked in full.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let s: TestServer;
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const GROUP = 'ratchet.hearth.test';
const GADGETS = `/apis/${GROUP}/v1/namespaces/default/gadgets`;

/** The Gadget schema: `strict` adds the limits and rules objects stored before it break. */
function gadgetCrd(strict: boolean, resourceVersion?: string) {
  // (a pattern, not maxLength: a too-long value is one of the errors that stop CEL rules from running)
  const limit = (n: number) => (strict ? { pattern: `^.{0,${n}}$` } : {});
  const spec = {
    type: 'object',
    properties: {
      name: { type: 'string', ...limit(5) },
      note: { type: 'string' },
      count: { type: 'integer', ...(strict ? { 'x-kubernetes-validations': [{ rule: 'self <= 10', message: 'count must be at most 10' }] } : {}) },
      tags: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['key'],
        items: { type: 'object', required: ['key'], properties: { key: { type: 'string' }, value: { type: 'string', ...limit(3) } } },
      },
      aliases: { type: 'array', items: { type: 'string', ...limit(3) } },
      labels: { type: 'object', additionalProperties: { type: 'string', ...limit(3) } },
      level: { type: 'integer', ...(strict ? { 'x-kubernetes-validations': [{ rule: 'self >= oldSelf', message: 'level may not go down' }] } : {}) },
      limits: {
        type: 'object',
        'x-kubernetes-map-type': 'atomic',
        properties: { cpu: { type: 'integer', ...(strict ? { 'x-kubernetes-validations': [{ rule: 'self <= 10', message: 'cpu must be at most 10' }] } : {}) }, memory: { type: 'integer' } },
      },
    },
  };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `gadgets.${GROUP}`, ...(resourceVersion ? { resourceVersion } : {}) },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }],
    },
  };
}

const loose = { name: 'long-name', note: 'n', count: 50, tags: [{ key: 'a', value: 'long' }, { key: 'b', value: 'ok' }], aliases: ['long', 'ok'], labels: { x: 'long' }, level: 5 };

async function put(name: string, spec: Record<string, unknown>) {
  const cur = (await s.request('GET', `${GADGETS}/${name}`)).json();
  return s.request('PUT', `${GADGETS}/${name}`, { body: { ...cur, spec } });
}

function warningsOf(r: { headers: Record<string, string | string[] | undefined> }): string[] {
  return ([] as string[]).concat((r.headers.warning as string | string[] | undefined) ?? []);
}

function causes(r: { json(): any }): string[] {
  return r.json().details.causes.map((c: any) => c.field).sort();
}

before(async () => {
  s = await startTestServer();
  assert.equal((await s.request('POST', CRDS, { body: gadgetCrd(false) })).status, 201);
  for (let i = 0; i < 50; i++) {
    if ((await s.request('GET', GADGETS)).status === 200) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  for (const name of ['g1', 'g2', 'g3', 'g4', 'g5', 'g6']) {
    const spec = name === 'g6' ? { ...loose, limits: { cpu: 50, memory: 1 } } : loose;
    const r = await s.request('POST', GADGETS, { body: { apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name }, spec } });
    assert.equal(r.status, 201, r.text);
  }
  // Tighten the schema: every stored Gadget now breaks it in six places.
  const crd = (await s.request('GET', `${CRDS}/gadgets.${GROUP}`)).json();
  const r = await s.request('PUT', `${CRDS}/gadgets.${GROUP}`, { body: { ...gadgetCrd(true, crd.metadata.resourceVersion), status: crd.status } });
  assert.equal(r.status, 200, r.text);
  // (served with the new schema once a create with the old values is refused)
  for (let i = 0; i < 50; i++) {
    const probe = await s.request('POST', `${GADGETS}?dryRun=All`, { body: { apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name: 'probe' }, spec: loose } });
    if (probe.status === 422) break;
    await new Promise((r) => setTimeout(r, 20));
  }
});
after(async () => {
  await s.stop();
});

test('a create is validated in full against the tightened schema', async () => {
  const r = await s.request('POST', GADGETS, { body: { apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name: 'fresh' }, spec: loose } });
  assert.equal(r.status, 422, r.text);
  assert.deepEqual(causes(r), ['spec.aliases[0]', 'spec.count', 'spec.labels.x', 'spec.name', 'spec.tags[0].value']);
});

test('an update that leaves the invalid values alone succeeds; the unchanged CEL failure comes back as a warning', async () => {
  const r = await put('g1', { ...loose, note: 'changed' });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json().spec.note, 'changed');
  assert.deepEqual(warningsOf(r), ['299 - "spec.count: Invalid value: 50: count must be at most 10"']);
  // A merge patch and a status-free metadata change ratchet the same way.
  const p = await s.request('PATCH', `${GADGETS}/g1`, { raw: JSON.stringify({ metadata: { labels: { team: 'x' } } }), headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(p.status, 200, p.text);
});

test('changing an invalid value is refused, and only the changed value is reported', async () => {
  const name = await put('g2', { ...loose, name: 'other-long' });
  assert.equal(name.status, 422);
  assert.deepEqual(causes(name), ['spec.name']);
  const count = await put('g2', { ...loose, count: 60 });
  assert.equal(count.status, 422);
  assert.deepEqual(causes(count), ['spec.count']);
  assert.match(count.json().message, /count must be at most 10/);
});

test('list-type map items correlate by key: an unchanged item is forgiven, a changed or new one is not', async () => {
  const kept = await put('g3', { ...loose, tags: [{ key: 'b', value: 'ok' }, { key: 'a', value: 'long' }] });
  assert.equal(kept.status, 200, kept.text);
  const changed = await put('g3', { ...loose, tags: [{ key: 'a', value: 'longer' }, { key: 'b', value: 'ok' }] });
  assert.equal(changed.status, 422);
  assert.deepEqual(causes(changed), ['spec.tags[0].value']);
  const added = await put('g3', { ...loose, tags: [{ key: 'b', value: 'ok' }, { key: 'a', value: 'long' }, { key: 'c', value: 'long' }] });
  assert.equal(added.status, 422);
  assert.deepEqual(causes(added), ['spec.tags[2].value']);
});

test('atomic list items do not correlate: changing the list re-checks every item; map entries do correlate', async () => {
  const grown = await put('g4', { ...loose, aliases: ['long', 'ok', 'new'] });
  assert.equal(grown.status, 422);
  assert.deepEqual(causes(grown), ['spec.aliases[0]']);
  const labelled = await put('g4', { ...loose, labels: { x: 'long', y: 'ok' } });
  assert.equal(labelled.status, 200, labelled.text);
});

test('transition rules are not ratcheted: they run whenever an old value correlates', async () => {
  const down = await put('g5', { ...loose, level: 4 });
  assert.equal(down.status, 422);
  assert.match(down.json().message, /level may not go down/);
  const same = await put('g5', { ...loose, level: 5 });
  assert.equal(same.status, 200, same.text);
});

test('inside an atomic map, unchanged values still correlate for ratcheting (kube\'s CorrelatedObject.Key ignores the map type)', async () => {
  // memory changes, so the atomic map changed; cpu did not, so its failure is ratcheted
  const r = await put('g6', { ...loose, limits: { cpu: 50, memory: 2 } });
  assert.equal(r.status, 200, r.text);
  assert.equal(warningsOf(r).join(', '), '299 - "spec.count: Invalid value: 50: count must be at most 10", 299 - "spec.limits.cpu: Invalid value: 50: cpu must be at most 10"');
  const changed = await put('g6', { ...loose, limits: { cpu: 40, memory: 2 } });
  assert.equal(changed.status, 422);
  assert.deepEqual(causes(changed), ['spec.limits.cpu']);
});
