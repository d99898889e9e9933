// CertificateApproval and CertificateSigning (kube's plugin/pkg/admission/certificates/approval
// and signing, on by default; validating): approving or denying a CertificateSigningRequest
// (an update of its approval subresource) needs the `approve` verb, and issuing it or changing
// its conditions (an update of status that changes status.certificate or status.conditions)
// the `sign` verb, on the `signers` resource of certificates.k8s.io named by the request's
// signerName, or by its domain and `/*` (kube's pkg/certificates/authorization
// IsAuthorizedForSignerName). The signerName is read from the stored request, so that an update
// which also changes it is judged by the one it had. The authorizer chain is asked through the
// lookup server.ts passes.
import type { AdmissionAttributes, AdmissionPlugin } from './types.ts';
import type { UserInfo } from '../authentication/user.ts';
import { newForbidden } from './forbidden.ts';
import { rec, str } from './json-fields.ts';
import { semanticEqual } from '../util/json.ts';

export const CERTIFICATE_APPROVAL = 'CertificateApproval';
export const CERTIFICATE_SIGNING = 'CertificateSigning';

/**
 * Whether the authorizer chain allows `user` the verb on resource `signers` (group
 * certificates.k8s.io, any version) named `name`.
 */
export type SignerAuthorizer = (user: UserInfo, verb: 'approve' | 'sign', name: string) => boolean | Promise<boolean>;

/** IsAuthorizedForSignerName: the signer itself, else its domain's wildcard ("example.com/*"). */
export function isAuthorizedForSignerName(authorize: SignerAuthorizer, user: UserInfo, verb: 'approve' | 'sign', signerName: string): boolean | Promise<boolean> {
  const wildcard = () => authorize(user, verb, `${signerName.split('/')[0]}/*`);
  const exact = authorize(user, verb, signerName);
  if (exact instanceof Promise) return exact.then((allowed) => allowed || wildcard());
  return exact || wildcard();
}

const isCsr = (a: AdmissionAttributes) => a.info.resource === 'certificatesigningrequests' && a.info.group === 'certificates.k8s.io' && a.operation === 'UPDATE';

function check(authorize: SignerAuthorizer, a: AdmissionAttributes, verb: 'approve' | 'sign'): void | Promise<void> {
  const signerName = str(rec(rec(a.oldObject).spec).signerName);
  const decide = (allowed: boolean) => {
    if (!allowed) throw newForbidden(a, `user not permitted to ${verb} requests with signerName ${JSON.stringify(signerName)}`);
  };
  const allowed = isAuthorizedForSignerName(authorize, a.user, verb, signerName);
  return allowed instanceof Promise ? allowed.then(decide) : decide(allowed);
}

export function certificateApproval(authorize: SignerAuthorizer): AdmissionPlugin {
  return {
    name: CERTIFICATE_APPROVAL,
    validate(a) {
      if (a.subresource !== 'approval' || !isCsr(a)) return;
      return check(authorize, a, 'approve');
    },
  };
}

export function certificateSigning(authorize: SignerAuthorizer): AdmissionPlugin {
  return {
    name: CERTIFICATE_SIGNING,
    validate(a) {
      if (a.subresource !== 'status' || !isCsr(a)) return;
      // Only a change of the certificate or of the conditions is signing.
      const [status, oldStatus] = [rec(rec(a.object).status), rec(rec(a.oldObject).status)];
      if (str(status.certificate) === str(oldStatus.certificate) && semanticEqual(status.conditions, oldStatus.conditions)) return;
      return check(authorize, a, 'sign');
    },
  };
}
