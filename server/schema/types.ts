// Shared shapes of the generated schemas (schemas/*.json) and of the typed view
// the server derives from them once at start. Patch, validation, apply, tables,
// discovery and OpenAPI all read these; nothing re-parses the raw documents per request.
// A resource a CRD serves carries the contract below (CustomResourceVersion), which
// registry/crd/runtime.ts implements: declared here, so schema/ imports nothing above it.

/** One REST resource as the server serves it (built-in from schemas/resources.json, or a CRD later). */
export interface ResourceInfo {
  group: string; // "" for the core group
  version: string;
  resource: string; // plural, e.g. "deployments"
  kind: string;
  listKind: string;
  singularName: string;
  namespaced: boolean;
  verbs: string[]; // sorted: create, delete, deletecollection, get, list, patch, update, watch
  shortNames?: string[];
  categories?: string[];
  /** Subresources served, keyed by name ("status", "scale", ...). */
  subresources?: Record<string, SubresourceInfo>;
  /** Definition name in schemas/definitions.json, e.g. "io.k8s.api.apps.v1.Deployment". */
  definition?: string;
  /** Versions of the same group/resource; storage happens in one of them. */
  storageVersion?: string;
  /** Set for resources a CustomResourceDefinition serves. */
  custom?: CustomResourceVersion;
}

export interface SubresourceInfo {
  verbs: string[];
  /** Kind served at the subresource when it differs (Scale); group/version likewise. */
  kind?: string;
  group?: string;
  version?: string;
}

export interface GroupInfo {
  name: string; // "" for core
  versions: string[]; // preferred first
  preferredVersion: string;
}

/** schemas/resources.json */
export interface ResourceCatalogFile {
  kubernetesVersion: string; // e.g. "v1.35.0"
  groups: GroupInfo[];
  resources: ResourceInfo[];
}

/**
 * The typed view of one schema position. Field-level extensions (patch strategy, list
 * type...) are merged into the node found at that field, so consumers never chase $refs.
 * Nodes may be shared and cyclic (JSONSchemaProps refers to itself).
 */
export interface TypeNode {
  /** "object" with properties = struct; "map" = object with additionalProperties;
   *  "any" = no type information (RawExtension, JSON, preserve-unknown-fields). */
  type: 'object' | 'map' | 'array' | 'string' | 'integer' | 'number' | 'boolean' | 'int-or-string' | 'any';
  format?: string;
  properties?: Record<string, TypeNode>;
  required?: string[];
  /** For "map": the value type. */
  values?: TypeNode;
  /** For "array": the element type. */
  items?: TypeNode;
  enum?: unknown[];
  listType?: 'atomic' | 'set' | 'map';
  listMapKeys?: string[];
  mapType?: 'atomic' | 'granular';
  /** x-kubernetes-patch-strategy, e.g. "merge", "retainKeys", "merge,retainKeys", "replace". */
  patchStrategy?: string;
  patchMergeKey?: string;
  preserveUnknownFields?: boolean;
  embeddedResource?: boolean;
  /** Definition name this node came from, if any. */
  definition?: string;
}

/** One cause of a 422 Invalid (validation/field.ts owns it; re-exported for the contract). */
export type { FieldError } from '../validation/field.ts';
import type { FieldError } from '../validation/field.ts';

/** One column of a metav1.Table. */
export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** A kind's Table columns and the cells of one object's row (kube's rest.TableConvertor). */
export interface TablePrinter {
  columns: TableColumnDefinition[];
  cells(obj: unknown, now: number): unknown[];
  /** The order a list's rows are printed in, when the kind's list printer sorts (kube's printFlowSchemaList); else the list's. */
  rowOrder?(a: unknown, b: unknown): number;
}

// ---------------------------------------------------------------------------------------------
// What one served version of a CustomResourceDefinition offers the rest of the server: pruning
// and defaults, validation, conversion, scale paths, field-selector fields and the Table printer.
// registry/crd/runtime.ts implements it with ajv, CEL, JSONPath and conversion webhooks.

/** One served version of a CRD, attached to its ResourceInfo as `custom`. */
export interface CustomResourceVersion {
  crdName: string;
  group: string;
  version: string;
  kind: string;
  storageVersion: string;
  /** The CRD is being deleted: reads and deletes work, creates are refused. */
  terminating: boolean;
  hasStatus: boolean;
  scale?: ScalePaths;
  /** spec.versions[].selectableFields JSON paths (".spec.color"). */
  selectableFields: string[];
  /** The object's field set for field selectors: metadata fields plus the selectable fields. */
  fields(obj: any): Record<string, string>;
  deprecationWarning?: string;
  converter: Converter;
  /** openAPIV3Schema pruner/defaulter of this version. */
  compiled(): CustomResourceSchema;
  /** The schema as a TypeNode with metadata typed as ObjectMeta (for patch, apply, field validation). */
  typeNode(): TypeNode;
  printer(): TablePrinter;
  /**
   * Schema, CEL and list-type errors of obj (old on updates, for transition rules and ratcheting);
   * the rule failures ratcheting forgives go to `warnings`, as kube sends them.
   */
  validate(obj: unknown, old: unknown, warnings?: string[]): FieldError[];
}

/** A version's compiled openAPIV3Schema, as the store applies it to objects (crd/schema-validator.ts). */
export interface CustomResourceSchema {
  /** Applies schema defaults in place (and drops non-nullable nulls without default). */
  applyDefaults(obj: unknown): void;
  /** Whether the schema has a default anywhere: without one, applyDefaults changes only objects holding a null. */
  readonly hasDefaults: boolean;
  /** prune(obj) then applyDefaults(obj), in one walk of the object; returns prune's paths. */
  pruneAndDefault(obj: unknown): string[];
}

/**
 * kube's service lister, for webhooks named by a `service` reference: the Service object, or
 * undefined when its namespace has none of that name.
 */
export type ServiceLookup = (namespace: string, name: string) => unknown;

/** Converts a CRD's objects between its versions (crd/conversion.ts: None or Webhook). */
export interface Converter {
  readonly strategy: 'None' | 'Webhook';
  /** True when conversion needs no I/O (None): callers may then use convertSync. */
  readonly trivial: boolean;
  /**
   * Converts objects (each with its own apiVersion) to `${group}/${toVersion}`. Objects already
   * at that version come back as the same object; the inputs are never modified (results of
   * None share nested values with their inputs). Rejects with a ConversionError (or, for a
   * caBundle kube cannot load, a 500 InternalError). `services` resolves a webhook's `service`
   * reference (none given: no Service exists).
   */
  convert(objects: unknown[], toVersion: string, services?: ServiceLookup): Promise<any[]>;
  /** Present only when trivial. Throws what convert would reject with. */
  convertSync?(objects: unknown[], toVersion: string): any[];
}

/** The scale subresource's paths, compiled. */
export interface ScalePaths {
  specReplicas: SimpleJsonPath;
  statusReplicas: SimpleJsonPath;
  labelSelector?: SimpleJsonPath;
}

/** A scale path (".spec.replicas"), compiled by crd/jsonpath.ts: unstructured's nested-field accessors. */
export interface SimpleJsonPath {
  readonly path: string;
  /** The map keys, e.g. ["spec", "replicas"] for ".spec.replicas". */
  readonly fields: readonly string[];
  /** unstructured.NestedFieldNoCopy: the value, or found=false when a key is missing or an ancestor is null. */
  get(obj: unknown): { value: unknown; found: boolean };
  /** unstructured.NestedInt64: throws when the value is not an integer. */
  getInt64(obj: unknown): { value: number; found: boolean };
  /** unstructured.NestedString: throws when the value is not a string. */
  getString(obj: unknown): { value: string; found: boolean };
  /** unstructured.SetNestedField: creates missing (or null) maps on the way; throws when one is not a map. */
  set(obj: Record<string, unknown>, value: unknown): void;
}
