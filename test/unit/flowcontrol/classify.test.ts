// Classification against kube's bootstrap FlowSchemas and priority levels (flowcontrol/config/):
// who lands in which schema and level, with which flow distinguisher, as kube-apiserver decides.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FlowControlConfig } from '../../../server/flowcontrol/config/index.ts';
import { MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS, SUGGESTED_FLOW_SCHEMAS, SUGGESTED_PRIORITY_LEVELS } from '../../../server/flowcontrol/config/bootstrap.ts';
import type { RequestDigest } from '../../../server/flowcontrol/types.ts';
import type { UserInfo } from '../../../server/authentication/user.ts';
import type { EventLog } from '../../../server/storage/log/event-log.ts';
import type { LogEvent } from '../../../server/storage/log/types.ts';

const stored = <T extends { metadata: { name: string } }>(o: T) => ({ ...structuredClone(o), metadata: { ...o.metadata, uid: `uid-${o.metadata.name}` } });
const bootstrapConfig = () => new FlowControlConfig([...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_FLOW_SCHEMAS].map(stored), [...MANDATORY_PRIORITY_LEVELS, ...SUGGESTED_PRIORITY_LEVELS].map(stored));

const admin: UserInfo = { name: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] };
const node: UserInfo = { name: 'system:node:worker-1', groups: ['system:nodes', 'system:authenticated'] };
const controllerManager: UserInfo = { name: 'system:kube-controller-manager', groups: ['system:authenticated'] };
const scheduler: UserInfo = { name: 'system:kube-scheduler', groups: ['system:authenticated'] };
const kubeSystemSa: UserInfo = { name: 'system:serviceaccount:kube-system:replicaset-controller', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'] };
const endpointSa: UserInfo = { name: 'system:serviceaccount:kube-system:endpoint-controller', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'] };
const teamSa: UserInfo = { name: 'system:serviceaccount:team:builder', groups: ['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated'] };
const alice: UserInfo = { name: 'alice', groups: ['system:authenticated'] };
const anonymous: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };

function resource(user: UserInfo, verb: string, apiGroup: string, resource: string, namespace = '', subresource = '', name = ''): RequestDigest {
  const base = apiGroup ? `/apis/${apiGroup}/v1` : '/api/v1';
  const path = `${base}${namespace ? `/namespaces/${namespace}` : ''}/${resource}${name ? `/${name}` : ''}${subresource ? `/${subresource}` : ''}`;
  return { user, isResourceRequest: true, verb, path, apiGroup, apiVersion: 'v1', resource, subresource, namespace, name };
}
function nonResource(user: UserInfo, verb: string, path: string): RequestDigest {
  return { user, isResourceRequest: false, verb, path, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '' };
}
const names = (config: FlowControlConfig, d: RequestDigest) => {
  const c = config.classify(d);
  return [c.flowSchema.name, c.priorityLevel.name, c.flowDistinguisher];
};

test('system:masters is exempt, resource or not', () => {
  const config = bootstrapConfig();
  assert.deepEqual(names(config, resource(admin, 'create', 'apps', 'deployments', 'team')), ['exempt', 'exempt', '']);
  assert.deepEqual(names(config, nonResource(admin, 'get', '/metrics')), ['exempt', 'exempt', '']);
  const c = config.classify(resource(admin, 'list', '', 'pods'));
  assert.equal(c.flowSchema.uid, 'uid-exempt');
  assert.equal(c.priorityLevel.spec.type, 'Exempt');
});

test('a node: its own Node and Lease at node-high, everything else at system, by user', () => {
  const config = bootstrapConfig();
  assert.deepEqual(names(config, resource(node, 'patch', '', 'nodes', '', 'status', 'worker-1')), ['system-node-high', 'node-high', 'system:node:worker-1']);
  assert.deepEqual(names(config, resource(node, 'update', 'coordination.k8s.io', 'leases', 'kube-node-lease', '', 'worker-1')), ['system-node-high', 'node-high', 'system:node:worker-1']);
  assert.deepEqual(names(config, resource(node, 'get', '', 'secrets', 'team', '', 's')), ['system-nodes', 'system', 'system:node:worker-1']);
  // nodes/proxy is neither nodes nor nodes/status: a subresource matches only res/sub.
  assert.deepEqual(names(config, resource(node, 'get', '', 'nodes', '', 'proxy', 'worker-1')), ['system-nodes', 'system', 'system:node:worker-1']);
  assert.deepEqual(names(config, nonResource(node, 'get', '/api')), ['system-nodes', 'system', 'system:node:worker-1']);
});

test('kube-controller-manager and kube-scheduler: leader election, endpoints, then workload-high by namespace', () => {
  const config = bootstrapConfig();
  assert.deepEqual(names(config, resource(controllerManager, 'update', 'coordination.k8s.io', 'leases', 'kube-system', '', 'kube-controller-manager')), ['system-leader-election', 'leader-election', 'system:kube-controller-manager']);
  assert.deepEqual(names(config, resource(controllerManager, 'update', '', 'endpoints', 'team', '', 'web')), ['endpoint-controller', 'workload-high', 'system:kube-controller-manager']);
  assert.deepEqual(names(config, resource(controllerManager, 'list', 'apps', 'replicasets', 'team')), ['kube-controller-manager', 'workload-high', 'team']);
  assert.deepEqual(names(config, resource(controllerManager, 'list', '', 'nodes')), ['kube-controller-manager', 'workload-high', '']);
  assert.deepEqual(names(config, resource(scheduler, 'create', '', 'pods', 'team', 'binding', 'p')), ['kube-scheduler', 'workload-high', 'team']);
});

test('service accounts: kube-system ones at workload-high by namespace, the rest at workload-low by user', () => {
  const config = bootstrapConfig();
  assert.deepEqual(names(config, resource(kubeSystemSa, 'list', 'apps', 'replicasets', 'team')), ['kube-system-service-accounts', 'workload-high', 'team']);
  assert.deepEqual(names(config, resource(kubeSystemSa, 'get', 'coordination.k8s.io', 'leases', 'team', '', 'l')), ['system-leader-election', 'leader-election', kubeSystemSa.name]);
  assert.deepEqual(names(config, resource(kubeSystemSa, 'update', '', 'configmaps', 'team', '', 'lock')), ['workload-leader-election', 'leader-election', kubeSystemSa.name]);
  assert.deepEqual(names(config, resource(kubeSystemSa, 'get', '', 'configmaps', 'kube-system', '', 'lock')), ['system-leader-election', 'leader-election', kubeSystemSa.name]);
  assert.deepEqual(names(config, resource(endpointSa, 'create', '', 'endpoints', 'team', '', 'web')), ['endpoint-controller', 'workload-high', endpointSa.name]);
  assert.deepEqual(names(config, resource(teamSa, 'get', '', 'configmaps', 'team', '', 'c')), ['service-accounts', 'workload-low', teamSa.name]);
});

test('probes are exempt for anyone; anything else from a plain user or anonymous is global-default by user', () => {
  const config = bootstrapConfig();
  for (const path of ['/healthz', '/readyz', '/livez', '/livez/ping']) assert.deepEqual(names(config, nonResource(anonymous, 'get', path)), ['probes', 'exempt', ''], path);
  assert.deepEqual(names(config, nonResource(anonymous, 'post', '/healthz')), ['global-default', 'global-default', 'system:anonymous']);
  assert.deepEqual(names(config, nonResource(anonymous, 'get', '/healthzz')), ['global-default', 'global-default', 'system:anonymous']);
  assert.deepEqual(names(config, resource(alice, 'create', '', 'configmaps', 'team')), ['global-default', 'global-default', 'alice']);
  assert.deepEqual(names(config, nonResource(alice, 'get', '/version')), ['global-default', 'global-default', 'alice']);
});

test('a user in neither authenticated nor unauthenticated falls to catch-all', () => {
  const config = bootstrapConfig();
  const odd: UserInfo = { name: 'odd', groups: [] };
  assert.deepEqual(names(config, resource(odd, 'get', '', 'pods', 'team', '', 'p')), ['catch-all', 'catch-all', 'odd']);
});

test('order: matchingPrecedence, then name; a schema naming a missing priority level is skipped', () => {
  const schema = (name: string, precedence: number, level: string, distinguisher?: 'ByUser' | 'ByNamespace') => ({
    metadata: { name, uid: name },
    spec: { priorityLevelConfiguration: { name: level }, matchingPrecedence: precedence, ...(distinguisher ? { distinguisherMethod: { type: distinguisher } } : {}), rules: [{ subjects: [{ kind: 'User', user: { name: 'alice' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }] },
  });
  const levels = [...MANDATORY_PRIORITY_LEVELS, ...SUGGESTED_PRIORITY_LEVELS].map(stored);
  let config = new FlowControlConfig([schema('b', 500, 'workload-low', 'ByNamespace'), schema('a', 500, 'workload-high', 'ByUser'), schema('z', 400, 'nowhere')], levels);
  assert.deepEqual(names(config, resource(alice, 'get', '', 'pods', 'team', '', 'p')), ['a', 'workload-high', 'alice']);
  config = new FlowControlConfig([schema('b', 500, 'workload-low', 'ByNamespace'), schema('a', 600, 'workload-high')], levels);
  assert.deepEqual(names(config, resource(alice, 'get', '', 'pods', 'team', '', 'p')), ['b', 'workload-low', 'team']);
});

test('rules: verbs, groups, res/sub, namespaces and cluster scope, URL prefixes; service account subjects', () => {
  const levels = [...MANDATORY_PRIORITY_LEVELS].map(stored);
  const config = new FlowControlConfig(
    [
      {
        metadata: { name: 'scoped', uid: 's' },
        spec: {
          priorityLevelConfiguration: { name: 'catch-all' },
          matchingPrecedence: 10,
          rules: [
            {
              subjects: [{ kind: 'ServiceAccount', serviceAccount: { namespace: 'team', name: '*' } }, { kind: 'ServiceAccount', serviceAccount: { namespace: 'other', name: 'one' } }],
              resourceRules: [{ verbs: ['get', 'list'], apiGroups: ['apps'], resources: ['deployments/scale'], namespaces: ['team'] }],
              nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/apis/*', '/metrics'] }],
            },
          ],
        },
      },
    ],
    levels,
  );
  const matched = (d: RequestDigest) => config.classify(d).flowSchema.name === 'scoped';
  const otherOne: UserInfo = { name: 'system:serviceaccount:other:one', groups: [] };
  const otherTwo: UserInfo = { name: 'system:serviceaccount:other:two', groups: [] };
  const teamSub: UserInfo = { name: 'system:serviceaccount:teamx:a', groups: [] };
  assert.equal(matched(resource(teamSa, 'get', 'apps', 'deployments', 'team', 'scale', 'd')), true);
  assert.equal(matched(resource(otherOne, 'list', 'apps', 'deployments', 'team', 'scale')), true);
  assert.equal(matched(resource(otherTwo, 'get', 'apps', 'deployments', 'team', 'scale', 'd')), false, 'another service account of that namespace');
  assert.equal(matched(resource(teamSub, 'get', 'apps', 'deployments', 'team', 'scale', 'd')), false, 'a namespace that only starts like it');
  assert.equal(matched(resource(teamSa, 'get', 'apps', 'deployments', 'team', '', 'd')), false, 'deployments is not deployments/scale');
  assert.equal(matched(resource(teamSa, 'update', 'apps', 'deployments', 'team', 'scale', 'd')), false, 'verb');
  assert.equal(matched(resource(teamSa, 'get', 'extensions', 'deployments', 'team', 'scale', 'd')), false, 'group');
  assert.equal(matched(resource(teamSa, 'get', 'apps', 'deployments', 'prod', 'scale', 'd')), false, 'namespace');
  assert.equal(matched(resource(teamSa, 'list', 'apps', 'deployments', '', 'scale')), false, 'cluster scope not allowed');
  assert.equal(matched(nonResource(teamSa, 'get', '/apis/apps/v1')), true);
  assert.equal(matched(nonResource(teamSa, 'get', '/apis')), false, '/apis/* is below /apis');
  assert.equal(matched(nonResource(teamSa, 'get', '/metrics')), true);
  assert.equal(matched(nonResource(teamSa, 'get', '/metrics/slis')), true, 'a URL is also the prefix of the paths below it');
  assert.equal(matched(nonResource(teamSa, 'get', '/metricsx')), false);
});

test('missing mandatory objects are imagined', () => {
  const config = new FlowControlConfig([], []);
  assert.deepEqual(names(config, resource(admin, 'get', '', 'pods', 'team', '', 'p')), ['exempt', 'exempt', '']);
  assert.deepEqual(names(config, resource(alice, 'get', '', 'pods', 'team', '', 'p')), ['catch-all', 'catch-all', 'alice']);
  assert.equal(config.classify(resource(alice, 'get', '', 'pods')).flowSchema.uid, '', 'imagined objects have no uid');
  assert.deepEqual(config.priorityLevels().map((p) => p.name), ['catch-all', 'exempt']);
});

test('priorityLevels lists every level in name order', () => {
  assert.deepEqual(bootstrapConfig().priorityLevels().map((p) => p.name), ['catch-all', 'exempt', 'global-default', 'leader-election', 'node-high', 'system', 'workload-high', 'workload-low']);
});

test('committed changes reach classification and onChange; a status-only write is no change', () => {
  let deliver: (events: LogEvent[]) => void = () => {};
  const log = { onCommit: (fn: (events: LogEvent[]) => void) => ((deliver = fn), () => {}) } as unknown as EventLog;
  const config = new FlowControlConfig([...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_FLOW_SCHEMAS].map(stored), [...MANDATORY_PRIORITY_LEVELS, ...SUGGESTED_PRIORITY_LEVELS].map(stored), log);
  let changes = 0;
  config.onChange(() => changes++);
  const event = (type: LogEvent['type'], res: string, object: { metadata: { name: string } }) => ({ type, rv: 1, key: { res, ns: '', name: object.metadata.name }, object }) as LogEvent;
  const FS = 'flowschemas.flowcontrol.apiserver.k8s.io';
  const PL = 'prioritylevelconfigurations.flowcontrol.apiserver.k8s.io';
  const aliceFirst = { metadata: { name: 'alice-first', uid: 'u1' }, spec: { priorityLevelConfiguration: { name: 'mine' }, matchingPrecedence: 50, rules: [{ subjects: [{ kind: 'User', user: { name: 'alice' } }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }] }] } };
  deliver([event('ADDED', FS, aliceFirst)]);
  assert.equal(changes, 1);
  assert.equal(config.classify(nonResource(alice, 'get', '/version')).flowSchema.name, 'global-default', 'dangling until its level exists');
  deliver([event('ADDED', PL, { metadata: { name: 'mine', uid: 'u2' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Reject' } } } } as never)]);
  assert.deepEqual(names(config, nonResource(alice, 'get', '/version')), ['alice-first', 'mine', '']);
  assert.ok(config.priorityLevels().some((p) => p.name === 'mine'));
  deliver([event('MODIFIED', FS, { ...aliceFirst, status: { conditions: [{ type: 'Dangling', status: 'False' }] } } as never)]);
  assert.equal(changes, 2, 'a status write changes nothing');
  deliver([event('DELETED', PL, { metadata: { name: 'mine' } })]);
  assert.equal(changes, 3);
  assert.equal(config.classify(nonResource(alice, 'get', '/version')).flowSchema.name, 'global-default');
});

test("a rule matches only with its own subjects; more than 32 rules (the subject index's second word)", () => {
  const rule = (user: string, url: string) => ({ subjects: [{ kind: 'User', user: { name: user } }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: [url] }] });
  const levels = [...MANDATORY_PRIORITY_LEVELS, ...SUGGESTED_PRIORITY_LEVELS].map(stored);
  // alice's rule is about /a, bob's about /b: alice asking for /b is not this schema's.
  const split = { metadata: { name: 'split', uid: 'x' }, spec: { priorityLevelConfiguration: { name: 'workload-low' }, matchingPrecedence: 10, rules: [rule('alice', '/a'), rule('bob', '/b')] } };
  const many = Array.from({ length: 40 }, (_, i) => ({ metadata: { name: `s${String(i).padStart(2, '0')}`, uid: `u${i}` }, spec: { priorityLevelConfiguration: { name: 'workload-high' }, matchingPrecedence: 100 + i, rules: [rule(`user-${i}`, '/x')] } }));
  const config = new FlowControlConfig([split, ...many, ...[...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_FLOW_SCHEMAS].map(stored)], levels);
  assert.equal(config.classify(nonResource(alice, 'get', '/a')).flowSchema.name, 'split');
  assert.equal(config.classify(nonResource(alice, 'get', '/b')).flowSchema.name, 'global-default');
  assert.equal(config.classify(nonResource({ name: 'bob', groups: ['system:authenticated'] }, 'get', '/b')).flowSchema.name, 'split');
  assert.equal(config.classify(nonResource({ name: 'user-38', groups: ['system:authenticated'] }, 'get', '/x')).flowSchema.name, 's38');
  assert.equal(config.classify(nonResource({ name: 'user-3', groups: ['system:authenticated'] }, 'get', '/x')).flowSchema.name, 's03');
  assert.equal(config.classify(nonResource({ name: 'user-38', groups: ['system:authenticated'] }, 'get', '/y')).flowSchema.name, 'global-default');
});
