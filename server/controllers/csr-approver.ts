// The CSR approver kube-controller-manager runs (`csrapproving`,
// pkg/controller/certificates/approver/sarapprove.go): a pending CertificateSigningRequest for
// kubernetes.io/kube-apiserver-client-kubelet that is a kubelet client certificate
// (certificates.IsKubeletClientCSR: O=[system:nodes], CN system:node:<name>, no SANs, kube's
// usages) is approved when its requester — spec.username, uid, groups and extra, asked of the
// same authorizer chain the server uses, as kube's SubjectAccessReview would — may `create`
// certificatesigningrequests/selfnodeclient (a node renewing its own certificate: the CN is the
// requester's name) or certificatesigningrequests/nodeclient (a bootstrap token making one for a
// new node) in certificates.k8s.io. The Approved condition carries kube's reason and message and
// goes through /approval like any client's; the signer (csr-signer.ts) then issues it. A request
// it recognizes but may not approve is looked at again with the controllers' backoff (kube's
// ignorable error), so that a permission granted later still approves it. Approved, Denied and
// issued requests, and every other kind, are left alone.
import type { GenericStore } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { EventLog } from '../storage/log/event-log.ts';
import type { UserInfo } from '../authentication/user.ts';
import { authorize, type Authorizer } from '../authorization/authorizer.ts';
import { ApiError } from '../errors.ts';
import { CsrQueueController, KUBELET_CLIENT_SIGNER, kubeletClientError, requestView, type RequestView } from './csr-signer.ts';
import { realClock, type Clock, type HandlerResult } from './workqueue.ts';
import { controllerWriteContext } from './queue-controller.ts';

/** kube's reason on the Approved condition it sets. */
export const AUTO_APPROVED_REASON = 'AutoApproved';

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}
interface Csr {
  metadata: { name: string };
  spec?: { request?: string; signerName?: string; usages?: string[]; username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  status?: { conditions?: Condition[]; certificate?: string };
}

/** One kind of request the approver knows, and the permission that lets its requester have it approved. */
interface Recognizer {
  recognize(csr: Csr, req: RequestView): boolean;
  subresource: string;
  message: string;
}

/** isNodeClientCert: the kubelet client signer, and a request that signer's rules accept. */
function isNodeClientCert(csr: Csr, req: RequestView): boolean {
  return csr.spec?.signerName === KUBELET_CLIENT_SIGNER && kubeletClientError(req, csr.spec.usages ?? []) === undefined;
}

/** kube's recognizers, in its order: a node's own renewal first. */
const RECOGNIZERS: Recognizer[] = [
  {
    recognize: (csr, req) => csr.spec?.username === req.commonName && isNodeClientCert(csr, req),
    subresource: 'selfnodeclient',
    message: 'Auto approving self kubelet client certificate after SubjectAccessReview.',
  },
  { recognize: isNodeClientCert, subresource: 'nodeclient', message: 'Auto approving kubelet client certificate after SubjectAccessReview.' },
];

/** GetCertApprovalCondition: an Approved or Denied condition, whatever its status (as kube reads it). */
const decided = (csr: Csr) => (csr.status?.conditions ?? []).some((c) => c?.type === 'Approved' || c?.type === 'Denied');

export class CsrApprovingController extends CsrQueueController {
  constructor(
    store: GenericStore,
    catalog: ResourceCatalog,
    log: EventLog,
    /** The server's authorizer chain: what a SubjectAccessReview would ask. */
    private readonly authorizers: readonly Authorizer[],
    clock: Clock = realClock,
  ) {
    // One worker: requests are looked at in the order they were written.
    super(store, catalog, log, { name: 'csr approving', clock, workers: 1 });
  }

  /** The SubjectAccessReview kube's approver makes, as the request's requester. */
  private async allowed(csr: Csr, subresource: string): Promise<boolean> {
    const spec = csr.spec ?? {};
    const user: UserInfo = { name: spec.username ?? '', uid: spec.uid || undefined, groups: [...(spec.groups ?? [])], extra: spec.extra };
    const { decision } = await authorize(this.authorizers, {
      user,
      verb: 'create',
      isResourceRequest: true,
      path: '',
      apiGroup: 'certificates.k8s.io',
      apiVersion: '',
      resource: 'certificatesigningrequests',
      subresource,
      namespace: '',
      name: '',
    });
    return decision === 'allow';
  }

  protected async sync(name: string): Promise<HandlerResult> {
    const csr = this.store.tryGet(this.info, '', name) as Csr | undefined;
    if (!csr || csr.status?.certificate || decided(csr)) return;
    let req: RequestView;
    try {
      req = requestView(Buffer.from(csr.spec?.request ?? '', 'base64').toString('latin1'));
    } catch {
      return 'retry'; // (kube: "unable to parse csr", retried)
    }
    let recognized = false;
    for (const r of RECOGNIZERS) {
      if (!r.recognize(csr, req)) continue;
      recognized = true;
      if (!(await this.allowed(csr, r.subresource))) continue;
      const conditions = [...(csr.status?.conditions ?? []), { type: 'Approved', status: 'True', reason: AUTO_APPROVED_REASON, message: r.message }];
      const ctx = controllerWriteContext('hearth-csr-approver');
      try {
        await this.store.update(this.info, '', name, { ...csr, status: { ...(csr.status ?? {}), conditions } }, ctx, 'approval');
      } catch (e) {
        if (e instanceof ApiError && e.code === 404) return;
        if (e instanceof ApiError && e.code === 409) return 'retry'; // changed meanwhile: look again
        throw e;
      }
      return;
    }
    // Recognized, but the requester may not have it approved (yet): kube's ignorable error, retried.
    return recognized ? 'retry' : undefined;
  }
}
