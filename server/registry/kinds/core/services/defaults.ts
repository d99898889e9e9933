// Defaults of Services (SetDefaults_Service): session affinity, type, ports' protocol and
// target port, traffic policies.
import { absent, CORE, list, objects, protocolTCP, setPtr, setZero, struct, zero, type Defaulters } from '../../../defaulting.ts';
import { isPlainObject } from '../../../../util/json.ts';
import type { Obj } from '../../../strategy.ts';

function service(svc: Obj): void {
  const spec = struct(svc, 'spec');
  if (!spec) return;
  setZero(spec, 'sessionAffinity', 'None');
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
  if (spec.sessionAffinity === 'ClientIP') {
    const cfg = spec.sessionAffinityConfig;
    if (!isPlainObject(cfg) || !isPlainObject(cfg.clientIP) || absent(cfg.clientIP.timeoutSeconds)) {
      spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 10800 } };
    }
  }
  setZero(spec, 'type', 'ClusterIP');
  for (const p of objects(spec.ports)) {
    setZero(p, 'protocol', 'TCP');
    if (zero(p.targetPort)) p.targetPort = p.port;
  }
  const type = spec.type;
  const externallyAccessible = type === 'LoadBalancer' || type === 'NodePort' || (type === 'ClusterIP' && list(spec.externalIPs).length > 0);
  if (externallyAccessible) setZero(spec, 'externalTrafficPolicy', 'Cluster');
  if (type === 'NodePort' || type === 'LoadBalancer' || type === 'ClusterIP') setPtr(spec, 'internalTrafficPolicy', 'Cluster');
  if (type === 'LoadBalancer') {
    setPtr(spec, 'allocateLoadBalancerNodePorts', true);
    const ingress = isPlainObject(svc.status) && isPlainObject(svc.status.loadBalancer) ? objects(svc.status.loadBalancer.ingress) : [];
    for (const ing of ingress) if (!zero(ing.ip)) setPtr(ing, 'ipMode', 'VIP');
  }
}

/** Services and their ports, by definition. */
export const serviceDefaults: Defaulters = {
  [`${CORE}Service`]: service,
  [`${CORE}ServicePort`]: protocolTCP,
};
