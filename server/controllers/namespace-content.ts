// What the controllers that put an object in every namespace (service-accounts.ts,
// root-ca-publisher.ts) share: which namespaces get one, the field manager kube's writes carry,
// and a create that accepts losing the race with the namespace's deletion.
import type { GenericStore, RequestContext } from '../registry/store.ts';
import type { ResourceInfo } from '../schema/types.ts';
import { ApiError } from '../errors.ts';

/**
 * The field manager of kube-controller-manager's writes: the apiserver derives it from the
 * User-Agent ("kube-controller-manager/v1.x (...)"), and managedFields of a kube cluster's
 * `default` ServiceAccounts and `kube-root-ca.crt` ConfigMaps name it.
 */
export const KUBE_CONTROLLER_MANAGER = 'kube-controller-manager';

/** What these controllers read of a stored Namespace. */
interface NamespacePhase {
  metadata?: { deletionTimestamp?: string };
  status?: { phase?: string };
}

/** kube's controllers create only in a namespace whose phase is Active (not Terminating, not gone). */
export function isActiveNamespace(ns: NamespacePhase | undefined): boolean {
  return ns !== undefined && !ns.metadata?.deletionTimestamp && ns.status?.phase === 'Active';
}

/**
 * Creates the object; one that exists already, a namespace that went meanwhile (404) or is being
 * terminated (NamespaceLifecycle's 403 with the NamespaceTerminating cause) is no failure, as kube
 * does not retry those. Anything else throws, and the work queue retries it.
 */
export async function createIgnoringGoneNamespace(store: GenericStore, info: ResourceInfo, namespace: string, body: Record<string, unknown>, ctx: RequestContext): Promise<void> {
  try {
    await store.create(info, namespace, body, ctx);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    if (e.reason === 'AlreadyExists' || e.code === 404) return;
    if (e.code === 403 && e.details?.causes?.some((c) => c.reason === 'NamespaceTerminating')) return;
    throw e;
  }
}
