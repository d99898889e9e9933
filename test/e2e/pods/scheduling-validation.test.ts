// ValidatePodSpec's scheduling and DNS rules, in kube-apiserver 1.36's words and order: node
// affinity (selector terms, requirement operators and values, matchFields on metadata.name,
// weights), pod affinity and anti-affinity terms (selectors, namespaces, label keys, topology
// key), DNS config (dnsPolicy None, limits, nameserver IPs, relaxed searches, options), readiness
// and scheduling gates, topology spread constraints, image pull secrets. Templates are checked the
// same way; nothing refused is written; a pod using all of them well is created.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invalidCauses, useTestServer } from '../../helpers/server.ts';
import { DNS1123_LABEL, DNS1123_SUBDOMAIN, LABEL_VALUE as LABEL_VALUE_TEXT, QUALIFIED_NAME_PART } from '../../helpers/kube-messages.ts';

// Without ServiceAccount admission: a pod naming an invalid ServiceAccount here is to meet validation,
// not the 403 of a ServiceAccount that cannot exist (kube's integration tests disable the plugin too).
const s = useTestServer({ options: { disableAdmissionPlugins: ['ServiceAccount'] } });

const PODS = '/api/v1/namespaces/default/pods';
const pod = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec } });
const causes = (name: string, spec: Record<string, unknown>) => invalidCauses(s, 'POST', PODS, pod(name, spec));
const absent = async (path: string) => assert.equal((await s.request('GET', path)).status, 404, `${path} was stored`);

// kube's messages for a bad qualified name, label value, RFC 1123 label and subdomain.
const QUALIFIED = (v: string) =>
  `Invalid value: ${JSON.stringify(v)}: ${QUALIFIED_NAME_PART}`;
const LABEL_VALUE = (v: string) =>
  `Invalid value: ${JSON.stringify(v)}: ${LABEL_VALUE_TEXT}`;
const RFC1123_LABEL = (v: string) =>
  `Invalid value: ${JSON.stringify(v)}: ${DNS1123_LABEL}`;
const RFC1123_SUBDOMAIN = (v: string) =>
  `Invalid value: ${JSON.stringify(v)}: ${DNS1123_SUBDOMAIN}`;
const SEARCH = (v: string) =>
  `Invalid value: ${JSON.stringify(v)}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*')`;
/** Go's %#v of a []string (plain ASCII values). */
const goSlice = (values: string[]) => `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;

test('node affinity: required terms with operators, values and field selectors; preferred terms weighted, any values', async () => {
  const REQ = 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]';
  const PREF = 'spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution';
  assert.deepEqual(
    await causes('na1', {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              {
                matchExpressions: [
                  { key: 'a', operator: 'In' },
                  { key: 'b', operator: 'Exists', values: ['x'] },
                  { key: 'c', operator: 'Gt', values: ['1', '2'] },
                  { key: 'bad key', operator: 'Near' },
                  { key: 'd', operator: 'NotIn', values: ['ok', 'bad value!'] },
                ],
                matchFields: [
                  { key: 'metadata.name', operator: 'In', values: ['a', 'b'] },
                  { key: 'spec.nodeName', operator: 'Exists' },
                  { key: 'metadata.name', operator: 'NotIn', values: ['Bad_Node'] },
                ],
              },
            ],
          },
          preferredDuringSchedulingIgnoredDuringExecution: [
            // (preferred terms may name any value: they can still succeed on a one-node cluster)
            { weight: 0, preference: { matchExpressions: [{ key: 'e', operator: 'In', values: ['bad value!'] }] } },
            { weight: 101, preference: { matchExpressions: [{ key: 'f', operator: 'Lt' }] } },
          ],
        },
      },
    }),
    [
      [`${REQ}.matchExpressions[0].values`, "Required value: must be specified when `operator` is 'In' or 'NotIn'"],
      [`${REQ}.matchExpressions[1].values`, "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"],
      [`${REQ}.matchExpressions[2].values`, "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"],
      [`${REQ}.matchExpressions[3].operator`, 'Invalid value: "Near": not a valid selector operator'],
      [`${REQ}.matchExpressions[3].key`, QUALIFIED('bad key')],
      [`${REQ}.matchExpressions[4].values[1]`, LABEL_VALUE('bad value!')],
      [`${REQ}.matchFields[0].values`, "Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector"],
      [`${REQ}.matchFields[1].operator`, 'Invalid value: "Exists": not a valid selector operator'],
      [`${REQ}.matchFields[1].key`, 'Invalid value: "spec.nodeName": not a valid field selector key'],
      [`${REQ}.matchFields[2].values[0]`, RFC1123_SUBDOMAIN('Bad_Node')],
      [`${PREF}[0].weight`, 'Invalid value: 0: must be in the range 1-100'],
      [`${PREF}[1].weight`, 'Invalid value: 101: must be in the range 1-100'],
      [`${PREF}[1].preference.matchExpressions[0].values`, "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"],
    ],
  );
  // A required node selector needs a term.
  assert.deepEqual(await causes('na2', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } } }), [
    ['spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms', 'Required value: must have at least one node selector term'],
  ]);
  await absent(`${PODS}/na1`);
  await absent(`${PODS}/na2`);
});

test('pod affinity and anti-affinity: selectors, namespaces, label keys and topology key of each term', async () => {
  const REQ = 'spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution';
  const PREF = 'spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution';
  const ANTI = 'spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution';
  assert.deepEqual(
    await causes('pa1', {
      affinity: {
        podAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            {
              topologyKey: '',
              labelSelector: { matchLabels: { tier: 'db' }, matchExpressions: [{ key: 'tier', operator: 'Exists' }] },
              namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In' }] },
              namespaces: ['default', 'Bad_NS'],
              matchLabelKeys: ['zone', 'bad key', 'tier'],
              mismatchLabelKeys: ['zone'],
            },
            { topologyKey: 'zone', matchLabelKeys: ['a'], mismatchLabelKeys: ['b'] },
          ],
          preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 200, podAffinityTerm: { topologyKey: 'bad key' } }],
        },
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone', labelSelector: { matchExpressions: [{ key: 'a', operator: 'Foo', values: ['bad value!'] }] } }],
        },
      },
    }),
    [
      [`${REQ}[0].namespaceSelector.matchExpressions[0].values`, "Required value: must be specified when `operator` is 'In' or 'NotIn'"],
      // (kube names the field ".namespace", unindexed)
      [`${REQ}[0].namespace`, RFC1123_LABEL('Bad_NS')],
      [`${REQ}[0].matchLabelKeys[1]`, QUALIFIED('bad key')],
      // (kube indexes the term's path by the key's place in matchLabelKeys)
      [`${REQ}[0][2]`, 'Invalid value: "tier": exists in both matchLabelKeys and labelSelector'],
      [`${REQ}[0].matchLabelKeys[0]`, 'Invalid value: "zone": exists in both matchLabelKeys and mismatchLabelKeys'],
      [`${REQ}[0].topologyKey`, 'Required value: can not be empty'],
      [`${REQ}[0].topologyKey`, 'Invalid value: "": name part must be non-empty'],
      [`${REQ}[0].topologyKey`, QUALIFIED('')],
      [`${REQ}[1].matchLabelKeys`, 'Forbidden: must not be specified when labelSelector is not set'],
      [`${REQ}[1].mismatchLabelKeys`, 'Forbidden: must not be specified when labelSelector is not set'],
      [`${PREF}[0].weight`, 'Invalid value: 200: must be in the range 1-100'],
      [`${PREF}[0].podAffinityTerm.topologyKey`, QUALIFIED('bad key')],
      [`${ANTI}[0].labelSelector.matchExpressions[0].operator`, 'Invalid value: "Foo": not a valid selector operator'],
      [`${ANTI}[0].labelSelector.matchExpressions[0].values[0]`, LABEL_VALUE('bad value!')],
    ],
  );
  // A key only once in the selector is no clash (a Deployment's template is not merged by kube).
  const ok = await s.request('POST', PODS, {
    body: pod('pa2', { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, matchLabelKeys: ['tier'] }] } } }),
  });
  assert.equal(ok.status, 201, ok.text);
  await absent(`${PODS}/pa1`);
});

test('DNS config: dnsPolicy None needs one with a nameserver', async () => {
  assert.deepEqual(await causes('dn1', { dnsPolicy: 'None' }), [['spec.dnsConfig', 'Required value: must provide `dnsConfig` when `dnsPolicy` is None']]);
  // (with no nameserver nothing else of the config is looked at)
  assert.deepEqual(await causes('dn2', { dnsPolicy: 'None', dnsConfig: { searches: ['Bad_Search'], options: [{}] } }), [
    ['spec.dnsConfig.nameservers', 'Required value: must provide at least one DNS nameserver when `dnsPolicy` is None'],
  ]);
  // Under another policy a config is optional, and an empty one is fine.
  const ok = await s.request('POST', PODS, { body: pod('dn3', { dnsPolicy: 'ClusterFirst', dnsConfig: {} }) });
  assert.equal(ok.status, 201, ok.text);
  await absent(`${PODS}/dn1`);
  await absent(`${PODS}/dn2`);
});

test('DNS config: at most 3 nameservers, each a strict IP; at most 32 relaxed searches; named options', async () => {
  const nameservers = ['1.2.3.4', '01.2.3.4', '::ffff:1.2.3.4', 'not-an-ip', '00001::1'];
  const searches = ['a_b.example.com.', '.', 'Bad.Com', '-x', 'trailing..', ...Array(28).fill('a')];
  assert.deepEqual(await causes('dc1', { dnsConfig: { nameservers, searches, options: [{ name: '' }, { value: '1' }, { name: 'ndots', value: '2' }] } }), [
    ['spec.dnsConfig.nameservers', `Invalid value: ${goSlice(nameservers)}: must not have more than 3 nameservers`],
    ['spec.dnsConfig.nameservers[1]', 'Invalid value: "01.2.3.4": must not have leading 0s'],
    ['spec.dnsConfig.nameservers[2]', 'Invalid value: "::ffff:1.2.3.4": must not be an IPv4-mapped IPv6 address'],
    ['spec.dnsConfig.nameservers[3]', 'Invalid value: "not-an-ip": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'],
    ['spec.dnsConfig.nameservers[4]', 'Invalid value: "00001::1": must not have leading 0s'],
    ['spec.dnsConfig.searches', `Invalid value: ${goSlice(searches)}: must not have more than 32 search paths`],
    // ("a_b.example.com." loses its one trailing dot; "." alone is allowed)
    ['spec.dnsConfig.searches[2]', SEARCH('Bad.Com')],
    ['spec.dnsConfig.searches[3]', SEARCH('-x')],
    ['spec.dnsConfig.searches[4]', SEARCH('trailing.')],
    ['spec.dnsConfig.options[0]', 'Required value: must not be empty'],
    ['spec.dnsConfig.options[1]', 'Required value: must not be empty'],
  ]);
  // The search list may hold 2048 characters, spaces between searches included, and no more.
  const long = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`; // 253
  const fits = [...Array(8).fill(long), 'e'.repeat(16)]; // 8 * 253 + 16 + 8 spaces = 2048
  const ok = await s.request('POST', PODS, { body: pod('dc2', { dnsConfig: { searches: fits } }) });
  assert.equal(ok.status, 201, ok.text);
  const over = [...Array(8).fill(long), 'e'.repeat(17)];
  assert.deepEqual(await causes('dc3', { dnsConfig: { searches: over } }), [
    ['spec.dnsConfig.searches', `Invalid value: ${goSlice(over)}: must not have more than 2048 characters (including spaces) in the search list`],
  ]);
  await absent(`${PODS}/dc1`);
  await absent(`${PODS}/dc3`);
});

test('readiness gates and scheduling gates: qualified names, scheduling gates named once', async () => {
  assert.deepEqual(
    await causes('g1', {
      readinessGates: [{ conditionType: 'example.com/ready' }, { conditionType: 'bad type!' }],
      schedulingGates: [{ name: 'example.com/quota' }, { name: 'example.com/quota' }, { name: '-bad' }],
    }),
    [
      ['spec.readinessGates[1].conditionType', QUALIFIED('bad type!')],
      // (a scheduling gate's errors are reported at the gate, not its name)
      ['spec.schedulingGates[1]', 'Duplicate value: "example.com/quota"'],
      ['spec.schedulingGates[2]', QUALIFIED('-bad')],
    ],
  );
  await absent(`${PODS}/g1`);
});

test('topology spread constraints: skew, key, action, repeats, minDomains, policies, matchLabelKeys, selector', async () => {
  const T = 'spec.topologySpreadConstraints';
  assert.deepEqual(
    await causes('t1', {
      topologySpreadConstraints: [
        {
          maxSkew: 0,
          topologyKey: '',
          whenUnsatisfiable: 'Sometimes',
          minDomains: 0,
          nodeAffinityPolicy: 'Maybe',
          nodeTaintsPolicy: 'Always',
          labelSelector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'app', operator: 'In', values: ['bad value!'] }] },
          matchLabelKeys: ['app', 'bad key'],
        },
        { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway', minDomains: 2, matchLabelKeys: ['pod-template-hash'] },
        { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway' },
        { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', minDomains: 3, nodeTaintsPolicy: 'Honor' },
      ],
    }),
    [
      [`${T}[0].maxSkew`, 'Invalid value: 0: must be greater than zero'],
      [`${T}[0].topologyKey`, 'Required value: can not be empty'],
      [`${T}[0].whenUnsatisfiable`, 'Unsupported value: "Sometimes": supported values: "DoNotSchedule", "ScheduleAnyway"'],
      [`${T}[0].minDomains`, 'Invalid value: 0: must be greater than zero'],
      [`${T}[0].minDomains`, 'Invalid value: 0: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not Sometimes'],
      [`${T}[0].nodeAffinityPolicy`, 'Unsupported value: "Maybe": supported values: "Honor", "Ignore"'],
      [`${T}[0].nodeTaintsPolicy`, 'Unsupported value: "Always": supported values: "Honor", "Ignore"'],
      [`${T}[0].matchLabelKeys[1]`, QUALIFIED('bad key')],
      // (matchLabelKeys follow pod affinity's rules, clash path included; the pod's own `app In (web)`
      // was merged into the selector first, so "app" is there twice after matchLabels)
      [`${T}[0][0]`, 'Invalid value: "app": exists in both matchLabelKeys and labelSelector'],
      [`${T}[0][0]`, 'Invalid value: "app": exists in both matchLabelKeys and labelSelector'],
      [`${T}[0].labelSelector.matchExpressions[0].values[0]`, LABEL_VALUE('bad value!')],
      // (the first of two alike is the one reported; kube prints the pair as a string)
      [`${T}[1].{topologyKey, whenUnsatisfiable}`, 'Duplicate value: "{zone, ScheduleAnyway}"'],
      [`${T}[1].minDomains`, 'Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway'],
      [`${T}[1].matchLabelKeys`, 'Forbidden: must not be specified when labelSelector is not set'],
    ],
  );
  await absent(`${PODS}/t1`);
});

test('image pull secrets: an entry is a name; anything else is dropped as an unknown field, not refused', async () => {
  const r = await s.request('POST', PODS, { body: pod('ips', { imagePullSecrets: [{ name: 'regcred', namespace: 'other' }] }) });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json().spec.imagePullSecrets, [{ name: 'regcred' }]);
});

test('the checks come in ValidatePodSpec order, between the node selector and the service account', async () => {
  assert.deepEqual(
    await causes('o1', {
      serviceAccountName: 'Bad_SA',
      topologySpreadConstraints: [{ maxSkew: 0, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' }],
      schedulingGates: [{ name: '-gate' }],
      readinessGates: [{ conditionType: '-ready' }],
      dnsConfig: { options: [{}] },
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } },
      nodeSelector: { 'bad key': 'x' },
      tolerations: [{ key: 'k', operator: 'Near' }],
    }),
    [
      ['spec.nodeSelector', QUALIFIED('bad key')],
      ['spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms', 'Required value: must have at least one node selector term'],
      ['spec.dnsConfig.options[0]', 'Required value: must not be empty'],
      ['spec.readinessGates[0].conditionType', QUALIFIED('-ready')],
      ['spec.schedulingGates[0]', QUALIFIED('-gate')],
      ['spec.topologySpreadConstraints[0].maxSkew', 'Invalid value: 0: must be greater than zero'],
      ['spec.serviceAccountName', RFC1123_SUBDOMAIN('Bad_SA')],
      ['spec.tolerations[0].operator', 'Unsupported value: "Near": supported values: "Equal", "Exists"'],
    ],
  );
  await absent(`${PODS}/o1`);
});

test('a Deployment template gets the same checks at spec.template.spec', async () => {
  const deployment = (name: string, spec: Record<string, unknown>) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec } } },
  });
  const P = 'spec.template.spec';
  assert.deepEqual(
    await invalidCauses(s, 'POST', '/apis/apps/v1/namespaces/default/deployments', deployment('d1', {
      affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: -1, podAffinityTerm: { topologyKey: 'zone', namespaces: ['Nope'] } }] } },
      dnsPolicy: 'None',
      schedulingGates: [{ name: 'a' }, { name: 'a' }],
      topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'Never', nodeAffinityPolicy: 'Sometimes' }],
    })),
    [
      [`${P}.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight`, 'Invalid value: -1: must be in the range 1-100'],
      [`${P}.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.namespace`, RFC1123_LABEL('Nope')],
      [`${P}.dnsConfig`, 'Required value: must provide `dnsConfig` when `dnsPolicy` is None'],
      [`${P}.schedulingGates[1]`, 'Duplicate value: "a"'],
      [`${P}.topologySpreadConstraints[0].whenUnsatisfiable`, 'Unsupported value: "Never": supported values: "DoNotSchedule", "ScheduleAnyway"'],
      [`${P}.topologySpreadConstraints[0].nodeAffinityPolicy`, 'Unsupported value: "Sometimes": supported values: "Honor", "Ignore"'],
    ],
  );
  await absent('/apis/apps/v1/namespaces/default/deployments/d1');
  // The same template done right is created.
  const ok = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', {
    body: deployment('d2', {
      affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: { topologyKey: 'zone', namespaces: ['default'] } }] } },
      dnsPolicy: 'None',
      dnsConfig: { nameservers: ['10.96.0.10'] },
      schedulingGates: [{ name: 'a' }],
      topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway', nodeAffinityPolicy: 'Ignore' }],
    }),
  });
  assert.equal(ok.status, 201, ok.text);
});

test('a pod using all of these fields well is created as sent', async () => {
  const spec = {
    imagePullSecrets: [{ name: 'regcred' }],
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            {
              matchExpressions: [
                { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
                { key: 'gpu-count', operator: 'Gt', values: ['1'] },
                { key: 'spot', operator: 'DoesNotExist' },
              ],
              matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['node-1'] }],
            },
          ],
        },
        preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, preference: { matchExpressions: [{ key: 'zone', operator: 'Exists' }] } }],
      },
      podAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { tier: 'cache' } }, matchLabelKeys: ['pod-template-hash'], namespaces: ['default'] }],
      },
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 1, podAffinityTerm: { topologyKey: 'topology.kubernetes.io/zone', labelSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] }, mismatchLabelKeys: ['tenant'], namespaceSelector: {} } },
        ],
      },
    },
    dnsPolicy: 'None',
    dnsConfig: { nameservers: ['10.0.0.10', '2001:DB8:0:0:0:0:0:1', '::1'], searches: ['svc.cluster.local', '_srv._tcp.example.com.', '.'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] },
    readinessGates: [{ conditionType: 'example.com/ready' }],
    schedulingGates: [{ name: 'example.com/quota' }],
    topologySpreadConstraints: [
      { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', minDomains: 2, nodeAffinityPolicy: 'Honor', nodeTaintsPolicy: 'Ignore', labelSelector: { matchLabels: { app: 'web' } }, matchLabelKeys: ['pod-template-hash'] },
      { maxSkew: 2, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway' },
    ],
  };
  const r = await s.request('POST', PODS, { body: pod('all', spec) });
  assert.equal(r.status, 201, r.text);
  const stored = (await s.request('GET', `${PODS}/all`)).json().spec;
  for (const k of Object.keys(spec) as (keyof typeof spec)[]) assert.deepEqual(stored[k], spec[k], k);
});

test("a new pod's matchLabelKeys (mismatchLabelKeys) join their term's selector as In (NotIn) its own label value; a template's do not", async () => {
  const term = { topologyKey: 'zone', labelSelector: { matchLabels: { tier: 'front' } }, matchLabelKeys: ['app', 'absent'], mismatchLabelKeys: ['team'] };
  const body = { ...pod('merged', { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } }, topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { tier: 'front' } }, matchLabelKeys: ['app'] }] }) };
  body.metadata.labels = { app: 'web', team: 'a' } as any;
  const created = await s.request('POST', PODS, { body });
  assert.equal(created.status, 201, created.text);
  const spec = created.json().spec;
  assert.deepEqual(spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector, {
    matchLabels: { tier: 'front' },
    matchExpressions: [
      { key: 'app', operator: 'In', values: ['web'] },
      { key: 'team', operator: 'NotIn', values: ['a'] },
    ],
  });
  assert.deepEqual(spec.topologySpreadConstraints[0].labelSelector.matchExpressions, [{ key: 'app', operator: 'In', values: ['web'] }]);
  // A pod whose selector already names the key then names it twice.
  const twice = { ...term, labelSelector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] }, mismatchLabelKeys: undefined };
  assert.deepEqual(await causes('twice', { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [twice] } } }), [
    ['spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0][0]', 'Invalid value: "app": exists in both matchLabelKeys and labelSelector'],
  ]);
  await absent(`${PODS}/twice`);
  // A template's terms are kept as written (the pods made from it get the merge).
  const deployment = {
    metadata: { name: 'kept' },
    spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }], affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [twice] } } } } },
  };
  const d = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment });
  assert.equal(d.status, 201, d.text);
  assert.deepEqual(d.json().spec.template.spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector, { matchExpressions: [{ key: 'app', operator: 'Exists' }] });
});
