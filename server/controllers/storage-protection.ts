// kube-controller-manager's persistentvolumeclaim-protection-controller and
// persistentvolume-protection-controller (pkg/controller/volume/pvcprotection and pvprotection),
// the other half of StorageObjectInUseProtection admission: a claim being deleted loses its
// kubernetes.io/pvc-protection finalizer once no scheduled pod of its namespace uses it (a
// persistentVolumeClaim volume naming it, or a running pod's ephemeral volume whose claim it
// is), and a volume being deleted loses kubernetes.io/pv-protection once it is no longer Bound.
// A VolumeAttributesClass being deleted (volumeattributesclass-protection-controller,
// pkg/controller/volume/vacprotection) loses kubernetes.io/vac-protection once no claim names it
// (spec.volumeAttributesClassName, the status' current or target class) and no volume does.
// Pods' changes wake the claims they name, claims' and volumes' changes the classes they name.
// (kube's controllers also add the finalizer to objects that lack it, written before the
// plugin was on: hearth has had the plugin from its first object, so that part is left out.)
// Always on, as the namespace controller is: without it a protected object could never go.
import type { GenericStore } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { EventLog } from '../storage/log/event-log.ts';
import type { LogEvent } from '../storage/log/types.ts';
import type { ResourceInfo } from '../schema/types.ts';
import { ApiError } from '../errors.ts';
import { realClock, type Clock, type HandlerResult } from './workqueue.ts';
import { QueueController, controllerWriteContext } from './queue-controller.ts';

const PVC_PROTECTION = 'kubernetes.io/pvc-protection';
const PV_PROTECTION = 'kubernetes.io/pv-protection';
const VAC_PROTECTION = 'kubernetes.io/vac-protection';
const VACS_KEY = 'volumeattributesclasses.storage.k8s.io';
/** The field manager kube's controllers write with. */
const KUBE_CONTROLLER_MANAGER = 'kube-controller-manager';

type Json = Record<string, unknown>;
const rec = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.map(rec) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const meta = (o: unknown): Json => rec(rec(o).metadata);
const spec = (o: unknown): Json => rec(rec(o).spec);

/** The claims a pod's volumes name: persistentVolumeClaim volumes, and ephemeral ones (`<pod>-<volume>`). */
function claimsOf(pod: unknown): string[] {
  if (pod === undefined) return [];
  return list(spec(pod).volumes).flatMap((v) => {
    const claimName = rec(v.persistentVolumeClaim).claimName;
    if (typeof claimName === 'string') return [claimName];
    if (v.ephemeral != null) return [`${str(meta(pod).name)}-${str(v.name)}`];
    return [];
  });
}

/** podIsShutDown: deleted with no grace left, or done (Succeeded or Failed). */
function podIsShutDown(pod: Json): boolean {
  if (meta(pod).deletionTimestamp && meta(pod).deletionGracePeriodSeconds === 0) return true;
  const phase = rec(pod.status).phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** podUsesPVC: only a scheduled pod (a kubelet refuses to start one with a claim being deleted). */
function podUsesClaim(pod: Json, claim: Json): boolean {
  if (!spec(pod).nodeName) return false;
  const claimName = str(meta(claim).name);
  return list(spec(pod).volumes).some((v) => {
    if (rec(v.persistentVolumeClaim).claimName === claimName) return true;
    // An ephemeral volume's claim, owned by this pod, while the pod runs.
    if (v.ephemeral == null || podIsShutDown(pod) || `${str(meta(pod).name)}-${str(v.name)}` !== claimName) return false;
    return list(meta(claim).ownerReferences).some((o) => o.controller === true && o.uid === meta(pod).uid);
  });
}

/** The VolumeAttributesClasses a claim or volume names. */
function attributesClassesOf(obj: unknown): string[] {
  const status = rec(rec(obj).status);
  return [spec(obj).volumeAttributesClassName, status.currentVolumeAttributesClassName, rec(status.modifyVolumeStatus).targetVolumeAttributesClassName].filter((n): n is string => typeof n === 'string' && n !== '');
}

/** protectionutil.IsDeletionCandidate: being deleted, and still held by the finalizer. */
const isDeletionCandidate = (obj: Json, finalizer: string) => !!meta(obj).deletionTimestamp && Array.isArray(meta(obj).finalizers) && (meta(obj).finalizers as unknown[]).includes(finalizer);

export class StorageProtectionController extends QueueController {
  private readonly pvcs: ResourceInfo;
  private readonly pvs: ResourceInfo;
  private readonly pods: ResourceInfo;
  private readonly vacs: ResourceInfo;

  constructor(
    private readonly store: GenericStore,
    catalog: ResourceCatalog,
    log: EventLog,
    clock: Clock = realClock,
  ) {
    super(log, { name: 'storage-protection', clock, workers: 1 });
    this.pvcs = catalog.lookup('', 'v1', 'persistentvolumeclaims')!;
    this.pvs = catalog.lookup('', 'v1', 'persistentvolumes')!;
    this.pods = catalog.lookup('', 'v1', 'pods')!;
    this.vacs = catalog.lookup('storage.k8s.io', 'v1', 'volumeattributesclasses')!;
  }

  protected onCommit(events: readonly LogEvent[]): void {
    for (const e of events) {
      const { res, ns, name } = e.key;
      if (res === 'persistentvolumeclaims' || res === 'persistentvolumes') {
        if (e.type !== 'DELETED' && meta(e.object).deletionTimestamp) this.queue.add(res === 'persistentvolumes' ? `pv/${name}` : `pvc/${ns}/${name}`);
        // A claim or volume that goes or changes may free the classes it named.
        for (const vac of new Set([...attributesClassesOf(e.object), ...attributesClassesOf(e.prevObject)])) this.queue.add(`vac/${vac}`);
      } else if (res === VACS_KEY) {
        if (e.type !== 'DELETED' && meta(e.object).deletionTimestamp) this.queue.add(`vac/${name}`);
      } else if (res === 'pods') {
        // A pod that goes, finishes or changes may free the claims it named.
        for (const claim of new Set([...claimsOf(e.object), ...claimsOf(e.prevObject)])) this.queue.add(`pvc/${ns}/${claim}`);
      }
    }
  }

  protected enqueueExisting(): void {
    for (const pvc of this.store.listReadable(this.pvcs, undefined)) if (meta(pvc).deletionTimestamp) this.queue.add(`pvc/${str(meta(pvc).namespace)}/${str(meta(pvc).name)}`);
    for (const pv of this.store.listReadable(this.pvs, undefined)) if (meta(pv).deletionTimestamp) this.queue.add(`pv/${str(meta(pv).name)}`);
    for (const vac of this.store.listReadable(this.vacs, undefined)) if (meta(vac).deletionTimestamp) this.queue.add(`vac/${str(meta(vac).name)}`);
  }

  protected async sync(key: string): Promise<HandlerResult> {
    const parts = key.split('/');
    if (parts[0] === 'pv') {
      const pv: Json | undefined = this.store.tryGet(this.pvs, '', parts[1]);
      // isBeingUsed: a volume is in use while it is Bound.
      if (!pv || !isDeletionCandidate(pv, PV_PROTECTION) || rec(pv.status).phase === 'Bound') return;
      return this.removeFinalizer(this.pvs, '', pv, PV_PROTECTION);
    }
    if (parts[0] === 'vac') {
      const vac: Json | undefined = this.store.tryGet(this.vacs, '', parts[1]);
      if (!vac || !isDeletionCandidate(vac, VAC_PROTECTION)) return;
      const names = (o: unknown) => attributesClassesOf(o).includes(parts[1]);
      if (this.store.listCurrent(this.pvcs, undefined).some(names) || this.store.listCurrent(this.pvs, undefined).some(names)) return;
      return this.removeFinalizer(this.vacs, '', vac, VAC_PROTECTION);
    }
    const [, ns, name] = parts;
    const pvc: Json | undefined = this.store.tryGet(this.pvcs, ns, name);
    if (!pvc || !isDeletionCandidate(pvc, PVC_PROTECTION)) return;
    if (this.store.listCurrent(this.pods, ns).some((pod) => podUsesClaim(pod, pvc))) return;
    return this.removeFinalizer(this.pvcs, ns, pvc, PVC_PROTECTION);
  }

  private async removeFinalizer(info: ResourceInfo, ns: string, obj: Json, finalizer: string): Promise<HandlerResult> {
    try {
      const finalizers = (meta(obj).finalizers as unknown[]).filter((f) => f !== finalizer);
      await this.store.update(info, ns, str(meta(obj).name), { ...obj, metadata: { ...meta(obj), finalizers } }, controllerWriteContext(KUBE_CONTROLLER_MANAGER));
    } catch (e) {
      if (e instanceof ApiError && e.code === 404) return;
      // (written meanwhile: read it again)
      if (e instanceof ApiError && e.code === 409) return { requeueAfterMs: 0 };
      throw e;
    }
  }
}
