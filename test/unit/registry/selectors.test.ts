import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../../server/errors.ts';
import {
  parseLabelSelector,
  labelSelectorFromObject,
  parseFieldSelector,
  selectableFields,
  checkFieldSelectorSupported,
} from '../../../server/registry/selectors.ts';
import { LABEL_VALUE } from '../../helpers/kube-messages.ts';

function badRequestMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ApiError, `expected ApiError, got ${e}`);
    assert.equal(e.code, 400);
    assert.equal(e.reason, 'BadRequest');
    return e.message;
  }
  assert.fail('expected a 400 BadRequest');
}

const KEY_RE_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

test('label selector: empty and whitespace-only selectors match everything', () => {
  for (const s of [undefined, '', '   ']) {
    const sel = parseLabelSelector(s);
    assert.equal(sel.empty, true, JSON.stringify(s));
    assert.equal(sel.matches(undefined), true);
    assert.equal(sel.matches({ a: 'b' }), true);
  }
});

test('label selector: matching table', () => {
  const cases: [string, Record<string, string> | undefined, boolean][] = [
    ['a=b', { a: 'b' }, true],
    ['a=b', { a: 'c' }, false],
    ['a=b', {}, false],
    ['a=b', undefined, false],
    ['a==b', { a: 'b' }, true],
    ['a!=b', { a: 'b' }, false],
    ['a!=b', { a: 'c' }, true],
    ['a!=b', {}, true],
    ['a', { a: '' }, true],
    ['a', { b: 'x' }, false],
    ['!a', { b: 'x' }, true],
    ['!a', { a: 'x' }, false],
    ['a in (x,y)', { a: 'y' }, true],
    ['a in (x,y)', { a: 'z' }, false],
    ['a in (x,y)', {}, false],
    ['a notin (x,y)', { a: 'z' }, true],
    ['a notin (x,y)', { a: 'x' }, false],
    ['a notin (x,y)', {}, true],
    ['a=', { a: '' }, true],
    ['a=', { a: 'x' }, false],
    ['a in ()', { a: '' }, true],
    ['a in (,x)', { a: '' }, true],
    ['a in (x,,y)', { a: '' }, true],
    ['a>5', { a: '6' }, true],
    ['a>5', { a: '5' }, false],
    ['a>5', { a: 'x' }, false],
    ['a>5', {}, false],
    ['a<5', { a: '-2' }, true],
    ['a<5', { a: '007' }, false],
    ['a>9223372036854775806', { a: '9223372036854775807' }, true],
    ['a>1', { a: '9223372036854775808' }, false], // out of int64 range: not a number to kube
    ['a=b,c!=d', { a: 'b', c: 'e' }, true],
    ['a=b,c!=d', { a: 'b', c: 'd' }, false],
    ['  a  =  b  ,  !c ', { a: 'b' }, true],
    ['env in (prod, staging),tier', { env: 'staging', tier: 'x' }, true],
    ['in in (in,notin)', { in: 'notin' }, true],
    ['example.com/app=web', { 'example.com/app': 'web' }, true],
    ['constructor', {}, false], // keys are own properties only
    ['!constructor', {}, true],
  ];
  for (const [s, labels, want] of cases) {
    assert.equal(parseLabelSelector(s).matches(labels), want, `${s} against ${JSON.stringify(labels)}`);
    assert.equal(parseLabelSelector(s).empty, false, s);
  }
});

test('label selector: parse errors carry kube messages', () => {
  const cases: [string, string][] = [
    ['a b', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"],
    ['a gt 5', "unable to parse requirement: found 'gt', expected: in, notin, =, ==, !=, gt, lt"],
    ['a,', "found '', expected: identifier after ','"],
    [',a', "found ',', expected: !, identifier, or 'end of string'"],
    ['a=b=c', "found '=', expected: ',' or 'end of string'"],
    ['!a=b', "found '=', expected: ',' or 'end of string'"],
    ['a in x', "unable to parse requirement: found 'x' expected: '('"],
    ['a in (x y)', "unable to parse requirement: found 'y', expected: ',' or ')'"],
    ['a in (=)', "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
    ['a in (x,=)', "unable to parse requirement: found '=', expected: ',', or identifier"],
    ['a=(', "unable to parse requirement: found '(', expected: identifier"],
    ['!', "unable to parse requirement: found '', expected: identifier"],
    ['a_b-', `unable to parse requirement: <nil>: Invalid value: "a_b-": name part ${KEY_RE_MSG}`],
    [
      'x/y/z',
      `unable to parse requirement: <nil>: Invalid value: "x/y/z": a valid label key ${KEY_RE_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ],
    ['a=b c', "found 'c', expected: ',' or 'end of string'"],
    ['a=-b', `unable to parse requirement: values[0][a]: Invalid value: "-b": ${LABEL_VALUE}`],
    ['a=' + 'x'.repeat(64), `unable to parse requirement: values[0][a]: Invalid value: "${'x'.repeat(64)}": must be no more than 63 bytes`],
    ['a>b', `unable to parse requirement: values[0]: Invalid value: "b": for 'Gt', 'Lt' operators, the value must be an integer`],
    [
      'a>-b',
      `unable to parse requirement: [values[0]: Invalid value: "-b": for 'Gt', 'Lt' operators, the value must be an integer, values[0][a]: Invalid value: "-b": ${LABEL_VALUE}]`,
    ],
  ];
  for (const [s, msg] of cases) assert.equal(badRequestMessage(() => parseLabelSelector(s)), msg, s);
});

test('label selector: key rules (prefix, lengths)', () => {
  const ok = ['a', 'A.b-c_d', 'k8s.io/x', `${'p'.repeat(253)}/n`, 'n'.repeat(63), '0'];
  for (const k of ok) assert.doesNotThrow(() => parseLabelSelector(k), k);
  assert.match(badRequestMessage(() => parseLabelSelector('n'.repeat(64))), /name part must be no more than 63 bytes/);
  assert.match(badRequestMessage(() => parseLabelSelector('/x')), /prefix part must be non-empty/);
  assert.match(badRequestMessage(() => parseLabelSelector('Example.com/x')), /prefix part a lowercase RFC 1123 subdomain/);
  assert.match(badRequestMessage(() => parseLabelSelector('x/')), /name part must be non-empty/);
});

test('labelSelectorFromObject: metav1.LabelSelector semantics', () => {
  assert.equal(labelSelectorFromObject(undefined).matches({}), false, 'nil selector selects nothing');
  assert.equal(labelSelectorFromObject(null).empty, false);
  const all = labelSelectorFromObject({});
  assert.equal(all.empty, true);
  assert.equal(all.matches({ x: 'y' }), true);

  const sel = labelSelectorFromObject({
    matchLabels: { app: 'web' },
    matchExpressions: [
      { key: 'tier', operator: 'In', values: ['fe', 'be'] },
      { key: 'env', operator: 'NotIn', values: ['dev'] },
      { key: 'team', operator: 'Exists' },
      { key: 'legacy', operator: 'DoesNotExist' },
    ],
  });
  assert.equal(sel.matches({ app: 'web', tier: 'fe', team: 'a' }), true);
  assert.equal(sel.matches({ app: 'web', tier: 'fe', team: 'a', env: 'dev' }), false);
  assert.equal(sel.matches({ app: 'web', tier: 'db', team: 'a' }), false);
  assert.equal(sel.matches({ app: 'web', tier: 'fe' }), false);
  assert.equal(sel.matches({ app: 'web', tier: 'fe', team: 'a', legacy: '' }), false);
  assert.equal(sel.matches({ app: 'api', tier: 'fe', team: 'a' }), false);
});

test('labelSelectorFromObject: invalid selectors', () => {
  assert.equal(
    badRequestMessage(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'In' }] })),
    "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
  );
  assert.equal(
    badRequestMessage(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] })),
    'values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist',
  );
  assert.equal(
    badRequestMessage(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] })),
    '"Gt" is not a valid label selector operator',
  );
  assert.equal(
    badRequestMessage(() => labelSelectorFromObject({ matchLabels: { 'a b': 'x' } })),
    `key: Invalid value: "a b": name part ${KEY_RE_MSG}`,
  );
  assert.equal(
    badRequestMessage(() => labelSelectorFromObject({ matchLabels: { a: 'x y' } })),
    `values[0][a]: Invalid value: "x y": ${LABEL_VALUE}`,
  );
});

test('field selector: parsing, operators and escaping', () => {
  assert.equal(parseFieldSelector(undefined).empty, true);
  assert.equal(parseFieldSelector('').empty, true);
  assert.equal(parseFieldSelector(',').empty, true);
  assert.deepEqual(parseFieldSelector('b!=2,a==1').requirements, [
    { field: 'a', op: '=', value: '1' },
    { field: 'b', op: '!=', value: '2' },
  ]);
  const cases: [string, { field: string; op: string; value: string }[]][] = [
    ['a=b', [{ field: 'a', op: '=', value: 'b' }]],
    ['a=', [{ field: 'a', op: '=', value: '' }]],
    ['a=b\\,c', [{ field: 'a', op: '=', value: 'b,c' }]],
    ['a=b\\=c', [{ field: 'a', op: '=', value: 'b=c' }]],
    ['a=b\\\\c', [{ field: 'a', op: '=', value: 'b\\c' }]],
    ['a=x\\\\,b=y', [{ field: 'a', op: '=', value: 'x\\' }, { field: 'b', op: '=', value: 'y' }]],
    ['a!=b\\,c,d=e', [{ field: 'a', op: '!=', value: 'b,c' }, { field: 'd', op: '=', value: 'e' }]],
    ['a==b', [{ field: 'a', op: '=', value: 'b' }]],
    ['a=!b', [{ field: 'a', op: '=', value: '!b' }]],
    ['a b=c d', [{ field: 'a b', op: '=', value: 'c d' }]],
  ];
  for (const [s, want] of cases) assert.deepEqual(parseFieldSelector(s).requirements, want, s);
});

test('field selector: parse errors', () => {
  const cases: [string, string][] = [
    ['a', "invalid selector: 'a'; can't understand 'a'"],
    ['x=1,a', "invalid selector: 'x=1,a'; can't understand 'a'"],
    ['a=b=c', 'invalid field selector: unescaped character in value: 61'],
    ['a=b,c', "invalid selector: 'a=b,c'; can't understand 'c'"],
    ['a==b,c=d\\,e=f', 'invalid field selector: unescaped character in value: 61'],
    ['a=b\\x', 'invalid field selector: invalid escape sequence: \\x'],
    ['a=b\\', 'invalid field selector: invalid escape sequence: \\'],
  ];
  for (const [s, msg] of cases) assert.equal(badRequestMessage(() => parseFieldSelector(s)), msg, s);
});

test('field selector: matching, including missing fields as ""', () => {
  const fields = { 'metadata.name': 'a', 'status.phase': 'Running' };
  const cases: [string, boolean][] = [
    ['metadata.name=a', true],
    ['metadata.name=b', false],
    ['metadata.name!=b', true],
    ['metadata.name!=a', false],
    ['metadata.name=a,status.phase=Running', true],
    ['metadata.name=a,status.phase!=Running', false],
    ['spec.nodeName=', true],
    ['spec.nodeName!=', false],
  ];
  for (const [s, want] of cases) assert.equal(parseFieldSelector(s).matches(fields), want, s);
});

test('selectableFields: per-kind field sets', () => {
  const pod = {
    metadata: { name: 'p', namespace: 'ns' },
    spec: { nodeName: 'n1', restartPolicy: 'Always', schedulerName: 'default-scheduler', serviceAccountName: 'sa', hostNetwork: true },
    status: { phase: 'Running', podIP: '10.0.0.1', podIPs: [{ ip: '10.0.0.2' }], nominatedNodeName: 'n2' },
  };
  assert.deepEqual(selectableFields('', 'pods', pod, true), {
    'metadata.name': 'p',
    'metadata.namespace': 'ns',
    'spec.nodeName': 'n1',
    'spec.host': 'n1',
    'spec.restartPolicy': 'Always',
    'spec.schedulerName': 'default-scheduler',
    'spec.serviceAccountName': 'sa',
    'spec.hostNetwork': 'true',
    'status.phase': 'Running',
    'status.podIP': '10.0.0.2',
    'status.nominatedNodeName': 'n2',
  });
  assert.equal(selectableFields('', 'pods', { metadata: { name: 'p' }, spec: {} }, true)['spec.hostNetwork'], 'false');

  const node = selectableFields('', 'nodes', { metadata: { name: 'n' }, spec: { unschedulable: true } }, false);
  assert.deepEqual(node, { 'metadata.name': 'n', 'spec.unschedulable': 'true' });
  assert.equal(selectableFields('', 'namespaces', { metadata: { name: 'x' }, status: { phase: 'Active' } }, false)['status.phase'], 'Active');
  assert.equal(selectableFields('', 'secrets', { metadata: { name: 's', namespace: 'd' }, type: 'Opaque' }, true).type, 'Opaque');
  assert.equal(selectableFields('', 'replicationcontrollers', { metadata: { name: 'r' }, status: { replicas: 3 } }, true)['status.replicas'], '3');
  assert.equal(selectableFields('batch', 'jobs', { metadata: { name: 'j' }, status: {} }, true)['status.successful'], '0');
  assert.equal(selectableFields('batch', 'jobs', { metadata: { name: 'j' }, status: { succeeded: 2 } }, true)['status.successful'], '2');
  assert.equal(selectableFields('certificates.k8s.io', 'certificatesigningrequests', { metadata: { name: 'c' }, spec: { signerName: 'x/y' } }, false)['spec.signerName'], 'x/y');
  const svc = selectableFields('', 'services', { metadata: { name: 's', namespace: 'd' }, spec: { clusterIP: '10.96.0.1', type: 'ClusterIP' } }, true);
  assert.equal(svc['spec.clusterIP'], '10.96.0.1');
  assert.equal(svc['spec.type'], 'ClusterIP');
  assert.deepEqual(selectableFields('apps', 'deployments', { metadata: { name: 'd', namespace: 'x' }, spec: {} }, true), {
    'metadata.name': 'd',
    'metadata.namespace': 'x',
  });

  const ev = {
    metadata: { name: 'e', namespace: 'd' },
    involvedObject: { kind: 'Pod', namespace: 'd', name: 'p', uid: 'u', apiVersion: 'v1', resourceVersion: '7', fieldPath: 'spec.containers{c}' },
    reason: 'Started',
    reportingComponent: 'kubelet',
    source: {},
    type: 'Normal',
  };
  const coreEv = selectableFields('', 'events', ev, true);
  assert.equal(coreEv['involvedObject.name'], 'p');
  assert.equal(coreEv['involvedObject.fieldPath'], 'spec.containers{c}');
  assert.equal(coreEv.source, 'kubelet', 'source falls back to reportingComponent');
  assert.equal(coreEv.reportingComponent, 'kubelet');
  const newEv = selectableFields('events.k8s.io', 'events', { metadata: { name: 'e', namespace: 'd' }, regarding: { kind: 'Pod', name: 'p' }, reportingController: 'kubelet', reason: 'R', type: 'Warning' }, true);
  assert.equal(newEv['regarding.kind'], 'Pod');
  assert.equal(newEv['regarding.name'], 'p');
  assert.equal(newEv.reportingController, 'kubelet');
  assert.equal(newEv.type, 'Warning');
});

test('field selector + selectableFields together select pods by node', () => {
  const sel = parseFieldSelector('spec.nodeName=n1,status.phase!=Succeeded');
  checkFieldSelectorSupported('', 'pods', sel);
  const mk = (node: string, phase: string) => selectableFields('', 'pods', { metadata: { name: 'x', namespace: 'd' }, spec: { nodeName: node }, status: { phase } }, true);
  assert.equal(sel.matches(mk('n1', 'Running')), true);
  assert.equal(sel.matches(mk('n2', 'Running')), false);
  assert.equal(sel.matches(mk('n1', 'Succeeded')), false);
  // spec.host is the old spelling of spec.nodeName
  const old = parseFieldSelector('spec.host=n1');
  checkFieldSelectorSupported('', 'pods', old);
  assert.equal(old.matches(mk('n1', 'Running')), true);
});

test('checkFieldSelectorSupported: supported and unsupported labels', () => {
  const supported: [string, string, string][] = [
    ['', 'pods', 'status.podIPs=x'],
    ['', 'pods', 'metadata.namespace=d'],
    ['', 'nodes', 'spec.unschedulable=false'],
    ['', 'events', 'involvedObject.uid=u,source=s'],
    ['events.k8s.io', 'events', 'regarding.name=p,reportingController=k,source=s'],
    ['', 'namespaces', 'status.phase=Active'],
    ['', 'secrets', 'type=Opaque'],
    ['', 'services', 'spec.type=NodePort'],
    ['', 'replicationcontrollers', 'status.replicas=1'],
    ['batch', 'jobs', 'status.successful=1'],
    ['certificates.k8s.io', 'certificatesigningrequests', 'spec.signerName=a/b'],
    ['apps', 'deployments', 'metadata.name=a,metadata.namespace=b'],
    ['', 'configmaps', 'metadata.name=a'],
    ['resource.k8s.io', 'resourceslices', 'spec.driver=d,spec.nodeName=n'],
    ['example.com', 'widgets', 'metadata.name=a'],
  ];
  for (const [g, r, s] of supported) assert.doesNotThrow(() => checkFieldSelectorSupported(g, r, parseFieldSelector(s)), `${r}.${g} ${s}`);

  const unsupported: [string, string, string, string][] = [
    ['', 'pods', 'spec.x=1', 'field label not supported: spec.x'],
    ['', 'nodes', 'metadata.namespace=x', 'field label not supported: metadata.namespace'],
    ['', 'events', 'regarding.name=x', 'field label not supported: regarding.name'],
    ['events.k8s.io', 'events', 'involvedObject.name=x', 'field label not supported: involvedObject.name'],
    ['', 'namespaces', 'metadata.namespace=x', 'field label not supported: metadata.namespace'],
    ['batch', 'jobs', 'status.active=1', 'field label not supported: status.active'],
    ['apps', 'deployments', 'spec.replicas=1', '"spec.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"'],
    ['apps', 'replicasets', 'status.replicas=1', '"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"'],
    ['', 'configmaps', 'data.x=1', '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"'],
    ['resource.k8s.io', 'resourceslices', 'spec.pool=1', 'field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.pool'],
    ['example.com', 'widgets', 'spec.color=red', 'field label not supported: spec.color'],
    // the first unsupported label in sorted order is reported
    ['', 'pods', 'z.z=1,b.b=2,spec.nodeName=x', 'field label not supported: b.b'],
  ];
  for (const [g, r, s, msg] of unsupported) {
    assert.equal(badRequestMessage(() => checkFieldSelectorSupported(g, r, parseFieldSelector(s))), msg, `${r}.${g} ${s}`);
  }
});

test('custom resources: scope and selectableFields', () => {
  assert.equal(
    badRequestMessage(() => checkFieldSelectorSupported('example.com', 'clusterthings', parseFieldSelector('metadata.namespace=x'), { namespaced: false })),
    'field label not supported: metadata.namespace',
  );
  assert.doesNotThrow(() =>
    checkFieldSelectorSupported('example.com', 'widgets', parseFieldSelector('spec.color=red'), { namespaced: true, selectableFields: ['.spec.color'] }),
  );
});
