// The in-process signers for kubernetes.io/kube-apiserver-client, kube-apiserver-client-kubelet
// and kubelet-serving, as kube-controller-manager's csrsigning controllers run them
// (pkg/controller/certificates/signer/signer.go): an approved CertificateSigningRequest for one
// of them, not Failed and not yet issued, gets status.certificate signed by the cluster CA
// (authority.PermissiveSigningPolicy: the request's subject and SANs, the usages asked for, 5
// minutes' backdating, the requested duration within 10 minutes and --cluster-signing-duration).
// A request that breaks its signer's rules (validAPIServerClientUsages, and
// pkg/apis/certificates' ValidateKubeletClientCSR and ValidateKubeletServingCSR) gets a Failed
// condition (SignerValidationFailure) with kube's message instead. Other signers' requests are
// left alone. Each request is a key of the work queue; it writes through /status like any client.
import type { GenericStore } from '../registry/store.ts';
import { qualifiedResourceOf } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { EventLog } from '../storage/log/event-log.ts';
import type { LogEvent } from '../storage/log/types.ts';
import type { ResourceInfo } from '../schema/types.ts';
import { ApiError } from '../errors.ts';
import { nowTimestamp } from '../registry/now.ts';
import { signCertificateRequest, x509, type CaPair } from '../pki/certificates.ts';
import { realClock, type Clock, type HandlerResult } from './workqueue.ts';
import { QueueController, controllerWriteContext, type QueueControllerOptions } from './queue-controller.ts';

export const KUBE_APISERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';
export const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const KUBELET_SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
/** kube-controller-manager's --cluster-signing-duration default (8760h). */
export const DEFAULT_SIGNING_DURATION_MS = 8760 * 3600 * 1000;
/** The shortest certificate the signer issues, whatever expirationSeconds asks (twice the backdating). */
const MIN_DURATION_MS = 10 * 60 * 1000;
const WORKERS = 2;

interface Condition {
  type?: string;
  status?: string;
}
interface Csr {
  metadata: { name: string; resourceVersion?: string };
  spec?: { request?: string; signerName?: string; usages?: string[]; expirationSeconds?: number };
  status?: { conditions?: Condition[]; certificate?: string };
}

const hasTrue = (csr: Csr, type: string) => (csr.status?.conditions ?? []).some((c) => c?.type === type && c?.status === 'True');

/** validAPIServerClientUsages: undefined, or why these usages do not fit a client certificate. */
export function apiServerClientUsagesError(usages: readonly string[]): string | undefined {
  let clientAuth = false;
  for (const u of usages) {
    if (u === 'client auth') clientAuth = true;
    else if (u !== 'digital signature' && u !== 'key encipherment') return `invalid usage for client certificate: ${u}`;
  }
  return clientAuth ? undefined : 'missing required usage for client certificate: client auth';
}

/** What a signer's rules read of a request: its subject and subjectAltNames. */
export interface RequestView {
  organizations: string[];
  commonName: string;
  dns: number;
  ip: number;
  email: number;
  uri: number;
}

export function requestView(pem: string): RequestView {
  const req = new x509.Pkcs10CertificateRequest(pem);
  const cns = req.subjectName.getField('CN');
  const sanExtension = req.getExtension('2.5.29.17'); // subjectAltName
  const names = sanExtension ? new x509.SubjectAlternativeNameExtension(sanExtension.rawData).names.items : [];
  const count = (type: string) => names.filter((n) => n.type === type).length;
  // (Go's pkix.Name keeps the last CN it meets)
  return { organizations: req.subjectName.getField('O'), commonName: cns[cns.length - 1] ?? '', dns: count('dns'), ip: count('ip'), email: count('email'), uri: count('url') };
}

const sameSet = (a: readonly string[], b: readonly string[]) => new Set(a).size === b.length && b.every((x) => a.includes(x));
const KUBELET_CLIENT_USAGES = ['client auth', 'digital signature', 'key encipherment'];
const KUBELET_SERVING_USAGES = ['digital signature', 'key encipherment', 'server auth'];

/** ValidateKubeletClientCSR. */
export function kubeletClientError(req: RequestView, usages: readonly string[]): string | undefined {
  if (req.organizations.length !== 1 || req.organizations[0] !== 'system:nodes') return 'subject organization is not system:nodes';
  if (req.dns) return 'DNS subjectAltNames are not allowed';
  if (req.email) return 'Email subjectAltNames are not allowed';
  if (req.ip) return 'IP subjectAltNames are not allowed';
  if (req.uri) return 'URI subjectAltNames are not allowed';
  if (!req.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  if (!sameSet(usages, KUBELET_CLIENT_USAGES) && !sameSet(usages, ['client auth', 'digital signature'])) return `usages did not match [${KUBELET_CLIENT_USAGES.join(' ')}]`;
  return undefined;
}

/** ValidateKubeletServingCSR. */
export function kubeletServingError(req: RequestView, usages: readonly string[]): string | undefined {
  if (req.organizations.length !== 1 || req.organizations[0] !== 'system:nodes') return 'subject organization is not system:nodes';
  if (!req.dns && !req.ip) return 'DNS or IP subjectAltName is required';
  if (req.email) return 'Email subjectAltNames are not allowed';
  if (req.uri) return 'URI subjectAltNames are not allowed';
  if (!sameSet(usages, KUBELET_SERVING_USAGES) && !sameSet(usages, ['digital signature', 'server auth'])) return `usages did not match [${KUBELET_SERVING_USAGES.join(' ')}]`;
  if (!req.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  return undefined;
}

/** Each signer's rules: why it refuses a request, or undefined. */
const SIGNER_RULES: Record<string, (req: RequestView, usages: readonly string[]) => string | undefined> = {
  [KUBE_APISERVER_CLIENT_SIGNER]: (_req, usages) => apiServerClientUsagesError(usages),
  [KUBELET_CLIENT_SIGNER]: kubeletClientError,
  [KUBELET_SERVING_SIGNER]: kubeletServingError,
};

/** signer.duration: the requested duration, within [10m, the signing duration]. */
function certificateTtlMs(expirationSeconds: number | undefined, maxMs: number): number {
  if (expirationSeconds === undefined) return maxMs;
  return Math.max(MIN_DURATION_MS, Math.min(maxMs, expirationSeconds * 1000));
}

/**
 * A controller keyed by CertificateSigningRequest name: every CSR written (not deleted) is looked
 * at, and every one stored at start (the signer and the approver watch the same informer in kube).
 */
export abstract class CsrQueueController extends QueueController {
  protected readonly info: ResourceInfo;
  private readonly res: string;

  constructor(
    protected readonly store: GenericStore,
    catalog: ResourceCatalog,
    log: EventLog,
    opts: QueueControllerOptions<string>,
  ) {
    super(log, opts);
    this.info = catalog.lookup('certificates.k8s.io', 'v1', 'certificatesigningrequests')!;
    this.res = qualifiedResourceOf(this.info);
  }

  protected onCommit(events: readonly LogEvent[]): void {
    for (const e of events) if (e.key.res === this.res && e.type !== 'DELETED') this.queue.add(e.key.name);
  }

  /** The requests already stored. */
  protected enqueueExisting(): void {
    for (const csr of this.store.listReadable(this.info, undefined)) this.queue.add(csr.metadata.name);
  }
}

export class CsrSigningController extends CsrQueueController {
  constructor(
    store: GenericStore,
    catalog: ResourceCatalog,
    log: EventLog,
    private readonly ca: CaPair,
    private readonly signingDurationMs: number = DEFAULT_SIGNING_DURATION_MS,
    clock: Clock = realClock,
  ) {
    super(store, catalog, log, { name: 'csr signing', clock, workers: WORKERS });
  }

  protected async sync(name: string): Promise<HandlerResult> {
    const csr = this.store.tryGet(this.info, '', name) as Csr | undefined;
    if (!csr || !hasTrue(csr, 'Approved') || hasTrue(csr, 'Failed') || csr.status?.certificate) return;
    const rules = SIGNER_RULES[csr.spec?.signerName ?? ''];
    if (!rules) return;
    const status = { ...(csr.status ?? {}) };
    const pem = Buffer.from(csr.spec?.request ?? '', 'base64').toString('latin1');
    const refusal = rules(requestView(pem), csr.spec?.usages ?? []);
    if (refusal) {
      status.conditions = [...(status.conditions ?? []), { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: refusal, lastUpdateTime: nowTimestamp() } as Condition];
    } else {
      const certificate = await signCertificateRequest(this.ca, pem, { usages: csr.spec?.usages ?? [], ttlMs: certificateTtlMs(csr.spec?.expirationSeconds, this.signingDurationMs) });
      status.certificate = Buffer.from(certificate).toString('base64');
    }
    const ctx = controllerWriteContext('hearth-csr-signer');
    try {
      await this.store.update(this.info, '', name, { ...csr, status }, ctx, 'status');
    } catch (e) {
      if (e instanceof ApiError && e.code === 404) return;
      if (e instanceof ApiError && e.code === 409) return 'retry'; // changed meanwhile: look again
      throw e;
    }
  }
}
