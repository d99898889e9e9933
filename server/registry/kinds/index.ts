// Importing this registers every per-kind strategy.
import './core/namespaces.ts';
import '../crd/strategy.ts';
import './core/pods/strategy.ts';
import './batch/index.ts';
import './apps/index.ts';
import './core/config.ts';
import './rbac/index.ts';
import './core/persistentvolumeclaims.ts';
import './networking/ingresses.ts';
import './autoscaling/horizontalpodautoscalers/strategy.ts';
import './policy/index.ts';
import './networking/networkpolicies.ts';
import './events/strategy.ts';
import './core/nodes.ts';
