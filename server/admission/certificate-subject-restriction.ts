// CertificateSubjectRestriction (kube's plugin/pkg/admission/certificates/subjectrestriction, on
// by default): a CertificateSigningRequest for kubernetes.io/kube-apiserver-client may not ask
// for the system:masters group (an O of its subject), which no authorizer could ever restrict.
import type { AdmissionPlugin } from './types.ts';
import { forbidden } from '../errors.ts';
import { parseCsr } from '../util/pkcs10.ts';

const KUBE_APISERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';

interface CsrView {
  spec?: { signerName?: unknown; request?: unknown };
}

export function certificateSubjectRestriction(): AdmissionPlugin {
  return {
    name: 'CertificateSubjectRestriction',
    validate(a) {
      const { info } = a;
      if (a.operation !== 'CREATE' || info.group !== 'certificates.k8s.io' || info.resource !== 'certificatesigningrequests' || a.subresource) return;
      const spec = (a.object as CsrView | undefined)?.spec;
      if (spec?.signerName !== KUBE_APISERVER_CLIENT_SIGNER) return;
      const parsed = parseCsr(Buffer.from(typeof spec.request === 'string' ? spec.request : '', 'base64'));
      if (typeof parsed === 'string') throw forbidden(info.group, info.resource, a.name, `failed to parse CSR: ${parsed}`);
      if (parsed.organizations.includes('system:masters')) {
        throw forbidden(info.group, info.resource, a.name, `use of ${KUBE_APISERVER_CLIENT_SIGNER} signer with system:masters group is not allowed`);
      }
    },
  };
}
