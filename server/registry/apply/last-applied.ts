// Client-side apply, as server-side apply meets it: kubectl's last-applied-configuration annotation
// (kept in sync by kubectl's applies; its fields may be taken without a conflict at the first
// server-side apply) and client-go's csaupgrade of managedFields.
import { goJsonMarshal } from '../../go/json.ts';
import type { TypeNode } from '../../schema/types.ts';
import { isPlainObject } from '../../util/json.ts';
import { FieldSet } from './fieldpath/set.ts';
import { compareObjects } from './typed/compare.ts';
import { fieldsOf } from './typed/tofieldset.ts';
import { metadataField, type ManagedFieldsEntry } from './managed-fields.ts';

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
/** The only manager whose applies upgrade client-side-applied objects and keep last-applied in sync. */
export const KUBECTL_MANAGER = 'kubectl';
/** metav1 TotalAnnotationSizeLimitB */
const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/**
 * The fields kubectl's first server-side apply may take over without a conflict: those its
 * last-applied-configuration annotation sets to the values the object still has.
 */
export function allowedConflictsFromLastApplied(node: TypeNode, liveObj: unknown, apiVersion: string): FieldSet | undefined {
  const annotations = metadataField(liveObj, 'annotations');
  const lastApplied = isPlainObject(annotations) ? annotations[LAST_APPLIED_ANNOTATION] : undefined;
  if (typeof lastApplied !== 'string' || lastApplied === '') return undefined;
  let obj: unknown;
  try {
    obj = JSON.parse(lastApplied);
  } catch {
    return undefined;
  }
  if (!isPlainObject(obj) || obj.apiVersion !== apiVersion) return undefined;
  try {
    const set = fieldsOf(node, obj);
    const cmp = compareObjects(node, obj, liveObj);
    return set.difference(cmp.modified).difference(cmp.added).difference(cmp.removed);
  } catch {
    return undefined;
  }
}

/** The annotation kubectl keeps for client-side apply: the configuration as Go's JSON encoder writes it. */
export function buildLastApplied(config: Record<string, unknown>): string {
  const copy = structuredClone(config);
  const meta = copy.metadata;
  if (isPlainObject(meta) && isPlainObject(meta.annotations)) delete meta.annotations[LAST_APPLIED_ANNOTATION];
  return goJsonMarshal(copy) + '\n';
}

/** Sets the annotation in an object's metadata, unless that makes the annotations too large (then drops it). */
export function setLastApplied(meta: Record<string, unknown>, value: string): void {
  const annotations = { ...((meta.annotations as Record<string, unknown> | undefined) ?? {}) };
  annotations[LAST_APPLIED_ANNOTATION] = value;
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) size += Buffer.byteLength(k) + Buffer.byteLength(String(v));
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) delete annotations[LAST_APPLIED_ANNOTATION];
  meta.annotations = annotations;
}

/**
 * kubectl's client-side migration (client-go csaupgrade): the Update entries of the client-side
 * apply managers are merged into the server-side manager's Apply entry (converting the most recent
 * one when that entry does not exist yet), so a later apply does not leave stale owners behind.
 */
export function upgradeManagedFields(entries: readonly ManagedFieldsEntry[], csaManagers: readonly string[], ssaManager: string, subresource = ''): ManagedFieldsEntry[] {
  let current = entries.map((e) => ({ ...e }));
  const sub = (e: ManagedFieldsEntry): string => e.subresource ?? '';
  for (const csa of csaManagers) {
    const isCsa = (e: ManagedFieldsEntry): boolean => e.manager === csa && e.operation === 'Update' && sub(e) === subresource;
    let target = current.findIndex((e) => e.manager === ssaManager && e.operation === 'Apply' && sub(e) === subresource);
    if (target < 0) {
      target = current.findIndex(isCsa);
      if (target < 0) continue;
      current[target] = { ...current[target], operation: 'Apply', manager: ssaManager };
    }
    const t = current[target];
    const source = current.find((e) => isCsa(e) && e.apiVersion === t.apiVersion);
    if (source) current[target] = { ...t, fieldsV1: FieldSet.fromFieldsV1(t.fieldsV1).union(FieldSet.fromFieldsV1(source.fieldsV1)).toFieldsV1() };
    current = current.filter((e) => !isCsa(e));
  }
  return current;
}
