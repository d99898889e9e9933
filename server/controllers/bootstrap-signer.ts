// The `cluster-info` ConfigMap in kube-public and the bootstrap signer that signs it, what a
// kubeadm-style join reads before it trusts the cluster: `kubeadm join --discovery-token` fetches
// kube-public/cluster-info anonymously and checks the `jws-kubeconfig-<token-id>` signature of its
// `kubeconfig` with the token it was given.
//
// - cluster-info is published at start as kubeadm's clusterinfo phase
//   (cmd/kubeadm/app/phases/bootstraptoken/clusterinfo) writes it: its `kubeconfig` key holds a
//   kubeconfig with one cluster named "" (the server URL and certificate-authority-data, the CA of
//   hearth's pki/), written as clientcmd.Write writes it. A restart keeps it current (the server
//   URL may change) while hearth's field manager is the only one that owns that key; once anyone
//   else has written it (kubectl edit, apply, a real kubeadm), it is left as they made it.
// - The signer is kube-controller-manager's "bootstrap-signer-controller" (alias
//   "bootstrapsigner"; kube's pkg/controller/bootstrap/bootstrapsigner.go and
//   k8s.io/cluster-bootstrap/token/jws): for each Secret of type `bootstrap.kubernetes.io/token`
//   in kube-system that may sign (kube's validateSecretForSigning: named for its token-id, a
//   token-secret, not expired, `usage-bootstrap-signing: "true"`), the key
//   `jws-kubeconfig-<token-id>` holds a detached JWS (RFC 7515 appendix F: header..signature) of
//   the kubeconfig, HS256 with the token's secret as key (zero-padded to 32 bytes, as kube pads
//   it for go-jose) and `kid` the token id; keys of tokens that no longer sign are removed. The
//   write happens only when a signature changed, as an update conditional on the resourceVersion
//   read. Where kube waits for the cleaner to delete an expired token, hearth also comes back at
//   the next expiration, so a signature never outlives its token when the cleaner is off.
//
// Both are on by default in hearth (kube disables the signer and the cleaner unless asked; kubeadm
// asks); `--controllers=-bootstrap-signer-controller` turns both off. Anonymous reading of
// cluster-info is kube's RBAC (kubeadm's `kubeadm:bootstrap-signer-clusterinfo` Role and
// RoleBinding in kube-public, the bootstrap policy's `system:controller:bootstrap-signer` Role):
// authorization's part, not this file's.
import { CompactSign } from 'jose';
import type { GenericStore } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { EventLog } from '../storage/log/event-log.ts';
import type { LogEvent } from '../storage/log/types.ts';
import type { ResourceInfo } from '../schema/types.ts';
import {
  BOOTSTRAP_TOKEN_ID_KEY,
  BOOTSTRAP_TOKEN_NAMESPACE,
  BOOTSTRAP_TOKEN_SECRET_KEY,
  BOOTSTRAP_TOKEN_USAGE_SIGNING,
  bootstrapSecretData,
  bootstrapTokenExpiration,
  isBootstrapTokenSecret,
  parseBootstrapTokenSecretName,
  type BootstrapTokenSecret,
} from '../authentication/bootstrap-token.ts';
import { kubeYaml } from '../go/yaml.ts';
import { ApiError } from '../errors.ts';
import { realClock, type Clock, type HandlerResult } from './workqueue.ts';
import { QueueController, controllerWriteContext } from './queue-controller.ts';
import { KUBE_CONTROLLER_MANAGER } from './namespace-content.ts';
import { MAX_EXPIRY_WAIT_MS } from './bootstrap-token-cleaner.ts';

/** k8s.io/cluster-bootstrap/token/api's names. */
export const CLUSTER_INFO_NAMESPACE = 'kube-public';
export const CLUSTER_INFO_CONFIGMAP = 'cluster-info';
export const KUBECONFIG_KEY = 'kubeconfig';
export const JWS_SIGNATURE_KEY_PREFIX = 'jws-kubeconfig-';
/** The field manager of hearth's own writes of cluster-info's kubeconfig (kubeadm's are "kubeadm"). */
export const CLUSTER_INFO_FIELD_MANAGER = 'hearth';

/** The one key of the signer's queue (kube's configMapKey). */
const KEY = `${CLUSTER_INFO_NAMESPACE}/${CLUSTER_INFO_CONFIGMAP}`;

/** What is read of the stored ConfigMap. */
interface ConfigMap {
  metadata: { managedFields?: unknown; [k: string]: unknown };
  data?: Record<string, string>;
  [k: string]: unknown;
}

/**
 * cluster-info's kubeconfig as kubeadm writes it (clientcmd.Write of a Config whose only cluster
 * is named ""): sigs.k8s.io/yaml of clientcmd's v1.Config, keys sorted, nil lists `null`.
 */
export function clusterInfoKubeconfig(server: string, caCertPem: string): string {
  return kubeYaml({
    apiVersion: 'v1',
    clusters: [{ cluster: { 'certificate-authority-data': Buffer.from(caCertPem).toString('base64'), server }, name: '' }],
    contexts: null,
    'current-context': '',
    kind: 'Config',
    preferences: {},
    users: null,
  });
}

/**
 * k8s.io/cluster-bootstrap/token/jws's ComputeDetachedSignature: a compact JWS of the content
 * (HS256, protected header {"alg":"HS256","kid":<token id>}) without its payload part.
 */
export async function computeDetachedSignature(content: string, tokenId: string, tokenSecret: string): Promise<string> {
  let key = Buffer.from(tokenSecret);
  if (key.length < 32) key = Buffer.concat([key, Buffer.alloc(32 - key.length)]);
  const jws = await new CompactSign(Buffer.from(content)).setProtectedHeader({ alg: 'HS256', kid: tokenId }).sign(key);
  const [header, , signature] = jws.split('.');
  return `${header}..${signature}`;
}

/** kube's validateSecretForSigning: the token's id and secret when it may sign the ConfigMap now. */
function tokenForSigning(secret: BootstrapTokenSecret, nowMs: number): { id: string; secret: string; remainingMs?: number } | undefined {
  const nameId = parseBootstrapTokenSecretName(typeof secret.metadata.name === 'string' ? secret.metadata.name : '');
  if (nameId === undefined) return undefined;
  const id = bootstrapSecretData(secret, BOOTSTRAP_TOKEN_ID_KEY);
  if (id === '' || id !== nameId) return undefined;
  const tokenSecret = bootstrapSecretData(secret, BOOTSTRAP_TOKEN_SECRET_KEY);
  if (tokenSecret === '') return undefined;
  const expiry = bootstrapTokenExpiration(secret, nowMs);
  if (expiry.expired) return undefined;
  if (bootstrapSecretData(secret, BOOTSTRAP_TOKEN_USAGE_SIGNING) !== 'true') return undefined;
  return { id, secret: tokenSecret, remainingMs: expiry.remainingMs };
}

/** The managers whose managedFields entries own `data.kubeconfig`. */
function kubeconfigOwners(cm: ConfigMap): string[] {
  const entries = Array.isArray(cm.metadata.managedFields) ? (cm.metadata.managedFields as unknown[]) : [];
  const owners: string[] = [];
  for (const entry of entries) {
    if (entry === null || typeof entry !== 'object') continue;
    const { manager, fieldsV1 } = entry as { manager?: unknown; fieldsV1?: unknown };
    const data = fieldsV1 !== null && typeof fieldsV1 === 'object' ? (fieldsV1 as Record<string, unknown>)['f:data'] : undefined;
    if (data !== null && typeof data === 'object' && `f:${KUBECONFIG_KEY}` in data) owners.push(typeof manager === 'string' ? manager : '');
  }
  return owners;
}

export interface BootstrapSignerOptions {
  /** The cluster CA's PEM, as in pki/ca.crt. */
  caCertPem: string;
  log?: (line: string) => void;
  clock?: Clock;
  now?: () => number;
}

export class BootstrapSigner extends QueueController {
  private readonly secretsInfo: ResourceInfo;
  private readonly configMapsInfo: ResourceInfo;
  private readonly log: (line: string) => void;
  private readonly now: () => number;

  constructor(
    private readonly store: GenericStore,
    catalog: ResourceCatalog,
    eventLog: EventLog,
    private readonly opts: BootstrapSignerOptions,
  ) {
    super(eventLog, { name: 'bootstrap signer', clock: opts.clock ?? realClock, workers: 1 });
    this.secretsInfo = catalog.lookup('', 'v1', 'secrets')!;
    this.configMapsInfo = catalog.lookup('', 'v1', 'configmaps')!;
    this.log = opts.log ?? (() => {});
    this.now = opts.now ?? Date.now;
  }

  protected onCommit(events: readonly LogEvent[]): void {
    for (const e of events) {
      // kube's two informers: cluster-info added or updated; token Secrets added, updated or deleted.
      if (e.key.res === 'configmaps') {
        if (e.key.ns === CLUSTER_INFO_NAMESPACE && e.key.name === CLUSTER_INFO_CONFIGMAP && e.type !== 'DELETED') this.queue.add(KEY);
      } else if (e.key.res === 'secrets' && e.key.ns === BOOTSTRAP_TOKEN_NAMESPACE) {
        if (isBootstrapTokenSecret(e.object) || isBootstrapTokenSecret(e.prevObject)) this.queue.add(KEY);
      }
    }
  }

  protected enqueueExisting(): void {
    this.queue.add(KEY);
  }

  protected sync(): Promise<HandlerResult> {
    return this.sign();
  }

  /**
   * Creates cluster-info with a kubeconfig for this server (its URL and the cluster CA), or sets
   * the kubeconfig of one hearth wrote to it; leaves one someone else wrote. Called once the
   * server's URL is known. A failure is logged, never fatal: the API serves without it.
   */
  async publishClusterInfo(server: string): Promise<void> {
    const kubeconfig = clusterInfoKubeconfig(server, this.opts.caCertPem);
    const ctx = controllerWriteContext(CLUSTER_INFO_FIELD_MANAGER);
    try {
      const cm: ConfigMap | undefined = this.store.tryGet(this.configMapsInfo, CLUSTER_INFO_NAMESPACE, CLUSTER_INFO_CONFIGMAP);
      if (!cm) {
        await this.store.create(this.configMapsInfo, CLUSTER_INFO_NAMESPACE, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: CLUSTER_INFO_CONFIGMAP }, data: { [KUBECONFIG_KEY]: kubeconfig } }, ctx);
        return;
      }
      if (cm.data?.[KUBECONFIG_KEY] === kubeconfig) return;
      const owners = kubeconfigOwners(cm);
      if (owners.length === 0 || owners.some((m) => m !== CLUSTER_INFO_FIELD_MANAGER)) {
        this.log(`${KEY}: its ${KUBECONFIG_KEY} was written by ${owners.length ? owners.join(', ') : 'someone else'}; left as it is (this server is ${server})`);
        return;
      }
      // The signatures go stale with it: the write is a change the signer sees and signs again.
      await this.store.update(this.configMapsInfo, CLUSTER_INFO_NAMESPACE, CLUSTER_INFO_CONFIGMAP, { ...cm, data: { ...(cm.data ?? {}), [KUBECONFIG_KEY]: kubeconfig } }, ctx);
    } catch (e) {
      this.log(`${KEY}: not published: ${(e as Error).message}`);
    }
  }

  /** kube's signConfigMap, over the store's current objects. */
  private async sign(): Promise<HandlerResult> {
    const cm: ConfigMap | undefined = this.store.tryGet(this.configMapsInfo, CLUSTER_INFO_NAMESPACE, CLUSTER_INFO_CONFIGMAP);
    if (!cm) return;
    const content = cm.data?.[KUBECONFIG_KEY];
    if (typeof content !== 'string') return;
    // The data without its signatures, and the signatures it had, by token id.
    const data: Record<string, string> = {};
    const previous = new Map<string, string>();
    for (const [key, value] of Object.entries(cm.data ?? {})) {
      if (key.startsWith(JWS_SIGNATURE_KEY_PREFIX)) previous.set(key.slice(JWS_SIGNATURE_KEY_PREFIX.length), value);
      else data[key] = value;
    }
    const now = this.now();
    let nextExpiryMs: number | undefined;
    let changed = false;
    const signed = new Set<string>();
    for (const secret of this.store.listReadable(this.secretsInfo, BOOTSTRAP_TOKEN_NAMESPACE) as BootstrapTokenSecret[]) {
      if (!isBootstrapTokenSecret(secret)) continue;
      const token = tokenForSigning(secret, now);
      if (!token || signed.has(token.id)) continue;
      signed.add(token.id);
      if (token.remainingMs !== undefined) nextExpiryMs = Math.min(nextExpiryMs ?? Infinity, token.remainingMs);
      const signature = await computeDetachedSignature(content, token.id, token.secret);
      if (previous.get(token.id) !== signature) changed = true;
      previous.delete(token.id);
      data[JWS_SIGNATURE_KEY_PREFIX + token.id] = signature;
    }
    // Signatures left over are of tokens that no longer sign.
    if (previous.size > 0) changed = true;
    if (changed) {
      const ctx = controllerWriteContext(KUBE_CONTROLLER_MANAGER);
      try {
        // Conditional on the resourceVersion read: a change meanwhile queued this key again.
        await this.store.update(this.configMapsInfo, CLUSTER_INFO_NAMESPACE, CLUSTER_INFO_CONFIGMAP, { ...cm, data }, ctx);
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        // A server error (a full disk) is tried again; a refusal is not, as kube logs and drops it
        // (an `immutable` ConfigMap: the next change of it or of a token comes back here).
        if (e.code >= 500) throw e;
        if (e.code !== 404 && e.code !== 409) this.log(`${KEY}: signatures not written: ${e.message}`);
      }
    }
    return nextExpiryMs !== undefined ? { requeueAfterMs: Math.min(nextExpiryMs, MAX_EXPIRY_WAIT_MS) } : undefined;
  }
}
