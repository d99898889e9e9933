// OpenAPI documents: /openapi/v2 (Swagger 2.0) and /openapi/v3 (an index plus one OpenAPI 3.0 document
// per group-version). Paths are synthesized from the catalog, so resources added later (CRDs) get the
// same operations, parameters and extensions as the built-ins; schemas come from the type model.
// Everything is built lazily on first request and cached per catalog generation and definitions
// object (a CRD's schema can change without its resources changing); bodies are serialized once.
import { createHash } from 'node:crypto';
import type { ResourceInfo } from '../schema/types.ts';
import { type CatalogView, servedSubresources } from './discovery.ts';
import { goJsonText } from '../go/json.ts';

/** What the builders need from the type model (TypeModel satisfies it). */
export interface ModelView {
  /** Every definition; a new object whenever the set changes (documents rebuild then), the same one otherwise. */
  definitions(): Record<string, unknown>;
  /** The /openapi/v2 form of a definition when it differs from definitions()[name] (CRD schemas, stripped as kube does). */
  v2Definition?(name: string): unknown;
  /** The owner (CRD name) of a definition added at run time; undefined for built-ins. */
  ownerOf?(name: string): string | undefined;
}

export interface OpenApiDocument {
  body: Buffer;
  /** Uppercase hex sha512 of body, unquoted (the caller quotes it for the ETag header). */
  etag: string;
  /** The same value: what /openapi/v3 puts in ?hash=. */
  hash: string;
}

// ---------------------------------------------------------------------------------------------
// Operation model shared by the v2 and v3 renderers

type ParamType = 'string' | 'boolean' | 'integer';

interface Param {
  name: string;
  in: 'query' | 'path';
  type: ParamType;
  description: string;
  required?: boolean;
}

/** A schema position: a definition name, or undefined for an untyped object. */
type SchemaName = string | undefined;

interface Body {
  schema: SchemaName;
  required: boolean;
  mediaTypes: string[];
}

interface Response {
  code: string;
  description: string;
  schema?: SchemaName;
  /** false for responses that carry no body (401). */
  hasBody: boolean;
}

interface Operation {
  method: 'get' | 'put' | 'post' | 'patch' | 'delete';
  operationId: string;
  description: string;
  tag: string;
  action?: string;
  gvk?: { group: string; version: string; kind: string };
  params: Param[];
  body?: Body;
  responses: Response[];
  produces: string[];
  consumes: string[];
}

interface PathSpec {
  path: string;
  params: Param[];
  ops: Operation[];
}

const query = (name: string, type: ParamType, description: string): Param => ({ name, in: 'query', type, description });

const P = {
  pretty: query('pretty', 'string', "If 'true', the output is pretty printed."),
  dryRun: query('dryRun', 'string', 'When present, modifications are not persisted. Valid values: All (run every dry-run stage).'),
  fieldManager: query('fieldManager', 'string', 'Name of the actor making the change, recorded in managedFields.'),
  fieldManagerApply: query('fieldManager', 'string', 'Name of the actor making the change; required for apply patches, optional otherwise.'),
  fieldValidation: query('fieldValidation', 'string', 'How to handle unknown or duplicate fields in the request body: Ignore, Warn (default) or Strict.'),
  force: query('force', 'boolean', 'Force an apply request, taking ownership of conflicting fields. Only valid for apply patches.'),
  labelSelector: query('labelSelector', 'string', 'Restrict the returned objects by their labels.'),
  fieldSelector: query('fieldSelector', 'string', 'Restrict the returned objects by their fields.'),
  limit: query('limit', 'integer', 'Maximum number of items in a list response; more are reachable with the continue token.'),
  continue: query('continue', 'string', 'Continue token from a previous chunked list response.'),
  resourceVersion: query('resourceVersion', 'string', 'Constrains which resource versions a list or watch may be served from.'),
  resourceVersionMatch: query('resourceVersionMatch', 'string', 'How resourceVersion applies to list calls: Exact or NotOlderThan.'),
  sendInitialEvents: query('sendInitialEvents', 'boolean', 'With watch=true, start the watch with synthetic events for the current state, then a bookmark.'),
  timeoutSeconds: query('timeoutSeconds', 'integer', 'Timeout for the list or watch call.'),
  watch: query('watch', 'boolean', 'Watch for changes and stream add, update and remove notifications.'),
  allowWatchBookmarks: query('allowWatchBookmarks', 'boolean', 'Request BOOKMARK watch events.'),
  gracePeriodSeconds: query('gracePeriodSeconds', 'integer', 'Seconds before the object should be deleted; zero means immediately.'),
  propagationPolicy: query('propagationPolicy', 'string', 'Whether and how garbage collection runs: Orphan, Background or Foreground.'),
  orphanDependents: query('orphanDependents', 'boolean', 'Deprecated: use propagationPolicy. Whether dependents are orphaned.'),
  namespace: { name: 'namespace', in: 'path', type: 'string', required: true, description: 'object name and auth scope, such as for teams and projects' } as Param,
};

const LIST_PARAMS: Param[] = [
  P.allowWatchBookmarks,
  P.continue,
  P.fieldSelector,
  P.labelSelector,
  P.limit,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
  P.watch,
];
const WRITE_PARAMS: Param[] = [P.dryRun, P.fieldManager, P.fieldValidation];
const PATCH_PARAMS: Param[] = [P.dryRun, P.fieldManagerApply, P.fieldValidation, P.force];
const DELETE_PARAMS: Param[] = [P.dryRun, P.gracePeriodSeconds, P.orphanDependents, P.propagationPolicy];
const DELETE_COLLECTION_PARAMS: Param[] = [
  P.continue,
  P.dryRun,
  P.fieldSelector,
  P.gracePeriodSeconds,
  P.labelSelector,
  P.limit,
  P.orphanDependents,
  P.propagationPolicy,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
];

const nameParam = (kind: string): Param => ({ name: 'name', in: 'path', type: 'string', required: true, description: `name of the ${kind}` });

const OBJECT_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
const LIST_TYPES = [...OBJECT_TYPES, 'application/json;stream=watch', 'application/vnd.kubernetes.protobuf;stream=watch'];
const ANY_TYPE = ['*/*'];
const PATCH_TYPES_BUILTIN = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];
// Custom resources have no Go struct to drive strategic merge, so kube does not offer it for them.
const PATCH_TYPES_CUSTOM = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const DEF_STATUS = `${META}Status`;
const DEF_DELETE_OPTIONS = `${META}DeleteOptions`;
const DEF_PATCH = `${META}Patch`;
const DEF_API_VERSIONS = `${META}APIVersions`;
const DEF_API_GROUP_LIST = `${META}APIGroupList`;
const DEF_API_GROUP = `${META}APIGroup`;
const DEF_API_RESOURCE_LIST = `${META}APIResourceList`;
const DEF_VERSION_INFO = 'io.k8s.apimachinery.pkg.version.Info';

const UNAUTHORIZED: Response = { code: '401', description: 'Unauthorized', hasBody: false };
const ok = (schema: SchemaName): Response => ({ code: '200', description: 'OK', schema, hasBody: true });
const created = (schema: SchemaName): Response => ({ code: '201', description: 'Created', schema, hasBody: true });
const accepted = (schema: SchemaName): Response => ({ code: '202', description: 'Accepted', schema, hasBody: true });

/** kube's operation-id word for a path segment: letters kept, other characters dropped and the next letter upper-cased. */
function operationWord(s: string, capitalizeFirst: boolean): string {
  let out = '';
  let capitalize = capitalizeFirst;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    const letter = /\p{L}/u.test(ch);
    if (letter || ch === '_' || (i !== 0 && /[0-9]/.test(ch))) {
      out += capitalize ? ch.toUpperCase() : ch;
      capitalize = false;
    } else {
      capitalize = true;
    }
  }
  return out;
}

/** "AppsV1", "CoreV1", "RbacAuthorizationV1": the group-version part of operation ids. */
export function operationGroupVersion(group: string, version?: string): string {
  const g = group === '' ? 'core' : group.replace(/\.k8s\.io$/, '');
  return operationWord(g, true) + (version ? operationWord(version, true) : '');
}

/** "apps_v1", "core_v1", "rbacAuthorization_v1"; "apps" without a version. */
export function operationTag(group: string, version?: string): string {
  const g = group === '' ? 'core' : group.replace(/\.k8s\.io$/, '');
  return operationWord(g, false) + (version ? `_${operationWord(version, false)}` : '');
}

function sortParams(params: Param[]): Param[] {
  return [...params].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

// ---------------------------------------------------------------------------------------------
// Schema context: definitions, the GVK index, closure and $ref rewriting

function refName(ref: string): string {
  return ref.slice(ref.lastIndexOf('/') + 1);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

type Target = 'v2' | 'v3';

/** $ref targets named in a definition, by definition object: definitions are immutable, so this outlives a context. */
const refsByDefinition = new WeakMap<object, string[]>();

function referencedNames(def: unknown): string[] {
  if (!isRecord(def)) return [];
  let names = refsByDefinition.get(def);
  if (!names) {
    const found = new Set<string>();
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) {
        for (const n of node) walk(n);
      } else if (isRecord(node)) {
        for (const [k, v] of Object.entries(node)) {
          if (k === '$ref' && typeof v === 'string') found.add(refName(v));
          else walk(v);
        }
      }
    };
    walk(def);
    names = [...found];
    refsByDefinition.set(def, names);
  }
  return names;
}

class SchemaContext {
  readonly defs: Record<string, unknown>;
  private readonly model: ModelView;
  private readonly gvkIndex = new Map<string, string>();
  private readonly v2Cache = new Map<string, unknown>();
  private readonly v3Cache = new Map<string, unknown>();
  private readonly refsCache = { v2: new Map<string, string[]>(), v3: new Map<string, string[]>() };

  constructor(model: ModelView) {
    const defs = model.definitions();
    this.defs = defs;
    this.model = model;
    for (const [name, def] of Object.entries(defs)) {
      if (!isRecord(def)) continue;
      const gvks = def['x-kubernetes-group-version-kind'];
      if (!Array.isArray(gvks)) continue;
      const tail = name.slice(name.lastIndexOf('.') + 1);
      for (const gvk of gvks) {
        if (!isRecord(gvk)) continue;
        const key = `${gvk.group ?? ''}/${gvk.version ?? ''}/${gvk.kind ?? ''}`;
        const current = this.gvkIndex.get(key);
        // Prefer the definition named after the kind (shared types such as DeleteOptions claim many GVKs).
        if (current === undefined || (tail === gvk.kind && current.slice(current.lastIndexOf('.') + 1) !== gvk.kind)) this.gvkIndex.set(key, name);
      }
    }
  }

  has(name: string | undefined): name is string {
    return name !== undefined && Object.prototype.hasOwnProperty.call(this.defs, name);
  }

  known(name: string): SchemaName {
    return this.has(name) ? name : undefined;
  }

  /** Whether a definition was added at run time (a CRD's), not built in. */
  isCustom(name: SchemaName): boolean {
    return name !== undefined && this.model.ownerOf?.(name) !== undefined;
  }

  /** A definition as one document kind publishes it: CRD definitions have their own v2 form. */
  private raw(name: string, target: Target): unknown {
    if (target === 'v2') {
      const v2 = this.model.v2Definition?.(name);
      if (v2 !== undefined) return v2;
    }
    return this.defs[name];
  }

  byGVK(group: string, version: string, kind: string): SchemaName {
    return this.gvkIndex.get(`${group}/${version}/${kind}`);
  }

  kindDef(r: ResourceInfo): SchemaName {
    if (this.has(r.definition)) return r.definition;
    return this.byGVK(r.group, r.version, r.kind);
  }

  listDef(r: ResourceInfo): SchemaName {
    const byGvk = this.byGVK(r.group, r.version, r.listKind);
    if (byGvk) return byGvk;
    const kindDef = this.kindDef(r);
    if (kindDef) {
      const guess = kindDef.slice(0, kindDef.lastIndexOf('.') + 1) + r.listKind;
      if (this.has(guess)) return guess;
    }
    return undefined;
  }

  /** Definitions referenced directly by one definition. */
  private refsOf(name: string, target: Target): string[] {
    const cache = this.refsCache[target];
    let refs = cache.get(name);
    if (!refs) {
      refs = referencedNames(this.raw(name, target)).filter((n) => this.has(n));
      cache.set(name, refs);
    }
    return refs;
  }

  /** The roots plus every definition reachable from them, sorted by name. */
  closure(roots: Iterable<string>, target: Target): string[] {
    const seen = new Set<string>();
    const stack = [...roots].filter((n) => this.has(n));
    while (stack.length) {
      const n = stack.pop()!;
      if (seen.has(n)) continue;
      seen.add(n);
      for (const r of this.refsOf(n, target)) if (!seen.has(r)) stack.push(r);
    }
    return [...seen].sort();
  }

  /** A definition with its $refs pointing at #/definitions/ (v2) or #/components/schemas/ (v3). */
  converted(name: string, target: 'v2' | 'v3'): unknown {
    const cache = target === 'v2' ? this.v2Cache : this.v3Cache;
    let out = cache.get(name);
    if (out === undefined) {
      out = this.convert(this.raw(name, target), target);
      cache.set(name, out);
    }
    return out;
  }

  private convert(node: unknown, target: 'v2' | 'v3'): unknown {
    if (Array.isArray(node)) return node.map((n) => this.convert(n, target));
    if (!isRecord(node)) return node;
    const ref = node.$ref;
    if (typeof ref === 'string') {
      const name = refName(ref);
      const rest: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(node)) if (k !== '$ref') rest[k] = this.convert(v, target);
      // A reference to a type the model lacks degrades to an untyped object rather than dangling.
      if (!this.has(name)) return { type: 'object', ...rest };
      if (target === 'v2') return { $ref: `#/definitions/${name}`, ...rest };
      const to = { $ref: `#/components/schemas/${name}` };
      // OpenAPI 3.0 ignores siblings of $ref, so kube wraps the reference in allOf when it carries more.
      return Object.keys(rest).length === 0 ? to : { ...rest, allOf: [to] };
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) out[k] = this.convert(v, target);
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// Path synthesis

function resourceBase(group: string, version: string): string {
  return group ? `/apis/${group}/${version}` : `/api/${version}`;
}

function titleWord(s: string): string {
  return s ? s[0]!.toUpperCase() + s.slice(1) : s;
}

/** Everything a resource's paths take from the definitions; with the resource's own fields it determines them. */
interface ResolvedSchemas {
  kindDef: SchemaName;
  listDef: SchemaName;
  status: SchemaName;
  deleteOptions: SchemaName;
  patchDef: SchemaName;
  builtin: boolean;
  /** Schema of each served subresource. */
  subDefs: Record<string, SchemaName>;
}

function resolveSchemas(r: ResourceInfo, ctx: SchemaContext): ResolvedSchemas {
  const kindDef = ctx.kindDef(r);
  const subDefs: Record<string, SchemaName> = {};
  for (const [sub, info] of servedSubresources(r)) {
    subDefs[sub] = info.kind ? ctx.byGVK(info.group ?? r.group, info.version ?? r.version, info.kind) : kindDef;
  }
  return {
    kindDef,
    listDef: ctx.listDef(r),
    status: ctx.known(DEF_STATUS),
    deleteOptions: ctx.known(DEF_DELETE_OPTIONS),
    patchDef: ctx.known(DEF_PATCH),
    // By the definition's origin, not its name: a CRD in a *.k8s.io group gets an io.k8s.* name too.
    builtin: (r.definition ?? kindDef ?? '').startsWith('io.k8s.') && !ctx.isCustom(kindDef),
    subDefs,
  };
}

/** The fields of a resource its paths depend on, with what they resolve to: equal keys give equal paths. */
function resourceKey(r: ResourceInfo, resolved: ResolvedSchemas): string {
  return JSON.stringify([r.group, r.version, r.resource, r.kind, r.namespaced, r.verbs, servedSubresources(r), resolved]);
}

function resourcePaths(r: ResourceInfo, resolved: ResolvedSchemas): PathSpec[] {
  const out: PathSpec[] = [];
  const base = resourceBase(r.group, r.version);
  const scoped = r.namespaced ? `${base}/namespaces/{namespace}` : base;
  const collectionPath = `${scoped}/${r.resource}`;
  const itemPath = `${collectionPath}/{name}`;
  const gv = operationGroupVersion(r.group, r.version);
  const tag = operationTag(r.group, r.version);
  const ns = r.namespaced ? 'Namespaced' : '';
  const kind = r.kind;
  const gvk = { group: r.group, version: r.version, kind };
  const { kindDef, listDef, status, deleteOptions, patchDef, builtin } = resolved;
  const patchTypes = builtin ? PATCH_TYPES_BUILTIN : PATCH_TYPES_CUSTOM;
  const has = (verb: string): boolean => r.verbs.includes(verb);
  const scopeParams = r.namespaced ? [P.namespace, P.pretty] : [P.pretty];

  const collectionOps: Operation[] = [];
  if (has('list')) {
    collectionOps.push({
      method: 'get',
      operationId: `list${gv}${ns}${kind}`,
      description: `list or watch objects of kind ${kind}`,
      tag,
      action: 'list',
      gvk,
      params: sortParams(LIST_PARAMS),
      responses: [ok(listDef), UNAUTHORIZED],
      produces: LIST_TYPES,
      consumes: ANY_TYPE,
    });
  }
  if (has('create')) {
    collectionOps.push({
      method: 'post',
      operationId: `create${gv}${ns}${kind}`,
      description: `create ${article(kind)} ${kind}`,
      tag,
      action: 'post',
      gvk,
      params: sortParams(WRITE_PARAMS),
      body: { schema: kindDef, required: true, mediaTypes: ANY_TYPE },
      responses: [ok(kindDef), created(kindDef), accepted(kindDef), UNAUTHORIZED],
      produces: OBJECT_TYPES,
      consumes: ANY_TYPE,
    });
  }
  if (has('deletecollection')) {
    collectionOps.push({
      method: 'delete',
      operationId: `delete${gv}Collection${ns}${kind}`,
      description: `delete collection of ${kind}`,
      tag,
      action: 'deletecollection',
      gvk,
      params: sortParams(DELETE_COLLECTION_PARAMS),
      body: { schema: deleteOptions, required: false, mediaTypes: ANY_TYPE },
      responses: [ok(status), UNAUTHORIZED],
      produces: OBJECT_TYPES,
      consumes: ANY_TYPE,
    });
  }
  if (collectionOps.length) out.push({ path: collectionPath, params: scopeParams, ops: collectionOps });

  const itemParams = [nameParam(kind), ...scopeParams];
  const itemOps: Operation[] = [];
  if (has('get')) {
    itemOps.push({
      method: 'get',
      operationId: `read${gv}${ns}${kind}`,
      description: `read the specified ${kind}`,
      tag,
      action: 'get',
      gvk,
      params: [],
      responses: [ok(kindDef), UNAUTHORIZED],
      produces: OBJECT_TYPES,
      consumes: ANY_TYPE,
    });
  }
  if (has('update')) {
    itemOps.push({
      method: 'put',
      operationId: `replace${gv}${ns}${kind}`,
      description: `replace the specified ${kind}`,
      tag,
      action: 'put',
      gvk,
      params: sortParams(WRITE_PARAMS),
      body: { schema: kindDef, required: true, mediaTypes: ANY_TYPE },
      responses: [ok(kindDef), created(kindDef), UNAUTHORIZED],
      produces: OBJECT_TYPES,
      consumes: ANY_TYPE,
    });
  }
  if (has('patch')) {
    itemOps.push({
      method: 'patch',
      operationId: `patch${gv}${ns}${kind}`,
      description: `partially update the specified ${kind}`,
      tag,
      action: 'patch',
      gvk,
      params: sortParams(PATCH_PARAMS),
      body: { schema: patchDef, required: true, mediaTypes: patchTypes },
      responses: [ok(kindDef), created(kindDef), UNAUTHORIZED],
      produces: OBJECT_TYPES,
      consumes: patchTypes,
    });
  }
  if (has('delete')) {
    itemOps.push({
      method: 'delete',
      operationId: `delete${gv}${ns}${kind}`,
      description: `delete ${article(kind)} ${kind}`,
      tag,
      action: 'delete',
      gvk,
      params: sortParams(DELETE_PARAMS),
      body: { schema: deleteOptions, required: false, mediaTypes: ANY_TYPE },
      responses: [ok(status), accepted(status), UNAUTHORIZED],
      produces: OBJECT_TYPES,
      consumes: ANY_TYPE,
    });
  }
  if (itemOps.length) out.push({ path: itemPath, params: itemParams, ops: itemOps });

  for (const [sub, info] of servedSubresources(r)) {
    const subKind = info.kind ?? kind;
    const subGroup = info.kind ? (info.group ?? r.group) : r.group;
    const subVersion = info.kind ? (info.version ?? r.version) : r.version;
    const subGvk = { group: subGroup, version: subVersion, kind: subKind };
    const subDef = resolved.subDefs[sub];
    const suffix = `${gv}${ns}${kind}${titleWord(sub)}`;
    const ops: Operation[] = [];
    if (info.verbs.includes('get')) {
      ops.push({
        method: 'get',
        operationId: `read${suffix}`,
        description: `read ${sub} of the specified ${kind}`,
        tag,
        action: 'get',
        gvk: subGvk,
        params: [],
        responses: [ok(subDef), UNAUTHORIZED],
        produces: OBJECT_TYPES,
        consumes: ANY_TYPE,
      });
    }
    if (info.verbs.includes('update')) {
      ops.push({
        method: 'put',
        operationId: `replace${suffix}`,
        description: `replace ${sub} of the specified ${kind}`,
        tag,
        action: 'put',
        gvk: subGvk,
        params: sortParams(WRITE_PARAMS),
        body: { schema: subDef, required: true, mediaTypes: ANY_TYPE },
        responses: [ok(subDef), created(subDef), UNAUTHORIZED],
        produces: OBJECT_TYPES,
        consumes: ANY_TYPE,
      });
    }
    // A create-only subresource (pods/binding) takes its options on the path, as kube's does.
    const createOnly = info.verbs.includes('create') && !info.verbs.includes('get');
    if (createOnly) {
      ops.push({
        method: 'post',
        operationId: `create${suffix}`,
        description: `create ${sub} of ${article(kind)} ${kind}`,
        tag,
        action: 'post',
        gvk: subGvk,
        params: [],
        body: { schema: subDef, required: true, mediaTypes: ANY_TYPE },
        responses: [ok(subDef), created(subDef), accepted(subDef), UNAUTHORIZED],
        produces: OBJECT_TYPES,
        consumes: ANY_TYPE,
      });
    }
    if (info.verbs.includes('patch')) {
      ops.push({
        method: 'patch',
        operationId: `patch${suffix}`,
        description: `partially update ${sub} of the specified ${kind}`,
        tag,
        action: 'patch',
        gvk: subGvk,
        params: sortParams(PATCH_PARAMS),
        body: { schema: patchDef, required: true, mediaTypes: patchTypes },
        responses: [ok(subDef), created(subDef), UNAUTHORIZED],
        produces: OBJECT_TYPES,
        consumes: patchTypes,
      });
    }
    if (ops.length) out.push({ path: `${itemPath}/${sub}`, params: createOnly ? sortParams([...WRITE_PARAMS, nameParam(subKind), ...scopeParams]) : [nameParam(subKind), ...scopeParams], ops });
  }

  if (r.namespaced && has('list')) {
    // The all-namespaces list carries its parameters on the path item, as kube's does.
    out.push({
      path: `${base}/${r.resource}`,
      params: sortParams([...LIST_PARAMS, P.pretty]),
      ops: [
        {
          method: 'get',
          operationId: `list${gv}${kind}ForAllNamespaces`,
          description: `list or watch objects of kind ${kind}`,
          tag,
          action: 'list',
          gvk,
          params: [],
          responses: [ok(listDef), UNAUTHORIZED],
          produces: LIST_TYPES,
          consumes: ANY_TYPE,
        },
      ],
    });
  }
  return out;
}

function article(kind: string): string {
  return /^[AEIOU]/.test(kind) ? 'an' : 'a';
}

function discoveryOp(path: string, operationId: string, description: string, tag: string, schema: SchemaName, types: string[] = OBJECT_TYPES): PathSpec {
  return {
    path,
    params: [],
    ops: [{ method: 'get', operationId, description, tag, params: [], responses: [ok(schema), UNAUTHORIZED], produces: types, consumes: types }],
  };
}

// ---------------------------------------------------------------------------------------------
// Rendering

const SECURITY_SCHEME = { type: 'apiKey', description: 'Bearer Token authentication', name: 'authorization', in: 'header' };

function schemaFor(name: SchemaName, target: 'v2' | 'v3'): Record<string, unknown> {
  if (name === undefined) return { type: 'object' };
  return { $ref: target === 'v2' ? `#/definitions/${name}` : `#/components/schemas/${name}` };
}

function gvkExtension(gvk: { group: string; version: string; kind: string }): Record<string, string> {
  return { group: gvk.group, kind: gvk.kind, version: gvk.version };
}

function renderParamV2(p: Param): Record<string, unknown> {
  const out: Record<string, unknown> = { description: p.description, in: p.in, name: p.name };
  if (p.required) out.required = true;
  out.type = p.type;
  out.uniqueItems = true;
  return out;
}

function renderParamV3(p: Param): Record<string, unknown> {
  const out: Record<string, unknown> = { name: p.name, in: p.in, description: p.description };
  if (p.required) out.required = true;
  out.schema = { type: p.type, uniqueItems: true };
  return out;
}

const METHOD_ORDER = ['delete', 'get', 'patch', 'post', 'put'] as const;

function renderPathV2(spec: PathSpec): Record<string, unknown> {
  const item: Record<string, unknown> = {};
  for (const method of METHOD_ORDER) {
    const op = spec.ops.find((o) => o.method === method);
    if (!op) continue;
    const o: Record<string, unknown> = { consumes: op.consumes, description: op.description, operationId: op.operationId };
    const params: Record<string, unknown>[] = [];
    if (op.body) {
      const b: Record<string, unknown> = { in: 'body', name: 'body' };
      if (op.body.required) b.required = true;
      b.schema = schemaFor(op.body.schema, 'v2');
      params.push(b);
    }
    for (const p of op.params) params.push(renderParamV2(p));
    if (params.length) o.parameters = params;
    o.produces = op.produces;
    const responses: Record<string, unknown> = {};
    for (const r of op.responses) responses[r.code] = r.hasBody ? { description: r.description, schema: schemaFor(r.schema, 'v2') } : { description: r.description };
    o.responses = responses;
    o.schemes = ['https'];
    o.tags = [op.tag];
    if (op.action) o['x-kubernetes-action'] = op.action;
    if (op.gvk) o['x-kubernetes-group-version-kind'] = gvkExtension(op.gvk);
    item[method] = o;
  }
  if (spec.params.length) item.parameters = spec.params.map(renderParamV2);
  return sortKeys(item);
}

function renderPathV3(spec: PathSpec): Record<string, unknown> {
  const item: Record<string, unknown> = {};
  for (const method of METHOD_ORDER) {
    const op = spec.ops.find((o) => o.method === method);
    if (!op) continue;
    const o: Record<string, unknown> = { tags: [op.tag], description: op.description, operationId: op.operationId };
    if (op.params.length) o.parameters = op.params.map(renderParamV3);
    if (op.body) {
      const content: Record<string, unknown> = {};
      for (const mt of op.body.mediaTypes) content[mt] = { schema: schemaFor(op.body.schema, 'v3') };
      o.requestBody = op.body.required ? { content, required: true } : { content };
    }
    const responses: Record<string, unknown> = {};
    for (const r of op.responses) {
      if (!r.hasBody) {
        responses[r.code] = { description: r.description };
        continue;
      }
      const content: Record<string, unknown> = {};
      for (const mt of op.produces) content[mt] = { schema: schemaFor(r.schema, 'v3') };
      responses[r.code] = { description: r.description, content };
    }
    o.responses = responses;
    if (op.action) o['x-kubernetes-action'] = op.action;
    if (op.gvk) o['x-kubernetes-group-version-kind'] = gvkExtension(op.gvk);
    item[method] = o;
  }
  if (spec.params.length) item.parameters = spec.params.map(renderParamV3);
  return sortKeys(item);
}

function sortKeys(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o).sort()) out[k] = o[k];
  return out;
}

/** Every definition name a set of paths refers to directly. */
function rootSchemas(specs: PathSpec[]): Set<string> {
  const roots = new Set<string>();
  for (const s of specs) {
    for (const op of s.ops) {
      if (op.body?.schema) roots.add(op.body.schema);
      for (const r of op.responses) if (r.schema) roots.add(r.schema);
    }
  }
  return roots;
}

function document(body: unknown): OpenApiDocument {
  const buf = Buffer.from(goJsonText(JSON.stringify(body)));
  const hash = createHash('sha512').update(buf).digest('hex').toUpperCase();
  return { body: buf, etag: hash, hash };
}

// ---------------------------------------------------------------------------------------------

interface DocSpecs {
  /** What the specs were built from (see planSpecs). */
  key: string;
  specs: PathSpec[];
}

interface State {
  generation: number;
  /** The model's definitions() the state was built against. */
  defs: Record<string, unknown>;
  ctx?: SchemaContext;
  byGroupVersion?: Map<string, ResourceInfo[]>;
  specs: Map<string, DocSpecs | null>;
  docs: Map<string, OpenApiDocument | null>;
  v2?: OpenApiDocument;
  index?: object;
}

export class OpenApi {
  private readonly catalog: CatalogView;
  private readonly model: ModelView;
  private readonly kubernetesVersion: string;
  private state: State;
  /** Per-document result of the last build, kept across generations with what it was built from. */
  private readonly reuse = new Map<string, { signature: string; doc: OpenApiDocument }>();
  private readonly specReuse = new Map<string, DocSpecs>();
  /** Identity numbers of definition objects: a document is reused while every schema it holds is the same object. */
  private readonly defIds = new WeakMap<object, number>();
  private defCounter = 0;

  constructor(catalog: CatalogView, model: ModelView, kubernetesVersion: string) {
    this.catalog = catalog;
    this.model = model;
    this.kubernetesVersion = kubernetesVersion;
    this.state = { generation: catalog.generation, defs: model.definitions(), specs: new Map(), docs: new Map() };
  }

  private current(): State {
    const defs = this.model.definitions();
    if (this.state.generation !== this.catalog.generation || this.state.defs !== defs) {
      this.state = { generation: this.catalog.generation, defs, specs: new Map(), docs: new Map() };
    }
    return this.state;
  }

  private context(): SchemaContext {
    const s = this.current();
    if (!s.ctx) s.ctx = new SchemaContext(this.model);
    return s.ctx;
  }

  /** The /openapi/v3 document names, sorted: api, api/v1, apis, apis/<g>, apis/<g>/<v>, version. */
  private documentNames(): string[] {
    const names = ['api', 'apis', 'version'];
    for (const g of this.catalog.groups()) {
      if (g.name === '') {
        for (const v of g.versions) names.push(`api/${v}`);
      } else {
        names.push(`apis/${g.name}`);
        for (const v of g.versions) names.push(`apis/${g.name}/${v}`);
      }
    }
    return [...new Set(names)].sort();
  }

  /** The path specs of one /openapi/v3 document with the key they were built from, or null when there is no such document. */
  private specsFor(name: string): DocSpecs | null {
    const s = this.current();
    if (s.specs.has(name)) return s.specs.get(name)!;
    const plan = this.planSpecs(name);
    let out: DocSpecs | null = null;
    if (plan) {
      // Paths are a function of the key: a document whose resources and schemas resolve as before keeps its specs.
      const prior = this.specReuse.get(name);
      out = prior && prior.key === plan.key ? prior : { key: plan.key, specs: plan.build() };
      this.specReuse.set(name, out);
    } else {
      this.specReuse.delete(name);
    }
    s.specs.set(name, out);
    return out;
  }

  private planSpecs(name: string): { key: string; build: () => PathSpec[] } | null {
    const ctx = this.context();
    const fixed = (specs: PathSpec[]) => ({ key: JSON.stringify(specs), build: () => specs });
    if (name === 'api') return fixed([discoveryOp('/api/', 'getCoreAPIVersions', 'get available API versions', 'core', ctx.known(DEF_API_VERSIONS))]);
    if (name === 'apis') return fixed([discoveryOp('/apis/', 'getAPIVersions', 'get available API versions', 'apis', ctx.known(DEF_API_GROUP_LIST))]);
    if (name === 'version') return fixed([discoveryOp('/version/', 'getCodeVersion', 'get the version information for this server', 'version', ctx.known(DEF_VERSION_INFO), ['application/json'])]);
    const parts = name.split('/');
    let group: string;
    let version: string | undefined;
    if (parts[0] === 'api' && parts.length === 2) {
      group = '';
      version = parts[1];
    } else if (parts[0] === 'apis' && (parts.length === 2 || parts.length === 3) && parts[1]) {
      group = parts[1];
      version = parts[2];
    } else {
      return null;
    }
    const g = this.catalog.groups().find((x) => x.name === group);
    if (!g) return null;
    if (version === undefined) {
      return fixed([discoveryOp(`/apis/${group}/`, `get${operationGroupVersion(group)}APIGroup`, 'get information of a group', operationTag(group), ctx.known(DEF_API_GROUP))]);
    }
    if (!version || !g.versions.includes(version)) return null;
    const v = version;
    const resourceList = ctx.known(DEF_API_RESOURCE_LIST);
    const resources = this.resourcesByGroupVersion().get(`${group}/${version}`) ?? [];
    const resolved = resources.map((r) => resolveSchemas(r, ctx));
    return {
      key: JSON.stringify([resourceList, ...resources.map((r, i) => resourceKey(r, resolved[i]!))]),
      build: () => {
        const specs: PathSpec[] = [
          discoveryOp(`${resourceBase(group, v)}/`, `get${operationGroupVersion(group, v)}APIResources`, 'get available resources', operationTag(group, v), resourceList),
        ];
        resources.forEach((r, i) => specs.push(...resourcePaths(r, resolved[i]!)));
        return specs;
      },
    };
  }

  /** catalog.resources() by "group/version", in catalog order; once per state. */
  private resourcesByGroupVersion(): Map<string, ResourceInfo[]> {
    const s = this.current();
    if (!s.byGroupVersion) {
      const m = new Map<string, ResourceInfo[]>();
      for (const r of this.catalog.resources()) {
        const k = `${r.group}/${r.version}`;
        let list = m.get(k);
        if (!list) m.set(k, (list = []));
        list.push(r);
      }
      s.byGroupVersion = m;
    }
    return s.byGroupVersion;
  }

  private render(specs: PathSpec[], target: 'v2' | 'v3'): Record<string, unknown> {
    const paths: Record<string, unknown> = {};
    for (const s of [...specs].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
      paths[s.path] = target === 'v2' ? renderPathV2(s) : renderPathV3(s);
    }
    return paths;
  }

  private schemas(specs: PathSpec[], target: Target, closure = this.context().closure(rootSchemas(specs), target)): Record<string, unknown> {
    const ctx = this.context();
    const out: Record<string, unknown> = {};
    for (const n of closure) out[n] = ctx.converted(n, target);
    return out;
  }

  /** GET /openapi/v2: the whole API as Swagger 2.0 JSON. */
  v2(): OpenApiDocument {
    const s = this.current();
    if (!s.v2) {
      const specs: PathSpec[] = [];
      for (const name of this.documentNames()) specs.push(...(this.specsFor(name)?.specs ?? []));
      s.v2 = document({
        swagger: '2.0',
        info: { title: 'Kubernetes', version: this.kubernetesVersion },
        paths: this.render(specs, 'v2'),
        definitions: this.schemas(specs, 'v2'),
        securityDefinitions: { BearerToken: SECURITY_SCHEME },
        security: [{ BearerToken: [] }],
      });
    }
    return s.v2;
  }

  /** GET /openapi/v3: one entry per document, each URL carrying the document's hash. */
  v3Index(): object {
    const s = this.current();
    if (!s.index) {
      const paths: Record<string, { serverRelativeURL: string }> = {};
      for (const name of this.documentNames()) {
        const doc = this.v3(name);
        if (doc) paths[name] = { serverRelativeURL: `/openapi/v3/${name}?hash=${doc.hash}` };
      }
      s.index = { paths };
    }
    return s.index;
  }

  /** GET /openapi/v3/<name>, e.g. "api/v1", "apis/apps/v1", "apis/apps", "version". */
  v3(path: string): OpenApiDocument | undefined {
    const name = path.replace(/^\/+/, '').replace(/\/+$/, '');
    const s = this.current();
    if (!s.docs.has(name)) {
      const planned = this.specsFor(name);
      let doc: OpenApiDocument | null = null;
      if (planned) {
        // A catalog or schema change elsewhere leaves this document as it was: reuse it rather than rebuild.
        const { specs, key } = planned;
        const ctx = this.context();
        const closure = ctx.closure(rootSchemas(specs), 'v3');
        const signature = `${key}\n${closure.map((n) => `${n}#${this.definitionId(ctx.defs[n])}`).join('\n')}`;
        const prior = this.reuse.get(name);
        if (prior && prior.signature === signature) {
          doc = prior.doc;
        } else {
          doc = document({
            openapi: '3.0.0',
            info: { title: 'Kubernetes', version: this.kubernetesVersion },
            paths: this.render(specs, 'v3'),
            components: { schemas: this.schemas(specs, 'v3', closure), securitySchemes: { BearerToken: SECURITY_SCHEME } },
          });
          this.reuse.set(name, { signature, doc });
        }
      } else {
        this.reuse.delete(name);
      }
      s.docs.set(name, doc);
    }
    return s.docs.get(name) ?? undefined;
  }

  private definitionId(def: unknown): string {
    if (typeof def !== 'object' || def === null) return JSON.stringify(def) ?? 'undefined';
    let id = this.defIds.get(def);
    if (id === undefined) this.defIds.set(def, (id = ++this.defCounter));
    return String(id);
  }
}
