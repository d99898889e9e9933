// Shared shapes of the generated schemas (schemas/*.json) and of the typed view
// the server derives from them once at start. Patch, validation, apply, tables,
// discovery and OpenAPI all read these; nothing re-parses the raw documents per request.
import type { CustomResourceVersion } from '../registry/crd/runtime.ts';

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

