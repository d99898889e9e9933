// Nodes: a kubelet registers its Node with the status it reports, so a create keeps the status
// it is given (kube's nodeStrategy.PrepareForCreate clears nothing).
import type { Strategy } from '../../strategy.ts';

export const nodeStrategy: Strategy = { statusOnCreate: true };
