// Namespaces: born Active with the "kubernetes" finalizer in spec.finalizers; deletion turns
// them Terminating until the namespace controller has emptied them and finalized. Also their name
// label default and their field set (status.phase).
import { stringField, type KindFields, type Strategy } from '../../strategy.ts';
import { CORE, struct, type Defaulters } from '../../defaulting.ts';
import { isPlainObject } from '../../../util/json.ts';

export const NAMESPACE_FINALIZER = 'kubernetes';
const NAME_LABEL = 'kubernetes.io/metadata.name';

function ensureNameLabel(obj: any): void {
  obj.metadata.labels = { ...(obj.metadata.labels ?? {}), [NAME_LABEL]: obj.metadata.name };
}

export const namespaceStrategy: Strategy = {
  prepareForCreate(obj) {
    const finalizers: string[] = Array.isArray(obj.spec?.finalizers) ? obj.spec.finalizers : [];
    obj.spec = { ...(obj.spec ?? {}), finalizers: finalizers.includes(NAMESPACE_FINALIZER) ? finalizers : [...finalizers, NAMESPACE_FINALIZER] };
    obj.status = { phase: 'Active' };
    ensureNameLabel(obj);
  },
  prepareForUpdate(obj, old) {
    // spec.finalizers change only through the finalize subresource.
    obj.spec = { ...(obj.spec ?? {}), finalizers: old.spec?.finalizers ?? [] };
    if (!obj.spec.finalizers.length) delete obj.spec.finalizers;
    ensureNameLabel(obj);
  },
  pendingFinalizers: (obj) => obj.spec?.finalizers ?? [],
  prepareForDeletion(obj) {
    obj.status = { ...(obj.status ?? {}), phase: 'Terminating' };
  },
  subresourceUpdate: {
    finalize(body, old) {
      const next = structuredClone(old);
      const finalizers = body.spec?.finalizers;
      next.spec = { ...(next.spec ?? {}) };
      if (Array.isArray(finalizers) && finalizers.length) next.spec.finalizers = finalizers;
      else delete next.spec.finalizers;
      return next;
    },
  },
};

/** Namespaces, by definition. */
export const namespaceDefaults: Defaulters = {
  // SetDefaults_Namespace: the name label, when the name is known (the strategy sets it too).
  [`${CORE}Namespace`]: (n) => {
    const meta = struct(n, 'metadata');
    if (meta && typeof meta.name === 'string' && meta.name !== '') meta.labels = { ...(isPlainObject(meta.labels) ? meta.labels : {}), 'kubernetes.io/metadata.name': meta.name };
  },
};

/** Namespaces' fields for field selectors. */
export const namespaceFieldSet: KindFields = { accepted: ['status.phase', 'metadata.name'], fields: (o) => ({ 'status.phase': stringField(o?.status?.phase) }) };
