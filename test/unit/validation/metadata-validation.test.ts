import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorText, type FieldError } from '../../../server/validation/field.ts';
import { nameRuleFor } from '../../../server/registry/kinds/index.ts';
import { validateObjectMeta, validateObjectMetaUpdate, validateLabels, validateAnnotations, validateFinalizers, validateOwnerReferences, validateManagedFields } from '../../../server/validation/object-meta.ts';
import { validateName, generateNameFrom, type NameRule } from '../../../server/validation/names.ts';
import { goQuote } from '../../../server/go/strconv.ts';
import { DNS1035_LABEL, DNS1123_LABEL, DNS1123_SUBDOMAIN, LABEL_VALUE, QUALIFIED_NAME_PART } from '../../helpers/kube-messages.ts';


const texts = (errs: FieldError[]) => errs.map(fieldErrorText);
const meta = (m: Record<string, unknown>, opts: Partial<{ namespaced: boolean; nameRule: NameRule; isCreate: boolean }> = {}) =>
  validateObjectMeta(m, { namespaced: true, nameRule: 'dns1123Subdomain', isCreate: true, ...opts });

test('name rules: good and bad names per rule', () => {
  const table: [NameRule, string, string[]][] = [
    ['dns1123Subdomain', 'example.com', []],
    ['dns1123Subdomain', 'a', []],
    ['dns1123Subdomain', '0-a.b-1', []],
    ['dns1123Subdomain', 'a'.repeat(253), []],
    ['dns1123Subdomain', 'Foo_bar', [DNS1123_SUBDOMAIN]],
    ['dns1123Subdomain', '-a', [DNS1123_SUBDOMAIN]],
    ['dns1123Subdomain', 'a..b', [DNS1123_SUBDOMAIN]],
    ['dns1123Subdomain', 'a'.repeat(254), ['must be no more than 253 bytes']],
    ['dns1123Label', 'my-ns', []],
    ['dns1123Label', '1abc', []],
    ['dns1123Label', 'a.b', ['must not contain dots']],
    ['dns1123Label', 'A', [DNS1123_LABEL]],
    ['dns1123Label', 'a'.repeat(64), ['must be no more than 63 bytes']],
    ['dns1123Label', 'a'.repeat(63) + '.', ['must be no more than 63 bytes', DNS1123_LABEL]],
    ['dns1035Label', 'my-svc', []],
    ['dns1035Label', '1svc', [DNS1035_LABEL]],
    ['dns1035Label', 'svc.x', [DNS1035_LABEL]],
    ['pathSegment', 'Any Name_With:Stuff', []],
    ['pathSegment', '.', ["may not be '.'"]],
    ['pathSegment', '..', ["may not be '..'"]],
    ['pathSegment', 'a/b%c', ["may not contain '/'", "may not contain '%'"]],
    ['rbacPathSegment', 'system:controller:x', []],
    ['rbacPathSegment', 'a/b', ["may not contain '/'"]],
    ['none', '../x%/', []],
  ];
  for (const [rule, name, want] of table) assert.deepEqual(validateName(name, rule), want, `${rule} ${name}`);
});

test('name rules: generateName prefixes may end in a dash', () => {
  assert.deepEqual(validateName('web-', 'dns1123Subdomain', true), []);
  assert.deepEqual(validateName('web-', 'dns1123Subdomain', false), [DNS1123_SUBDOMAIN]);
  assert.deepEqual(validateName('svc-', 'dns1035Label', true), []);
  assert.deepEqual(validateName('Web-', 'dns1123Subdomain', true), [DNS1123_SUBDOMAIN]);
  assert.deepEqual(validateName('.', 'pathSegment', true), [], 'path-segment prefixes only check contents');
  assert.deepEqual(validateName('.', 'rbacPathSegment', true), ["may not be '.'"], 'RBAC checks the prefix as a full name');
});

test('nameRuleFor: per group/resource', () => {
  assert.equal(nameRuleFor('', 'namespaces'), 'dns1123Label');
  assert.equal(nameRuleFor('', 'services'), 'dns1035Label');
  assert.equal(nameRuleFor('', 'pods'), 'dns1123Subdomain');
  assert.equal(nameRuleFor('', 'configmaps'), 'dns1123Subdomain');
  assert.equal(nameRuleFor('apps', 'deployments'), 'dns1123Subdomain');
  assert.equal(nameRuleFor('rbac.authorization.k8s.io', 'clusterroles'), 'rbacPathSegment');
  assert.equal(nameRuleFor('rbac.authorization.k8s.io', 'rolebindings'), 'rbacPathSegment');
  assert.equal(nameRuleFor('certificates.k8s.io', 'certificatesigningrequests'), 'none');
  assert.equal(nameRuleFor('example.com', 'widgets'), 'dns1123Subdomain');
});

test('generateNameFrom: prefix + 5 chars from kube alphabet, at most 63 long', () => {
  for (let i = 0; i < 50; i++) {
    const n = generateNameFrom('web-');
    assert.match(n, /^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  }
  const long = generateNameFrom('x'.repeat(100));
  assert.equal(long.length, 63);
  assert.ok(long.startsWith('x'.repeat(58)));
  assert.match(long.slice(58), /^[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  const exact = generateNameFrom('y'.repeat(58));
  assert.equal(exact.length, 63);
  const names = new Set(Array.from({ length: 200 }, () => generateNameFrom('a-')));
  assert.ok(names.size > 190, 'random suffixes differ');
});

test('validateObjectMeta: name required, invalid name, generateName', () => {
  assert.deepEqual(meta({ namespace: 'd' }), [
    { reason: 'FieldValueRequired', field: 'metadata.name', message: 'Required value: name or generateName is required' },
  ]);
  assert.deepEqual(texts(meta({ name: 'Foo_bar', namespace: 'd' })), [`metadata.name: Invalid value: "Foo_bar": ${DNS1123_SUBDOMAIN}`]);
  assert.deepEqual(texts(meta({ name: 'x', generateName: 'Bad_', namespace: 'd' })), [`metadata.generateName: Invalid value: "Bad_": ${DNS1123_SUBDOMAIN}`]);
  assert.deepEqual(meta({ name: 'x', generateName: 'Bad_', namespace: 'd' }, { isCreate: false }), [], 'generateName only checked on create');
  assert.deepEqual(meta({ name: 'web-abcde', generateName: 'web-', namespace: 'd' }), []);
  assert.deepEqual(texts(meta({ name: 'my.svc', namespace: 'd' }, { nameRule: 'dns1035Label' })), [`metadata.name: Invalid value: "my.svc": ${DNS1035_LABEL}`]);
});

test('validateObjectMeta: namespace rules', () => {
  assert.deepEqual(meta({ name: 'a' }), [{ reason: 'FieldValueRequired', field: 'metadata.namespace', message: 'Required value' }]);
  assert.deepEqual(texts(meta({ name: 'a', namespace: 'Bad.NS' })), [`metadata.namespace: Invalid value: "Bad.NS": ${DNS1123_LABEL}`]);
  assert.deepEqual(meta({ name: 'a', namespace: 'd' }, { namespaced: false }), [
    { reason: 'FieldValueForbidden', field: 'metadata.namespace', message: 'Forbidden: not allowed on this type' },
  ]);
  assert.deepEqual(meta({ name: 'a' }, { namespaced: false }), []);
});

test('validateObjectMeta: generation must be non-negative', () => {
  assert.deepEqual(texts(meta({ name: 'a', namespace: 'd', generation: -1 })), ['metadata.generation: Invalid value: -1: must be greater than or equal to 0']);
});

test('labels: keys and values', () => {
  const good = { a: '', 'A.b_c-d': 'V.1_x-Y', 'example.com/x': 'y', [`${'p'.repeat(253)}/n`]: 'v'.repeat(63) };
  assert.deepEqual(validateLabels(good, 'metadata.labels'), []);
  const cases: [Record<string, string>, string[]][] = [
    [{ 'a b': 'x' }, [`metadata.labels: Invalid value: "a b": ${QUALIFIED_NAME_PART}`]],
    [{ a: '-x' }, [`metadata.labels: Invalid value: "-x": ${LABEL_VALUE}`]],
    [{ a: 'v'.repeat(64) }, [`metadata.labels: Invalid value: "${'v'.repeat(64)}": must be no more than 63 bytes`]],
    [{ ['k'.repeat(64)]: 'x' }, [`metadata.labels: Invalid value: "${'k'.repeat(64)}": name part must be no more than 63 bytes`]],
    [{ '/x': 'y' }, ['metadata.labels: Invalid value: "/x": prefix part must be non-empty']],
    [{ 'x/': 'y' }, ['metadata.labels: Invalid value: "x/": name part must be non-empty', `metadata.labels: Invalid value: "x/": ${QUALIFIED_NAME_PART}`]],
    [{ 'Ex.com/x': 'y' }, [`metadata.labels: Invalid value: "Ex.com/x": prefix part ${DNS1123_SUBDOMAIN}`]],
    [{ [`${'p'.repeat(254)}/n`]: 'v' }, [`metadata.labels: Invalid value: "${'p'.repeat(254)}/n": prefix part must be no more than 253 bytes`]],
    [
      { 'a/b/c': 'v' },
      [
        "metadata.labels: Invalid value: \"a/b/c\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      ],
    ],
    [{ a: 'tab\there' }, [`metadata.labels: Invalid value: "tab\\there": ${LABEL_VALUE}`]],
  ];
  for (const [labels, want] of cases) assert.deepEqual(texts(validateLabels(labels, 'metadata.labels')), want, JSON.stringify(labels));
});

test('annotations: keys case-insensitive, total size 256 KiB', () => {
  assert.deepEqual(validateAnnotations({ 'Example.COM/Some-Key': 'anything at all: / %' }, 'metadata.annotations'), []);
  assert.deepEqual(texts(validateAnnotations({ 'a b': 'x' }, 'metadata.annotations')), [`metadata.annotations: Invalid value: "a b": ${QUALIFIED_NAME_PART}`]);
  const limit = 256 * 1024;
  assert.deepEqual(validateAnnotations({ k: 'x'.repeat(limit - 1) }, 'metadata.annotations'), []);
  assert.deepEqual(validateAnnotations({ k: 'x'.repeat(limit) }, 'metadata.annotations'), [
    { reason: 'FieldValueTooLong', field: 'metadata.annotations', message: 'Too long: may not be more than 262144 bytes' },
  ]);
  // counted in bytes, keys included
  assert.equal(validateAnnotations({ kk: 'é'.repeat(limit / 2 - 1) }, 'metadata.annotations').length, 0);
  assert.equal(validateAnnotations({ kkk: 'é'.repeat(limit / 2 - 1) }, 'metadata.annotations').length, 1);
});

test('finalizers: qualified names, orphan + foregroundDeletion conflict', () => {
  assert.deepEqual(validateFinalizers(['kubernetes', 'orphan', 'example.com/cleanup', 'foregroundDeletion-x'], 'metadata.finalizers'), []);
  assert.deepEqual(texts(validateFinalizers(['bad finalizer'], 'metadata.finalizers')), [
    `metadata.finalizers: Invalid value: "bad finalizer": ${QUALIFIED_NAME_PART}`,
  ]);
  assert.deepEqual(texts(validateFinalizers(['orphan', 'foregroundDeletion'], 'metadata.finalizers')), [
    'metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set',
  ]);
});

test('ownerReferences: required parts, banned owners, one controller', () => {
  const ok = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u1', controller: true };
  assert.deepEqual(validateOwnerReferences([ok], 'metadata.ownerReferences'), []);
  assert.deepEqual(texts(validateOwnerReferences([{}], 'metadata.ownerReferences')), [
    'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
    'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
    'metadata.ownerReferences.name: Invalid value: "": must not be empty',
    'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
  ]);
  assert.deepEqual(texts(validateOwnerReferences([{ ...ok, apiVersion: 'a/b/c' }], 'metadata.ownerReferences')), [
    'metadata.ownerReferences.apiVersion: Invalid value: "a/b/c": version must not be empty',
  ]);
  const banned = validateOwnerReferences([{ apiVersion: 'v1', kind: 'Event', name: 'e', uid: 'u' }], 'metadata.ownerReferences');
  assert.equal(banned.length, 1);
  assert.equal(banned[0].field, 'metadata.ownerReferences');
  assert.match(banned[0].message, /^Invalid value: v1\.OwnerReference\{APIVersion:"v1", Kind:"Event", Name:"e", UID:"u", .*\}: \/v1, Kind=Event is disallowed from being an owner$/);
  assert.deepEqual(validateOwnerReferences([{ apiVersion: 'events.k8s.io/v1', kind: 'Event', name: 'e', uid: 'u' }], 'f'), []);
  const two = validateOwnerReferences([ok, { ...ok, kind: 'Deployment', name: 'd', uid: 'u2' }], 'metadata.ownerReferences');
  assert.equal(two.length, 1);
  assert.match(two[0].message, /: Only one reference can have Controller set to true\. Found "true" in references for ReplicaSet\/rs and Deployment\/d$/);
});

test('managedFields: operation, fieldsType, manager', () => {
  assert.deepEqual(validateManagedFields([{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1' }], 'metadata.managedFields'), []);
  assert.deepEqual(texts(validateManagedFields([{ manager: 'm', operation: 'Patch', fieldsType: 'FieldsV2' }], 'metadata.managedFields')), [
    'metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`',
    'metadata.managedFields[0].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`',
  ]);
  assert.deepEqual(texts(validateManagedFields([{ manager: 'm'.repeat(129), operation: 'Update' }], 'metadata.managedFields')), [
    'metadata.managedFields[0].manager: Too long: may not be more than 128 bytes',
  ]);
});

test('validateObjectMeta collects errors from every part in kube order', () => {
  const errs = meta(
    { name: 'ok', namespace: 'd', labels: { a: '-' }, annotations: { 'b c': '' }, finalizers: ['x y'], ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p' }] },
    {},
  );
  assert.deepEqual(
    errs.map((e) => e.field),
    ['metadata.labels', 'metadata.annotations', 'metadata.ownerReferences.uid', 'metadata.finalizers'],
  );
});

test('validateObjectMetaUpdate: immutable fields and update rules', () => {
  const old = { name: 'a', namespace: 'd', uid: 'u1', resourceVersion: '5', generation: 2, creationTimestamp: '2024-01-02T03:04:05Z' };
  assert.deepEqual(validateObjectMetaUpdate({ ...old }, old), []);
  assert.deepEqual(validateObjectMetaUpdate({ ...old, labels: { x: 'y' }, generation: 3 }, old), []);

  const cases: [Record<string, unknown>, string[]][] = [
    [{ name: 'b' }, ['metadata.name: Invalid value: "b": field is immutable']],
    [{ namespace: 'e' }, ['metadata.namespace: Invalid value: "e": field is immutable']],
    [{ uid: 'u2' }, ['metadata.uid: Invalid value: "u2": field is immutable']],
    [{ resourceVersion: '' }, ['metadata.resourceVersion: Invalid value: "": must be specified for an update']],
    [{ generation: 1 }, ['metadata.generation: Invalid value: 1: must not be decremented']],
    [{ creationTimestamp: '2024-01-02T03:04:06Z' }, ['metadata.creationTimestamp: Invalid value: 2024-01-02 03:04:06 +0000 UTC: field is immutable']],
    [{ deletionTimestamp: '2024-05-06T07:08:09Z' }, ['metadata.deletionTimestamp: Invalid value: 2024-05-06 07:08:09 +0000 UTC: field is immutable']],
    [{ deletionGracePeriodSeconds: 30 }, ['metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable']],
  ];
  for (const [change, want] of cases) assert.deepEqual(texts(validateObjectMetaUpdate({ ...old, ...change }, old)), want, JSON.stringify(change));

  // same instant written differently is not a change
  assert.deepEqual(validateObjectMetaUpdate({ ...old, creationTimestamp: '2024-01-02T04:04:05+01:00' }, old), []);
  // removing a deletion timestamp is a change too
  const deleting = { ...old, deletionTimestamp: '2024-05-06T07:08:09Z', deletionGracePeriodSeconds: 0, finalizers: ['a'] };
  assert.deepEqual(texts(validateObjectMetaUpdate({ ...deleting, deletionTimestamp: undefined }, deleting)), [
    'metadata.deletionTimestamp: Invalid value: null: field is immutable',
  ]);
});

test('validateObjectMetaUpdate: no new finalizers while deleting', () => {
  const deleting = { name: 'a', uid: 'u', resourceVersion: '1', deletionTimestamp: '2024-05-06T07:08:09Z', finalizers: ['a'] };
  assert.deepEqual(validateObjectMetaUpdate({ ...deleting, finalizers: [] }, deleting), [], 'removing finalizers is fine');
  assert.deepEqual(validateObjectMetaUpdate({ ...deleting, finalizers: ['z', 'a', 'b'] }, deleting), [
    {
      reason: 'FieldValueForbidden',
      field: 'metadata.finalizers',
      message: 'Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"b", "z"}',
    },
  ]);
  const live = { ...deleting, deletionTimestamp: undefined };
  assert.deepEqual(validateObjectMetaUpdate({ ...live, finalizers: ['a', 'b'] }, live), [], 'adding is fine before deletion');
});

test('goQuote renders values as Go %q does', () => {
  assert.equal(goQuote('plain'), '"plain"');
  assert.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"');
  assert.equal(goQuote('\n\t\x00\x7f'), '"\\n\\t\\x00\\x7f"');
  assert.equal(goQuote('héllo ✓'), '"héllo ✓"');
  assert.equal(goQuote('\u00a0\u200b'), '"\\u00a0\\u200b"');
});
