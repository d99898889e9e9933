// The key order kube-apiserver writes an object in, which clients see byte for byte: a built-in
// object's metadata in ObjectMeta's Go struct order, a custom object (a map in kube) sorted but
// for managedFields' FieldsV1. The store orders each object once per write, never per read.
import { TypeModel } from '../schema/model.ts';
import { goJsonOrder } from '../schema/go-order.ts';
import { goMapOrder, sortedMap } from '../go/map-order.ts';

/** ObjectMeta fields in the order kube-apiserver serializes them (Go struct order). */
const META_ORDER = ['name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields'];

/**
 * Rebuilds an object with kind, apiVersion, metadata first and metadata in kube's order, so
 * stored objects serialize as kube-apiserver's do; done once per write, never per read.
 */
export function canonicalOrder(body: any, kind: string, apiVersion: string): any {
  const out: any = { kind, apiVersion, metadata: metadataInOrder(body.metadata) };
  for (const k of Object.keys(body)) if (!(k in out)) out[k] = body[k];
  return out;
}

const FIELDS_V1 = new Set(['fieldsV1']);

/**
 * A custom object's keys as kube writes them (it holds the object as a map: sorted) at its top
 * level and all through its metadata but FieldsV1, which keeps structured-merge-diff's order (the
 * same as sorted unless a level lists several list keys, values or indexes). Below the other
 * top-level fields the order is the client's: sorting every level cost about a tenth of a custom
 * object's create. Returns obj when it is in that order already.
 */
export function customObjectOrder(obj: any): any {
  return sortedMap(obj, (value, key) => (key === 'metadata' ? goMapOrder(value, FIELDS_V1) : value));
}

/**
 * ObjectMeta with its fields in kube's order. The server sets some after the body was read (uid,
 * creationTimestamp; resourceVersion as the write commits): `rvSlot` holds resourceVersion's
 * place with "" for the write to fill in.
 */
export function metadataInOrder(meta: any, rvSlot = false): any {
  const out: any = {};
  for (const k of META_ORDER) {
    if (meta[k] !== undefined) out[k] = meta[k];
    else if (rvSlot && k === 'resourceVersion') out[k] = '';
  }
  for (const k of Object.keys(meta)) if (!(k in out)) out[k] = meta[k];
  return out;
}

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/**
 * ObjectMeta as a struct writes it, from a custom object's (sorted) metadata: its fields, each
 * managedFields entry's and owner reference's in Go struct order (kube's PartialObjectMetadata
 * of a custom object).
 */
export function objectMetaInOrder(meta: any): any {
  return goJsonOrder(TypeModel.loadBuiltins().node(OBJECT_META), meta);
}
