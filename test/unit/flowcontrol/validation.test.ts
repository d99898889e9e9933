// FlowSchema and PriorityLevelConfiguration validation (registry/kinds/flowcontrol/validation.ts)
// in kube's words: each rule of pkg/apis/flowcontrol/validation, the mandatory objects' fixed
// specs, and kube's own bootstrap objects passing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flowSchemaStrategy, priorityLevelConfigurationStrategy } from '../../../server/registry/kinds/flowcontrol/index.ts';
import { MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS, SUGGESTED_FLOW_SCHEMAS, SUGGESTED_PRIORITY_LEVELS } from '../../../server/flowcontrol/config/bootstrap.ts';
import { fieldErrorText } from '../../../server/validation/field.ts';
import type { Obj } from '../../../server/registry/strategy.ts';

const fsErrors = (o: Obj) => flowSchemaStrategy.validate!(o).map(fieldErrorText);
const plErrors = (o: Obj) => priorityLevelConfigurationStrategy.validate!(o).map(fieldErrorText);
const schema = (spec: Obj, name = 'mine') => ({ metadata: { name }, spec: { priorityLevelConfiguration: { name: 'workload-low' }, matchingPrecedence: 1000, rules: [{ subjects: [{ kind: 'User', user: { name: 'alice' } }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/version'] }] }], ...spec } });
const level = (spec: Obj, name = 'mine') => ({ metadata: { name }, spec });

test("kube's own objects are valid", () => {
  for (const fs of [...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_FLOW_SCHEMAS]) assert.deepEqual(fsErrors(structuredClone(fs) as unknown as Obj), [], fs.metadata.name);
  for (const pl of [...MANDATORY_PRIORITY_LEVELS, ...SUGGESTED_PRIORITY_LEVELS]) assert.deepEqual(plErrors(structuredClone(pl) as unknown as Obj), [], pl.metadata.name);
});

test('FlowSchema spec: precedence, distinguisher, priority level reference', () => {
  assert.deepEqual(fsErrors(schema({ matchingPrecedence: 0 })), ['spec.matchingPrecedence: Invalid value: 0: must be a positive value']);
  assert.deepEqual(fsErrors(schema({ matchingPrecedence: 10001 })), ['spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000']);
  assert.deepEqual(fsErrors(schema({ matchingPrecedence: 1 })), ["spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1"]);
  assert.deepEqual(fsErrors(schema({ distinguisherMethod: { type: 'ByGroup' } })), ['spec.distinguisherMethod.type: Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:"ByGroup"}: supported values: "ByNamespace", "ByUser"']);
  assert.deepEqual(fsErrors(schema({ priorityLevelConfiguration: { name: '' } })), ['spec.priorityLevelConfiguration.name: Required value: must reference a priority level']);
  assert.deepEqual(fsErrors(schema({ priorityLevelConfiguration: { name: 'Bad_Name' } })), [
    "spec.priorityLevelConfiguration.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
  ]);
});

test('FlowSchema rules: subjects and rules', () => {
  const rule = (r: Obj) => schema({ rules: [r] });
  assert.deepEqual(fsErrors(rule({ subjects: [], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/x'] }] })), ['spec.rules[0].subjects: Required value: subjects must contain at least one value']);
  assert.deepEqual(fsErrors(rule({ subjects: [{ kind: 'User', user: { name: 'a' } }] })), ['spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty']);
  const subject = (s: Obj) => rule({ subjects: [s], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/x'] }] });
  assert.deepEqual(fsErrors(subject({ kind: 'Robot' })), ['spec.rules[0].subjects[0].kind: Unsupported value: "Robot": supported values: "Group", "ServiceAccount", "User"']);
  assert.deepEqual(fsErrors(subject({ kind: 'User', group: { name: 'g' } })), ["spec.rules[0].subjects[0].user: Required value: user is required when subject kind is 'User'", "spec.rules[0].subjects[0].group: Forbidden: group is forbidden when subject kind is not 'Group'"]);
  assert.deepEqual(fsErrors(subject({ kind: 'Group', group: { name: '' } })), ['spec.rules[0].subjects[0].group.name: Required value']);
  assert.deepEqual(fsErrors(subject({ kind: 'ServiceAccount', serviceAccount: { name: '*' } })), ['spec.rules[0].subjects[0].serviceAccount.namespace: Required value: must specify namespace for service account']);
  const resource = (r: Obj) => rule({ subjects: [{ kind: 'Group', group: { name: 'g' } }], resourceRules: [r] });
  assert.deepEqual(fsErrors(resource({ verbs: ['get', '*'], apiGroups: ['*'], resources: ['*'], clusterScope: true })), ["spec.rules[0].resourceRules[0].verbs: Invalid value: []string{\"get\", \"*\"}: if '*' is present, must not specify other verbs"]);
  assert.deepEqual(fsErrors(resource({ verbs: ['escalate'], apiGroups: ['*'], resources: ['*'], clusterScope: true })), ['spec.rules[0].resourceRules[0].verbs: Unsupported value: []string{"escalate"}: supported values: "create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"']);
  assert.deepEqual(fsErrors(resource({ verbs: ['get'], apiGroups: [], resources: ['pods', '*'] })), [
    'spec.rules[0].resourceRules[0].apiGroups: Required value: resource rules must supply at least one api group',
    "spec.rules[0].resourceRules[0].resources: Invalid value: []string{\"pods\", \"*\"}: if '*' is present, must not specify other resources",
    'spec.rules[0].resourceRules[0].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace',
  ]);
  assert.deepEqual(fsErrors(resource({ verbs: ['get'], apiGroups: [''], resources: ['pods'], namespaces: ['Team'] })), [
    "spec.rules[0].resourceRules[0].namespaces[0]: Invalid value: \"Team\": each member of this list must be '*' or a DNS-1123 label; a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
  ]);
  const urls = (u: string[]) => rule({ subjects: [{ kind: 'Group', group: { name: 'g' } }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: u }] });
  assert.deepEqual(fsErrors(urls(['healthz', '/a b', '//x', '/a*', '/a/*/b/*'])), [
    'spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: "healthz": must start with slash',
    'spec.rules[0].nonResourceRules[0].nonResourceURLs[1]: Invalid value: "/a b": must not contain white-space',
    'spec.rules[0].nonResourceRules[0].nonResourceURLs[2]: Invalid value: "//x": must not contain double slash',
    'spec.rules[0].nonResourceRules[0].nonResourceURLs[3]: Invalid value: "/a*": wildcard can only do suffix matching',
    'spec.rules[0].nonResourceRules[0].nonResourceURLs[4]: Invalid value: "/a/*/b/*": wildcard can only do suffix matching',
  ]);
  assert.deepEqual(fsErrors(urls(['/', '/apis/*'])), []);
});

test('mandatory FlowSchemas keep their fixed spec', () => {
  const exempt = structuredClone(MANDATORY_FLOW_SCHEMAS[0]) as unknown as Obj;
  exempt.spec.matchingPrecedence = 2;
  const errs = fsErrors(exempt);
  assert.equal(errs.length, 1);
  assert.match(errs[0], /^spec: Invalid value: flowcontrol\.FlowSchemaSpec\{PriorityLevelConfiguration:flowcontrol\.PriorityLevelConfigurationReference\{Name:"exempt"\}, MatchingPrecedence:2, DistinguisherMethod:\(\*flowcontrol\.FlowDistinguisherMethod\)\(nil\), Rules:\[\]flowcontrol\.PolicyRulesWithSubjects\{.*\}\}: spec of 'exempt' must equal the fixed value$/);
  // Only the metadata may change (the ensurer's annotation, labels).
  const labelled = structuredClone(MANDATORY_FLOW_SCHEMAS[1]) as unknown as Obj;
  labelled.metadata.labels = { a: 'b' };
  assert.deepEqual(fsErrors(labelled), []);
});

test('PriorityLevelConfiguration spec: type, limited, exempt, queuing', () => {
  assert.deepEqual(plErrors(level({ type: 'Exempt' })), ["spec.type: Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is 'exempt'"]);
  assert.deepEqual(plErrors(level({ type: 'Other' })), ['spec.type: Unsupported value: "Other": supported values: "Exempt", "Limited"']);
  assert.deepEqual(plErrors(level({ type: 'Limited' })), ['spec.limited: Required value: must not be empty when type is Limited']);
  assert.deepEqual(plErrors(level({ type: 'Limited', exempt: {}, limited: { nominalConcurrencyShares: 0, limitResponse: { type: 'Reject' } } })), ['spec.exempt: Forbidden: must be nil if the type is Limited']);
  assert.deepEqual(plErrors(level({ type: 'Limited', limited: { nominalConcurrencyShares: -1, lendablePercent: 101, borrowingLimitPercent: -1, limitResponse: { type: 'Reject', queuing: {} } } })), [
    'spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer',
    'spec.limited.limitResponse.queuing: Forbidden: must be nil if limited.limitResponse.type is not Limited',
    'spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive',
    'spec.limited.borrowingLimitPercent: Invalid value: -1: if specified, must be a non-negative integer',
  ]);
  const queuing = (q: Obj) => level({ type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Queue', queuing: q } } });
  assert.deepEqual(plErrors(level({ type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Queue' } } })), ['spec.limited.limitResponse.queuing: Required value: must not be empty if limited.limitResponse.type is Limited']);
  assert.deepEqual(plErrors(queuing({ queues: 0, handSize: 0, queueLengthLimit: 0 })), [
    'spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: 0: must be positive',
    'spec.limited.limitResponse.queuing.queues: Invalid value: 0: must be positive',
    'spec.limited.limitResponse.queuing.handSize: Invalid value: 0: must be positive',
  ]);
  assert.deepEqual(plErrors(queuing({ queues: 4, handSize: 5, queueLengthLimit: 1 })), ['spec.limited.limitResponse.queuing.handSize: Invalid value: 5: should not be greater than queues (4)']);
  assert.deepEqual(plErrors(queuing({ queues: 10_000_001, handSize: 1, queueLengthLimit: 1 })), ['spec.limited.limitResponse.queuing.queues: Invalid value: 10000001: must not be greater than 10000000']);
  assert.deepEqual(plErrors(queuing({ queues: 128, handSize: 9, queueLengthLimit: 1 })), ['spec.limited.limitResponse.queuing.handSize: Invalid value: 9: required entropy bits of deckSize 128 and handSize 9 should not be greater than 60']);
  assert.deepEqual(plErrors(queuing({ queues: 128, handSize: 8, queueLengthLimit: 1 })), []);
});

test("mandatory levels: catch-all is fixed; exempt's spec.exempt may be tuned, nothing else", () => {
  const catchAll = structuredClone(MANDATORY_PRIORITY_LEVELS[0]) as unknown as Obj;
  catchAll.spec.limited.nominalConcurrencyShares = 50;
  assert.deepEqual(plErrors(catchAll), ["spec: Invalid value: flowcontrol.PriorityLevelConfigurationSpec{Type:\"Limited\", Limited:(*flowcontrol.LimitedPriorityLevelConfiguration)(0xc000000000), Exempt:(*flowcontrol.ExemptPriorityLevelConfiguration)(nil)}: spec of 'catch-all' must equal the fixed value"]);
  const exempt = structuredClone(MANDATORY_PRIORITY_LEVELS[1]) as unknown as Obj;
  exempt.spec.exempt = { nominalConcurrencyShares: 10, lendablePercent: 50 };
  assert.deepEqual(plErrors(exempt), []);
  exempt.spec.exempt.lendablePercent = 150;
  assert.deepEqual(plErrors(exempt), ['spec.exempt.lendablePercent: Invalid value: 150: must be between 0 and 100, inclusive']);
  exempt.spec = { type: 'Exempt', exempt: { nominalConcurrencyShares: 1, lendablePercent: 0 }, limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Reject' } } };
  assert.deepEqual(plErrors(exempt), [
    'spec.limited: Forbidden: must be nil if the type is not Limited',
    "spec: Invalid value: flowcontrol.PriorityLevelConfigurationSpec{Type:\"Exempt\", Limited:(*flowcontrol.LimitedPriorityLevelConfiguration)(0xc000000000), Exempt:(*flowcontrol.ExemptPriorityLevelConfiguration)(0xc000000000)}: spec of 'exempt' except the 'spec.exempt' field must equal the fixed value",
  ]);
});

test('status: condition types required and distinct; a status write checks the status alone', () => {
  const fs = schema({});
  Object.assign(fs, { status: { conditions: [{ type: 'Dangling', status: 'True' }, { type: 'Dangling', status: 'False' }, { status: 'True' }] } });
  assert.deepEqual(flowSchemaStrategy.validateUpdate!(fs, fs, 'status').map(fieldErrorText), ['status.conditions[1].type: Duplicate value: "Dangling"', 'status.conditions[2].type: Required value: must not be empty']);
  const badSpec = schema({ matchingPrecedence: 0 });
  assert.deepEqual(flowSchemaStrategy.validateUpdate!(badSpec, badSpec, 'status').map(fieldErrorText), []);
});
