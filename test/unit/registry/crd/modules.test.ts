// The CRD building blocks: CRD validation (names, versions, structural schemas, defaults, CEL
// at write time), custom object validation/pruning/defaulting, and x-kubernetes-validations.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FieldError } from '../../../../server/validation/field.ts';
import { validateCustomResourceDefinition } from '../../../../server/registry/crd/crd-validation.ts';
import { validateStructural } from '../../../../server/registry/crd/structural-schema.ts';
import { compileVersionSchema } from '../../../../server/registry/crd/schema-validator.ts';
import { goFloat } from '../../../../server/go/fmt.ts';
import { compileSchemaRules, costErrorMessage, escapeCelName, evaluateRules, validFieldPath } from '../../../../server/registry/crd/cel/index.ts';
import { parseQuantity } from '../../../../server/util/quantity.ts';
import { DNS1035_LABEL, DNS1123_LABEL, LABEL_VALUE, QUALIFIED_NAME_PART } from '../../../helpers/kube-messages.ts';

const fmt = (errs: FieldError[]) => errs.map((e) => `${e.field}: ${e.message}`);
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v));

function crd(schema: any, extra: any = {}): any {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
      ...extra,
    },
  };
}

const simpleSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer', minimum: 0, default: 1 },
        size: { type: 'string', enum: ['small', 'large'] },
      },
    },
    status: { type: 'object', properties: { ready: { type: 'boolean' } } },
  },
};

// ---------------------------------------------------------------------------------------------

describe('CRD validation', () => {
  it('accepts a well-formed CRD', () => {
    const c = crd(simpleSchema);
    c.spec.versions[0].subresources = { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } };
    c.spec.versions[0].additionalPrinterColumns = [{ name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' }];
    assert.deepEqual(validateCustomResourceDefinition(c), []);
  });

  it('requires metadata.name to be <plural>.<group>', () => {
    const c = crd(simpleSchema);
    c.metadata.name = 'gadgets.example.com';
    assert.deepEqual(fmt(validateCustomResourceDefinition(c)), ['metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group']);
  });

  it('requires exactly one storage version and unique version names', () => {
    const c = crd(simpleSchema);
    c.spec.versions.push({ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: simpleSchema } });
    const errs = validateCustomResourceDefinition(c);
    assert.deepEqual(
      errs.map((e) => [e.field, e.reason, e.message.replace(/^Invalid value: .*: (must [^:]*)$/, '$1')]),
      [
        ['spec.versions', 'FieldValueInvalid', 'must contain unique version names'],
        ['spec.versions', 'FieldValueInvalid', 'must have exactly one version marked as storage version'],
      ],
    );
    const none = crd(simpleSchema);
    none.spec.versions[0].storage = false;
    assert.match(fmt(validateCustomResourceDefinition(none))[0], /^spec\.versions: Invalid value: \[.*\]: must have exactly one version marked as storage version$/);
    const empty = crd(simpleSchema);
    delete empty.spec.versions;
    assert.deepEqual(fmt(validateCustomResourceDefinition(empty)), ['spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion(nil): must have exactly one version marked as storage version']);
  });

  it('validates group, scope, names and version names', () => {
    const c = crd(simpleSchema);
    c.metadata.name = 'Widgets.example';
    c.spec.group = 'example';
    c.spec.scope = 'Global';
    c.spec.names = { plural: 'Widgets', singular: '', kind: 'Widget', listKind: 'Widget', shortNames: ['w_1'], categories: ['all'] };
    c.spec.versions[0].name = 'V1';
    assert.deepEqual(fmt(validateCustomResourceDefinition(c)), [
      'spec.group: Invalid value: "example": should be a domain with at least one dot',
      'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
      `spec.versions[0].name: Invalid value: "V1": ${DNS1035_LABEL}`,
      `spec.version: Invalid value: "V1": ${DNS1035_LABEL}`,
      'spec.names.singular: Required value',
      `spec.names.plural: Invalid value: "Widgets": ${DNS1035_LABEL}`,
      `spec.names.shortNames[0]: Invalid value: "w_1": ${DNS1035_LABEL}`,
      'spec.names.listKind: Invalid value: "Widget": kind and listKind may not be the same',
    ]);
  });

  it('reports every structural-schema violation with the path kube prints, sorted', () => {
    const schema = {
      type: 'object',
      anyOf: [{ properties: { extra: { type: 'string' } } }],
      properties: {
        metadata: { type: 'object', description: 'object metadata', properties: { name: { type: 'string', maxLength: 20 } } },
        spec: {
          properties: { size: { type: 'string' } },
          anyOf: [{ type: 'object', required: ['size'] }, { description: 'no size', not: { required: ['size'] } }],
        },
        list: { type: 'array' },
        tmpl: { type: 'object', 'x-kubernetes-embedded-resource': true },
      },
    };
    const errs = validateCustomResourceDefinition(crd(schema));
    const p = 'spec.validation.openAPIV3Schema';
    assert.deepEqual(fmt(errs), [
      `${p}.anyOf[0].properties[extra].type: Forbidden: must be empty to be structural`,
      `${p}.properties[extra]: Required value: because it is defined in ${p}.anyOf[0].properties[extra]`,
      `${p}.properties[list].items: Required value: must be specified`,
      `${p}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
      `${p}.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural`,
      `${p}.properties[spec].anyOf[1].description: Forbidden: must be empty to be structural`,
      `${p}.properties[spec].type: Required value: must not be empty for specified object fields`,
      `${p}.properties[tmpl].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`,
    ]);
    assert.ok(errs.every((e) => e.reason === 'FieldValueRequired' || e.reason === 'FieldValueForbidden'));
  });

  it('keeps per-version paths when versions carry different schemas', () => {
    const c = crd(simpleSchema);
    c.spec.versions[0].storage = false;
    c.spec.versions.push({ name: 'v2', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { list: { type: 'array' } } } } } } });
    assert.deepEqual(fmt(validateCustomResourceDefinition(c)), ['spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[list].items: Required value: must be specified']);
  });

  it('rejects unsupported OpenAPI constructs and inconsistent list types', () => {
    const schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            ref: { $ref: '#/definitions/x' },
            tags: { type: 'array', uniqueItems: true, items: { type: 'string' } },
            mixed: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } },
            ports: {
              type: 'array',
              'x-kubernetes-list-type': 'map',
              'x-kubernetes-list-map-keys': ['port', 'proto'],
              items: { type: 'object', properties: { port: { type: 'integer' }, proto: { type: 'string', nullable: true, default: 'TCP' } } },
            },
            kind: { type: 'string', 'x-kubernetes-list-type': 'set' },
          },
        },
        nul: { type: 'null' },
      },
    };
    const p = 'spec.validation.openAPIV3Schema';
    // $ref makes the schema unconvertible to a structural one, so no structural errors are reported
    assert.deepEqual(fmt(validateCustomResourceDefinition(crd(schema))), [
      `${p}.properties[spec].properties[ref].$ref: Forbidden: $ref is not supported`,
      `${p}.properties[spec].properties[tags].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
      `${p}.properties[spec].properties[mixed].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
      `${p}.properties[spec].properties[ports].items.properties[port].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
      `${p}.properties[spec].properties[ports].items.properties[proto].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable`,
      `${p}.properties[spec].properties[kind].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified`,
      `${p}.properties[nul].type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string"`,
      `${p}.properties[nul].type: Forbidden: type cannot be set to null, use nullable as an alternative`,
    ]);
  });

  it('requires defaults to be pruned, valid, and absent from top-level metadata', () => {
    const schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            replicas: { type: 'integer', maximum: 5, default: 10 },
            mode: { type: 'string', default: 3 },
            opts: { type: 'object', properties: { a: { type: 'string' } }, default: { a: 'x', b: 'y' } },
          },
        },
      },
    };
    const p = 'spec.validation.openAPIV3Schema.properties[spec].properties';
    assert.deepEqual(fmt(validateCustomResourceDefinition(crd(schema))), [
      `${p}[replicas].default: Invalid value: 10: ${p}[replicas].default in body should be less than or equal to 5`,
      `${p}[mode].default: Invalid value: "integer": ${p}[mode].default in body must be of type string: "integer"`,
      `${p}[opts].default: Invalid value: map[string]interface {}{"a":"x", "b":"y"}: must not have unknown fields`,
    ]);
    const meta = { type: 'object', properties: { metadata: { type: 'object', default: {} } } };
    assert.deepEqual(fmt(validateCustomResourceDefinition(crd(meta))), ['spec.validation.openAPIV3Schema.properties[metadata].default: Forbidden: must not be set in top-level metadata']);
  });

  it('validates subresources, printer columns and conversion', () => {
    const c = crd(simpleSchema, {
      conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v2'] } },
    });
    c.spec.versions[0].subresources = { scale: { specReplicasPath: 'spec.replicas', statusReplicasPath: '.spec.replicas' } };
    c.spec.versions[0].additionalPrinterColumns = [{ name: 'Age', type: 'time', jsonPath: '' }];
    assert.deepEqual(fmt(validateCustomResourceDefinition(c)), [
      'spec.subresources.scale.specReplicasPath: Invalid value: "spec.replicas": must be a simple json path starting with .',
      'spec.subresources.scale.statusReplicasPath: Invalid value: ".spec.replicas": should be a json path under .status',
      'spec.additionalPrinterColumns[0].type: Invalid value: "time": must be one of boolean,date,integer,number,string',
      'spec.additionalPrinterColumns[0].JSONPath: Required value',
      'spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook',
      'spec.conversion.conversionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1',
    ]);
    const ok = crd(simpleSchema, { conversion: { strategy: 'Webhook', webhook: { clientConfig: { service: { name: 'conv', namespace: 'system', path: '/convert' } }, conversionReviewVersions: ['v1'] } } });
    assert.deepEqual(validateCustomResourceDefinition(ok), []);
    const none = crd(simpleSchema, { conversion: { strategy: 'None', webhook: { clientConfig: { url: 'https://x' } } } });
    assert.deepEqual(fmt(validateCustomResourceDefinition(none)), ['spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook']);
  });

  it('validates selectableFields against the schema they refer to', () => {
    const schema = {
      type: 'object',
      properties: {
        metadata: { type: 'object', properties: { name: { type: 'string' } } },
        spec: {
          type: 'object',
          properties: {
            color: { type: 'string', enum: ['red', 'blue'] },
            size: { type: 'integer' },
            on: { type: 'boolean' },
            ratio: { type: 'number' },
            port: { 'x-kubernetes-int-or-string': true },
            nested: { type: 'object', properties: { when: { type: 'string', format: 'date-time' } } },
            tags: { type: 'object', additionalProperties: { type: 'string' } },
            list: { type: 'array', items: { type: 'string' } },
          },
        },
      },
    };
    const withFields = (paths: string[]) => {
      const c = crd(schema);
      c.spec.versions[0].selectableFields = paths.map((jsonPath) => ({ jsonPath }));
      return fmt(validateCustomResourceDefinition(c));
    };
    // enums, formats, map values (a quoted token is taken whole, dots included) are fine
    assert.deepEqual(withFields(['.spec.color', '.spec.size', '.spec.on', '.spec.nested.when', '.spec.tags.team', ".spec.tags.'a.b'"]), []);
    const typeMsg = 'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.';
    // a single version: kube moves the fields up with the schema, so they are reported at spec.selectableFields
    assert.deepEqual(withFields(['', 'spec.size', '.spec.nope', '.spec.list[0]', ".spec['size']", '.spec.', '.metadata.name', '.spec.ratio', '.spec.port', '.spec.nested', '.spec.size']), [
      'spec.selectableFields[0].jsonPath: Required value',
      'spec.selectableFields[1].jsonPath: Invalid value: "spec.size": is an invalid path: expected [ or . but got: spec',
      'spec.selectableFields[2].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field',
      'spec.selectableFields[3].jsonPath: Invalid value: ".spec.list[0]": is an invalid path: array notation is not allowed',
      'spec.selectableFields[4].jsonPath: Invalid value: ".spec[\'size\']": is an invalid path: array notation is not allowed',
      'spec.selectableFields[5].jsonPath: Invalid value: ".spec.": is an invalid path: unexpected end of JSON path',
      'spec.selectableFields[6].jsonPath: Invalid value: ".metadata.name": must not point to fields in metadata',
      `spec.selectableFields[7].jsonPath: Invalid value: ".spec.ratio": ${typeMsg}`,
      `spec.selectableFields[8].jsonPath: Invalid value: ".spec.port": ${typeMsg}`,
      `spec.selectableFields[9].jsonPath: Invalid value: ".spec.nested": ${typeMsg}`,
    ]);
    assert.deepEqual(withFields(['.spec.size', '.spec.color', '.spec.size']), ['spec.selectableFields[2].jsonPath: Duplicate value: ".spec.size"']);
  });

  it('allows at most 8 distinct selectableFields, per version when the schemas differ', () => {
    const props: Record<string, unknown> = {};
    for (let i = 0; i < 10; i++) props[`f${i}`] = { type: 'string' };
    const schemaA = { type: 'object', properties: { spec: { type: 'object', properties: props } } };
    const schemaB = { type: 'object', properties: { spec: { type: 'object', properties: { ...props, extra: { type: 'string' } } } } };
    const c = crd(schemaA);
    c.spec.versions[0].selectableFields = Object.keys(props).slice(0, 9).map((k) => ({ jsonPath: `.spec.${k}` }));
    c.spec.versions.push({ name: 'v2', served: true, storage: false, schema: { openAPIV3Schema: schemaB }, selectableFields: [{ jsonPath: '.spec.extra' }, { jsonPath: '.spec.gone' }] });
    assert.deepEqual(fmt(validateCustomResourceDefinition(c)), [
      'spec.versions[0].selectableFields: Too many: 9: must have at most 8 items',
      'spec.versions[1].selectableFields[1].jsonPath: Invalid value: ".spec.gone": is an invalid path: does not refer to a valid field',
    ]);
    // a repeated path does not count twice
    c.spec.versions[0].selectableFields = [...Array(8)].map((_, i) => ({ jsonPath: `.spec.f${i}` })).concat([{ jsonPath: '.spec.f0' }]);
    assert.deepEqual(fmt(validateCustomResourceDefinition(c)), [
      'spec.versions[0].selectableFields[8].jsonPath: Duplicate value: ".spec.f0"',
      'spec.versions[1].selectableFields[1].jsonPath: Invalid value: ".spec.gone": is an invalid path: does not refer to a valid field',
    ]);
  });

  it('rejects per-version selectableFields that differ while the schemas are identical (kube moves the schema up)', () => {
    const c = crd(simpleSchema);
    c.spec.versions.push({ name: 'v2', served: true, storage: false, schema: { openAPIV3Schema: simpleSchema } });
    c.spec.versions[0].selectableFields = [{ jsonPath: '.spec.size' }];
    assert.deepEqual(fmt(validateCustomResourceDefinition(c)), [
      'spec.versions[0].selectableFields: Invalid value: "": selectableFields may only be set when version.schema.openAPIV3Schema is not included',
    ]);
    c.spec.versions[1].selectableFields = [{ jsonPath: '.spec.size' }];
    assert.deepEqual(validateCustomResourceDefinition(c), []);
    // no schema at all: the (identical, absent) schemas and the fields move up together
    const bare = crd(simpleSchema);
    delete bare.spec.versions[0].schema;
    bare.spec.versions[0].selectableFields = [{ jsonPath: '.spec.size' }];
    assert.deepEqual(fmt(validateCustomResourceDefinition(bare)), [
      'spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required',
      'spec.selectableFields: Invalid value: "": selectableFields may only be set when validations.schema is included',
    ]);
  });

  it('only allows properties/required-style keys at the root when the status subresource is on', () => {
    const schema = { ...simpleSchema, minProperties: 1 };
    const c = crd(schema);
    c.spec.versions[0].subresources = { status: {} };
    const errs = fmt(validateCustomResourceDefinition(c));
    assert.equal(errs.length, 1);
    assert.match(errs[0], /^spec\.validation\.openAPIV3Schema: Invalid value: .*: only \[Description Type Format .* XValidations\] fields are allowed at the root of the schema if the status subresource is enabled$/);
  });

  it('enforces immutability and API approval on update/create', () => {
    const old = crd(simpleSchema);
    old.status = { conditions: [{ type: 'Established', status: 'True' }], storedVersions: ['v1'] };
    const next = clone(old);
    next.spec.scope = 'Cluster';
    next.spec.names.plural = 'gadgets';
    next.metadata.name = 'gadgets.example.com';
    assert.deepEqual(fmt(validateCustomResourceDefinition(next, old)), ['spec.scope: Invalid value: "Cluster": field is immutable', 'spec.names.plural: Invalid value: "gadgets": field is immutable']);
    const k8s = crd(simpleSchema);
    k8s.metadata.name = 'widgets.x.k8s.io';
    k8s.spec.group = 'x.k8s.io';
    assert.deepEqual(fmt(validateCustomResourceDefinition(k8s)), [
      'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111',
    ]);
    k8s.metadata.annotations = { 'api-approved.kubernetes.io': 'unapproved, experimental' };
    assert.deepEqual(validateCustomResourceDefinition(k8s), []);
  });

  it('compiles x-kubernetes-validations when the CRD is written', () => {
    const schema = clone(simpleSchema) as any;
    schema.properties.spec['x-kubernetes-validations'] = [
      { rule: 'self.replicas <= self.maxReplicas' },
      { rule: 'self.replicas >= 0', reason: 'Bad', fieldPath: '.nope' },
      { rule: 'self.size == oldSelf.size', message: 'immutable' },
    ];
    schema.properties.spec.properties.list = { type: 'array', maxItems: 10, items: { type: 'object', properties: { n: { type: 'string', maxLength: 10 } }, 'x-kubernetes-validations': [{ rule: 'self.n == oldSelf.n' }] } };
    const p = 'spec.validation.openAPIV3Schema.properties[spec]';
    assert.deepEqual(fmt(validateCustomResourceDefinition(crd(schema))), [
      `${p}.x-kubernetes-validations[1].reason: Unsupported value: "Bad": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
      `${p}.x-kubernetes-validations[1].fieldPath: Invalid value: ".nope": fieldPath must be a valid path: does not refer to a valid field`,
      // rules on spec are skipped while spec's schema has errors; the list item rule still compiles
      `${p}.properties[list].items.x-kubernetes-validations[0].rule: Invalid value: "self.n == oldSelf.n": oldSelf cannot be used on the uncorrelatable portion of the schema within ${p}.properties[list]`,
    ]);
    delete schema.properties.spec['x-kubernetes-validations'][1].reason;
    delete schema.properties.spec['x-kubernetes-validations'][1].fieldPath;
    delete schema.properties.spec.properties.list;
    const errs = validateCustomResourceDefinition(crd(schema));
    assert.equal(errs.length, 1);
    assert.equal(errs[0].field, `${p}.x-kubernetes-validations[0].rule`);
    assert.equal(
      errs[0].message,
      'Invalid value: apiextensions.ValidationRule{Rule:"self.replicas <= self.maxReplicas", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: ' +
        "compilation failed: ERROR: <input>:1:22: undefined field 'maxReplicas'\n | self.replicas <= self.maxReplicas\n | .....................^",
    );
  });

  it('rejects rules whose estimated cost exceeds the budget (kube docs example) and accepts bounded ones', () => {
    const unbounded = { type: 'object', properties: { spec: { type: 'object', properties: { foo: { type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [{ rule: "self.all(x, x.contains('a string'))" }] } } } } };
    const errs = fmt(validateCustomResourceDefinition(crd(unbounded)));
    const p = 'spec.validation.openAPIV3Schema';
    assert.deepEqual(errs, [
      `${p}.properties[spec].properties[foo].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
      `${p}.properties[spec].properties[foo].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
      `${p}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
    ]);
    const bounded = clone(unbounded) as any;
    bounded.properties.spec.properties.foo.maxItems = 25;
    bounded.properties.spec.properties.foo.items.maxLength = 10;
    assert.deepEqual(validateCustomResourceDefinition(crd(bounded)), []);
    assert.equal(costErrorMessage('estimated rule cost', 12_000_000, 10_000_000).split(' (')[0], 'estimated rule cost exceeds budget by factor of 1.200000x');
    assert.equal(costErrorMessage('estimated rule cost', 25_000_000, 10_000_000).split(' (')[0], 'estimated rule cost exceeds budget by factor of 2.5x');
  });

  it('sorts structural errors by their printed form', () => {
    const errs = validateStructural({ type: 'object', properties: { b: {}, a: {} } }, 'x');
    assert.deepEqual(fmt(errs), ['x.properties[a].type: Required value: must not be empty for specified object fields', 'x.properties[b].type: Required value: must not be empty for specified object fields']);
  });
});

// ---------------------------------------------------------------------------------------------

describe('custom object schema validation', () => {
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        required: ['size'],
        properties: {
          replicas: { type: 'integer', minimum: 1, maximum: 10 },
          ratio: { type: 'number', exclusiveMaximum: true, maximum: 1.5, multipleOf: 0.25 },
          size: { type: 'string', enum: ['a', 'b'] },
          name: { type: 'string', minLength: 3, maxLength: 8, pattern: '^[a-z]+$' },
          label: { type: 'string', pattern: '(?i)^[a-z]+$' },
          ip: { type: 'string', format: 'ipv4' },
          when: { type: 'string', format: 'date-time' },
          id: { type: 'string', format: 'uuid' },
          count: { type: 'integer', format: 'int32' },
          port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
          note: { type: 'string', nullable: true },
          tags: { type: 'array', minItems: 1, maxItems: 2, items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
          labels: { type: 'object', maxProperties: 2, additionalProperties: { type: 'string', maxLength: 3 } },
          pair: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, oneOf: [{ required: ['a'] }, { required: ['b'] }] },
          template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
          free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'object', properties: { a: { type: 'string' } } } } },
        },
      },
    },
  };
  const compiled = compileVersionSchema(schema);

  it('accepts a valid object', () => {
    const obj = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: { replicas: 3, ratio: 0.5, size: 'a', name: 'abc', label: 'ABC', ip: '10.0.0.1', when: '2024-01-02T03:04:05Z', id: '123e4567-e89b-12d3-a456-426614174000', count: 99999999999, port: '8080', note: null, tags: ['x'], labels: { a: 'x' }, pair: { a: 'x' }, template: { apiVersion: 'v1', kind: 'Pod', spec: {} } },
    };
    assert.deepEqual(compiled.validate(obj), []);
    assert.deepEqual(compiled.validate({ ...obj, spec: { ...obj.spec, port: 80 } }), []);
  });

  it('reports violations in kube-apiserver wording', () => {
    const obj = {
      spec: {
        replicas: 'three',
        ratio: 1.5,
        name: 'AB',
        ip: '1.2.3',
        when: 'yesterday',
        id: 'nope',
        port: true,
        size: 'c',
        tags: ['x', 'x', 'y'],
        labels: { a: 'long', b: 'x', c: 'y' },
        pair: { a: 'x', b: 'y' },
        template: { kind: 'Pod', apiVersion: 'a/b/c' },
      },
    };
    assert.deepEqual(fmt(compiled.validate(obj)), [
      'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
      'spec.ratio: Invalid value: 1.5: spec.ratio in body should be less than 1.5',
      'spec.size: Unsupported value: "c": supported values: "a", "b"',
      'spec.name: Invalid value: "AB": spec.name in body should be at least 3 chars long',
      'spec.ip: Invalid value: "1.2.3": spec.ip in body must be of type ipv4: "1.2.3"',
      'spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"',
      'spec.id: Invalid value: "nope": spec.id in body must be of type uuid: "nope"',
      'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
      'spec.tags: Too many: 3: must have at most 2 items',
      'spec.labels: Too many: 2: must have at most 2 items',
      'spec.labels.a: Too long: may not be more than 3 bytes',
      '<nil>: Invalid value: "": "spec.pair" must validate one and only one schema (oneOf). Found 2 valid alternatives',
      // kube's order: schema errors, then embedded resources, then list types
      'spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
      'spec.tags[1]: Duplicate value: "x"',
    ]);
    const reasons = compiled.validate(obj).map((e) => e.reason);
    assert.equal(reasons[0], 'FieldValueTypeInvalid');
    assert.equal(reasons[2], 'FieldValueNotSupported');
    assert.equal(reasons[8], 'FieldValueTooMany');
    assert.equal(reasons[10], 'FieldValueTooLong');
    assert.equal(reasons[13], 'FieldValueDuplicate');
  });

  it('reports required fields, pattern, minimum, minItems and nullable', () => {
    assert.deepEqual(fmt(compiled.validate({ spec: { replicas: 0, name: 'abcD', tags: [], label: '1', note: null } })), [
      'spec.size: Required value',
      'spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1',
      "spec.name: Invalid value: \"abcD\": spec.name in body should match '^[a-z]+$'",
      "spec.label: Invalid value: \"1\": spec.label in body should match '(?i)^[a-z]+$'",
      'spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items',
    ]);
    assert.deepEqual(fmt(compiled.validate({ spec: { size: 'a', name: null, ratio: 0.3 } })), [
      'spec.ratio: Invalid value: 0.3: spec.ratio in body should be a multiple of 0.25',
      'spec.name: Invalid value: "null": spec.name in body must be of type string: "null"',
    ]);
    assert.deepEqual(fmt(compiled.validate({ spec: { size: 'a', template: { metadata: { name: 'x' } } } })), ['spec.template.apiVersion: Required value', 'spec.template.kind: Required value']);
  });

  it('reports allOf/not composites the way kube-openapi does', () => {
    const s = compileVersionSchema({
      type: 'object',
      properties: {
        all: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'string' } }, allOf: [{ properties: { a: { minimum: 5 } } }, { required: ['b'] }] },
        notx: { type: 'string', not: { enum: ['x'] } },
      },
    });
    assert.deepEqual(fmt(s.validate({ all: { a: 1 }, notx: 'x' })), [
      'all.a: Invalid value: 1: all.a in body should be greater than or equal to 5',
      'all.b: Required value',
      '<nil>: Invalid value: "": "notx" must not validate the schema (not)',
      '<nil>: Invalid value: "": "all" must validate all the schemas (allOf). None validated',
    ]);
    assert.deepEqual(fmt(s.validate({ all: { a: 1, b: 'x' } })), ['all.a: Invalid value: 1: all.a in body should be greater than or equal to 5', '<nil>: Invalid value: "": "all" must validate all the schemas (allOf)']);
  });

  it('ignores formats kube does not validate', () => {
    assert.deepEqual(compiled.validate({ spec: { size: 'a', count: 1e12 } }), []);
    const s = compileVersionSchema({ type: 'object', properties: { x: { type: 'string', format: 'made-up' } } });
    assert.deepEqual(s.validate({ x: '!!' }), []);
  });

  it('prunes unknown fields except under x-kubernetes-preserve-unknown-fields', () => {
    const obj: any = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      extra: 1,
      spec: { size: 'a', bogus: true, labels: { any: 'x' }, template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', junk: 1 }, spec: { containers: [] } }, free: { anything: { goes: 1 }, known: { a: 'x', b: 'dropped' } } },
    };
    const pruned = compiled.prune(obj);
    assert.deepEqual(pruned.sort(), ['extra', 'spec.bogus', 'spec.free.known.b', 'spec.template.metadata.junk']);
    assert.deepEqual(obj, {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: { size: 'a', labels: { any: 'x' }, template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [] } }, free: { anything: { goes: 1 }, known: { a: 'x' } } },
    });
  });

  it('applies defaults inside objects that exist, recursing into defaulted values', () => {
    const s = compileVersionSchema({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            replicas: { type: 'integer', default: 1 },
            strategy: { type: 'object', default: {}, properties: { type: { type: 'string', default: 'Rolling' }, maxSurge: { 'x-kubernetes-int-or-string': true, default: '25%' } } },
            optional: { type: 'object', properties: { inner: { type: 'string', default: 'only-if-parent-exists' } } },
            ports: { type: 'array', items: { type: 'object', properties: { protocol: { type: 'string', default: 'TCP' } } } },
            gone: { type: 'string' },
            keep: { type: 'string', nullable: true },
            fill: { type: 'string', default: 'filled' },
          },
        },
      },
    });
    const obj: any = { spec: { ports: [{}, { protocol: 'UDP' }], gone: null, keep: null, fill: null } };
    s.applyDefaults(obj);
    assert.deepEqual(obj, { spec: { replicas: 1, strategy: { type: 'Rolling', maxSurge: '25%' }, ports: [{ protocol: 'TCP' }, { protocol: 'UDP' }], keep: null, fill: 'filled' } });
    const withParent: any = { spec: { optional: {} } };
    s.applyDefaults(withParent);
    assert.equal(withParent.spec.optional.inner, 'only-if-parent-exists');
  });

  it('renders numbers the way Go prints them', () => {
    assert.equal(goFloat(1.5), '1.5');
    assert.equal(goFloat(1e6), '1e+06');
    assert.equal(goFloat(1234567.5), '1.2345675e+06');
    assert.equal(goFloat(0.00001), '1e-05');
    assert.equal(goFloat(0.0001), '0.0001');
  });

  it('exposes the schema as a TypeNode', () => {
    assert.equal(compiled.typeNode.type, 'object');
    assert.equal(compiled.typeNode.properties?.spec.properties?.port.type, 'int-or-string');
  });
});

// ---------------------------------------------------------------------------------------------

describe('embedded resources (objectmeta.Validate)', () => {
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
          list: { type: 'array', items: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } },
          byName: { type: 'object', additionalProperties: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } },
          outer: {
            type: 'object',
            'x-kubernetes-embedded-resource': true,
            properties: { spec: { type: 'object', properties: { inner: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } } } },
          },
        },
      },
    },
  };
  const compiled = compileVersionSchema(schema);
  const check = (spec: any) => fmt(compiled.validate({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec }));

  it('requires apiVersion and kind without a detail, also when they are empty strings', () => {
    assert.deepEqual(check({ template: {} }), ['spec.template.apiVersion: Required value', 'spec.template.kind: Required value']);
    assert.deepEqual(check({ template: { apiVersion: '', kind: '' } }), ['spec.template.apiVersion: Required value', 'spec.template.kind: Required value']);
    assert.deepEqual(check({ template: { apiVersion: 1, kind: ['Pod'] } }), [
      'spec.template.apiVersion: Invalid value: 1: must be a string',
      'spec.template.kind: Invalid value: []interface {}{"Pod"}: must be a string',
    ]);
    // Required blocks CEL rules (kube's hasBlockingErr), so the reason matters.
    assert.deepEqual(
      compiled.validate({ spec: { template: { kind: 'Pod' } } }).map((e) => e.reason),
      ['FieldValueRequired'],
    );
  });

  it('runs the full ObjectMeta validation on metadata, with path-segment names', () => {
    const metadata = {
      name: '..',
      generateName: 'a/b',
      namespace: '$$$',
      generation: -1,
      labels: { '#': '#' },
      annotations: { '#': 'x' },
      finalizers: ['bad/finalizer/name', 'orphan', 'foregroundDeletion'],
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'cm' }],
    };
    assert.deepEqual(check({ template: { apiVersion: 'v1', kind: 'Pod', metadata } }), [
      "spec.template.metadata.generateName: Invalid value: \"a/b\": may not contain '/'",
      "spec.template.metadata.name: Invalid value: \"..\": may not be '..'",
      `spec.template.metadata.namespace: Invalid value: "$$$": ${DNS1123_LABEL}`,
      'spec.template.metadata.generation: Invalid value: -1: must be greater than or equal to 0',
      `spec.template.metadata.labels: Invalid value: "#": ${QUALIFIED_NAME_PART}`,
      `spec.template.metadata.labels: Invalid value: "#": ${LABEL_VALUE}`,
      `spec.template.metadata.annotations: Invalid value: "#": ${QUALIFIED_NAME_PART}`,
      'spec.template.metadata.ownerReferences.uid: Invalid value: "": must not be empty',
      "spec.template.metadata.finalizers: Invalid value: \"bad/finalizer/name\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      'spec.template.metadata.finalizers: Invalid value: []string{"bad/finalizer/name", "orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set',
    ]);
    // No name is fine (kube validates a stand-in), a namespace is optional, generateName may end in '-'.
    assert.deepEqual(check({ template: { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'web-', labels: { app: 'web' } } } }), []);
    assert.deepEqual(check({ template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'Not_A_DNS_Name', namespace: 'prod' } } }), []);
  });

  it('finds embedded resources in lists, maps and inside other embedded resources', () => {
    assert.deepEqual(
      check({
        list: [{ apiVersion: 'v1', kind: 'Pod' }, { apiVersion: 'v1' }],
        byName: { web: { kind: 'Pod', metadata: { namespace: 'A' } } },
        outer: { apiVersion: 'v1', kind: 'Wrapper', spec: { inner: { apiVersion: 'a/b/c', kind: 'x_y' } } },
      }),
      [
        'spec.list[1].kind: Required value',
        'spec.byName[web].apiVersion: Required value',
        `spec.byName[web].metadata.namespace: Invalid value: "A": ${DNS1123_LABEL}`,
        'spec.outer.spec.inner.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
        `spec.outer.spec.inner.kind: Invalid value: "x_y": may have mixed case, but should otherwise match: ${DNS1035_LABEL}`,
      ],
    );
  });

  it('checks embedded resources in CRD defaults, nested ones too, after a TypeMeta type check', () => {
    const withDefault = (def: unknown) =>
      crd({
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            properties: {
              tmpl: {
                type: 'object',
                'x-kubernetes-embedded-resource': true,
                properties: { spec: { type: 'object', properties: { sub: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } } } },
                default: def,
              },
            },
          },
        },
      });
    const p = 'spec.validation.openAPIV3Schema.properties[spec].properties[tmpl].default';
    assert.deepEqual(validateCustomResourceDefinition(withDefault({ apiVersion: 'v1', kind: 'Pod', spec: { sub: { apiVersion: 'v1', kind: 'Pod' } } })), []);
    assert.deepEqual(fmt(validateCustomResourceDefinition(withDefault({ apiVersion: 'v1', kind: 'Pod', spec: { sub: { apiVersion: 'v1', metadata: { namespace: '$$$' } } } }))), [
      `${p}.spec.sub.kind: Required value`,
      `${p}.spec.sub.metadata.namespace: Invalid value: "$$$": ${DNS1123_LABEL}`,
    ]);
    // Pruning would drop the number (its own error); coercion then stops at the first TypeMeta
    // field that is not a string, without the ObjectMeta or schema checks.
    assert.deepEqual(fmt(validateCustomResourceDefinition(withDefault({ apiVersion: 1, spec: {} }))), [
      `${p}: Invalid value: map[string]interface {}{"apiVersion":1, "spec":map[string]interface {}{}}: must not have unknown fields`,
      `${p}.apiVersion: Invalid value: 1: must be a string`,
    ]);
  });
});

describe('list-type set and map uniqueness (listtype.ValidateListSetsAndMaps)', () => {
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
          nums: { type: 'array', items: { type: 'integer' }, 'x-kubernetes-list-type': 'set' },
          objs: { type: 'array', items: { type: 'object', 'x-kubernetes-map-type': 'atomic', 'x-kubernetes-preserve-unknown-fields': true }, 'x-kubernetes-list-type': 'set' },
          ports: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name'],
            items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } },
          },
          routes: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['port', 'protocol'],
            items: { type: 'object', required: ['port'], properties: { port: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' } } },
          },
          nested: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' } },
        },
      },
    },
  };
  const compiled = compileVersionSchema(schema);
  const check = (spec: any, opts?: any) => fmt(compiled.validate({ spec }, opts));

  it('reports only the first repeat of each value in a set', () => {
    assert.deepEqual(check({ tags: ['a', 'a', 'a'] }), ['spec.tags[1]: Duplicate value: "a"']);
    assert.deepEqual(check({ tags: ['a', 'b', 'a', 'b', 'a', 'b'], nums: [1, 2, 1] }), [
      'spec.tags[2]: Duplicate value: "a"',
      'spec.tags[3]: Duplicate value: "b"',
      'spec.nums[2]: Duplicate value: 1',
    ]);
    // objects compare by content, whatever the key order
    assert.deepEqual(check({ objs: [{ a: 1, b: 2 }, { b: 2, a: 1 }, { a: 1, b: 2 }] }), ['spec.objs[1]: Duplicate value: map[string]interface {}{"a":1, "b":2}']);
    assert.deepEqual(check({ nested: { x: ['q', 'q', 'q'] } }), ['spec.nested[x][1]: Duplicate value: "q"']);
  });

  it('reports the first repeat of each key in a map list, missing keys included', () => {
    assert.deepEqual(check({ ports: [{ name: 'http' }, { name: 'http' }, { name: 'http' }, { port: 1 }, null, {}] }), [
      'spec.ports[4]: Invalid value: "null": spec.ports[4] in body must be of type object: "null"',
      'spec.ports[1]: Duplicate value: map[string]interface {}{"name":"http"}',
      'spec.ports[4]: Duplicate value: map[string]interface {}{}',
    ]);
    // several keys: only the present ones, printed in key order
    assert.deepEqual(check({ routes: [{ port: 80, protocol: 'TCP' }, { protocol: 'TCP', port: 80 }, { port: 80, protocol: 'UDP' }, { port: 80, protocol: 'TCP' }] }), [
      'spec.routes[1]: Duplicate value: map[string]interface {}{"port":80, "protocol":"TCP"}',
    ]);
  });

  it('rejects a map list item that is not an object, once', () => {
    assert.deepEqual(check({ ports: ['http', 7, { name: 'a' }, { name: 'a' }] }), [
      'spec.ports[0]: Invalid value: "string": spec.ports[0] in body must be of type object: "string"',
      'spec.ports[1]: Invalid value: "integer": spec.ports[1] in body must be of type object: "integer"',
      'spec.ports[0]: Invalid value: "http": must be an object for an array of list-type map',
    ]);
  });

  it('ratchets on update: duplicates count only when the stored object had none', () => {
    const next = { tags: ['a', 'a'], ports: [{ name: 'x' }, { name: 'x' }] };
    assert.deepEqual(check(next, { oldObject: { spec: { tags: ['a', 'b'] } } }), ['spec.tags[1]: Duplicate value: "a"', 'spec.ports[1]: Duplicate value: map[string]interface {}{"name":"x"}']);
    assert.deepEqual(check(next, { oldObject: { spec: { tags: ['b', 'b'] } } }), []);
  });
});

describe('x-kubernetes-validations (CEL)', () => {
  const base = 'spec.validation.openAPIV3Schema';
  function rules(specRules: any[], props: any = {}) {
    return {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          'x-kubernetes-validations': specRules,
          properties: {
            replicas: { type: 'integer' },
            minReplicas: { type: 'integer' },
            mode: { type: 'string' },
            name: { type: 'string', maxLength: 63 },
            tags: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 20 } },
            ...props,
          },
        },
      },
    };
  }
  const compile = (s: any) => compileSchemaRules(s, { basePath: base });

  it('reports compile errors in cel-go form', () => {
    const c = compile(
      rules([
        { rule: 'self.nope == 1' },
        { rule: 'self.replicas.startsWith("x")' },
        { rule: 'self.replicas' },
        { rule: 'self.replicas >' },
        { rule: 'foo(self.replicas)' },
        { rule: 'self.replicas > 1', messageExpression: '42' },
        { rule: 'self.replicas > 1', optionalOldSelf: true },
        { rule: "self.name.matches('[')" },
      ]),
    );
    const details = c.errors.map((e) => [e.field.replace(`${base}.properties[spec].x-kubernetes-validations`, ''), e.message.replace(/^Invalid value: apiextensions\.ValidationRule\{.*?\}: /, '')]);
    assert.deepEqual(details, [
      ['[0].rule', "compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope == 1\n | ....^"],
      ['[1].rule', "compilation failed: ERROR: <input>:1:14: found no matching overload for 'startsWith' applied to 'int.(string)'\n | self.replicas.startsWith(\"x\")\n | .............^"],
      ['[2].rule', 'cel expression must evaluate to a bool'],
      ['[3].rule', 'compilation failed: ERROR: <input>:1:15: Syntax error: found > but expecting end of input\n | self.replicas >\n | ..............^'],
      ['[4].rule', "compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')\n | foo(self.replicas)\n | ^"],
      ['[5].messageExpression', 'messageExpression must evaluate to a string'],
      ['[6].optionalOldSelf', 'Invalid value: true: may not be set if oldSelf is not used in rule'],
      ['[7].rule', 'program instantiation failed: error parsing regexp: missing closing ]: `[`'],
    ]);
  });

  it('evaluates rules with message, messageExpression, reason and fieldPath', () => {
    const c = compile(
      rules([
        { rule: 'self.minReplicas <= self.replicas', message: 'replicas must be at least minReplicas' },
        { rule: 'self.replicas <= 100', messageExpression: "'replicas is ' + string(self.replicas) + ', at most 100 allowed'" },
        { rule: "!has(self.mode) || self.mode in ['fast', 'slow']", reason: 'FieldValueForbidden', fieldPath: '.mode' },
        { rule: 'self.tags.all(t, t.startsWith("t-"))', reason: 'FieldValueRequired' },
        { rule: 'size(self.name) > 3' },
      ]),
    );
    assert.deepEqual(c.errors, []);
    const errs = evaluateRules(c, { spec: { replicas: 200, minReplicas: 300, mode: 'warp', name: 'ab', tags: ['t-1', 'x'] } });
    assert.deepEqual(
      errs.map((e) => [e.field, e.reason, e.message]),
      [
        ['spec', 'FieldValueInvalid', 'Invalid value: replicas must be at least minReplicas'],
        ['spec', 'FieldValueInvalid', 'Invalid value: replicas is 200, at most 100 allowed'],
        ['spec.mode', 'FieldValueForbidden', "Forbidden: failed rule: !has(self.mode) || self.mode in ['fast', 'slow']"],
        ['spec', 'FieldValueRequired', 'Required value: failed rule: self.tags.all(t, t.startsWith("t-"))'],
        ['spec', 'FieldValueInvalid', 'Invalid value: failed rule: size(self.name) > 3'],
      ],
    );
    assert.deepEqual(evaluateRules(c, { spec: { replicas: 5, minReplicas: 1, name: 'abcd', tags: ['t-a'] } }), []);
  });

  it('prints scalar values and runtime errors like kube', () => {
    const s = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            port: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self > 1024', message: 'must be unprivileged' }] },
            host: { type: 'string', 'x-kubernetes-validations': [{ rule: "self.endsWith('.local')" }] },
            opts: { type: 'object', properties: { a: { type: 'string' } }, 'x-kubernetes-validations': [{ rule: "self.a == 'x'" }] },
          },
        },
      },
    };
    const c = compile(s);
    assert.deepEqual(fmt(evaluateRules(c, { spec: { port: 80, host: 'example.com', opts: {} } })), [
      'spec.port: Invalid value: 80: must be unprivileged',
      `spec.host: Invalid value: "example.com": failed rule: self.endsWith('.local')`,
      `spec.opts: Invalid value: "object": no such key: a evaluating rule: self.a == 'x'`,
    ]);
  });

  it('sees apiVersion, kind and metadata.name at the resource root, reported at <nil>', () => {
    const s = { type: 'object', 'x-kubernetes-validations': [{ rule: "self.metadata.name.startsWith('a') && self.kind == 'Widget'", message: 'name must start with a' }], properties: { spec: { type: 'object' } } };
    const c = compile(s);
    assert.deepEqual(c.errors, []);
    assert.deepEqual(evaluateRules(c, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'abc' } }), []);
    assert.deepEqual(fmt(evaluateRules(c, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'bob' } })), ['<nil>: Invalid value: name must start with a']);
  });

  it('runs transition rules only against an old value', () => {
    const c = compile(
      rules([
        { rule: 'self.replicas >= oldSelf.replicas', message: 'cannot scale down' },
        { rule: '!oldSelf.hasValue() || oldSelf.value().mode == self.mode', message: 'mode is immutable', optionalOldSelf: true },
        { rule: 'oldSelf.hasValue() || self.replicas < 10', message: 'start small', optionalOldSelf: true },
      ]),
    );
    assert.deepEqual(c.errors, []);
    assert.deepEqual(fmt(evaluateRules(c, { spec: { replicas: 20, mode: 'a' } })), ['spec: Invalid value: start small']);
    assert.deepEqual(fmt(evaluateRules(c, { spec: { replicas: 5, mode: 'b' } }, { spec: { replicas: 6, mode: 'a' } })), ['spec: Invalid value: cannot scale down', 'spec: Invalid value: mode is immutable']);
    assert.deepEqual(evaluateRules(c, { spec: { replicas: 50, mode: 'a' } }, { spec: { replicas: 6, mode: 'a' } }), []);
  });

  it('correlates list-type=map items by key for oldSelf', () => {
    const s = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            ports: {
              type: 'array',
              maxItems: 16,
              'x-kubernetes-list-type': 'map',
              'x-kubernetes-list-map-keys': ['name'],
              items: { type: 'object', required: ['name'], properties: { name: { type: 'string', maxLength: 15 }, port: { type: 'integer' } }, 'x-kubernetes-validations': [{ rule: 'self.port == oldSelf.port', message: 'port is immutable' }] },
            },
          },
        },
      },
    };
    const c = compile(s);
    assert.deepEqual(c.errors, []);
    const errs = evaluateRules(c, { spec: { ports: [{ name: 'new', port: 1 }, { name: 'web', port: 81 }] } }, { spec: { ports: [{ name: 'web', port: 80 }] } });
    assert.deepEqual(fmt(errs), ['spec.ports[1]: Invalid value: port is immutable']);
  });

  it('supports the Kubernetes library functions', () => {
    const c = compile(
      rules(
        [
          { rule: 'self.tags.isSorted() && self.nums.sum() == 6 && self.nums.min() == 1 && self.nums.max() == 3 && self.tags.indexOf("b") == 1' },
          { rule: "self.name.lowerAscii() == 'abc' && self.name.upperAscii() == 'ABC' && self.csv.split(',').size() == 2 && ['a', 'b'].join('-') == 'a-b' && self.name.contains('b') && self.name.startsWith('A')" },
          { rule: "quantity(self.mem).isLessThan(quantity('1Gi')) && quantity('1.5').add(quantity('500m')).asInteger() == 2 && isQuantity('10Mi') && !isQuantity('10XB')" },
          { rule: "url(self.endpoint).getHost() == 'example.com:8443' && url(self.endpoint).getPort() == '8443' && url(self.endpoint).getScheme() == 'https' && isURL('/path') && !isURL('not a url')" },
          { rule: "ip(self.addr).family() == 4 && cidr('10.0.0.0/8').containsIP(self.addr) && isCIDR('fd00::/8') && !isIP('300.1.1.1') && ip('::1').isLoopback()" },
          { rule: "sets.contains(self.tags, ['a']) && sets.intersects(self.tags, ['z', 'b'])" },
          { rule: 'self.since < timestamp("2030-01-01T00:00:00Z") && duration(self.timeout) > duration("1m")' },
        ],
        {
          nums: { type: 'array', maxItems: 10, items: { type: 'integer' } },
          csv: { type: 'string', maxLength: 100 },
          mem: { type: 'string', maxLength: 20 },
          endpoint: { type: 'string', maxLength: 200 },
          addr: { type: 'string', maxLength: 45 },
          since: { type: 'string', format: 'date-time' },
          timeout: { type: 'string', maxLength: 10 },
        },
      ),
    );
    assert.deepEqual(c.errors, []);
    const good = { spec: { tags: ['a', 'b', 'c'], nums: [1, 2, 3], name: 'AbC', csv: 'x,y', mem: '512Mi', endpoint: 'https://example.com:8443/v1', addr: '10.1.2.3', since: '2024-05-01T00:00:00Z', timeout: '5m' } };
    assert.deepEqual(evaluateRules(c, good), []);
    const bad = clone(good);
    bad.spec.tags = ['b', 'a'];
    bad.spec.mem = '2Gi';
    bad.spec.addr = '192.168.0.1';
    assert.deepEqual(
      evaluateRules(c, bad).map((e) => e.message.slice(0, 40)),
      ['Invalid value: failed rule: self.tags.is', 'Invalid value: failed rule: quantity(sel', 'Invalid value: failed rule: ip(self.addr'],
    );
    assert.deepEqual(parseQuantity('1Ki'), { num: 1024n, den: 1n });
    assert.deepEqual(parseQuantity('100m'), { num: 1n, den: 10n });
  });

  it('escapes property names the way kube does', () => {
    assert.equal(escapeCelName('x-y'), 'x__dash__y');
    assert.equal(escapeCelName('namespace'), '__namespace__');
    assert.equal(escapeCelName('a.b/c'), 'a__dot__b__slash__c');
    assert.equal(escapeCelName('a__b'), 'a__underscores__b');
    assert.equal(escapeCelName('1abc'), undefined);
    const s = rules([{ rule: "self.x__dash__y == 'ok' && self.__namespace__ == 'ns'" }], { 'x-y': { type: 'string' }, namespace: { type: 'string' } });
    const c = compile(s);
    assert.deepEqual(c.errors, []);
    assert.deepEqual(evaluateRules(c, { spec: { 'x-y': 'ok', namespace: 'ns' } }), []);
    assert.equal(evaluateRules(c, { spec: { 'x-y': 'no', namespace: 'ns' } }).length, 1);
  });

  it('validates and normalizes fieldPath', () => {
    const s = { type: 'object', properties: { a: { type: 'object', properties: { b: { type: 'string' } } }, m: { type: 'object', additionalProperties: { type: 'string' } }, l: { type: 'array', items: { type: 'string' } } } };
    assert.deepEqual(validFieldPath('.a.b', s), { path: 'a.b' });
    assert.deepEqual(validFieldPath(".m['x.y']", s), { path: 'm[x.y]' });
    assert.deepEqual(validFieldPath('.a.c', s), { error: 'does not refer to a valid field' });
    assert.deepEqual(validFieldPath('.l[0]', s), { error: 'expected single quoted string but got 0' });
  });
});

// ---------------------------------------------------------------------------------------------
// A realistic operator CRD: shaped like prometheus-operator's Prometheus (deeply nested pod-spec
// pieces, list-type maps, embedded PVC template, selectors, remote write, status) with CEL rules.

function labelSelector(): any {
  return {
    type: 'object',
    'x-kubernetes-map-type': 'atomic',
    properties: {
      matchExpressions: {
        type: 'array',
        maxItems: 32,
        'x-kubernetes-list-type': 'atomic',
        items: {
          type: 'object',
          required: ['key', 'operator'],
          properties: {
            key: { type: 'string', maxLength: 317 },
            operator: { type: 'string', enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'] },
            values: { type: 'array', maxItems: 64, 'x-kubernetes-list-type': 'atomic', items: { type: 'string', maxLength: 63 } },
          },
        },
      },
      matchLabels: { type: 'object', maxProperties: 64, additionalProperties: { type: 'string', maxLength: 63 } },
    },
  };
}
const keyRef = (): any => ({ type: 'object', required: ['key'], 'x-kubernetes-map-type': 'atomic', properties: { key: { type: 'string' }, name: { type: 'string', default: '' }, optional: { type: 'boolean' } } });
const intOrString = (): any => ({ anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true });
const quantityMap = (): any => ({ type: 'object', maxProperties: 16, additionalProperties: { ...intOrString(), maxLength: 64, pattern: '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$' } });
function resources(): any {
  return {
    type: 'object',
    properties: { limits: quantityMap(), requests: quantityMap() },
    'x-kubernetes-validations': [
      {
        rule: "!has(self.limits) || !has(self.requests) || !('memory' in self.limits) || !('memory' in self.requests) || quantity(string(self.requests.memory)).compareTo(quantity(string(self.limits.memory))) <= 0",
        message: 'memory request must not exceed the memory limit',
      },
    ],
  };
}
function tlsConfig(): any {
  const secretOrConfigMap = { type: 'object', properties: { configMap: keyRef(), secret: keyRef() } };
  return { type: 'object', properties: { ca: secretOrConfigMap, cert: secretOrConfigMap, keySecret: keyRef(), insecureSkipVerify: { type: 'boolean' }, serverName: { type: 'string' }, minVersion: { type: 'string', enum: ['TLS10', 'TLS11', 'TLS12', 'TLS13'] } } };
}
function probe(): any {
  return {
    type: 'object',
    properties: {
      exec: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' } } },
      httpGet: {
        type: 'object',
        required: ['port'],
        properties: {
          host: { type: 'string' },
          path: { type: 'string' },
          port: intOrString(),
          scheme: { type: 'string', enum: ['HTTP', 'HTTPS'] },
          httpHeaders: { type: 'array', items: { type: 'object', required: ['name', 'value'], properties: { name: { type: 'string' }, value: { type: 'string' } } } },
        },
      },
      tcpSocket: { type: 'object', required: ['port'], properties: { host: { type: 'string' }, port: intOrString() } },
      grpc: { type: 'object', required: ['port'], properties: { port: { type: 'integer', format: 'int32' }, service: { type: 'string', default: '' } } },
      initialDelaySeconds: { type: 'integer', format: 'int32', minimum: 0 },
      periodSeconds: { type: 'integer', format: 'int32', minimum: 1 },
      timeoutSeconds: { type: 'integer', format: 'int32', minimum: 1 },
      successThreshold: { type: 'integer', format: 'int32' },
      failureThreshold: { type: 'integer', format: 'int32' },
      terminationGracePeriodSeconds: { type: 'integer', format: 'int64' },
    },
  };
}
function container(): any {
  return {
    type: 'object',
    required: ['name'],
    properties: {
      name: { type: 'string', maxLength: 63 },
      image: { type: 'string', maxLength: 512 },
      imagePullPolicy: { type: 'string', enum: ['Always', 'IfNotPresent', 'Never'] },
      command: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' },
      args: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' },
      workingDir: { type: 'string' },
      env: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: {
          type: 'object',
          required: ['name'],
          properties: {
            name: { type: 'string' },
            value: { type: 'string' },
            valueFrom: {
              type: 'object',
              properties: {
                configMapKeyRef: keyRef(),
                secretKeyRef: keyRef(),
                fieldRef: { type: 'object', required: ['fieldPath'], 'x-kubernetes-map-type': 'atomic', properties: { apiVersion: { type: 'string' }, fieldPath: { type: 'string' } } },
                resourceFieldRef: { type: 'object', required: ['resource'], 'x-kubernetes-map-type': 'atomic', properties: { containerName: { type: 'string' }, divisor: intOrString(), resource: { type: 'string' } } },
              },
            },
          },
        },
      },
      ports: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
        items: {
          type: 'object',
          required: ['containerPort'],
          properties: {
            name: { type: 'string', maxLength: 15 },
            containerPort: { type: 'integer', format: 'int32', minimum: 1, maximum: 65535 },
            hostIP: { type: 'string' },
            hostPort: { type: 'integer', format: 'int32' },
            protocol: { type: 'string', default: 'TCP', enum: ['TCP', 'UDP', 'SCTP'] },
          },
        },
      },
      resources: resources(),
      volumeMounts: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['mountPath'],
        items: { type: 'object', required: ['mountPath', 'name'], properties: { mountPath: { type: 'string' }, name: { type: 'string' }, readOnly: { type: 'boolean' }, subPath: { type: 'string' }, mountPropagation: { type: 'string' } } },
      },
      livenessProbe: probe(),
      readinessProbe: probe(),
      startupProbe: probe(),
      securityContext: {
        type: 'object',
        properties: {
          allowPrivilegeEscalation: { type: 'boolean' },
          capabilities: { type: 'object', properties: { add: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' }, drop: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' } } },
          privileged: { type: 'boolean' },
          readOnlyRootFilesystem: { type: 'boolean' },
          runAsGroup: { type: 'integer', format: 'int64' },
          runAsNonRoot: { type: 'boolean' },
          runAsUser: { type: 'integer', format: 'int64' },
          seccompProfile: { type: 'object', required: ['type'], properties: { localhostProfile: { type: 'string' }, type: { type: 'string', enum: ['Localhost', 'RuntimeDefault', 'Unconfined'] } } },
        },
      },
      terminationMessagePath: { type: 'string' },
      terminationMessagePolicy: { type: 'string', enum: ['File', 'FallbackToLogsOnError'] },
      tty: { type: 'boolean' },
      stdin: { type: 'boolean' },
    },
    'x-kubernetes-validations': [{ rule: "self.name != 'prometheus' || !has(self.image)", message: 'the prometheus container image is managed by the operator', reason: 'FieldValueForbidden', fieldPath: '.image' }],
  };
}
function containers(): any {
  return { type: 'array', maxItems: 16, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: container() };
}
function relabelConfig(): any {
  return {
    type: 'object',
    properties: {
      action: { type: 'string', default: 'replace', enum: ['replace', 'Replace', 'keep', 'Keep', 'drop', 'Drop', 'hashmod', 'HashMod', 'labelmap', 'LabelMap', 'labeldrop', 'LabelDrop', 'labelkeep', 'LabelKeep', 'lowercase', 'Lowercase', 'uppercase', 'Uppercase'] },
      modulus: { type: 'integer', format: 'int64' },
      regex: { type: 'string' },
      replacement: { type: 'string' },
      separator: { type: 'string' },
      sourceLabels: { type: 'array', items: { type: 'string', pattern: '^[a-zA-Z_][a-zA-Z0-9_]*$' } },
      targetLabel: { type: 'string' },
    },
  };
}
function remoteWrite(): any {
  return {
    type: 'object',
    required: ['url'],
    properties: {
      url: { type: 'string', maxLength: 2048, format: 'uri' },
      name: { type: 'string' },
      remoteTimeout: { type: 'string', pattern: '^(0|(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$' },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      writeRelabelConfigs: { type: 'array', items: relabelConfig() },
      basicAuth: { type: 'object', properties: { username: keyRef(), password: keyRef() } },
      bearerTokenFile: { type: 'string' },
      tlsConfig: tlsConfig(),
      proxyUrl: { type: 'string', pattern: '^http(s)?://.+$' },
      queueConfig: {
        type: 'object',
        properties: {
          capacity: { type: 'integer' },
          minShards: { type: 'integer' },
          maxShards: { type: 'integer' },
          maxSamplesPerSend: { type: 'integer' },
          batchSendDeadline: { type: 'string' },
          maxRetries: { type: 'integer' },
          minBackoff: { type: 'string' },
          maxBackoff: { type: 'string' },
          retryOnRateLimit: { type: 'boolean' },
        },
        'x-kubernetes-validations': [{ rule: '!has(self.minShards) || !has(self.maxShards) || self.minShards <= self.maxShards', message: 'minShards must not exceed maxShards', fieldPath: '.minShards' }],
      },
      sendExemplars: { type: 'boolean' },
      metadataConfig: { type: 'object', properties: { send: { type: 'boolean' }, sendInterval: { type: 'string' } } },
    },
    'x-kubernetes-validations': [{ rule: "self.url.startsWith('https://') || self.url.startsWith('http://')", message: 'remoteWrite url must use http or https' }],
  };
}
function volume(): any {
  return {
    type: 'object',
    required: ['name'],
    properties: {
      name: { type: 'string' },
      emptyDir: { type: 'object', properties: { medium: { type: 'string' }, sizeLimit: intOrString() } },
      configMap: { type: 'object', properties: { name: { type: 'string' }, defaultMode: { type: 'integer', format: 'int32' }, optional: { type: 'boolean' }, items: { type: 'array', items: { type: 'object', required: ['key', 'path'], properties: { key: { type: 'string' }, path: { type: 'string' }, mode: { type: 'integer' } } } } } },
      secret: { type: 'object', properties: { secretName: { type: 'string' }, defaultMode: { type: 'integer', format: 'int32' }, optional: { type: 'boolean' } } },
      persistentVolumeClaim: { type: 'object', required: ['claimName'], properties: { claimName: { type: 'string' }, readOnly: { type: 'boolean' } } },
    },
  };
}
function prometheusSchema(): any {
  return {
    type: 'object',
    description: 'Prometheus defines a Prometheus deployment.',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: {
        type: 'object',
        properties: {
          replicas: { type: 'integer', format: 'int32', minimum: 0, default: 1 },
          shards: { type: 'integer', format: 'int32', minimum: 1 },
          version: { type: 'string', pattern: '^v?[0-9]+\\.[0-9]+\\.[0-9]+$' },
          image: { type: 'string' },
          imagePullPolicy: { type: 'string', enum: ['Always', 'IfNotPresent', 'Never'] },
          imagePullSecrets: { type: 'array', items: { type: 'object', 'x-kubernetes-map-type': 'atomic', properties: { name: { type: 'string', default: '' } } } },
          paused: { type: 'boolean' },
          podManagementPolicy: { type: 'string', enum: ['OrderedReady', 'Parallel'] },
          retention: { type: 'string', pattern: '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$' },
          retentionSize: { type: 'string', pattern: '(^0|([0-9]*[.])?[0-9]+((K|M|G|T|E|P)i?)?B)$' },
          logLevel: { type: 'string', enum: ['', 'debug', 'info', 'warn', 'error'] },
          logFormat: { type: 'string', enum: ['', 'logfmt', 'json'] },
          scrapeInterval: { type: 'string', default: '30s', pattern: '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$' },
          evaluationInterval: { type: 'string', default: '30s' },
          externalLabels: {
            type: 'object',
            maxProperties: 64,
            additionalProperties: { type: 'string' },
            'x-kubernetes-validations': [{ rule: "self.all(k, !k.startsWith('__'))", message: 'external label names must not start with __' }],
          },
          enableFeatures: { type: 'array', maxItems: 32, items: { type: 'string', minLength: 1 }, 'x-kubernetes-list-type': 'set' },
          resources: resources(),
          nodeSelector: { type: 'object', additionalProperties: { type: 'string' } },
          serviceAccountName: { type: 'string' },
          priorityClassName: { type: 'string' },
          tolerations: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                effect: { type: 'string', enum: ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] },
                key: { type: 'string' },
                operator: { type: 'string', enum: ['Exists', 'Equal'] },
                tolerationSeconds: { type: 'integer', format: 'int64' },
                value: { type: 'string' },
              },
            },
          },
          affinity: {
            type: 'object',
            properties: {
              nodeAffinity: {
                type: 'object',
                properties: {
                  requiredDuringSchedulingIgnoredDuringExecution: {
                    type: 'object',
                    required: ['nodeSelectorTerms'],
                    'x-kubernetes-map-type': 'atomic',
                    properties: {
                      nodeSelectorTerms: {
                        type: 'array',
                        'x-kubernetes-list-type': 'atomic',
                        items: {
                          type: 'object',
                          'x-kubernetes-map-type': 'atomic',
                          properties: {
                            matchExpressions: { type: 'array', items: { type: 'object', required: ['key', 'operator'], properties: { key: { type: 'string' }, operator: { type: 'string' }, values: { type: 'array', items: { type: 'string' } } } } },
                            matchFields: { type: 'array', items: { type: 'object', required: ['key', 'operator'], properties: { key: { type: 'string' }, operator: { type: 'string' }, values: { type: 'array', items: { type: 'string' } } } } },
                          },
                        },
                      },
                    },
                  },
                  preferredDuringSchedulingIgnoredDuringExecution: {
                    type: 'array',
                    items: { type: 'object', required: ['preference', 'weight'], properties: { preference: { type: 'object', properties: { matchExpressions: { type: 'array', items: { type: 'object', properties: { key: { type: 'string' }, operator: { type: 'string' }, values: { type: 'array', items: { type: 'string' } } } } } } }, weight: { type: 'integer', format: 'int32', minimum: 1, maximum: 100 } } },
                  },
                },
              },
              podAntiAffinity: {
                type: 'object',
                properties: {
                  preferredDuringSchedulingIgnoredDuringExecution: {
                    type: 'array',
                    items: {
                      type: 'object',
                      required: ['podAffinityTerm', 'weight'],
                      properties: {
                        podAffinityTerm: { type: 'object', required: ['topologyKey'], properties: { labelSelector: labelSelector(), namespaceSelector: labelSelector(), namespaces: { type: 'array', items: { type: 'string' } }, topologyKey: { type: 'string' } } },
                        weight: { type: 'integer', format: 'int32' },
                      },
                    },
                  },
                },
              },
            },
          },
          securityContext: {
            type: 'object',
            properties: {
              fsGroup: { type: 'integer', format: 'int64' },
              fsGroupChangePolicy: { type: 'string' },
              runAsGroup: { type: 'integer', format: 'int64' },
              runAsNonRoot: { type: 'boolean' },
              runAsUser: { type: 'integer', format: 'int64' },
              supplementalGroups: { type: 'array', items: { type: 'integer', format: 'int64' }, 'x-kubernetes-list-type': 'atomic' },
              seccompProfile: { type: 'object', required: ['type'], properties: { localhostProfile: { type: 'string' }, type: { type: 'string' } } },
              sysctls: { type: 'array', items: { type: 'object', required: ['name', 'value'], properties: { name: { type: 'string' }, value: { type: 'string' } } } },
            },
          },
          containers: containers(),
          initContainers: containers(),
          volumes: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: volume() },
          volumeMounts: { type: 'array', items: { type: 'object', required: ['mountPath', 'name'], properties: { mountPath: { type: 'string' }, name: { type: 'string' }, readOnly: { type: 'boolean' } } } },
          storage: {
            type: 'object',
            properties: {
              disableMountSubPath: { type: 'boolean' },
              emptyDir: { type: 'object', properties: { medium: { type: 'string' }, sizeLimit: intOrString() } },
              volumeClaimTemplate: {
                type: 'object',
                'x-kubernetes-embedded-resource': true,
                properties: {
                  apiVersion: { type: 'string' },
                  kind: { type: 'string' },
                  metadata: { type: 'object', properties: { name: { type: 'string' }, labels: { type: 'object', additionalProperties: { type: 'string' } }, annotations: { type: 'object', additionalProperties: { type: 'string' } } } },
                  spec: {
                    type: 'object',
                    properties: {
                      accessModes: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' },
                      resources: { type: 'object', properties: { limits: quantityMap(), requests: quantityMap() } },
                      storageClassName: { type: 'string' },
                      volumeMode: { type: 'string', enum: ['Filesystem', 'Block'] },
                      selector: labelSelector(),
                    },
                  },
                  status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                },
              },
            },
          },
          serviceMonitorSelector: labelSelector(),
          serviceMonitorNamespaceSelector: labelSelector(),
          podMonitorSelector: labelSelector(),
          podMonitorNamespaceSelector: labelSelector(),
          ruleSelector: labelSelector(),
          ruleNamespaceSelector: labelSelector(),
          alerting: {
            type: 'object',
            required: ['alertmanagers'],
            properties: {
              alertmanagers: {
                type: 'array',
                maxItems: 8,
                'x-kubernetes-list-type': 'map',
                'x-kubernetes-list-map-keys': ['namespace', 'name'],
                items: {
                  type: 'object',
                  required: ['name', 'namespace', 'port'],
                  properties: {
                    name: { type: 'string', minLength: 1 },
                    namespace: { type: 'string', minLength: 1 },
                    port: intOrString(),
                    scheme: { type: 'string', enum: ['http', 'https'] },
                    pathPrefix: { type: 'string' },
                    apiVersion: { type: 'string', enum: ['v1', 'V1', 'v2', 'V2'] },
                    timeout: { type: 'string', pattern: '^(0|(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$' },
                    bearerTokenFile: { type: 'string' },
                    tlsConfig: tlsConfig(),
                  },
                },
              },
            },
          },
          remoteWrite: { type: 'array', maxItems: 20, items: remoteWrite() },
          additionalScrapeConfigs: keyRef(),
          web: {
            type: 'object',
            properties: {
              pageTitle: { type: 'string' },
              maxConnections: { type: 'integer', format: 'int32', minimum: 0 },
              tlsConfig: { type: 'object', properties: { cert: { type: 'object', properties: { secret: keyRef() } }, keySecret: keyRef(), clientAuthType: { type: 'string', enum: ['NoClientCert', 'RequestClientCert', 'RequireAnyClientCert', 'VerifyClientCertIfGiven', 'RequireAndVerifyClientCert'] }, minVersion: { type: 'string' } } },
              httpConfig: { type: 'object', properties: { http2: { type: 'boolean' }, headers: { type: 'object', properties: { contentSecurityPolicy: { type: 'string' }, strictTransportSecurity: { type: 'string' }, xContentTypeOptions: { type: 'string', enum: ['', 'NoSniff'] }, xFrameOptions: { type: 'string', enum: ['', 'Deny', 'SameOrigin'] }, xXSSProtection: { type: 'string' } } } } },
            },
          },
          thanos: {
            type: 'object',
            properties: {
              image: { type: 'string' },
              version: { type: 'string' },
              logLevel: { type: 'string', enum: ['', 'debug', 'info', 'warn', 'error'] },
              objectStorageConfig: keyRef(),
              resources: resources(),
              grpcServerTlsConfig: tlsConfig(),
              additionalArgs: { type: 'array', items: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 }, value: { type: 'string' } } } },
            },
          },
          podMetadata: { type: 'object', properties: { annotations: { type: 'object', additionalProperties: { type: 'string' } }, labels: { type: 'object', additionalProperties: { type: 'string' } }, name: { type: 'string' } } },
          extraConfig: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        },
        'x-kubernetes-validations': [
          { rule: '!has(self.shards) || !has(self.replicas) || self.shards * self.replicas <= 1000', messageExpression: "'shards*replicas must be at most 1000, got ' + string(self.shards * self.replicas)" },
          { rule: '!has(oldSelf.podManagementPolicy) || (has(self.podManagementPolicy) && self.podManagementPolicy == oldSelf.podManagementPolicy)', message: 'podManagementPolicy is immutable' },
        ],
      },
      status: {
        type: 'object',
        required: ['availableReplicas', 'paused', 'replicas', 'unavailableReplicas', 'updatedReplicas'],
        properties: {
          availableReplicas: { type: 'integer', format: 'int32' },
          paused: { type: 'boolean' },
          replicas: { type: 'integer', format: 'int32' },
          unavailableReplicas: { type: 'integer', format: 'int32' },
          updatedReplicas: { type: 'integer', format: 'int32' },
          selector: { type: 'string' },
          shards: { type: 'integer', format: 'int32' },
          conditions: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['type'],
            items: {
              type: 'object',
              required: ['lastTransitionTime', 'status', 'type'],
              properties: {
                lastTransitionTime: { type: 'string', format: 'date-time' },
                message: { type: 'string' },
                observedGeneration: { type: 'integer', format: 'int64' },
                reason: { type: 'string' },
                status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
                type: { type: 'string', minLength: 1 },
              },
            },
          },
          shardStatuses: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['shardID'], items: { type: 'object', required: ['availableReplicas', 'replicas', 'shardID', 'unavailableReplicas', 'updatedReplicas'], properties: { availableReplicas: { type: 'integer' }, replicas: { type: 'integer' }, shardID: { type: 'string' }, unavailableReplicas: { type: 'integer' }, updatedReplicas: { type: 'integer' } } } },
        },
      },
    },
    required: ['spec'],
  };
}
function prometheusCRD(): any {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'prometheuses.monitoring.example.io', annotations: { 'controller-gen.kubebuilder.io/version': 'v0.16.0' } },
    spec: {
      group: 'monitoring.example.io',
      scope: 'Namespaced',
      names: { plural: 'prometheuses', singular: 'prometheus', kind: 'Prometheus', listKind: 'PrometheusList', shortNames: ['prom'], categories: ['monitoring'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: prometheusSchema() },
          subresources: { status: {}, scale: { specReplicasPath: '.spec.shards', statusReplicasPath: '.status.shards', labelSelectorPath: '.status.selector' } },
          additionalPrinterColumns: [
            { name: 'Version', type: 'string', jsonPath: '.spec.version', description: 'The version of Prometheus' },
            { name: 'Desired', type: 'integer', jsonPath: '.spec.replicas' },
            { name: 'Ready', type: 'integer', jsonPath: '.status.availableReplicas' },
            { name: 'Paused', type: 'boolean', jsonPath: '.status.paused', priority: 1 },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
        },
      ],
    },
  };
}

function countProperties(s: any): number {
  if (!s || typeof s !== 'object') return 0;
  let n = 0;
  if (s.properties) for (const p of Object.values(s.properties)) n += 1 + countProperties(p);
  return n + countProperties(s.items) + (typeof s.additionalProperties === 'object' ? countProperties(s.additionalProperties) : 0);
}

function prometheusObject(): any {
  return {
    apiVersion: 'monitoring.example.io/v1',
    kind: 'Prometheus',
    metadata: { name: 'k8s', namespace: 'monitoring' },
    spec: {
      replicas: 2,
      shards: 2,
      version: 'v2.53.0',
      podManagementPolicy: 'Parallel',
      retention: '15d',
      retentionSize: '50GiB',
      externalLabels: { cluster: 'prod' },
      enableFeatures: ['exemplar-storage'],
      resources: { requests: { memory: '400Mi', cpu: '100m' }, limits: { memory: '2Gi' } },
      containers: [
        {
          name: 'config-reloader',
          image: 'quay.io/reloader:v0.1',
          ports: [{ containerPort: 8080, name: 'reloader-web' }],
          env: [{ name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          readinessProbe: { httpGet: { port: 'reloader-web', path: '/healthz' }, periodSeconds: 10 },
          securityContext: { readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
        },
        { name: 'prometheus', args: ['--web.enable-lifecycle'], resources: { requests: { memory: 1024 } } },
      ],
      storage: { volumeClaimTemplate: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '50Gi' } }, storageClassName: 'fast' } } },
      serviceMonitorSelector: { matchLabels: { team: 'sre' } },
      ruleSelector: { matchExpressions: [{ key: 'role', operator: 'In', values: ['alert-rules'] }] },
      alerting: { alertmanagers: [{ namespace: 'monitoring', name: 'main', port: 'web', apiVersion: 'v2' }] },
      remoteWrite: [{ url: 'https://mimir.example.com/api/v1/push', queueConfig: { minShards: 1, maxShards: 50 }, writeRelabelConfigs: [{ sourceLabels: ['__name__'], regex: 'go_.*', action: 'drop' }] }],
      web: { pageTitle: 'Prometheus', httpConfig: { headers: { xFrameOptions: 'Deny' } } },
      thanos: { version: 'v0.35.0', objectStorageConfig: { key: 'thanos.yaml', name: 'thanos-objstore' } },
      extraConfig: { anything: { nested: [1, 2, 3] } },
    },
  };
}

describe('a large operator CRD (Prometheus-shaped)', () => {
  const def = prometheusCRD();
  const schema = def.spec.versions[0].schema.openAPIV3Schema;

  it('is a valid CRD with hundreds of properties and compiles its CEL rules within budget', () => {
    assert.ok(countProperties(schema) >= 300, `only ${countProperties(schema)} properties`);
    assert.deepEqual(validateCustomResourceDefinition(def), []);
    const rules = compileSchemaRules(schema, { basePath: 'spec.validation.openAPIV3Schema' });
    assert.deepEqual(rules.errors, []);
    assert.ok(rules.totalCost > 0 && rules.totalCost < 100_000_000, String(rules.totalCost));
  });

  it('validates, prunes and defaults a realistic object', () => {
    const compiled = compileVersionSchema(schema);
    const rules = compileSchemaRules(schema, { basePath: 'spec.validation.openAPIV3Schema' });
    const obj = prometheusObject();
    obj.spec.containers[0].unknownField = true;
    obj.spec.storage.volumeClaimTemplate.metadata.bogus = 'x';
    obj.spec.affinity = { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', stray: 1 } }] } };
    assert.deepEqual(compiled.prune(obj).sort(), [
      'spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.stray',
      'spec.containers[0].unknownField',
      'spec.storage.volumeClaimTemplate.metadata.bogus',
    ]);
    assert.deepEqual(obj.spec.extraConfig, { anything: { nested: [1, 2, 3] } });
    compiled.applyDefaults(obj);
    assert.equal(obj.spec.scrapeInterval, '30s');
    assert.equal(obj.spec.containers[0].ports[0].protocol, 'TCP');
    assert.equal(obj.spec.remoteWrite[0].writeRelabelConfigs[0].action, 'drop');
    assert.equal(obj.spec.thanos.objectStorageConfig.name, 'thanos-objstore');
    assert.deepEqual(compiled.validate(obj), []);
    assert.deepEqual(evaluateRules(rules, obj), []);
  });

  it('reports schema and CEL violations deep in the object', () => {
    const compiled = compileVersionSchema(schema);
    const rules = compileSchemaRules(schema, { basePath: 'spec.validation.openAPIV3Schema' });
    const obj = prometheusObject();
    obj.spec.shards = 40;
    obj.spec.replicas = 30;
    obj.spec.externalLabels.__meta = 'x';
    obj.spec.containers[0].ports.push({ containerPort: 70000, protocol: 'ICMP' });
    obj.spec.containers[1].image = 'evil:latest';
    obj.spec.containers[1].resources = { requests: { memory: '4Gi' }, limits: { memory: '1Gi' } };
    obj.spec.containers.push({ name: 'config-reloader' });
    obj.spec.remoteWrite[0].queueConfig = { minShards: 10, maxShards: 5 };
    obj.spec.remoteWrite.push({ url: 'ftp://example.com/push' });
    obj.spec.alerting.alertmanagers[0].timeout = 'soon';
    obj.spec.storage.volumeClaimTemplate.kind = '';
    compiled.applyDefaults(obj);
    assert.deepEqual(fmt(compiled.validate(obj)), [
      'spec.containers[0].ports[1].containerPort: Invalid value: 70000: spec.containers[0].ports[1].containerPort in body should be less than or equal to 65535',
      'spec.containers[0].ports[1].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"',
      "spec.alerting.alertmanagers[0].timeout: Invalid value: \"soon\": spec.alerting.alertmanagers[0].timeout in body should match '^(0|(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$'",
      'spec.storage.volumeClaimTemplate.kind: Required value',
      'spec.containers[2]: Duplicate value: map[string]interface {}{"name":"config-reloader"}',
    ]);
    assert.deepEqual(fmt(evaluateRules(rules, obj)), [
      'spec: Invalid value: shards*replicas must be at most 1000, got 1200',
      'spec.externalLabels: Invalid value: external label names must not start with __',
      'spec.containers[1].image: Forbidden: the prometheus container image is managed by the operator',
      'spec.containers[1].resources: Invalid value: memory request must not exceed the memory limit',
      'spec.remoteWrite[0].queueConfig.minShards: Invalid value: minShards must not exceed maxShards',
      'spec.remoteWrite[1]: Invalid value: remoteWrite url must use http or https',
    ]);
  });

  it('enforces its transition rule only on update', () => {
    const rules = compileSchemaRules(schema, { basePath: 'spec.validation.openAPIV3Schema' });
    const old = prometheusObject();
    const next = prometheusObject();
    next.spec.podManagementPolicy = 'OrderedReady';
    assert.deepEqual(evaluateRules(rules, next), []);
    assert.deepEqual(fmt(evaluateRules(rules, next, old)), ['spec: Invalid value: podManagementPolicy is immutable']);
    delete next.spec.podManagementPolicy;
    assert.deepEqual(fmt(evaluateRules(rules, next, old)), ['spec: Invalid value: podManagementPolicy is immutable']);
    assert.deepEqual(evaluateRules(rules, old, old), []);
  });
});
