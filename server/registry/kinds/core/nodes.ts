// Nodes: a kubelet registers its Node with the status it reports, so a create keeps the status
// it is given (kube's nodeStrategy.PrepareForCreate clears nothing).
import { registerStrategy } from '../../strategy.ts';

registerStrategy('', 'nodes', { statusOnCreate: true });
