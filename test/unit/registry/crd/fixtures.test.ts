// The realistic CRD fixtures in test/fixtures/crds (see its README) run through the pure CRD
// modules: each CRD is valid, every version's schema compiles, its CEL rules compile within
// kube's cost budget, and each sample object is pruned, defaulted and validated the way
// kube-apiserver's custom-resource strategy does it (schema errors, embedded resources and
// list types, then CEL rules unless a blocking error stops them).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import type { FieldError } from '../../../../server/validation/field.ts';
import { validateCustomResourceDefinition, versionSchemaOf } from '../../../../server/registry/crd/crd-validation.ts';
import { compileVersionSchema, type CompiledSchema } from '../../../../server/registry/crd/schema-validator.ts';
import { compileSchemaRules, evaluateRules, StaticEstimatedCRDCostLimit, type CelNode, type CompiledSchemaRules } from '../../../../server/registry/crd/cel/index.ts';
import { benchWidget, benchWidgetsCRD, generatedFiles, metricStoresCRD } from '../../../fixtures/crds/generate.ts';
import { DNS1123_LABEL } from '../../../helpers/kube-messages.ts';

const DIR = fileURLToPath(new URL('../../../fixtures/crds/', import.meta.url));
const read = (name: string): string => readFileSync(DIR + name, 'utf8');
const fmt = (errs: FieldError[]): string[] => errs.map((e) => `${e.field}: ${e.message}`);
const clone = <T>(v: T): T => structuredClone(v);

/** kube's customResourceStrategy: these error types make it skip CEL rules and say so. */
const BLOCKING = new Set(['FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTooLong', 'FieldValueTooMany', 'FieldValueTypeInvalid']);
const RULES_SKIPPED =
  '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

interface Sample {
  name: string;
  description: string;
  object: any;
  oldObject?: any;
  pruned?: string[];
  defaulted?: any;
  errors: string[];
}

interface Version {
  name: string;
  schema: any;
  compiled: CompiledSchema;
  rules: CompiledSchemaRules;
}

interface Fixture {
  file: string;
  crd: any;
  versions: Map<string, Version>;
  samples: Sample[];
}

const loaded = new Map<string, Fixture>();

/** Parses and compiles a fixture once per test file (the big schema takes a while to compile). */
function loadFixture(file: string): Fixture {
  const cached = loaded.get(file);
  if (cached) return cached;
  const crd = YAML.parse(read(`${file}.yaml`));
  const versions = new Map<string, Version>();
  for (const v of crd.spec.versions) {
    const schema = versionSchemaOf(crd, v.name)!;
    versions.set(v.name, {
      name: v.name,
      schema,
      compiled: compileVersionSchema(schema),
      rules: compileSchemaRules(schema, { basePath: `spec.versions[${crd.spec.versions.indexOf(v)}].schema.openAPIV3Schema` }),
    });
  }
  const samples = YAML.parseAllDocuments(read(`${file}.samples.yaml`)).map((d) => {
    assert.equal(d.errors.length, 0, `${file}.samples.yaml: ${d.errors.join('; ')}`);
    return d.toJS() as Sample;
  });
  const f = { file, crd, versions, samples };
  loaded.set(file, f);
  return f;
}

function versionOf(f: Fixture, obj: any): Version {
  const [group, version] = String(obj?.apiVersion).split('/');
  assert.equal(group, f.crd.spec.group, `apiVersion ${obj?.apiVersion} is not of group ${f.crd.spec.group}`);
  const v = f.versions.get(version);
  assert.ok(v, `no version ${version} in ${f.file}`);
  return v;
}

/** Decoding as kube does it: unknown fields pruned, then defaults applied. */
function decode(v: Version, obj: any): { obj: any; pruned: string[] } {
  const o = clone(obj);
  const pruned = v.compiled.prune(o);
  v.compiled.applyDefaults(o);
  return { obj: o, pruned };
}

/** Validation as customResourceStrategy.Validate/ValidateUpdate runs it. */
function validate(v: Version, obj: any, old?: any): string[] {
  const errs = v.compiled.validate(obj, old === undefined ? {} : { oldObject: old });
  if (!v.rules.root) return fmt(errs);
  if (errs.some((e) => BLOCKING.has(e.reason))) return [...fmt(errs), RULES_SKIPPED];
  return [...fmt(errs), ...fmt(evaluateRules(v.rules, obj, old))];
}

/** Kube's order is fixed only for the closing notice; the rest follows Go map iteration. */
function assertSameErrors(actual: string[], expected: string[], label: string): void {
  const last = (l: string[]) => (l.at(-1) === RULES_SKIPPED ? RULES_SKIPPED : undefined);
  assert.equal(last(actual), last(expected), `${label}: the skipped-rules notice`);
  assert.deepEqual([...actual].sort(), [...expected].sort(), label);
}

/** Whether `actual` contains everything in `subset` (objects by key, arrays item by item, same length). */
function assertContains(actual: unknown, subset: unknown, path: string): void {
  if (Array.isArray(subset)) {
    assert.ok(Array.isArray(actual) && actual.length === subset.length, `${path}: expected ${subset.length} items, got ${JSON.stringify(actual)}`);
    subset.forEach((x, i) => assertContains(actual[i], x, `${path}[${i}]`));
  } else if (subset !== null && typeof subset === 'object') {
    assert.ok(actual !== null && typeof actual === 'object' && !Array.isArray(actual), `${path}: expected an object, got ${JSON.stringify(actual)}`);
    for (const [k, v] of Object.entries(subset)) {
      assert.ok(k in (actual as object), `${path}.${k}: missing`);
      assertContains((actual as any)[k], v, `${path}.${k}`);
    }
  } else assert.deepEqual(actual, subset, path);
}

// ---------------------------------------------------------------------------------------------
// Schema statistics.

/** Number of properties (every `properties` entry, at any depth, through items and map values). */
function countProperties(s: any): number {
  if (!s || typeof s !== 'object') return 0;
  let n = 0;
  for (const p of Object.values<any>(s.properties ?? {})) n += 1 + countProperties(p);
  if (s.items) n += countProperties(s.items);
  if (s.additionalProperties && typeof s.additionalProperties === 'object') n += countProperties(s.additionalProperties);
  return n;
}

/** Deepest chain of nested properties (list items and map values do not add a level). */
function propertyDepth(s: any): number {
  if (!s || typeof s !== 'object') return 0;
  let d = 0;
  for (const p of Object.values<any>(s.properties ?? {})) d = Math.max(d, 1 + propertyDepth(p));
  if (s.items) d = Math.max(d, propertyDepth(s.items));
  if (s.additionalProperties && typeof s.additionalProperties === 'object') d = Math.max(d, propertyDepth(s.additionalProperties));
  return d;
}

/** Every schema node, with its path. */
function* nodes(s: any, path = ''): Generator<[string, any]> {
  if (!s || typeof s !== 'object') return;
  yield [path, s];
  for (const [k, p] of Object.entries<any>(s.properties ?? {})) yield* nodes(p, `${path}.${k}`);
  if (s.items) yield* nodes(s.items, `${path}[]`);
  if (s.additionalProperties && typeof s.additionalProperties === 'object') yield* nodes(s.additionalProperties, `${path}{}`);
}
/** Rules that compiled into the CelNode tree. */
function compiledRuleCount(n: CelNode | undefined): number {
  if (!n) return 0;
  let c = n.rules.length + compiledRuleCount(n.items) + compiledRuleCount(n.additionalProperties);
  for (const p of n.properties?.values() ?? []) c += compiledRuleCount(p);
  return c;
}
const ruleCount = (s: any): number => [...nodes(s)].reduce((n, [, x]) => n + (x['x-kubernetes-validations']?.length ?? 0), 0);
const has = (s: any, pred: (x: any) => boolean): boolean => [...nodes(s)].some(([, x]) => pred(x));

// ---------------------------------------------------------------------------------------------

const FIXTURES = ['certificates', 'metricstores', 'compositions', 'bench-widgets'];

for (const file of FIXTURES) {
  describe(`fixture ${file}`, () => {
    const f = loadFixture(file);

    it('is a valid CRD whose schemas compile and whose CEL rules fit the cost budget', () => {
      assert.deepEqual(fmt(validateCustomResourceDefinition(f.crd)), []);
      for (const v of f.versions.values()) {
        assert.deepEqual(fmt(v.rules.errors), [], `${v.name}: CEL compilation`);
        assert.ok(v.rules.totalCost < StaticEstimatedCRDCostLimit / 100, `${v.name}: estimated cost ${v.rules.totalCost}`);
        assert.equal(compiledRuleCount(v.rules.root), ruleCount(v.schema), `${v.name}: every rule compiled`);
        assert.equal(v.compiled.typeNode.type, 'object', `${v.name}: TypeNode view`);
      }
    });

    it('has valid samples and at least two invalid ones, with unique names', () => {
      const names = f.samples.map((s) => s.name);
      assert.equal(new Set(names).size, names.length, names.join(', '));
      assert.ok(f.samples.some((s) => s.errors.length === 0 && !s.oldObject), 'a valid create');
      assert.ok(f.samples.filter((s) => s.errors.length > 0).length >= 2, 'two invalid samples');
      for (const s of f.samples) assert.ok(Array.isArray(s.errors) && typeof s.description === 'string' && s.object, s.name);
    });

    for (const s of f.samples) {
      it(`sample ${s.name}: ${s.errors.length === 0 ? 'valid' : `${s.errors.length} error(s)`}`, () => {
        const v = versionOf(f, s.object);
        const { obj, pruned } = decode(v, s.object);
        if (s.pruned) assert.deepEqual([...pruned].sort(), [...s.pruned].sort(), 'pruned fields');
        if (s.defaulted !== undefined) assertContains(obj, s.defaulted, '');
        const old = s.oldObject === undefined ? undefined : decode(versionOf(f, s.oldObject), s.oldObject).obj;
        if (old) assert.deepEqual(validate(v, old), [], 'the stored object is valid');
        assertSameErrors(validate(v, obj, old), s.errors, 'errors');
        // Decoding is idempotent: a second pass prunes nothing and changes nothing.
        const again = decode(v, obj);
        assert.deepEqual(again.pruned, []);
        assert.deepEqual(again.obj, obj);
      });
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Cases the samples leave out (the samples' root metadata is always valid, and each file keeps
// a few invalid documents): embedded resources without apiVersion/kind or with bad ObjectMeta,
// values repeated three times in list-type sets and maps, and selectableFields the CRD itself
// must reject. They start from a valid sample and change one thing.

describe('fixture cases beyond the samples', () => {
  const sampleObject = (file: string, name: string): any => {
    const s = loadFixture(file).samples.find((x) => x.name === name);
    assert.ok(s, `${file}: no sample ${name}`);
    return clone(s.object);
  };
  /** Decodes and validates a changed sample as a create, like the sample tests. */
  const errorsOf = (file: string, obj: any): string[] => {
    const v = versionOf(loadFixture(file), obj);
    return validate(v, decode(v, obj).obj);
  };

  it('compositions: embedded resources without apiVersion and kind (empty counts as missing) block the CEL rules', () => {
    const obj = sampleObject('compositions', 'valid-resources');
    delete obj.spec.resources[0].base.apiVersion;
    delete obj.spec.resources[0].base.kind;
    obj.spec.namespaceTemplate.apiVersion = '';
    obj.spec.namespaceTemplate.kind = '';
    assertSameErrors(
      errorsOf('compositions', obj),
      [
        'spec.resources[0].base.apiVersion: Required value',
        'spec.resources[0].base.kind: Required value',
        'spec.namespaceTemplate.apiVersion: Required value',
        'spec.namespaceTemplate.kind: Required value',
        RULES_SKIPPED,
      ],
      'errors',
    );
  });

  it('compositions: embedded metadata gets the full ObjectMeta validation', () => {
    const obj = sampleObject('compositions', 'valid-resources');
    obj.spec.resources[0].base.metadata = {
      generateName: 'bucket/',
      namespace: '$$$',
      finalizers: ['orphan', 'foregroundDeletion'],
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner' }],
    };
    obj.spec.namespaceTemplate.metadata.namespace = 'Tenant';
    // Invalid-value errors do not block the CEL rules, which pass on this object.
    assertSameErrors(
      errorsOf('compositions', obj),
      [
        "spec.resources[0].base.metadata.generateName: Invalid value: \"bucket/\": may not contain '/'",
        `spec.resources[0].base.metadata.namespace: Invalid value: "$$$": ${DNS1123_LABEL}`,
        'spec.resources[0].base.metadata.ownerReferences.uid: Invalid value: "": must not be empty',
        'spec.resources[0].base.metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set',
        `spec.namespaceTemplate.metadata.namespace: Invalid value: "Tenant": ${DNS1123_LABEL}`,
      ],
      'errors',
    );
  });

  it('certificates: a set reports the first repeat of each value only', () => {
    const obj = sampleObject('certificates', 'valid-minimal');
    obj.spec.dnsNames = ['a.hearth.test', 'a.hearth.test', 'a.hearth.test', 'b.hearth.test', 'b.hearth.test', 'b.hearth.test'];
    assertSameErrors(errorsOf('certificates', obj), ['spec.dnsNames[1]: Duplicate value: "a.hearth.test"', 'spec.dnsNames[4]: Duplicate value: "b.hearth.test"'], 'errors');
  });

  it('metricstores: a list-type map reports the first repeat of each key only', () => {
    const obj = sampleObject('metricstores', 'valid-full');
    const c = obj.spec.containers[0];
    obj.spec.containers = [c, clone(c), clone(c)];
    assertSameErrors(errorsOf('metricstores', obj), [`spec.containers[1]: Duplicate value: map[string]interface {}{"name":${JSON.stringify(c.name)}}`], 'errors');
  });

  it('compositions: selectableFields must be simple paths to string, boolean or integer fields outside metadata', () => {
    const crd = clone(loadFixture('compositions').crd);
    const v1 = crd.spec.versions.findIndex((v: any) => v.name === 'v1');
    crd.spec.versions[v1].selectableFields = [
      { jsonPath: '.spec.compositeTypeRef.kind' },
      { jsonPath: '.spec.resources' },
      { jsonPath: '.spec.resources[0].name' },
      { jsonPath: '.metadata.name' },
      { jsonPath: '.spec.compositeTypeRef.kind' },
      { jsonPath: 'spec.mode' },
    ];
    // The versions' schemas differ, so kube reports per version.
    const p = `spec.versions[${v1}].selectableFields`;
    assert.deepEqual(fmt(validateCustomResourceDefinition(crd)), [
      `${p}[1].jsonPath: Invalid value: ".spec.resources": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.`,
      `${p}[2].jsonPath: Invalid value: ".spec.resources[0].name": is an invalid path: array notation is not allowed`,
      `${p}[3].jsonPath: Invalid value: ".metadata.name": is an invalid path: does not refer to a valid field`,
      `${p}[4].jsonPath: Duplicate value: ".spec.compositeTypeRef.kind"`,
      `${p}[5].jsonPath: Invalid value: "spec.mode": is an invalid path: expected [ or . but got: spec`,
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// Shape checks: the fixtures stay the size and shape issue #5 asks for.

describe('fixture shapes', () => {
  const load = (file: string) => loadFixture(file).crd;

  it('certificates: namespaced, one version, Ready column, transition rule, messageExpression, reason, fieldPath, int-or-string', () => {
    const crd = load('certificates');
    const v = crd.spec.versions;
    assert.equal(crd.spec.scope, 'Namespaced');
    assert.equal(v.length, 1);
    assert.ok(v[0].additionalPrinterColumns.some((c: any) => c.jsonPath === '.status.conditions[?(@.type=="Ready")].status'));
    const rules = [...nodes(v[0].schema.openAPIV3Schema)].flatMap(([, x]) => x['x-kubernetes-validations'] ?? []);
    assert.ok(rules.some((r: any) => /\boldSelf\b/.test(r.rule)), 'transition rule');
    for (const k of ['messageExpression', 'reason', 'fieldPath']) assert.ok(rules.some((r: any) => r[k]), k);
    const schema = v[0].schema.openAPIV3Schema;
    for (const [label, pred] of [
      ['int-or-string', (x: any) => x['x-kubernetes-int-or-string'] === true],
      ['enum', (x: any) => Array.isArray(x.enum)],
      ['pattern', (x: any) => typeof x.pattern === 'string'],
      ['format', (x: any) => typeof x.format === 'string'],
    ] as const) {
      assert.ok(has(schema, pred), label);
    }
  });

  it('metricstores: hundreds of properties, 8+ levels, pod template, list and map types, nullable, bounds, scale', () => {
    const crd = load('metricstores');
    const v = crd.spec.versions[0];
    const schema = v.schema.openAPIV3Schema;
    assert.ok(countProperties(schema) >= 500, String(countProperties(schema)));
    assert.ok(propertyDepth(schema) >= 8, String(propertyDepth(schema)));
    const container = schema.properties.spec.properties.containers.items.properties;
    for (const k of ['image', 'ports', 'env', 'resources', 'livenessProbe', 'securityContext', 'volumeMounts']) assert.ok(container[k], `containers[].${k}`);
    assert.ok(has(schema, (x) => x['x-kubernetes-list-type'] === 'map' && Array.isArray(x['x-kubernetes-list-map-keys'])), 'list-type map');
    assert.ok(has(schema, (x) => x['x-kubernetes-map-type'] === 'atomic'), 'map-type');
    assert.ok(has(schema, (x) => x.nullable === true), 'nullable');
    assert.ok(has(schema, (x) => typeof x.minimum === 'number') && has(schema, (x) => typeof x.maximum === 'number'), 'bounds');
    assert.deepEqual(v.subresources, {
      status: {},
      scale: { specReplicasPath: '.spec.shards', statusReplicasPath: '.status.shards', labelSelectorPath: '.status.selector' },
    });
  });

  it('compositions: cluster-scoped, deprecated v1alpha1 and stored v1, preserve-unknown-fields, embedded resources, selectableFields', () => {
    const crd = load('compositions');
    assert.equal(crd.spec.scope, 'Cluster');
    const [alpha, v1] = crd.spec.versions;
    assert.deepEqual([alpha.name, alpha.served, alpha.storage, alpha.deprecated, typeof alpha.deprecationWarning], ['v1alpha1', true, false, true, 'string']);
    assert.deepEqual([v1.name, v1.served, v1.storage, v1.deprecated], ['v1', true, true, undefined]);
    assert.ok(v1.selectableFields.length > 0 && crd.spec.names.shortNames.length > 0 && crd.spec.names.categories.length > 0);
    const schema = v1.schema.openAPIV3Schema;
    assert.ok(has(schema, (x) => x['x-kubernetes-preserve-unknown-fields'] === true && !x['x-kubernetes-embedded-resource']), 'preserve-unknown subtree');
    assert.ok(has(schema, (x) => x['x-kubernetes-embedded-resource'] === true && x['x-kubernetes-preserve-unknown-fields'] === true), 'free-form embedded resource');
    assert.ok(has(schema, (x) => x['x-kubernetes-embedded-resource'] === true && !x['x-kubernetes-preserve-unknown-fields']), 'embedded resource with a schema');
  });

  it('bench-widgets: about 200 properties and exactly 5 CEL rules, namespaced, status subresource', () => {
    const crd = load('bench-widgets');
    const v = crd.spec.versions[0];
    const schema = v.schema.openAPIV3Schema;
    const n = countProperties(schema);
    assert.ok(n >= 190 && n <= 210, String(n));
    assert.equal(ruleCount(schema), 5);
    assert.equal(crd.spec.scope, 'Namespaced');
    assert.deepEqual(v.subresources, { status: {} });
  });
});

// ---------------------------------------------------------------------------------------------

describe('fixture generator', () => {
  it('the committed generated files equal the generator output', () => {
    for (const [name, text] of Object.entries(generatedFiles())) assert.equal(read(name), text, `${name} is stale: run node --import tsx test/fixtures/crds/generate.ts`);
    assert.deepEqual(YAML.parse(read('metricstores.yaml')), metricStoresCRD());
    assert.deepEqual(YAML.parse(read('bench-widgets.yaml')), benchWidgetsCRD());
  });

  it('benchWidget(i) is a valid Widget for every i, with distinct names', () => {
    const f = loadFixture('bench-widgets');
    const v = f.versions.get('v1')!;
    const seen = new Set<string>();
    for (const i of [0, 1, 7, 12345]) {
      const w = benchWidget(i);
      seen.add(w.metadata.name);
      const { obj, pruned } = decode(v, w);
      assert.deepEqual(pruned, []);
      assert.deepEqual(validate(v, obj), []);
    }
    assert.equal(seen.size, 4);
  });
});
