// Tracking the use of legacy (Secret-based) service-account tokens, as kube-apiserver does since
// LegacyServiceAccountTokenTracking:
// - the `kube-system/kube-apiserver-legacy-service-account-token-tracking` ConfigMap, whose
//   `since` is the UTC date tracking began (kube's pkg/controlplane/controller/legacytokentracking):
//   made at start, made again when deleted (at most once per 30 minutes, kube's creation rate
//   limit), its date set again when it is not one; a legacy-token cleaner trusts a Secret's
//   missing last-used label only for tokens older than it.
// - the objects the legacy token authenticator (authentication/legacy-service-account-token.ts)
//   reads, and its one write: the Secret's `kubernetes.io/legacy-token-last-used` label, a
//   read-modify-write of the Secret of that uid that the authenticating request does not wait for.
// Both are clients of the registry writing as the loopback identity under kube-apiserver's
// field manager (its loopback client's User-Agent).
import type { GenericStore, RequestContext } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { EventLog } from '../storage/log/event-log.ts';
import type { LogEvent } from '../storage/log/types.ts';
import type { ResourceInfo } from '../schema/types.ts';
import { LAST_USED_LABEL, utcDate, type LegacyTokenObjects, type LegacyTokenSecret, type LegacyTokenServiceAccount } from '../authentication/legacy-service-account-token.ts';
import { ApiError } from '../errors.ts';
import { realClock, type Clock, type HandlerResult } from './workqueue.ts';
import { QueueController, controllerWriteContext } from './queue-controller.ts';

/** kube's legacytokentracking ConfigMapName and ConfigMapDataKey. */
export const TRACKING_CONFIGMAP = 'kube-apiserver-legacy-service-account-token-tracking';
export const TRACKING_SINCE_KEY = 'since';
const TRACKING_NAMESPACE = 'kube-system';
/** kube's creation rate limit: rate.Every(30 * time.Minute), a burst of 1. */
const CREATION_INTERVAL_MS = 30 * 60_000;
/** The field manager of kube-apiserver's own writes (its loopback client's User-Agent). */
const KUBE_APISERVER = 'kube-apiserver';

function loopbackContext(): RequestContext {
  return controllerWriteContext(KUBE_APISERVER);
}

export class LegacyTokenTrackingController extends QueueController {
  private readonly cmInfo: ResourceInfo;
  /** When the ConfigMap was last created (clock ms), for the creation rate limit. */
  private lastCreation: number | undefined;

  constructor(
    private readonly store: GenericStore,
    catalog: ResourceCatalog,
    log: EventLog,
    private readonly clock: Clock = realClock,
    private readonly now: () => Date = () => new Date(),
  ) {
    super(log, { name: 'legacy_token_tracking_controller', clock, workers: 1 });
    this.cmInfo = catalog.lookup('', 'v1', 'configmaps')!;
  }

  protected onCommit(events: readonly LogEvent[]): void {
    for (const e of events) {
      if (e.key.res === 'configmaps' && e.key.ns === TRACKING_NAMESPACE && e.key.name === TRACKING_CONFIGMAP) this.queue.add(TRACKING_CONFIGMAP);
    }
  }

  protected enqueueExisting(): void {
    this.queue.add(TRACKING_CONFIGMAP);
  }

  protected async sync(): Promise<HandlerResult> {
    const today = utcDate(this.now());
    const cm = this.store.tryGet(this.cmInfo, TRACKING_NAMESPACE, TRACKING_CONFIGMAP) as { metadata: Record<string, unknown>; data?: Record<string, string> } | undefined;
    if (!cm) {
      const at = this.clock.now();
      if (this.lastCreation !== undefined && at - this.lastCreation < CREATION_INTERVAL_MS) return { requeueAfterMs: this.lastCreation + CREATION_INTERVAL_MS - at };
      try {
        await this.store.create(this.cmInfo, TRACKING_NAMESPACE, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: TRACKING_CONFIGMAP, namespace: TRACKING_NAMESPACE }, data: { [TRACKING_SINCE_KEY]: today } }, loopbackContext());
      } catch (e) {
        if (e instanceof ApiError && e.reason === 'AlreadyExists') return;
        throw e;
      }
      this.lastCreation = at;
      return;
    }
    if (isGoDate(cm.data?.[TRACKING_SINCE_KEY])) return;
    try {
      await this.store.update(this.cmInfo, TRACKING_NAMESPACE, TRACKING_CONFIGMAP, { ...cm, data: { ...(cm.data ?? {}), [TRACKING_SINCE_KEY]: today } }, loopbackContext());
    } catch (e) {
      if (e instanceof ApiError && (e.code === 404 || e.code === 409)) return;
      throw e;
    }
  }
}

/** time.Parse("2006-01-02", s) succeeds: four-digit year, a month and a day that exist. */
export function isGoDate(s: string | undefined): boolean {
  const m = s === undefined ? null : /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1) return false;
  return d <= new Date(Date.UTC(y, mo, 0)).getUTCDate();
}

/**
 * The Secrets and ServiceAccounts legacy tokens are checked against, read from the registry, and
 * the last-used label written to it. A label write for a Secret already on its way is not
 * started again; stop() waits for those on their way.
 */
export class LegacyTokenStoreObjects implements LegacyTokenObjects {
  private readonly secretInfo: ResourceInfo;
  private readonly saInfo: ResourceInfo;
  private readonly pending = new Map<string, Promise<void>>();

  constructor(
    private readonly store: GenericStore,
    catalog: ResourceCatalog,
    private readonly log: (line: string) => void,
  ) {
    this.secretInfo = catalog.lookup('', 'v1', 'secrets')!;
    this.saInfo = catalog.lookup('', 'v1', 'serviceaccounts')!;
  }

  secret(namespace: string, name: string): LegacyTokenSecret | undefined {
    return this.store.tryGet(this.secretInfo, namespace, name);
  }

  serviceAccount(namespace: string, name: string): LegacyTokenServiceAccount | undefined {
    return this.store.tryGet(this.saInfo, namespace, name);
  }

  markUsed(namespace: string, name: string, uid: string, date: string): void {
    const key = `${namespace}/${name}`;
    if (this.pending.has(key)) return;
    const write = this.writeLastUsed(namespace, name, uid, date).finally(() => this.pending.delete(key));
    this.pending.set(key, write);
  }

  /** Waits for the label writes on their way. */
  async stop(): Promise<void> {
    await Promise.all(this.pending.values());
  }

  /** kube's merge patch {metadata: {uid, labels: {last-used: date}}}: the uid is a precondition. */
  private async writeLastUsed(namespace: string, name: string, uid: string, date: string): Promise<void> {
    try {
      await this.store.patch(this.secretInfo, namespace, name, (current: { metadata: { uid?: string; labels?: Record<string, string> } }) => {
        if (uid && current.metadata.uid !== uid) throw new SecretReplaced();
        if (current.metadata.labels?.[LAST_USED_LABEL] === date) return current;
        return { ...current, metadata: { ...current.metadata, labels: { ...(current.metadata.labels ?? {}), [LAST_USED_LABEL]: date } } };
      }, loopbackContext());
    } catch (e) {
      // Deleted or replaced meanwhile: nothing to record.
      if (e instanceof SecretReplaced || (e instanceof ApiError && e.code === 404)) return;
      this.log(`warning: failed to label legacy service account token ${namespace}/${name} with last-used date: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}

class SecretReplaced extends Error {}
