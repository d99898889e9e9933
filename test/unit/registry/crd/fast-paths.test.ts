// The fast paths of custom-resource decoding and validation must answer exactly as the reference
// ones: the compiled one-walk prune+default (prune-default.ts) against pruneValue then
// defaultValue (schema-validator.ts), on the fixture CRDs and their samples and on randomly
// generated schemas and objects full of the awkward cases (preserved unknown fields, embedded
// resources, additionalProperties true/false/schema, nulls, nullable, object defaults with
// defaults inside, prototype-named keys); validation's quick ajv check before the error report;
// CEL errors of several properties in the object's key order.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { compileVersionSchema, defaultValue, pruneValue } from '../../../../server/registry/crd/schema-validator.ts';
import { versionSchemaOf } from '../../../../server/registry/crd/crd-validation.ts';
import { benchWidget, benchWidgetsCRD } from '../../../fixtures/crds/generate.ts';
import { customResourceInfos } from '../../../../server/registry/crd/runtime.ts';
import { seededRandom } from '../../../helpers/random.ts';

const DIR = fileURLToPath(new URL('../../../fixtures/crds/', import.meta.url));

/** JSON text keeps key order, so equal text means equal objects with keys in the same order (-0 marked). */
const text = (v: unknown): string => JSON.stringify(v, (_k, x) => (Object.is(x, -0) ? '-0' : x)) ?? 'undefined';
const copy = <T>(v: T): T => (v === undefined ? v : JSON.parse(JSON.stringify(v)));

/** The reference decode: prune everything, then default everything. */
function reference(schema: any, obj: any, isResourceRoot: boolean): { obj: any; pruned: string[] } {
  const o = copy(obj);
  const pruned: string[] = [];
  pruneValue(schema, o, '', pruned, isResourceRoot);
  defaultValue(schema, o);
  return { obj: o, pruned };
}

/** Every compiled entry point gives the reference's object, pruned paths and key order. */
function assertSame(schema: any, obj: any, isResourceRoot: boolean, label: string): void {
  const c = compileVersionSchema(schema, { isResourceRoot });
  const want = reference(c.schema, obj, isResourceRoot);

  const one = copy(obj);
  const pruned = c.pruneAndDefault(one);
  assert.equal(text(one), text(want.obj), `${label}: pruneAndDefault object`);
  assert.deepEqual(pruned, want.pruned, `${label}: pruneAndDefault paths`);

  const two = copy(obj);
  const pruned2 = c.prune(two);
  const refPruned = copy(obj);
  const refPaths: string[] = [];
  pruneValue(c.schema, refPruned, '', refPaths, isResourceRoot);
  assert.equal(text(two), text(refPruned), `${label}: prune object`);
  assert.deepEqual(pruned2, refPaths, `${label}: prune paths`);
  c.applyDefaults(two);
  assert.equal(text(two), text(want.obj), `${label}: prune then applyDefaults`);

  // Defaults alone, on an object that was never pruned (what reads of stored objects do).
  const three = copy(obj);
  const refDefaulted = copy(obj);
  c.applyDefaults(three);
  defaultValue(c.schema, refDefaulted);
  assert.equal(text(three), text(refDefaulted), `${label}: applyDefaults alone`);
}


const NAMES = ['a', 'b', 'c', 'spec', 'items', 'apiVersion', 'kind', 'metadata', 'constructor', 'toString', '__proto__', 'x.y', 'name'];
const META_KEYS = ['name', 'labels', 'bogus', 'namespace', 'extra'];

function gen(seed: number) {
  const r = seededRandom(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
  const chance = (p: number) => r() < p;

  const scalarDefault = () => pick<unknown>(['d', 0, -0, 1.5, true, false, null, '']);
  function schema(depth: number): any {
    const s: any = {};
    const kind = depth <= 0 ? pick(['string', 'integer', 'boolean']) : pick(['object', 'object', 'array', 'string', 'integer']);
    s.type = kind;
    if (chance(0.15)) s.nullable = true;
    if (kind === 'object') {
      if (chance(0.85)) {
        s.properties = {};
        const n = 1 + Math.floor(r() * 4);
        for (let i = 0; i < n; i++) {
          const k = pick(NAMES);
          // now and then a property schema that is not an object: the reference's odd branches
          s.properties[k] = chance(0.04) ? pick<unknown>([true, 1, 'x', null]) : schema(depth - 1);
        }
      }
      if (chance(0.3)) s.additionalProperties = chance(0.6) ? schema(depth - 1) : pick<unknown>([true, false]);
      if (chance(0.2)) s['x-kubernetes-preserve-unknown-fields'] = true;
      if (chance(0.15)) s['x-kubernetes-embedded-resource'] = true;
      if (chance(0.2)) s.default = chance(0.5) ? {} : { a: 'x', [pick(NAMES)]: chance(0.5) ? null : { b: 1 } };
    } else if (kind === 'array') {
      if (chance(0.9)) s.items = schema(depth - 1);
      if (chance(0.15)) s['x-kubernetes-preserve-unknown-fields'] = true;
      if (chance(0.15)) s.default = chance(0.5) ? [] : [null, { a: 1 }];
    } else if (chance(0.3)) s.default = scalarDefault();
    return s;
  }
  function value(s: any, depth: number): any {
    if (chance(0.12)) return null;
    if (depth < -1 || chance(0.05)) return pick<unknown>(['v', 3, true, -0]);
    const type = s && typeof s === 'object' ? s.type : undefined;
    if (type === 'array' || (type === undefined && chance(0.2))) {
      const n = Math.floor(r() * 3);
      return Array.from({ length: n }, () => value(s?.items, depth - 1));
    }
    if (type === 'object' || (type === undefined && chance(0.3))) {
      const o: any = {};
      const n = Math.floor(r() * 5);
      for (let i = 0; i < n; i++) {
        const k = chance(0.3) ? `u${Math.floor(r() * 3)}` : pick(NAMES);
        const ps = s?.properties?.[k] ?? (s?.additionalProperties && typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
        if (k === 'metadata' && chance(0.5)) o[k] = Object.fromEntries(META_KEYS.filter(() => chance(0.5)).map((m) => [m, m === 'labels' ? { l: 'v' } : 'v']));
        else if ((k === 'apiVersion' || k === 'kind') && chance(0.5)) o[k] = chance(0.7) ? 'v1' : 7;
        else o[k] = value(ps, depth - 1);
      }
      return o;
    }
    return pick<unknown>(['s', 12, 2.5, false, '']);
  }
  const root = schema(3);
  root.type = 'object';
  root.properties ??= {};
  return { schema: root, obj: value(root, 4), isResourceRoot: chance(0.7) };
}

describe('compiled prune and default (one walk) equal pruneValue then defaultValue', () => {
  it('on the bench widget and minimal objects of its CRD', () => {
    const schema = benchWidgetsCRD().spec.versions[0].schema.openAPIV3Schema;
    assertSame(schema, benchWidget(3), true, 'benchWidget');
    assertSame(schema, { apiVersion: 'bench.hearth.test/v1', kind: 'Widget', metadata: { name: 'm', extra: 1 }, spec: { owner: { team: 't' }, rollout: {}, color: 'x', ports: [{ name: 'a', port: 1, bogus: 2 }, null] } }, true, 'minimal');
    assertSame(schema, { apiVersion: 1, kind: null, metadata: 'x', status: null, spec: { tier: null, owner: null, config: { any: { thing: [1, { deep: null }] } } } }, true, 'odd root fields');
  });

  it('on every fixture CRD version and sample', () => {
    let checked = 0;
    for (const file of readdirSync(DIR).filter((f) => f.endsWith('.samples.yaml'))) {
      const crd = YAML.parse(readFileSync(DIR + file.replace('.samples.yaml', '.yaml'), 'utf8'));
      const samples = YAML.parseAllDocuments(readFileSync(DIR + file, 'utf8')).map((d) => d.toJS());
      for (const v of crd.spec.versions) {
        const schema = versionSchemaOf(crd, v.name)!;
        for (const s of samples) {
          for (const o of [s.object, s.oldObject].filter(Boolean)) {
            assertSame(schema, o, true, `${file} ${s.name} as ${v.name}`);
            checked++;
          }
        }
      }
    }
    assert.ok(checked >= 10, `only ${checked} samples checked`);
  });

  it('on 3000 random schemas and objects', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const g = gen(seed);
      assertSame(g.schema, g.obj, g.isResourceRoot, `seed ${seed} schema ${text(g.schema)} object ${text(g.obj)}`);
    }
  });

  it('on JSON-parsed objects with own __proto__ keys', () => {
    const schema = JSON.parse('{"type":"object","properties":{"a":{"type":"object","additionalProperties":{"type":"string","default":"d"}},"__proto__":{"type":"object","properties":{"b":{"type":"string","default":"x"}}}}}');
    const obj = JSON.parse('{"a":{"__proto__":null,"constructor":null,"k":null},"__proto__":{"c":1},"z":{"__proto__":{}}}');
    assertSame(schema, obj, true, 'own __proto__');
    assertSame(schema, obj, false, 'own __proto__, not a root');
  });

  it('on nulls under nullable and non-nullable defaults', () => {
    const m = (nullable: boolean) => ({ type: 'object', additionalProperties: { type: 'object', nullable, default: { d: -0 }, properties: { d: { type: 'number' } } } });
    const schema = { type: 'object', properties: { m1: m(true), m2: m(false), l: { type: 'array', items: { type: 'string', default: 'i' } }, ln: { type: 'array', items: { type: 'string', nullable: true, default: 'i' } }, n: { type: 'string', nullable: true, default: 'n' }, o: { type: 'string', default: -0 } } };
    assertSame(schema, { m1: { a: null, b: {} }, m2: { a: null, b: {} }, l: [null, 'x'], ln: [null, 'x'], n: null, o: null }, false, 'nulls');
  });
});

describe('validation fast paths', () => {
  const crd = benchWidgetsCRD();
  const [info] = customResourceInfos(crd);
  const cr = info.custom!;
  const prepared = (o: any) => {
    cr.compiled().pruneAndDefault(o);
    return o;
  };

  it('a valid object passes the quick check with no errors; invalid ones get the full report', () => {
    assert.deepEqual(cr.validate(prepared(benchWidget(1)), undefined), []);
    const bad = prepared(benchWidget(2));
    bad.spec.replicas = 'three';
    bad.spec.limits.burst = -1;
    bad.spec.owner.costCenter = 'pl-42';
    assert.deepEqual(
      cr.validate(bad, undefined).map((e) => `${e.field}: ${e.message}`),
      [
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        "spec.owner.costCenter: Invalid value: \"pl-42\": spec.owner.costCenter in body should match '^[A-Z]{2}-[0-9]{4}$'",
        'spec.limits.burst: Invalid value: -1: spec.limits.burst in body should be greater than or equal to 0',
        '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
      ],
    );
  });

  it('list-type errors are ratcheted against the stored object only when the new one has some', () => {
    const old = prepared(benchWidget(3));
    old.spec.tags = ['a', 'a'];
    const next = structuredClone(old);
    next.spec.replicas = 5;
    assert.deepEqual(cr.validate(next, old), [], 'duplicates the stored object had are tolerated');
    const fresh = structuredClone(old);
    fresh.spec.tags = ['a', 'b'];
    const dup = structuredClone(fresh);
    dup.spec.tags = ['b', 'b'];
    assert.deepEqual(cr.validate(dup, fresh).map((e) => `${e.field}: ${e.message}`), ['spec.tags[1]: Duplicate value: "b"']);
    // set identity: a string and a number with the same text differ, equal numbers do not
    const mixed = structuredClone(fresh);
    mixed.spec.tags = ['1', 1 as any];
    assert.ok(!cr.validate(mixed, undefined).some((e) => e.reason === 'FieldValueDuplicate'));
  });

  it('CEL errors under several properties come in the object\'s key order', () => {
    const o = prepared(benchWidget(4));
    o.spec.window = { start: 6, end: 6 };
    o.spec.tags.push('internal-x');
    const fmt = (spec: any) => cr.validate({ ...o, spec }, undefined).map((e) => e.field);
    // schema order is tags before window; the object decides
    const windowFirst = { window: o.spec.window, ...o.spec };
    const tagsFirst = { tags: o.spec.tags, ...o.spec };
    assert.deepEqual(fmt(windowFirst), ['spec.window', 'spec.tags']);
    assert.deepEqual(fmt(tagsFirst), ['spec.tags', 'spec.window']);
  });
});
