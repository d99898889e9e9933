// Fast paths of custom-resource creates, each checked against the reference it shortcuts:
// - the duplicate-key check by colon counts (duplicate-fields.ts noDuplicateKeys) against the
//   full scan, on random JSON texts with repeated keys, colons in keys and strings, escapes;
// - the prune walk's remembered key positions (prune-default.ts) against pruneValue then
//   defaultValue, on many objects per schema with shuffled, unknown and missing keys.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compileVersionSchema, defaultValue, pruneValue, validateListSetsAndMaps } from '../../../../server/registry/crd/schema-validator.ts';
import { duplicateJsonFields, noDuplicateKeys } from '../../../../server/http/duplicate-fields.ts';
import { benchWidget, benchWidgetsCRD } from '../../../fixtures/crds/generate.ts';
import { seededRandom } from '../../../helpers/random.ts';

const text = (v: unknown): string => JSON.stringify(v, (_k, x) => (Object.is(x, -0) ? '-0' : typeof x === 'bigint' ? `${x}n` : x)) ?? 'undefined';
const copy = <T>(v: T): T => (v === undefined ? v : JSON.parse(JSON.stringify(v)));

// ---------------------------------------------------------------------------------------------
// Duplicate keys

function jsonText(seed: number): string {
  const r = seededRandom(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
  const chance = (p: number) => r() < p;
  const KEYS = ['a', 'b', 'c', 'a:b', ':', 'x\\"y', 'k\\u003ak', 'k:k', 'q\\\\', 'name'];
  const STRS = ['"s"', '"x:y"', '":"', '"::"', '"\\u003a"', '"\\u003A:"', '"\\":"', '"a\\\\"', '""', '"fd00::/8"', '"\\\\u003a"'];
  const ws = () => (chance(0.2) ? pick([' ', '\n', '\t ']) : '');
  function value(depth: number): string {
    if (depth <= 0 || chance(0.3)) return pick([...STRS, '1', '-2.5e3', 'true', 'null']);
    if (chance(0.3)) return `[${ws()}${Array.from({ length: Math.floor(r() * 3) }, () => value(depth - 1)).join(`${ws()},${ws()}`)}${ws()}]`;
    const n = Math.floor(r() * 5);
    const keys: string[] = [];
    for (let i = 0; i < n; i++) keys.push(keys.length && chance(0.15) ? pick(keys) : pick(KEYS));
    return `{${ws()}${keys.map((k) => `"${k}"${ws()}:${ws()}${value(depth - 1)}`).join(`${ws()},${ws()}`)}${ws()}}`;
  }
  return value(4);
}

describe('duplicate keys by colon counts equal the full scan', () => {
  it('on 5000 random JSON texts', () => {
    let withDuplicates = 0;
    for (let seed = 1; seed <= 5000; seed++) {
      const t = jsonText(seed);
      const parsed = JSON.parse(t);
      const full = duplicateJsonFields(t); // no parsed value: the scan itself
      if (full.length) withDuplicates++;
      assert.deepEqual(duplicateJsonFields(t, parsed), full, t);
    }
    assert.ok(withDuplicates > 500, `${withDuplicates} texts had duplicates`);
  });

  it('on the cases the counts must not be fooled by', () => {
    const cases: [string, string[]][] = [
      ['{"a":1,"a":2}', ['a']],
      ['{"a":"\\u003a","a":1}', ['a']], // an escaped colon makes up for the dropped key
      ['{"a":":","b":{"c":1,"c":":"}}', ['b.c']],
      ['{"a" : 1, "b":"x:y:z"}', []],
      ['{"a:b":1,"a:b":2,"c":[{"d":"::"}]}', ['a:b']],
      ['{"x":{"y":1},"x":{"y":2,"z":"a:b"}}', ['x']],
      [JSON.stringify(benchWidget(1)), []],
    ];
    for (const [t, want] of cases) assert.deepEqual(duplicateJsonFields(t, JSON.parse(t)), want, t);
  });

  it('answers by the counts alone when strings hold colons (no scan)', () => {
    for (const t of [JSON.stringify(benchWidget(2)), '{"image":"nginx:1.25","at":"2024-01-01T00:00:00Z","m":{"k:v":"a::b"}}']) {
      assert.equal(noDuplicateKeys(t, JSON.parse(t)), true, t);
    }
    assert.equal(noDuplicateKeys('{"a":"x:y","a":"x:y"}', JSON.parse('{"a":"x:y","a":"x:y"}')), false);
  });
});

// ---------------------------------------------------------------------------------------------
// String lengths: the quick ajv check measures maxLength in UTF-16 units when no minLength exists

describe('string lengths count code points whichever quick check runs', () => {
  it('maxLength and minLength on strings with surrogate pairs', () => {
    const only = compileVersionSchema({ type: 'object', properties: { s: { type: 'string', maxLength: 3 } } });
    const both = compileVersionSchema({ type: 'object', properties: { s: { type: 'string', maxLength: 3 }, t: { type: 'string', minLength: 2 } } });
    const e = '\u{1F600}';
    for (const c of [only, both]) {
      assert.deepEqual(c.validate({ s: e.repeat(3) }), [], 'three code points, six UTF-16 units');
      assert.deepEqual(c.validate({ s: 'abc' }), []);
      const errs = c.validate({ s: e.repeat(4) });
      assert.equal(errs.length, 1);
      assert.deepEqual(errs, [{ reason: 'FieldValueTooLong', field: 's', message: 'Too long: may not be more than 3 bytes' }]);
    }
    assert.equal(both.validate({ t: e }).length, 1, 'one code point is under minLength 2');
    assert.deepEqual(both.validate({ t: e + e }), []);
  });
});

// ---------------------------------------------------------------------------------------------
// list-type sets and maps

describe('list-type checks with the pairwise quick check equal the reference', () => {
  it('on 3000 random sets and maps', () => {
    const r = seededRandom(99);
    const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
    const scalars: unknown[] = ['a', 'b', 'c', '1', 1, 2, 0, -0, 1.5, NaN, Infinity, true, null, '', { a: 1 }, [1]];
    const schema = {
      type: 'object',
      properties: {
        set: { type: 'array', 'x-kubernetes-list-type': 'set', items: {} },
        map1: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: { type: 'object' } },
        map2: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name', 'port'], items: { type: 'object' } },
        odd: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': [5, 'name'], items: { type: 'object' } },
      },
    };
    let errors = 0;
    for (let n = 0; n < 3000; n++) {
      const len = r() < 0.05 ? 33 + Math.floor(r() * 4) : Math.floor(r() * 6);
      const item = () => (r() < 0.1 ? pick([null, 'x', 3]) : Object.fromEntries([['name', pick(scalars)], ['port', pick([1, 2])]].filter(() => r() < 0.9)));
      const obj = {
        set: Array.from({ length: len }, () => pick(scalars)),
        map1: Array.from({ length: len }, item),
        map2: Array.from({ length: len }, item),
        odd: Array.from({ length: len }, item),
      };
      const got = validateListSetsAndMaps(schema, obj, 'spec');
      errors += got.length;
      assert.deepEqual(got, validateListSetsAndMaps(schema, obj, 'spec', true), text(obj));
    }
    assert.ok(errors > 1000, `${errors} errors`);
  });
});

// ---------------------------------------------------------------------------------------------
// Prune walk over many objects of one schema

function shuffled<T>(xs: T[], r: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** obj with the keys of every object in a random order, some dropped and some unknown ones added. */
function reshaped(v: unknown, r: () => number): unknown {
  if (Array.isArray(v)) return v.map((x) => reshaped(x, r));
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  const keys = r() < 0.5 ? Object.keys(v) : shuffled(Object.keys(v), r);
  for (const k of keys) {
    if (r() < 0.1) continue;
    if (r() < 0.05) out[`zz${Math.floor(r() * 3)}`] = { q: 1 };
    out[k] = reshaped((v as Record<string, unknown>)[k], r);
  }
  if (r() < 0.1) out.bogus = [1, { b: 2 }];
  return out;
}

describe('the prune walk with remembered key positions equals pruneValue then defaultValue', () => {
  it('on 400 reshaped bench widgets, then the samples again', () => {
    const schema = benchWidgetsCRD().spec.versions[0].schema.openAPIV3Schema;
    const c = compileVersionSchema(schema);
    const r = seededRandom(42);
    const objects = Array.from({ length: 400 }, (_, i) => (i % 4 === 0 ? benchWidget(i) : reshaped(benchWidget(i), r)));
    for (const [i, obj] of objects.entries()) {
      const want = copy(obj) as any;
      const wantPruned: string[] = [];
      pruneValue(c.schema, want, '', wantPruned, true);
      defaultValue(c.schema, want);
      const got = copy(obj);
      const pruned = c.pruneAndDefault(got);
      assert.equal(text(got), text(want), `object ${i}`);
      assert.deepEqual(pruned, wantPruned, `object ${i} pruned paths`);
    }
  });

  it('on wide objects (more keys than positions remembered) in changing orders', () => {
    const props = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p${i}`, i % 3 ? { type: 'string' } : { type: 'object', properties: { d: { type: 'integer', default: i } } }]));
    const schema = { type: 'object', properties: { spec: { type: 'object', properties: props } } };
    const c = compileVersionSchema(schema);
    const r = seededRandom(7);
    for (let n = 0; n < 60; n++) {
      const spec: Record<string, unknown> = {};
      for (const k of shuffled(Object.keys(props), r)) if (r() < 0.8) spec[k] = Number(k.slice(1)) % 3 ? 's' : r() < 0.5 ? {} : { d: 1, u: 2 };
      if (r() < 0.3) spec[`unknown${n % 4}`] = 1;
      const obj = { apiVersion: 'v1', kind: 'K', metadata: { name: 'n' }, spec };
      const want = copy(obj);
      const wantPruned: string[] = [];
      pruneValue(c.schema, want, '', wantPruned, true);
      defaultValue(c.schema, want);
      const got = copy(obj);
      assert.deepEqual(c.pruneAndDefault(got), wantPruned);
      assert.equal(text(got), text(want), `round ${n}`);
    }
  });
});
