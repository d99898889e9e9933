// The typed view of the OpenAPI definitions: TypeNodes with $refs resolved and field-level
// extensions merged in, built lazily once per definition and shared by every consumer.
// The built-ins are one process-wide model; each server layers an overlay on top of it for the
// definitions CustomResourceDefinitions add at run time (see TypeModel.overlay()).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TypeNode } from './types.ts';

const DEFINITIONS_FILE = fileURLToPath(new URL('../../schemas/definitions.json', import.meta.url));

export const QUANTITY_DEFINITION = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

/** Definitions that carry arbitrary JSON even though some declare `type: object`. */
const ANY_DEFINITIONS = new Set([
  'io.k8s.apimachinery.pkg.runtime.RawExtension',
  'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1',
  'io.k8s.apimachinery.pkg.apis.meta.v1.Patch',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray',
]);

type Schema = Record<string, unknown>;

const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Schema keys that, next to a $ref, change how the referenced type behaves at that field. */
const FIELD_EXTENSIONS = [
  'x-kubernetes-patch-strategy',
  'x-kubernetes-patch-merge-key',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'enum',
] as const;

let builtins: TypeModel | undefined;

export class TypeModel {
  private readonly defs: Record<string, unknown>;
  protected readonly cache = new Map<string, TypeNode>();
  /** Definition nodes whose children are still being built (cycles). */
  private readonly building = new Set<TypeNode>();
  /** Nodes derived from a definition node while it was being built: get items/values when it completes. */
  private readonly derivedPending = new Map<TypeNode, TypeNode[]>();

  constructor(definitions: Record<string, unknown>) {
    this.defs = definitions;
  }

  /** The built-in definitions (schemas/definitions.json), read once per process. */
  static loadBuiltins(): TypeModel {
    if (!builtins) builtins = new TypeModel(JSON.parse(readFileSync(DEFINITIONS_FILE, 'utf8')) as Record<string, unknown>);
    return builtins;
  }

  /**
   * A per-server model that sees these definitions plus the ones added with setDefinitions().
   * Nodes of the definitions underneath stay shared and cached; only this model's own are rebuilt.
   */
  overlay(): TypeModel {
    return new OverlayTypeModel(this);
  }

  /** Bumps whenever the set of definitions changes (only overlays change). */
  get generation(): number {
    return 0;
  }

  /**
   * Adds or replaces the definitions one owner (a CRD name) contributes, e.g. crdDefinitions(crd).definitions.
   * `v2` optionally carries the Swagger 2.0 form /openapi/v2 publishes instead (kube strips what v2 cannot say).
   * Only overlays accept definitions: the built-in model is shared by every server in the process.
   */
  setDefinitions(_owner: string, _defs: Record<string, unknown>, _v2?: Record<string, unknown>): void {
    throw new Error('definitions can only be added to an overlay: TypeModel.loadBuiltins().overlay()');
  }

  /** Removes everything one owner contributed. */
  removeDefinitions(_owner: string): void {
    throw new Error('definitions can only be removed from an overlay: TypeModel.loadBuiltins().overlay()');
  }

  /** The owner (CRD name) of a definition added at run time; undefined for built-ins. */
  ownerOf(_definitionName: string): string | undefined {
    return undefined;
  }

  /** The /openapi/v2 form of a definition when it differs from definitions()[name], else undefined. */
  v2Definition(_definitionName: string): unknown {
    return undefined;
  }

  /** The stripped definitions as loaded. Do not mutate. */
  definitions(): Record<string, unknown> {
    return this.defs;
  }

  has(definitionName: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.defs, definitionName);
  }

  /** Resolved typed view of a definition; built on first use and cached. Throws for unknown names. */
  node(definitionName: string): TypeNode {
    const cached = this.cache.get(definitionName);
    if (cached) return cached;
    const schema = this.has(definitionName) ? this.defs[definitionName] : undefined;
    if (!isSchema(schema)) throw new Error(`unknown definition ${definitionName}`);
    return this.build(schema, definitionName);
  }

  /**
   * Typed view of an arbitrary schema (e.g. a CRD's openAPIV3Schema) whose $refs, if any, point
   * into this model's definitions ("#/definitions/..." or "#/components/schemas/..."). Not cached.
   */
  fromSchema(schema: unknown): TypeNode {
    if (!isSchema(schema)) return { type: 'any' };
    return this.build(schema, undefined);
  }

  protected build(schema: Schema, definitionName: string | undefined): TypeNode {
    const ref = refOf(schema);
    if (ref !== undefined) {
      const target = this.node(ref);
      return this.withFieldExtensions(target, schema);
    }

    const node: TypeNode = { type: 'any' };
    const type = typeof schema.type === 'string' ? schema.type : undefined;
    const format = typeof schema.format === 'string' ? schema.format : undefined;
    const props = isSchema(schema.properties) ? schema.properties : undefined;
    const addl = schema.additionalProperties;
    const items = schema.items;
    const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;

    if (definitionName !== undefined && ANY_DEFINITIONS.has(definitionName)) {
      node.type = 'any';
    } else if (definitionName === QUANTITY_DEFINITION) {
      node.type = 'int-or-string';
      node.format = 'quantity';
    } else if (format === 'int-or-string' || schema['x-kubernetes-int-or-string'] === true) {
      node.type = 'int-or-string';
    } else if (type === 'object' || (type === undefined && (props || addl !== undefined))) {
      if (props) {
        node.type = 'object';
      } else if (isSchema(addl) || addl === true) {
        node.type = 'map';
      } else if (preserve) {
        node.type = 'any';
      } else {
        node.type = 'object'; // an empty struct: every field is unknown
      }
    } else if (type === 'array' || (type === undefined && items !== undefined)) {
      node.type = 'array';
    } else if (type === 'string' || type === 'integer' || type === 'number' || type === 'boolean') {
      node.type = type;
    } else {
      node.type = 'any';
    }
    if (format !== undefined && node.format === undefined && node.type !== 'int-or-string') node.format = format;
    if (node.type === 'object') {
      node.properties = {};
      if (Array.isArray(schema.required) && schema.required.length > 0) node.required = schema.required.filter((r): r is string => typeof r === 'string');
    }
    applyExtensions(node, schema);
    if (definitionName !== undefined) {
      node.definition = definitionName;
      this.cache.set(definitionName, node);
      this.building.add(node);
    }

    if (node.type === 'object' && props) {
      const out = node.properties!;
      for (const name of Object.keys(props)) {
        const p = props[name];
        out[name] = isSchema(p) ? this.build(p, undefined) : { type: 'any' };
      }
    } else if (node.type === 'map') {
      node.values = isSchema(addl) ? this.build(addl, undefined) : { type: 'any' };
    } else if (node.type === 'array') {
      node.items = isSchema(items) ? this.build(items, undefined) : { type: 'any' };
    }

    if (definitionName !== undefined) {
      this.building.delete(node);
      const derived = this.derivedPending.get(node);
      if (derived) {
        this.derivedPending.delete(node);
        for (const d of derived) {
          if (node.values) d.values = node.values;
          if (node.items) d.items = node.items;
        }
      }
    }
    return node;
  }

  /** A $ref'd node with the field's own extensions merged in (a derived node sharing `properties`). */
  private withFieldExtensions(target: TypeNode, fieldSchema: Schema): TypeNode {
    let any = false;
    for (const k of FIELD_EXTENSIONS) {
      if (fieldSchema[k] !== undefined) {
        any = true;
        break;
      }
    }
    if (!any) return target;
    const derived: TypeNode = { ...target };
    applyExtensions(derived, fieldSchema);
    if (this.building.has(target)) {
      let list = this.derivedPending.get(target);
      if (!list) this.derivedPending.set(target, (list = []));
      list.push(derived);
    }
    return derived;
  }
}

function refOf(schema: Schema): string | undefined {
  let ref = schema.$ref;
  if (ref === undefined && Array.isArray(schema.allOf) && schema.allOf.length === 1 && isSchema(schema.allOf[0])) ref = schema.allOf[0].$ref;
  if (typeof ref !== 'string') return undefined;
  const slash = ref.lastIndexOf('/');
  return slash >= 0 ? ref.slice(slash + 1) : ref;
}

function applyExtensions(node: TypeNode, schema: Schema): void {
  const lt = schema['x-kubernetes-list-type'];
  if (lt === 'atomic' || lt === 'set' || lt === 'map') node.listType = lt;
  const keys = schema['x-kubernetes-list-map-keys'];
  if (Array.isArray(keys)) node.listMapKeys = keys.filter((k): k is string => typeof k === 'string');
  const mt = schema['x-kubernetes-map-type'];
  if (mt === 'atomic' || mt === 'granular') node.mapType = mt;
  const ps = schema['x-kubernetes-patch-strategy'];
  if (typeof ps === 'string') node.patchStrategy = ps;
  const pmk = schema['x-kubernetes-patch-merge-key'];
  if (typeof pmk === 'string') node.patchMergeKey = pmk;
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) node.preserveUnknownFields = true;
  if (schema['x-kubernetes-embedded-resource'] === true) node.embeddedResource = true;
  if (Array.isArray(schema.enum)) node.enum = schema.enum;
}

interface OwnedDefinitions {
  defs: Record<string, unknown>;
  v2?: Record<string, unknown>;
}

/**
 * Built-ins plus definitions owned by CRDs. Lookups of names the overlay does not own go to the base
 * model (whose nodes every server shares); the overlay's own nodes are cached here and dropped when
 * their definition, or any overlay definition they reach, is replaced or removed.
 */
class OverlayTypeModel extends TypeModel {
  private readonly base: TypeModel;
  /** Owners in the order they were last changed: on a name clash the later one wins. */
  private readonly owners = new Map<string, OwnedDefinitions>();
  /** Definition name -> owner currently providing it. */
  private readonly providers = new Map<string, string>();
  private merged: Record<string, unknown> | undefined;
  private gen = 0;
  /** Overlay definitions being built, innermost last: whoever is on top depends on what it resolves. */
  private readonly stack: string[] = [];
  /** name -> overlay names its node reached; and the reverse, to invalidate dependents. */
  private readonly deps = new Map<string, Set<string>>();
  private readonly dependents = new Map<string, Set<string>>();

  constructor(base: TypeModel) {
    super({});
    this.base = base;
  }

  override overlay(): TypeModel {
    throw new Error('an overlay cannot be layered again; overlay the built-in model instead');
  }

  override get generation(): number {
    return this.gen;
  }

  override setDefinitions(owner: string, defs: Record<string, unknown>, v2?: Record<string, unknown>): void {
    const prev = this.owners.get(owner);
    // Re-publishing the same schemas (a CRD status write, say) keeps nodes, caches and hashes.
    if (prev && sameDefinitions(prev.defs, defs) && sameDefinitions(prev.v2 ?? {}, v2 ?? {})) return;
    this.owners.delete(owner);
    this.owners.set(owner, { defs: { ...defs }, v2: v2 ? { ...v2 } : undefined });
    this.changed(new Set([...Object.keys(prev?.defs ?? {}), ...Object.keys(defs)]));
  }

  override removeDefinitions(owner: string): void {
    const prev = this.owners.get(owner);
    if (!prev) return;
    this.owners.delete(owner);
    this.changed(new Set(Object.keys(prev.defs)));
  }

  override ownerOf(definitionName: string): string | undefined {
    return this.providers.get(definitionName);
  }

  override v2Definition(definitionName: string): unknown {
    const owner = this.providers.get(definitionName);
    return owner === undefined ? undefined : this.owners.get(owner)!.v2?.[definitionName];
  }

  /** Built-ins plus the overlay's definitions; the same object until the next change. */
  override definitions(): Record<string, unknown> {
    if (!this.merged) {
      const out: Record<string, unknown> = { ...this.base.definitions() };
      for (const [name, owner] of this.providers) out[name] = this.owners.get(owner)!.defs[name];
      this.merged = out;
    }
    return this.merged;
  }

  override has(definitionName: string): boolean {
    return this.providers.has(definitionName) || this.base.has(definitionName);
  }

  override node(definitionName: string): TypeNode {
    const owner = this.providers.get(definitionName);
    if (owner === undefined) return this.base.node(definitionName);
    const parent = this.stack.at(-1);
    if (parent !== undefined) this.addDependency(parent, definitionName);
    const cached = this.cache.get(definitionName);
    if (cached) return cached;
    const schema = this.owners.get(owner)!.defs[definitionName];
    if (!isSchema(schema)) throw new Error(`unknown definition ${definitionName}`);
    this.stack.push(definitionName);
    try {
      return this.build(schema, definitionName);
    } catch (err) {
      this.invalidate([definitionName]);
      throw err;
    } finally {
      this.stack.pop();
    }
  }

  private addDependency(from: string, to: string): void {
    if (from === to) return;
    let out = this.deps.get(from);
    if (!out) this.deps.set(from, (out = new Set()));
    out.add(to);
    let back = this.dependents.get(to);
    if (!back) this.dependents.set(to, (back = new Set()));
    back.add(from);
  }

  /** Re-resolves which owner provides each name and drops the nodes built from what changed. */
  private changed(names: Set<string>): void {
    for (const name of names) {
      let provider: string | undefined;
      for (const [owner, o] of this.owners) if (Object.prototype.hasOwnProperty.call(o.defs, name)) provider = owner;
      if (provider === undefined) this.providers.delete(name);
      else this.providers.set(name, provider);
    }
    this.invalidate(names);
    this.merged = undefined;
    this.gen++;
  }

  private invalidate(names: Iterable<string>): void {
    const work = [...names];
    const seen = new Set<string>();
    while (work.length) {
      const n = work.pop()!;
      if (seen.has(n)) continue;
      seen.add(n);
      this.cache.delete(n);
      const back = this.dependents.get(n);
      if (back) for (const d of back) work.push(d);
      this.dependents.delete(n);
      const out = this.deps.get(n);
      if (out) for (const r of out) this.dependents.get(r)?.delete(n);
      this.deps.delete(n);
    }
  }
}

function sameDefinitions(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false;
    if (a[k] !== b[k] && JSON.stringify(a[k]) !== JSON.stringify(b[k])) return false;
  }
  return true;
}
