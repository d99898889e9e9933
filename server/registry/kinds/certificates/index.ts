// certificates.k8s.io: its kinds' fields for field selectors (spec.signerName, and a
// PodCertificateRequest's pod and node).
import { stringField as s, type KindFields } from '../../strategy.ts';

export const certificateSigningRequestFieldSet: KindFields = {
  accepted: ['metadata.name', 'spec.signerName'],
  fields: (o) => ({ 'spec.signerName': s(o?.spec?.signerName) }),
};

export const clusterTrustBundleFieldSet: KindFields = {
  accepted: ['metadata.name', 'spec.signerName'],
  fields: (o) => ({ 'spec.signerName': s(o?.spec?.signerName) }),
};

export const podCertificateRequestFieldSet: KindFields = {
  accepted: ['metadata.name', 'spec.signerName', 'spec.podName', 'spec.nodeName'],
  fields: (o) => ({ 'spec.signerName': s(o?.spec?.signerName), 'spec.podName': s(o?.spec?.podName), 'spec.nodeName': s(o?.spec?.nodeName) }),
};
