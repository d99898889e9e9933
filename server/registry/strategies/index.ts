// Importing this registers every per-kind strategy.
import './namespaces.ts';
import './crds.ts';
import './pods.ts';
import './jobs.ts';
import './workloads.ts';
import './config.ts';
import './rbac.ts';
import './storage.ts';
import './ingress.ts';
import './autoscaling.ts';
import './policy.ts';
import './network-policy.ts';
import './events.ts';
import './nodes.ts';
