// The CRD controller: keeps the catalog serving exactly the established CustomResourceDefinitions
// and cleans up after deleted ones. Registration happens inside the commit notification, before
// the write that changed the CRD is answered, so a client that created a CRD can use the new
// resource with its next request. Deletion goes through a work queue (workqueue.ts), each CRD
// retried on its own backoff as kube's CRD finalizer controller does: delete every custom object,
// then remove the cleanup finalizer so the CRD itself goes.
import type { GenericStore, RequestContext } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { EventLog } from '../storage/log/event-log.ts';
import type { ResourceInfo } from '../schema/types.ts';
import { ApiError } from '../errors.ts';
import { CRD_CLEANUP_FINALIZER, customResourceInfos, establishedStatus, isEstablished, setCondition } from '../registry/crd/runtime.ts';
import { nowTimestamp } from '../registry/now.ts';
import { WorkQueue, realClock, type Clock, type HandlerResult } from './workqueue.ts';
import { controllerWriteContext } from './queue-controller.ts';
import { fallbackLogger } from '../logging/logger.ts';

const CRD_RESOURCE = 'customresourcedefinitions.apiextensions.k8s.io';
/** kube runs its CRD finalizer controller with five workers. */
const WORKERS = 5;

/** What the controller reads of a stored CustomResourceDefinition (apiextensions/v1). */
export interface CustomResourceDefinition {
  metadata: { name: string; deletionTimestamp?: string; finalizers?: string[] };
  spec?: { group?: string; names?: { plural?: string; singular?: string; shortNames?: string[]; kind?: string; listKind?: string } };
  status?: { conditions?: unknown[] };
}

/** What a CRD's versions were registered with, for removing them again. */
export interface CrdServing {
  onRegister?(crd: CustomResourceDefinition, infos: ResourceInfo[]): void;
  onUnregister?(crdName: string): void;
}

export class CrdController {
  private readonly crdInfo: ResourceInfo;
  private readonly registered = new Map<string, ResourceInfo[]>();
  /** CRDs being deleted (their custom objects' resource is the CRD's name): the cleanup queue's keys. */
  private readonly deleting = new Set<string>();
  private readonly cleanup: WorkQueue<string>;

  constructor(
    private readonly store: GenericStore,
    private readonly catalog: ResourceCatalog,
    log: EventLog,
    private readonly hooks: CrdServing = {},
    clock: Clock = realClock,
  ) {
    this.crdInfo = catalog.lookup('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!;
    this.cleanup = new WorkQueue({ name: 'crd controller', clock });
    log.onCommit((events) => {
      for (const e of events) {
        if (e.key.res === CRD_RESOURCE) {
          if (e.type === 'DELETED') {
            this.deleting.delete(e.key.name);
            this.unregister(e.key.name);
          } else this.sync(e.object);
        } else if (e.type === 'DELETED' && this.deleting.has(e.key.res)) {
          // One of its objects gone (a finalizer released): the CRD may be free to go now.
          this.cleanup.add(e.key.res);
        }
      }
    });
  }

  /**
   * Serves the CRDs already in the file; resumes cleanups a previous run left. A CRD an older
   * hearth stored without the status this one gives a CRD as it writes it (a version that did not
   * serve CRDs kept them as plain objects: no conditions, no accepted names), or one whose names
   * were taken then, is established now if its names are free, as kube's naming and establishing
   * controllers establish any CRD; the promise settles once those are served.
   */
  async start(): Promise<void> {
    const unestablished: CustomResourceDefinition[] = [];
    for (const crd of this.store.listReadable(this.crdInfo, undefined)) {
      this.sync(crd);
      if (!isEstablished(crd) && !crd.metadata.deletionTimestamp) unestablished.push(crd);
    }
    this.cleanup.run((name) => this.finalize(name), WORKERS);
    await Promise.all(unestablished.map((crd) => this.establish(crd)));
  }

  /** Stops cleaning up; resolves once the cleanups under way are done. */
  stop(): Promise<void> {
    return this.cleanup.shutDown();
  }

  /** The resources a CRD serves right now (empty when none). */
  servedBy(crdName: string): ResourceInfo[] {
    return this.registered.get(crdName) ?? [];
  }

  private sync(crd: CustomResourceDefinition): void {
    const name: string = crd.metadata.name;
    if (crd.metadata.deletionTimestamp) {
      this.deleting.add(name);
      this.cleanup.add(name);
    }
    const conflict = this.namesConflict(crd);
    if (conflict) {
      this.unregister(name);
      void this.reportConflict(name, conflict);
      return;
    }
    if (!isEstablished(crd)) {
      this.unregister(name);
      return;
    }
    const infos = customResourceInfos(crd);
    const before = this.registered.get(name) ?? [];
    for (const old of before) {
      if (!infos.some((i) => i.version === old.version && i.resource === old.resource)) this.catalog.remove(old.group, old.version, old.resource);
    }
    this.hooks.onRegister?.(crd, infos);
    for (const info of infos) this.catalog.add(info);
    this.registered.set(name, infos);
  }

  private unregister(name: string): void {
    const infos = this.registered.get(name);
    if (!infos) return;
    this.registered.delete(name);
    for (const info of infos) this.catalog.remove(info.group, info.version, info.resource);
    this.hooks.onUnregister?.(name);
  }

  /**
   * Another served CRD of the group already uses one of this CRD's names: "<Reason>|<message>",
   * checked in kube's order (plural, singular, short names, kind, list kind).
   */
  private namesConflict(crd: CustomResourceDefinition): string | undefined {
    const group = crd.spec?.group;
    const names = crd.spec?.names ?? {};
    const resourceNames = new Set<string>();
    const kinds = new Set<string>();
    for (const [other, infos] of this.registered) {
      if (other === crd.metadata.name || infos.length === 0 || infos[0].group !== group) continue;
      const info = infos[0];
      for (const n of [info.resource, info.singularName, ...(info.shortNames ?? [])]) resourceNames.add(n);
      kinds.add(info.kind).add(info.listKind);
    }
    const inUse = (n: string) => `${JSON.stringify(n)} is already in use`;
    if (names.plural && resourceNames.has(names.plural)) return `PluralConflict|${inUse(names.plural)}`;
    if (names.singular && resourceNames.has(names.singular)) return `SingularConflict|${inUse(names.singular)}`;
    for (const sn of names.shortNames ?? []) if (resourceNames.has(sn)) return `ShortNamesConflict|${inUse(sn)}`;
    if (names.kind && kinds.has(names.kind)) return `KindConflict|${inUse(names.kind)}`;
    if (names.listKind && kinds.has(names.listKind)) return `ListKindConflict|${inUse(names.listKind)}`;
    return undefined;
  }

  private async reportConflict(name: string, conflict: string): Promise<void> {
    const [reason, message] = conflict.split('|');
    const crd = this.store.tryGet(this.crdInfo, '', name);
    if (!crd) return;
    const conditions = structuredClone(crd.status?.conditions ?? []);
    const now = nowTimestamp();
    setCondition(conditions, { type: 'NamesAccepted', status: 'False', reason, message }, now);
    setCondition(conditions, { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' }, now);
    if (JSON.stringify(conditions) === JSON.stringify(crd.status?.conditions)) return;
    try {
      await this.store.update(this.crdInfo, '', name, { ...crd, status: { ...crd.status, conditions, acceptedNames: { plural: '', kind: '' } } }, this.ctx(), 'status');
    } catch (e) {
      if (!(e instanceof ApiError)) fallbackLogger().error(e, 'crd controller: writing the names conflict failed', 'crd', name);
    }
  }

  /** Writes an established status (its commit registers the CRD), unless another served CRD holds one of its names. */
  private async establish(crd: CustomResourceDefinition): Promise<void> {
    if (this.namesConflict(crd)) return;
    try {
      await this.store.update(this.crdInfo, '', crd.metadata.name, { ...crd, status: establishedStatus(crd, crd.status, nowTimestamp()) }, this.ctx(), 'status');
    } catch (e) {
      fallbackLogger().error(e, 'crd controller: establishing failed', 'crd', crd.metadata.name);
    }
  }

  private ctx(): RequestContext {
    return controllerWriteContext();
  }

  /**
   * Deletes the CRD's objects; once none remain, releases the CRD. While objects stay (held by
   * finalizers) the CRD is retried on its backoff, as kube's finalizer controller retries it.
   */
  private async finalize(name: string): Promise<HandlerResult> {
    const crd = this.store.tryGet(this.crdInfo, '', name);
    if (!crd || !crd.metadata.deletionTimestamp) {
      this.deleting.delete(name);
      return;
    }
    // Storage is shared by all versions: any one of them reaches every object.
    const info = this.registered.get(name)?.[0] ?? customResourceInfos(crd)[0];
    if (info) {
      await this.store.deleteCollection(info, undefined, {}, {}, this.ctx());
      // Objects held by finalizers stay until their owners remove them.
      if (this.store.listCurrent(info, undefined).length > 0) return 'retry';
    }
    const finalizers: string[] = crd.metadata.finalizers ?? [];
    if (!finalizers.includes(CRD_CLEANUP_FINALIZER)) return;
    try {
      await this.store.update(this.crdInfo, '', name, { ...crd, metadata: { ...crd.metadata, finalizers: finalizers.filter((f) => f !== CRD_CLEANUP_FINALIZER) } }, this.ctx());
    } catch (e) {
      if (e instanceof ApiError && e.code === 404) return;
      // (written meanwhile: read it again)
      if (e instanceof ApiError && e.code === 409) return { requeueAfterMs: 0 };
      throw e;
    }
  }
}
