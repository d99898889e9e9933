// NetworkPolicies as kube validates them: selectors, ports and end ports, peers (one kind, or pod
// and namespace selectors together), ipBlocks with exceptions strictly inside, policy types.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invalidCauses, useTestServer } from '../../helpers/server.ts';

const s = useTestServer();

const NP = '/apis/networking.k8s.io/v1/namespaces/default/networkpolicies';
const policy = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name }, spec: { podSelector: {}, ...spec } });

test('network policies: ports, peers, ipBlocks and policy types in kube words; nothing refused is written', async () => {
  assert.deepEqual(
    await invalidCauses(s, 'POST', NP, policy('a', {
      podSelector: { matchExpressions: [{ key: 'app', operator: 'In' }] },
      ingress: [
        {
          ports: [{ protocol: 'ICMP', port: 80 }, { port: 8000, endPort: 7000 }, { port: 'http', endPort: 90 }, { endPort: 90 }, { port: 70000 }],
          from: [{}, { ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16', '192.168.0.0/16', '10.0.0.0/8', 'x'] }, podSelector: {} }, { ipBlock: { cidr: '10.0.0.0/33' } }],
        },
      ],
      egress: [{ to: [{ namespaceSelector: { matchLabels: { team: 'a' } }, podSelector: { matchLabels: { app: 'db' } } }] }],
      policyTypes: ['Ingress', 'Sideways'],
    })),
    [
      ['spec.podSelector.matchExpressions[0].values', "Required value: must be specified when `operator` is 'In' or 'NotIn'"],
      ['spec.ingress[0].ports[0].protocol', 'Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"'],
      ['spec.ingress[0].ports[1].endPort', 'Invalid value: 8000: must be greater than or equal to `port`'],
      ['spec.ingress[0].ports[2].endPort', 'Invalid value: 90: may not be specified when `port` is non-numeric'],
      ['spec.ingress[0].ports[3].endPort', 'Invalid value: 90: may not be specified when `port` is not specified'],
      ['spec.ingress[0].ports[4].port', 'Invalid value: 70000: must be between 1 and 65535, inclusive'],
      ['spec.ingress[0].from[0]', 'Required value: must specify a peer'],
      ['spec.ingress[0].from[1].ipBlock.except[1]', 'Invalid value: "192.168.0.0/16": must be a strict subset of `cidr`'],
      ['spec.ingress[0].from[1].ipBlock.except[2]', 'Invalid value: "10.0.0.0/8": must be a strict subset of `cidr`'],
      ['spec.ingress[0].from[1].ipBlock.except[3]', 'Invalid value: "x": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'],
      ['spec.ingress[0].from[1]', 'Forbidden: may not specify both ipBlock and another peer'],
      ['spec.ingress[0].from[2].ipBlock.cidr', 'Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'],
      ['spec.policyTypes[1]', 'Unsupported value: "Sideways": supported values: "Ingress", "Egress"'],
    ],
  );
  assert.deepEqual(await invalidCauses(s, 'POST', NP, policy('b', { policyTypes: ['Ingress', 'Egress', 'Ingress'] })), [
    ['spec.policyTypes', 'Invalid value: []networking.PolicyType{"Ingress", "Egress", "Ingress"}: may not specify more than two policyTypes'],
  ]);
  for (const name of ['a', 'b']) assert.equal((await s.request('GET', `${NP}/${name}`)).status, 404);
  // A typical policy: pod and namespace selectors together, an IPv6 block with a hole, a port range.
  const ok = await s.request('POST', NP, {
    body: policy('ok', {
      podSelector: { matchLabels: { app: 'web' } },
      ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'a' } }, podSelector: {} }, { ipBlock: { cidr: '2001:db8::/32', except: ['2001:db8:1::/48'] } }], ports: [{ port: 8000, endPort: 8080 }] }],
      policyTypes: ['Ingress'],
    }),
  });
  assert.equal(ok.status, 201, ok.text);
});
