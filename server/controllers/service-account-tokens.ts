// The tokens controller kube-controller-manager runs as "serviceaccount-token-controller" (kube's
// pkg/controller/serviceaccount/tokens_controller.go). Since kube 1.24 it makes no Secret of its
// own; it fills in the ones users make: a Secret of type `kubernetes.io/service-account-token`
// annotated `kubernetes.io/service-account.name` gets `data.token` (a legacy token, signed with the
// service-account signing key), `data.ca.crt` (the cluster CA), `data.namespace` and the
// `kubernetes.io/service-account.uid` annotation. A Secret whose ServiceAccount does not exist (or
// is another one by uid) is deleted at once; a ServiceAccount's deletion deletes its token
// Secrets; a deleted Secret leaves its ServiceAccount's `secrets` list.
//
// As kube's: two queues (ServiceAccounts, token Secrets) whose keys carry the uids the event saw,
// so the sync knows what was meant even once the object is gone; a key is retried at most 10
// times. A client of the registry, writing as the loopback identity under
// kube-controller-manager's field manager; keys come from the log's commit stream.
import type { GenericStore, RequestContext } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { EventLog } from '../storage/log/event-log.ts';
import type { ResourceInfo } from '../schema/types.ts';
import { SERVICE_ACCOUNT_NAME_ANNOTATION, SERVICE_ACCOUNT_TOKEN_SECRET_TYPE, SERVICE_ACCOUNT_UID_ANNOTATION, type ServiceAccountRef } from '../authentication/legacy-service-account-token.ts';
import { ApiError } from '../errors.ts';
import { WorkQueue, realClock, type Clock, type HandlerResult } from './workqueue.ts';
import { KUBE_CONTROLLER_MANAGER } from './namespace-content.ts';
import { controllerWriteContext } from './queue-controller.ts';

/** kube's TokensControllerOptions.MaxRetries default. */
const MAX_RETRIES = 10;
/** One worker per queue (kube-controller-manager's --concurrent-serviceaccount-token-syncs is 5; one event loop here). */
const WORKERS = 1;

/** Signs a legacy token for the ServiceAccount and the Secret that will hold it (kube's TokenGenerator with LegacyClaims). */
export type LegacyTokenGenerator = (sa: ServiceAccountRef, secretName: string) => Promise<string>;

/** kube's secretQueueKey: the Secret and the ServiceAccount its annotations named when the event was seen. */
interface SecretKey {
  namespace: string;
  name: string;
  uid: string;
  saName: string;
  /** Empty when the Secret had no uid annotation yet. */
  saUid: string;
}

/** kube's serviceAccountQueueKey. */
interface ServiceAccountKey {
  namespace: string;
  name: string;
  uid: string;
}

/** What the controller reads of a stored object (as the registry presents it: Secret data base64). */
interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  annotations?: Record<string, string>;
}
interface Secret {
  metadata: ObjectMeta;
  type?: string;
  data?: Record<string, string>;
  [k: string]: unknown;
}
interface ServiceAccount {
  metadata: ObjectMeta;
  secrets?: { name?: string }[];
  [k: string]: unknown;
}

export class ServiceAccountTokensController {
  // Keys are JSON strings (the queue dedups by value).
  private readonly secretQueue: WorkQueue<string>;
  private readonly saQueue: WorkQueue<string>;
  private readonly secretInfo: ResourceInfo;
  private readonly saInfo: ResourceInfo;
  private readonly rootCaBase64: string;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: GenericStore,
    catalog: ResourceCatalog,
    log: EventLog,
    /** The cluster CA's PEM (kube-controller-manager's --root-ca-file). */
    rootCaPem: string,
    private readonly generateToken: LegacyTokenGenerator,
    clock: Clock = realClock,
  ) {
    this.secretInfo = catalog.lookup('', 'v1', 'secrets')!;
    this.saInfo = catalog.lookup('', 'v1', 'serviceaccounts')!;
    this.rootCaBase64 = Buffer.from(rootCaPem).toString('base64');
    this.secretQueue = new WorkQueue({ name: 'serviceaccount tokens controller (secrets)', clock });
    this.saQueue = new WorkQueue({ name: 'serviceaccount tokens controller (serviceaccounts)', clock });
    this.unsubscribe = log.onCommit((events) => {
      for (const e of events) {
        // Every add, update and delete of either kind (a deleted object is its last state).
        if (e.key.res === 'secrets') {
          if (e.object?.type === SERVICE_ACCOUNT_TOKEN_SECRET_TYPE) this.addSecret(e.object);
        } else if (e.key.res === 'serviceaccounts') this.addServiceAccount(e.object);
      }
    });
  }

  /** Looks at every token Secret and ServiceAccount already stored (an informer's first list); starts processing. */
  start(): void {
    for (const sa of this.store.listReadable(this.saInfo, undefined)) this.addServiceAccount(sa);
    for (const secret of this.store.listReadable(this.secretInfo, undefined)) {
      if (secret.type === SERVICE_ACCOUNT_TOKEN_SECRET_TYPE) this.addSecret(secret);
    }
    this.saQueue.run((key) => this.withRetries(this.saQueue, key, () => this.syncServiceAccount(JSON.parse(key) as ServiceAccountKey)), WORKERS);
    this.secretQueue.run((key) => this.withRetries(this.secretQueue, key, () => this.syncSecret(JSON.parse(key) as SecretKey)), WORKERS);
  }

  /** Stops taking keys; resolves once those being processed are done. */
  async stop(): Promise<void> {
    this.unsubscribe();
    await Promise.all([this.saQueue.shutDown(), this.secretQueue.shutDown()]);
  }

  private addSecret(secret: Secret): void {
    const m = secret.metadata ?? {};
    const key: SecretKey = { namespace: m.namespace ?? '', name: m.name ?? '', uid: m.uid ?? '', saName: m.annotations?.[SERVICE_ACCOUNT_NAME_ANNOTATION] ?? '', saUid: m.annotations?.[SERVICE_ACCOUNT_UID_ANNOTATION] ?? '' };
    // (kube's parseSecretQueueKey drops a key without these)
    if (key.namespace && key.name && key.uid && key.saName) this.secretQueue.add(JSON.stringify(key));
  }

  private addServiceAccount(sa: ServiceAccount): void {
    const m = sa?.metadata ?? {};
    const key: ServiceAccountKey = { namespace: m.namespace ?? '', name: m.name ?? '', uid: m.uid ?? '' };
    if (key.namespace && key.name && key.uid) this.saQueue.add(JSON.stringify(key));
  }

  /** kube's retryOrForget: a key that keeps failing is dropped after MAX_RETRIES requeues. */
  private async withRetries(queue: WorkQueue<string>, key: string, sync: () => Promise<boolean>): Promise<HandlerResult> {
    let retry: boolean;
    try {
      retry = await sync();
    } catch (e) {
      if (queue.numRequeues(key) >= MAX_RETRIES) return;
      throw e;
    }
    return retry && queue.numRequeues(key) < MAX_RETRIES ? 'retry' : undefined;
  }

  /** A ServiceAccount that is gone (or now another by uid) takes its token Secrets with it. Returns whether to retry. */
  private async syncServiceAccount(key: ServiceAccountKey): Promise<boolean> {
    if (this.serviceAccount(key.namespace, key.name, key.uid)) return false;
    let retry = false;
    for (const secret of this.store.listReadable(this.secretInfo, key.namespace) as Secret[]) {
      if (!isTokenOf(secret, key.name, key.uid)) continue;
      if (await this.deleteSecret(key.namespace, secret.metadata.name ?? '', secret.metadata.uid ?? '')) retry = true;
    }
    return retry;
  }

  /** kube's syncSecret. Returns whether to retry. */
  private async syncSecret(key: SecretKey): Promise<boolean> {
    const secret = this.secret(key.namespace, key.name, key.uid);
    if (!secret) {
      // Gone: its ServiceAccount no longer lists it.
      const sa = this.serviceAccount(key.namespace, key.saName, key.saUid);
      if (sa) await this.removeSecretReference(key.namespace, key.saName, sa.metadata.uid ?? '', key.name);
      return false;
    }
    const sa = this.serviceAccount(key.namespace, key.saName, key.saUid);
    if (!sa) return this.deleteSecret(key.namespace, key.name, key.uid);
    return this.generateTokenIfNeeded(sa, secret);
  }

  /** kube's secretUpdateNeeded: the CA differs, or the namespace or token is empty. */
  private updateNeeded(secret: Secret): { ca: boolean; namespace: boolean; token: boolean } {
    const data = secret.data ?? {};
    return { ca: data['ca.crt'] !== this.rootCaBase64, namespace: !data.namespace, token: !data.token };
  }

  private async generateTokenIfNeeded(sa: ServiceAccount, secret: Secret): Promise<boolean> {
    const needs = this.updateNeeded(secret);
    if (!needs.ca && !needs.namespace && !needs.token) return false;
    const namespace = secret.metadata.namespace ?? '';
    const secretName = secret.metadata.name ?? '';
    const data = { ...(secret.data ?? {}) };
    if (needs.ca) data['ca.crt'] = this.rootCaBase64;
    if (needs.namespace) data.namespace = Buffer.from(namespace).toString('base64');
    if (needs.token) {
      const token = await this.generateToken({ namespace, name: sa.metadata.name ?? '', uid: sa.metadata.uid ?? '' }, secretName);
      data.token = Buffer.from(token).toString('base64');
    }
    const annotations = { ...(secret.metadata.annotations ?? {}), [SERVICE_ACCOUNT_NAME_ANNOTATION]: sa.metadata.name ?? '', [SERVICE_ACCOUNT_UID_ANNOTATION]: sa.metadata.uid ?? '' };
    // The Secret as read (its resourceVersion makes the update conditional: a Secret changed while
    // the token was signed is a conflict, and its own event brings it back).
    try {
      await this.store.update(this.secretInfo, namespace, secretName, { ...secret, metadata: { ...secret.metadata, annotations }, data }, this.ctx());
    } catch (e) {
      if (e instanceof ApiError && (e.code === 409 || e.code === 404)) return false;
      throw e;
    }
    return false;
  }

  /** Deletes the Secret of that uid; gone already or another by uid is done. Returns whether to retry. */
  private async deleteSecret(namespace: string, name: string, uid: string): Promise<boolean> {
    try {
      await this.store.delete(this.secretInfo, namespace, name, uid ? { preconditions: { uid } } : {}, this.ctx());
    } catch (e) {
      if (e instanceof ApiError && (e.code === 404 || e.code === 409)) return false;
      throw e;
    }
    return false;
  }

  /** kube's removeSecretReference: the ServiceAccount (of that uid) no longer lists the Secret. */
  private async removeSecretReference(namespace: string, saName: string, saUid: string, secretName: string): Promise<void> {
    const sa = this.serviceAccount(namespace, saName, saUid);
    if (!sa || !(sa.secrets ?? []).some((s) => s?.name === secretName)) return;
    try {
      // A read-modify-write the store retries on conflict (kube's RetryOnConflict).
      await this.store.patch(this.saInfo, namespace, saName, (current: ServiceAccount) => {
        if (saUid && current.metadata.uid !== saUid) return current;
        return { ...current, secrets: (current.secrets ?? []).filter((s) => s?.name !== secretName) };
      }, this.ctx());
    } catch (e) {
      if (e instanceof ApiError && e.code === 404) return;
      throw e;
    }
  }

  /** The ServiceAccount, if it is the one of that uid (any, when uid is empty). */
  private serviceAccount(namespace: string, name: string, uid: string): ServiceAccount | undefined {
    const sa: ServiceAccount | undefined = this.store.tryGet(this.saInfo, namespace, name);
    return sa && (!uid || sa.metadata.uid === uid) ? sa : undefined;
  }

  private secret(namespace: string, name: string, uid: string): Secret | undefined {
    const secret: Secret | undefined = this.store.tryGet(this.secretInfo, namespace, name);
    return secret && (!uid || secret.metadata.uid === uid) ? secret : undefined;
  }

  private ctx(): RequestContext {
    return controllerWriteContext(KUBE_CONTROLLER_MANAGER);
  }
}

/** kube's IsServiceAccountToken: a token Secret naming the ServiceAccount, and its uid when it names one. */
function isTokenOf(secret: Secret, saName: string, saUid: string): boolean {
  if (secret.type !== SERVICE_ACCOUNT_TOKEN_SECRET_TYPE) return false;
  const annotations = secret.metadata.annotations ?? {};
  if (annotations[SERVICE_ACCOUNT_NAME_ANNOTATION] !== saName) return false;
  const uid = annotations[SERVICE_ACCOUNT_UID_ANNOTATION];
  return !uid || uid === saUid;
}
