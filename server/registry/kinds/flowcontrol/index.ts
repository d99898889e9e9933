// flowcontrol.apiserver.k8s.io: FlowSchemas' and PriorityLevelConfigurations' defaults; their
// validation is validation.ts.
import { setPtr, setZero, type Defaulters } from '../../defaulting.ts';
export { flowSchemaStrategy, priorityLevelConfigurationStrategy } from './validation.ts';

/** FlowSchemas and priority levels, by definition. */
export const flowControlDefaults: Defaulters = {
  'io.k8s.api.flowcontrol.v1.FlowSchemaSpec': (s) => setZero(s, 'matchingPrecedence', 1000),
  'io.k8s.api.flowcontrol.v1.ExemptPriorityLevelConfiguration': (e) => {
    setPtr(e, 'nominalConcurrencyShares', 0);
    setPtr(e, 'lendablePercent', 0);
  },
  'io.k8s.api.flowcontrol.v1.LimitedPriorityLevelConfiguration': (l) => {
    setPtr(l, 'nominalConcurrencyShares', 30);
    setPtr(l, 'lendablePercent', 0);
  },
  'io.k8s.api.flowcontrol.v1.QueuingConfiguration': (q) => {
    setZero(q, 'handSize', 8);
    setZero(q, 'queues', 64);
    setZero(q, 'queueLengthLimit', 50);
  },
};
