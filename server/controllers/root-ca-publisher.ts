// The root CA publisher kube-controller-manager runs as "root-ca-cert-publisher" (kube's
// pkg/controller/certificates/rootcacertpublisher/publisher.go): every active namespace has the
// `kube-root-ca.crt` ConfigMap, whose `ca.crt` is the cluster CA a pod verifies the API server
// with (what the projected kube-api-access volume mounts). It is made when the namespace is
// created (or at start), made again when deleted, and set back when its data or its description
// annotation are changed: the data exactly {ca.crt}, the rest of the object (labels, other
// annotations, binaryData) left as the user made it, as kube leaves it. A client of the registry,
// writing as the loopback identity under kube-controller-manager's field manager; namespaces are
// keys of a work queue (workqueue.ts), each retried on its own backoff.
import type { GenericStore } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { EventLog } from '../storage/log/event-log.ts';
import type { LogEvent } from '../storage/log/types.ts';
import type { ResourceInfo } from '../schema/types.ts';
import { ApiError } from '../errors.ts';
import { realClock, type Clock, type HandlerResult } from './workqueue.ts';
import { QueueController, controllerWriteContext } from './queue-controller.ts';
import { createIgnoringGoneNamespace, isActiveNamespace, KUBE_CONTROLLER_MANAGER } from './namespace-content.ts';

export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
export const DESCRIPTION_ANNOTATION = 'kubernetes.io/description';
/** kube's text, word for word. */
export const ROOT_CA_DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. ' +
  'No other usage is guaranteed across distributions of Kubernetes clusters.';
/** kube-controller-manager runs it with one worker. */
const WORKERS = 1;

/** What the publisher reads of a stored ConfigMap. */
interface ConfigMap {
  metadata: { annotations?: Record<string, string>; [k: string]: unknown };
  data?: Record<string, string>;
  [k: string]: unknown;
}

export class RootCaPublisher extends QueueController {
  private readonly nsInfo: ResourceInfo;
  private readonly cmInfo: ResourceInfo;

  constructor(
    private readonly store: GenericStore,
    catalog: ResourceCatalog,
    log: EventLog,
    /** The cluster CA's PEM, as it is in the data directory's pki/ca.crt. */
    private readonly rootCaPem: string,
    clock: Clock = realClock,
  ) {
    super(log, { name: 'root CA cert publisher', clock, workers: WORKERS });
    this.nsInfo = catalog.lookup('', 'v1', 'namespaces')!;
    this.cmInfo = catalog.lookup('', 'v1', 'configmaps')!;
  }

  protected onCommit(events: readonly LogEvent[]): void {
    for (const e of events) {
      if (e.key.res === 'namespaces') {
        // kube: every namespace added, and every update of an Active one.
        if (e.type === 'ADDED' || (e.type === 'MODIFIED' && e.object?.status?.phase === 'Active')) this.queue.add(e.key.name);
      } else if (e.key.res === 'configmaps' && e.key.name === ROOT_CA_CONFIGMAP && e.key.ns && e.type !== 'ADDED') {
        // Its own ConfigMap deleted or changed (a change that is its own write finds nothing to do).
        this.queue.add(e.key.ns);
      }
    }
  }

  /** Every namespace already stored. */
  protected enqueueExisting(): void {
    for (const ns of this.store.listReadable(this.nsInfo, undefined)) this.queue.add(ns.metadata.name);
  }

  protected async sync(namespace: string): Promise<HandlerResult> {
    const ctx = controllerWriteContext(KUBE_CONTROLLER_MANAGER);
    const cm: ConfigMap | undefined = this.store.tryGet(this.cmInfo, namespace, ROOT_CA_CONFIGMAP);
    if (!cm) {
      // (kube tries and lets NamespaceLifecycle refuse; asking first spares a refused write)
      if (!isActiveNamespace(this.store.tryGet(this.nsInfo, '', namespace))) return;
      const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: ROOT_CA_CONFIGMAP, annotations: { [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION } }, data: { 'ca.crt': this.rootCaPem } };
      await createIgnoringGoneNamespace(this.store, this.cmInfo, namespace, body, ctx);
      return;
    }
    if (this.holdsRootCa(cm)) return;
    // The data exactly {ca.crt}; the description back if it is missing or empty. The read
    // object's resourceVersion makes it a conditional update.
    const annotations = { ...(cm.metadata.annotations ?? {}), [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION };
    try {
      await this.store.update(this.cmInfo, namespace, ROOT_CA_CONFIGMAP, { ...cm, metadata: { ...cm.metadata, annotations }, data: { 'ca.crt': this.rootCaPem } }, ctx);
    } catch (e) {
      // Deleted meanwhile: its deletion queued the namespace again.
      if (e instanceof ApiError && e.code === 404) return;
      throw e;
    }
  }

  /** kube's test: the data is exactly {ca.crt: the CA} and the description annotation is not empty (any text will do). */
  private holdsRootCa(cm: ConfigMap): boolean {
    const data = cm.data ?? {};
    const keys = Object.keys(data);
    return keys.length === 1 && data['ca.crt'] === this.rootCaPem && !!cm.metadata.annotations?.[DESCRIPTION_ANNOTATION];
  }
}
