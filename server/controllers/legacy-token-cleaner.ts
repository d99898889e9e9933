// The legacy service-account token cleaner kube-controller-manager runs as
// "legacy-serviceaccount-token-cleaner-controller" (kube's
// pkg/controller/serviceaccount/legacy_serviceaccount_token_cleaner.go, LegacyServiceAccountTokenCleanUp
// GA in 1.30). Once a day it looks at every `kubernetes.io/service-account-token` Secret that is
// auto-generated (its ServiceAccount lists it in `secrets`), older than the clean-up period
// (--legacy-service-account-token-clean-up-period, a year), unused for as long (its
// `kubernetes.io/legacy-token-last-used` label; none means unused since tracking began) and
// mounted by no pod: it labels it `kubernetes.io/legacy-token-invalid-since: <today>` (the token
// stops authenticating), and deletes it once it has been invalid for the period too. Nothing is
// done until tracking (kube-system's tracking ConfigMap `since`) has run for the whole period.
// Secrets made by hand (not listed by their ServiceAccount) are never touched.
//
// A client of the registry writing as the loopback identity under kube-controller-manager's field
// manager; a timer rather than a queue, as kube's wait.Until loop.
import type { GenericStore, RequestContext } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { ResourceInfo } from '../schema/types.ts';
import { INVALID_SINCE_LABEL, LAST_USED_LABEL, SERVICE_ACCOUNT_NAME_ANNOTATION, SERVICE_ACCOUNT_TOKEN_SECRET_TYPE, SERVICE_ACCOUNT_UID_ANNOTATION, utcDate } from '../authentication/legacy-service-account-token.ts';
import { ApiError } from '../errors.ts';
import { isGoDate, TRACKING_CONFIGMAP, TRACKING_SINCE_KEY } from './legacy-token-tracking.ts';
import { KUBE_CONTROLLER_MANAGER } from './namespace-content.ts';
import { visitPodSecretNames } from '../util/pod-references.ts';
import { controllerWriteContext } from './queue-controller.ts';

/** kube-controller-manager's --legacy-service-account-token-clean-up-period default: 8760h. */
export const DEFAULT_CLEAN_UP_PERIOD_MS = 365 * 24 * 60 * 60_000;
/** kube's DefaultCleanerSyncInterval. */
export const DEFAULT_CLEANER_SYNC_INTERVAL_MS = 24 * 60 * 60_000;
const DAY_MS = 24 * 60 * 60_000;

interface Meta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface Secret {
  metadata: Meta;
  type?: string;
}

export interface LegacyTokenCleanerOptions {
  cleanUpPeriodMs?: number;
  syncIntervalMs?: number;
  now?: () => Date;
  log?: (line: string) => void;
}

export class LegacyTokenCleaner {
  private readonly secretInfo: ResourceInfo;
  private readonly saInfo: ResourceInfo;
  private readonly podInfo: ResourceInfo;
  private readonly cmInfo: ResourceInfo;
  private readonly periodMs: number;
  private readonly intervalMs: number;
  private readonly now: () => Date;
  private readonly log: (line: string) => void;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly store: GenericStore,
    catalog: ResourceCatalog,
    opts: LegacyTokenCleanerOptions = {},
  ) {
    this.secretInfo = catalog.lookup('', 'v1', 'secrets')!;
    this.saInfo = catalog.lookup('', 'v1', 'serviceaccounts')!;
    this.podInfo = catalog.lookup('', 'v1', 'pods')!;
    this.cmInfo = catalog.lookup('', 'v1', 'configmaps')!;
    this.periodMs = opts.cleanUpPeriodMs ?? DEFAULT_CLEAN_UP_PERIOD_MS;
    // kube's NewLegacySATokenCleaner refuses these.
    if (!(this.periodMs > 0)) throw new Error(`invalid CleanUpPeriod: ${this.periodMs}ms`);
    this.intervalMs = opts.syncIntervalMs ?? DEFAULT_CLEANER_SYNC_INTERVAL_MS;
    if (!(this.intervalMs > 0)) throw new Error(`invalid SyncInterval: ${this.intervalMs}ms`);
    this.now = opts.now ?? (() => new Date());
    this.log = opts.log ?? (() => {});
  }

  /** Evaluates now, then every sync interval after each evaluation ends (kube's wait.Until). */
  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.running = this.evaluate()
        .catch((e: unknown) => this.log(`legacy-serviceaccount-token-cleaner: ${e instanceof Error ? e.message : String(e)}`))
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) {
            this.timer = setTimeout(tick, this.intervalMs);
            this.timer.unref();
          }
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** kube's evaluateSATokens: one pass over every token Secret. */
  async evaluate(): Promise<void> {
    const now = this.now();
    const trackedSince = this.latestPossibleTrackedSince();
    // Not tracking long enough: a missing last-used label would not mean "unused".
    if (trackedSince === undefined || now.getTime() < trackedSince + this.periodMs) return;
    const preserveCreatedOnOrAfter = now.getTime() - this.periodMs;
    const preserveUsedOnOrAfter = utcDate(new Date(preserveCreatedOnOrAfter));
    const today = utcDate(now);
    const mountedByNamespace = new Map<string, Set<string>>();

    for (const secret of this.store.listReadable(this.secretInfo, undefined) as Secret[]) {
      if (secret.type !== SERVICE_ACCOUNT_TOKEN_SECRET_TYPE) continue;
      const meta = secret.metadata;
      if (!(Date.parse(meta.creationTimestamp ?? '') < preserveCreatedOnOrAfter)) continue;
      if (meta.deletionTimestamp) continue;
      const lastUsed = meta.labels?.[LAST_USED_LABEL];
      if (lastUsed !== undefined) {
        // (a label that is no date says nothing: kube leaves the Secret)
        if (!isGoDate(lastUsed) || lastUsed >= preserveUsedOnOrAfter) continue;
      }
      // Only auto-generated tokens: those their ServiceAccount (of the annotated uid) lists.
      const namespace = meta.namespace ?? '';
      if (!this.listedByServiceAccount(namespace, meta)) continue;
      let mounted = mountedByNamespace.get(namespace);
      if (!mounted) mountedByNamespace.set(namespace, (mounted = this.mountedSecretNames(namespace)));
      if (mounted.has(meta.name ?? '')) continue;

      const invalidSince = meta.labels?.[INVALID_SINCE_LABEL];
      if (!isGoDate(invalidSince)) {
        this.log(`legacy-serviceaccount-token-cleaner: marking the auto-generated service account token ${namespace}/${meta.name} invalid since ${today}`);
        await this.markInvalid(namespace, meta, today);
        continue;
      }
      if (invalidSince! >= preserveUsedOnOrAfter) continue;
      this.log(`legacy-serviceaccount-token-cleaner: deleting the auto-generated service account token ${namespace}/${meta.name} (created ${meta.creationTimestamp}, last used ${lastUsed ?? 'never'}, invalid since ${invalidSince})`);
      await this.deleteUnchanged(namespace, meta);
    }
  }

  /** kube's latestPossibleTrackedSinceTime: the day after the tracking ConfigMap's `since` (ms), or undefined without one. */
  private latestPossibleTrackedSince(): number | undefined {
    const cm = this.store.tryGet(this.cmInfo, 'kube-system', TRACKING_CONFIGMAP) as { data?: Record<string, string> } | undefined;
    const since = cm?.data?.[TRACKING_SINCE_KEY];
    if (!isGoDate(since)) return undefined;
    return Date.parse(`${since}T00:00:00Z`) + DAY_MS;
  }

  private listedByServiceAccount(namespace: string, meta: Meta): boolean {
    const saName = meta.annotations?.[SERVICE_ACCOUNT_NAME_ANNOTATION];
    if (!saName) return false;
    const sa = this.store.tryGet(this.saInfo, namespace, saName) as { metadata: { uid?: string }; secrets?: { name?: string }[] } | undefined;
    if (!sa) return false;
    const saUid = meta.annotations?.[SERVICE_ACCOUNT_UID_ANNOTATION];
    if (saUid && saUid !== sa.metadata.uid) return false;
    return (sa.secrets ?? []).some((ref) => ref?.name === meta.name);
  }

  /** The Secrets the namespace's pods use (kube's podutil.VisitPodSecretNames). */
  private mountedSecretNames(namespace: string): Set<string> {
    const names = new Set<string>();
    for (const pod of this.store.listReadable(this.podInfo, namespace)) visitPodSecretNames(pod, (n) => names.add(n));
    return names;
  }

  /** kube's merge patch of the label with the uid as a precondition. */
  private async markInvalid(namespace: string, meta: Meta, date: string): Promise<void> {
    try {
      await this.store.patch(this.secretInfo, namespace, meta.name ?? '', (current: Secret) => {
        if (current.metadata.uid !== meta.uid) throw new ApiError(409, 'Conflict', 'the Secret was replaced', {});
        return { ...current, metadata: { ...current.metadata, labels: { ...(current.metadata.labels ?? {}), [INVALID_SINCE_LABEL]: date } } };
      }, this.ctx());
    } catch (e) {
      if (e instanceof ApiError && (e.code === 404 || e.code === 409)) return;
      this.log(`legacy-serviceaccount-token-cleaner: failed to label ${namespace}/${meta.name} with invalid since date: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Deletes the Secret as it was read (a resourceVersion precondition: a Secret used or changed since stays). */
  private async deleteUnchanged(namespace: string, meta: Meta): Promise<void> {
    try {
      await this.store.delete(this.secretInfo, namespace, meta.name ?? '', { preconditions: { resourceVersion: meta.resourceVersion } }, this.ctx());
    } catch (e) {
      if (e instanceof ApiError && (e.code === 404 || e.code === 409)) return;
      this.log(`legacy-serviceaccount-token-cleaner: failed to delete ${namespace}/${meta.name}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private ctx(): RequestContext {
    return controllerWriteContext(KUBE_CONTROLLER_MANAGER);
  }
}
