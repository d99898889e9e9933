// CustomResourceDefinitions: validated as kube-apiserver validates them; accepted names,
// conditions and storedVersions are set as the write happens (kube's naming and establishing
// controllers do it moments later), so a created CRD is served as soon as the create returns.
// Deletion adds the cleanup finalizer and the Terminating condition; the CRD controller then
// deletes the custom objects and removes the finalizer.
import { registerStrategy } from '../kinds/index.ts';
import { validateCustomResourceDefinition, validateCustomResourceDefinitionStatus } from './crd-validation.ts';
import { CRD_CLEANUP_FINALIZER, establishedStatus, setCondition } from './runtime.ts';
import { nowTimestamp } from '../now.ts';

registerStrategy('apiextensions.k8s.io', 'customresourcedefinitions', {
  tracksGeneration: true,
  prepareForCreate(crd) {
    crd.status = establishedStatus(crd, undefined, nowTimestamp());
  },
  prepareForUpdate(crd, old) {
    if (old.metadata.deletionTimestamp) return;
    crd.status = establishedStatus(crd, old.status, nowTimestamp());
  },
  validate: (crd) => validateCustomResourceDefinition(crd),
  validateUpdate: (crd, old, subresource) => (subresource === 'status' ? validateCustomResourceDefinitionStatus(crd) : validateCustomResourceDefinition(crd, old)),
  // Until deletion starts, the cleanup finalizer is implied, so a delete always waits for it.
  pendingFinalizers: (crd) => (crd.metadata.deletionTimestamp || crd.metadata.finalizers?.includes(CRD_CLEANUP_FINALIZER) ? [] : [CRD_CLEANUP_FINALIZER]),
  prepareForDeletion(crd) {
    const finalizers: string[] = crd.metadata.finalizers ?? [];
    if (!finalizers.includes(CRD_CLEANUP_FINALIZER)) crd.metadata.finalizers = [...finalizers, CRD_CLEANUP_FINALIZER];
    const status = crd.status ?? (crd.status = {});
    const conditions = Array.isArray(status.conditions) ? status.conditions : (status.conditions = []);
    setCondition(conditions, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionPending', message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon' }, nowTimestamp());
  },
});
