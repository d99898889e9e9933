// PodDisruptionBudgets as kube validates them: one of minAvailable and maxUnavailable, each a
// non-negative number or a percentage up to 100%, a well-formed selector, a known eviction policy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invalidCauses, useTestServer } from '../../helpers/server.ts';
import { LABEL_VALUE, QUALIFIED_NAME_PART } from '../../helpers/kube-messages.ts';

const s = useTestServer();

const PDBS = '/apis/policy/v1/namespaces/default/poddisruptionbudgets';
const pdb = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name }, spec: { selector: { matchLabels: { app: 'web' } }, ...spec } });

test('disruption budgets: one bound, in range; selector requirements; eviction policy', async () => {
  assert.deepEqual(await invalidCauses(s, 'POST', PDBS, pdb('a', { minAvailable: 1, maxUnavailable: '150%', unhealthyPodEvictionPolicy: 'Never' })), [
    ['spec', 'Invalid value: policy.PodDisruptionBudgetSpec{...}: minAvailable and maxUnavailable cannot be both set'],
    ['spec.maxUnavailable', 'Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%'],
    ['spec.unhealthyPodEvictionPolicy', 'Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"'],
  ]);
  assert.deepEqual(await invalidCauses(s, 'POST', PDBS, pdb('b', { minAvailable: -1 })), [['spec.minAvailable', 'Invalid value: -1: must be greater than or equal to 0']]);
  assert.deepEqual(await invalidCauses(s, 'POST', PDBS, pdb('c', { maxUnavailable: 'half' })), [
    ['spec.maxUnavailable', `Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"half"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`],
  ]);
  assert.deepEqual(
    await invalidCauses(s, 'POST', PDBS, pdb('d', {
      minAvailable: '50%',
      selector: {
        matchLabels: { 'bad key!': 'v' },
        matchExpressions: [
          { key: 'tier', operator: 'In', values: [] },
          { key: 'tier', operator: 'Exists', values: ['x'] },
          { key: 'tier', operator: 'Near', values: ['not valid!'] },
        ],
      },
    })),
    [
      ['spec.selector.matchLabels', `Invalid value: "bad key!": ${QUALIFIED_NAME_PART}`],
      ['spec.selector.matchExpressions[0].values', "Required value: must be specified when `operator` is 'In' or 'NotIn'"],
      ['spec.selector.matchExpressions[1].values', "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"],
      ['spec.selector.matchExpressions[2].operator', 'Invalid value: "Near": not a valid selector operator'],
      ['spec.selector.matchExpressions[2].values[0]', `Invalid value: "not valid!": ${LABEL_VALUE}`],
    ],
  );
  for (const name of ['a', 'b', 'c', 'd']) assert.equal((await s.request('GET', `${PDBS}/${name}`)).status, 404);
  const ok = await s.request('POST', PDBS, { body: pdb('ok', { maxUnavailable: '25%', unhealthyPodEvictionPolicy: 'AlwaysAllow' }) });
  assert.equal(ok.status, 201, ok.text);
  // The spec may change.
  const changed = await s.request('PATCH', `${PDBS}/ok`, { body: { spec: { maxUnavailable: 2 } }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.equal(changed.status, 200, changed.text);
});
