// Flow control on the request path, as server.ts builds it from the flags: API Priority and
// Fairness (the dispatcher over apf-config's FlowControlConfiguration) or, with
// --enable-priority-and-fairness=false, the two max-inflight limits. app.ts puts its middleware at
// the flow-control slot and serves the dispatcher's debug dumps.
import type { EventLog } from '../../storage/log/event-log.ts';
import type { MetricsRegistry } from '../../metrics/registry.ts';
import type { FlowControlConfiguration } from '../types.ts';
import { DEFAULT_FLOW_CONTROL_OPTIONS, type FlowControlOptions } from '../options.ts';
import { Dispatcher } from './dispatcher.ts';
import { FlowControlMetrics } from './metrics.ts';
import { ObjectCounter } from './object-count.ts';
import { maxInFlightLimit, priorityAndFairness, type FlowControlContext } from './filter.ts';

export { deferWatchInitialization, type FlowControlContext } from './filter.ts';
export type { Dispatcher } from './dispatcher.ts';

export interface FlowControl {
  /** The filter, given how a request's query is read (http's queryOf). */
  middleware<C extends FlowControlContext>(query: (ctx: C) => URLSearchParams): (ctx: C, next: () => Promise<unknown>) => Promise<void>;
  /** APF's dispatcher (its debug dumps); undefined when APF is off. */
  dispatcher: Dispatcher | undefined;
  stop(): void;
}

export interface FlowControlDeps {
  /** apf-config's configuration; undefined when APF is off. */
  config: FlowControlConfiguration | undefined;
  options: FlowControlOptions | undefined;
  metrics: MetricsRegistry;
  eventLog: EventLog;
  log?: (line: string) => void;
}

export function newFlowControl(deps: FlowControlDeps): FlowControl {
  const options = deps.options ?? DEFAULT_FLOW_CONTROL_OPTIONS;
  const config = deps.config;
  if (!options.enablePriorityAndFairness || !config) {
    const filter = maxInFlightLimit(options.maxRequestsInflight, options.maxMutatingRequestsInflight);
    return { middleware: () => filter, dispatcher: undefined, stop() {} };
  }
  const counter = new ObjectCounter(deps.eventLog);
  const dispatcher = new Dispatcher(config, {
    serverConcurrencyLimit: options.maxRequestsInflight + options.maxMutatingRequestsInflight,
    metrics: new FlowControlMetrics(deps.metrics),
    objectCount: (resource) => counter.count(resource),
    log: deps.log,
  });
  dispatcher.start();
  return {
    middleware: (query) => priorityAndFairness({ config, dispatcher, requestTimeoutMs: options.requestTimeoutMs, query }),
    dispatcher,
    stop: () => dispatcher.stop(),
  };
}
