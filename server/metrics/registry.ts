// The server's Prometheus registry (prom-client): one per running server, so that two servers in
// one process (tests) count apart. Every floor registers its metrics on the registry it is given,
// under kube-apiserver's names; hearth's own storage metrics take the `hearth_` prefix.
import { Registry, collectDefaultMetrics } from 'prom-client';

export type MetricsRegistry = Registry;

/** A new registry with the process and Node.js defaults (process_*, nodejs_*), as kube's has Go's. */
export function newMetricsRegistry(): MetricsRegistry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}
