// The maintenance pass's decision for one object (kube's ensurer ReviseIfNeeded,
// controllers/apf-configuration.ts): when a spec is restored and what the autoupdate-spec
// annotation becomes, for mandatory and suggested objects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reviseIfNeeded } from '../../../server/controllers/apf-configuration.ts';
import { MANDATORY_PRIORITY_LEVELS, SUGGESTED_FLOW_SCHEMAS, SUGGESTED_PRIORITY_LEVELS } from '../../../server/flowcontrol/config/bootstrap.ts';

const KEY = 'apf.kubernetes.io/autoupdate-spec';
const workloadLow = SUGGESTED_PRIORITY_LEVELS.find((p) => p.metadata.name === 'workload-low')!;
const exempt = MANDATORY_PRIORITY_LEVELS.find((p) => p.metadata.name === 'exempt')!;
const catchAll = MANDATORY_PRIORITY_LEVELS.find((p) => p.metadata.name === 'catch-all')!;
const stored = <T extends { metadata: object }>(o: T, annotations: Record<string, string> | undefined, generation: number, edit?: (x: T) => void) => {
  const c = structuredClone(o) as T & { metadata: { annotations?: Record<string, string>; generation?: number } };
  c.metadata.annotations = annotations;
  c.metadata.generation = generation;
  edit?.(c);
  return c;
};
const edited = (pl: { spec: { limited?: { nominalConcurrencyShares?: number } } }) => (pl.spec.limited!.nominalConcurrencyShares = 7);

test('an object as kube made it needs nothing', () => {
  assert.equal(reviseIfNeeded('PriorityLevelConfiguration', 'suggested', stored(workloadLow, { [KEY]: 'true' }, 1), workloadLow), undefined);
  assert.equal(reviseIfNeeded('FlowSchema', 'suggested', stored(SUGGESTED_FLOW_SCHEMAS[0], { [KEY]: 'true' }, 3), SUGGESTED_FLOW_SCHEMAS[0]), undefined);
});

test('suggested: "true" (any of Go\'s spellings) restores the spec; "false" keeps it', () => {
  for (const t of ['true', 'True', 't', '1']) {
    const r = reviseIfNeeded('PriorityLevelConfiguration', 'suggested', stored(workloadLow, { [KEY]: t }, 4, edited), workloadLow);
    assert.equal((r?.spec as typeof workloadLow.spec).limited?.nominalConcurrencyShares, 100, t);
    // Go's ParseBool reads each as true: the annotation is left as it is.
    assert.equal(r?.metadata.annotations?.[KEY], t);
  }
  assert.equal(reviseIfNeeded('PriorityLevelConfiguration', 'suggested', stored(workloadLow, { [KEY]: 'false' }, 4, edited), workloadLow), undefined);
});

test('suggested without a boolean annotation: generation 1 is kube\'s to update, later ones the operator\'s', () => {
  const fresh = reviseIfNeeded('PriorityLevelConfiguration', 'suggested', stored(workloadLow, undefined, 1, edited), workloadLow);
  assert.equal(fresh?.metadata.annotations?.[KEY], 'true');
  assert.equal((fresh?.spec as typeof workloadLow.spec).limited?.nominalConcurrencyShares, 100);
  const changed = reviseIfNeeded('PriorityLevelConfiguration', 'suggested', stored(workloadLow, { [KEY]: 'yes' }, 2, edited), workloadLow);
  assert.equal(changed?.metadata.annotations?.[KEY], 'false');
  assert.equal((changed?.spec as typeof workloadLow.spec).limited?.nominalConcurrencyShares, 7, 'the spec is kept');
});

test('mandatory: always restored and annotated "true"; the exempt level keeps its tuned exempt fields', () => {
  const r = reviseIfNeeded('PriorityLevelConfiguration', 'mandatory', stored(catchAll, { [KEY]: 'false' }, 5, (c) => (c.spec.limited!.nominalConcurrencyShares = 50)), catchAll);
  assert.equal(r?.metadata.annotations?.[KEY], 'true');
  assert.equal((r?.spec as typeof catchAll.spec).limited?.nominalConcurrencyShares, 5);
  const tuned = stored(exempt, { [KEY]: 'true' }, 2, (c) => (c.spec.exempt = { nominalConcurrencyShares: 10, lendablePercent: 20 }));
  assert.equal(reviseIfNeeded('PriorityLevelConfiguration', 'mandatory', tuned, exempt), undefined);
  const annotatedFalse = reviseIfNeeded('PriorityLevelConfiguration', 'mandatory', { ...tuned, metadata: { ...tuned.metadata, annotations: { [KEY]: 'false' } } }, exempt);
  assert.deepEqual(annotatedFalse?.spec, tuned.spec, 'only the annotation changes');
  assert.equal(annotatedFalse?.metadata.annotations?.[KEY], 'true');
});
