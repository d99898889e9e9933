// Pruning and defaulting of custom objects over a compiled form of the schema, in one walk.
//
// The reference algorithms are pruneValue and defaultValue in schema-validator.ts (prune the
// whole object, then default it); this computes the same result. Each schema node is compiled
// once into a WalkNode (its properties as a Map, its defaults as a list, the flags a walk tests),
// so a walk does no per-key schema probing. Pruning and defaulting share one pass over the
// object: a kept child is pruned and then defaulted before its parent's own defaulting, which is
// equivalent because defaulting a parent only touches keys that are absent or null, never a
// subtree pruning visited. Defaults are never pruned (as in the reference: they are added after
// pruning). Paths of pruned fields are only built when something is pruned.
//
// Schema quirks the reference has are kept on purpose, e.g. `k in properties` (prototype keys
// count) where it uses `in`, own keys where it uses hasOwnProperty; the rare shapes where the
// schema pruning follows differs from the one defaulting follows take two walks of that child.
import { isPlainObject } from '../../util/json.ts';

type Obj = Record<string, any>;

/** ObjectMeta's JSON fields: unknown keys in an embedded resource's metadata are dropped. */
export const OBJECT_META_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

/** One schema node, compiled for walks. */
export interface WalkNode {
  readonly s: Obj;
  /** x-kubernetes-preserve-unknown-fields: true */
  readonly preserve: boolean;
  /** x-kubernetes-embedded-resource: true */
  readonly embedded: boolean;
  /** s.properties when it is an object (kept for the reference's `k in properties` tests). */
  readonly props: Obj | undefined;
  /** Own properties: their node, or null for a property whose schema is not an object. */
  readonly child: Map<string, WalkNode | null>;
  /** s.items when it is an object. */
  readonly items: WalkNode | undefined;
  /** s.additionalProperties when it is an object. */
  readonly addl: WalkNode | undefined;
  /** additionalProperties is set and not false: unknown keys are kept (pruned inside). */
  readonly addlAllows: boolean;
  /** Properties (own, object schemas) with a default, in the schema's order. */
  readonly defaults: { key: string; node: WalkNode }[];
  readonly hasDefault: boolean;
  readonly nullable: boolean;
  /** Defaulting can change an object here: it has properties or additionalProperties. */
  readonly objectWork: boolean;
  /**
   * The keys of the last object walked here, by position, with what child.get gave for each:
   * objects of one schema node mostly list their keys in one order, and comparing a key with
   * the one remembered (names are interned: a pointer compare) is cheaper than a hash lookup.
   */
  readonly lastKeys: string[];
  readonly lastChild: (WalkNode | null | undefined)[];
}

/** Positions remembered per node (objects with more keys look the rest up). */
const REMEMBERED_KEYS = 64;

/** child.get(k) for the key at position i of an object at n, through n's remembered keys. */
function childAt(n: WalkNode, k: string, i: number): WalkNode | null | undefined {
  if (i >= REMEMBERED_KEYS) return n.child.get(k);
  if (n.lastKeys[i] === k) return n.lastChild[i];
  const c = n.child.get(k);
  n.lastKeys[i] = k;
  n.lastChild[i] = c;
  return c;
}

const nodes = new WeakMap<Obj, WalkNode>();

/** The compiled form of a schema node (cached: compiled schemas are never changed). */
export function walkNode(s: Obj): WalkNode {
  let n = nodes.get(s);
  if (n) return n;
  const props = isPlainObject(s.properties) ? s.properties : undefined;
  const child = new Map<string, WalkNode | null>();
  const defaults: { key: string; node: WalkNode }[] = [];
  const addlS = s.additionalProperties;
  n = {
    s,
    preserve: s['x-kubernetes-preserve-unknown-fields'] === true,
    embedded: s['x-kubernetes-embedded-resource'] === true,
    props,
    child,
    items: undefined,
    addl: undefined,
    addlAllows: addlS !== undefined && addlS !== false,
    defaults,
    hasDefault: s.default !== undefined,
    nullable: s.nullable === true,
    objectWork: props !== undefined || isPlainObject(addlS),
    lastKeys: [],
    lastChild: [],
  };
  // Cached before the children are compiled: a schema is a tree, but stay safe on shared nodes.
  nodes.set(s, n);
  if (props) {
    for (const k of Object.keys(props)) {
      const p = props[k];
      const c = isPlainObject(p) ? walkNode(p) : null;
      child.set(k, c);
      if (c && c.hasDefault) defaults.push({ key: k, node: c });
    }
  }
  (n as { items: WalkNode | undefined }).items = isPlainObject(s.items) ? walkNode(s.items) : undefined;
  (n as { addl: WalkNode | undefined }).addl = isPlainObject(addlS) ? walkNode(addlS) : undefined;
  return n;
}

const cloneJSON = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));
/** A fresh copy of a node's default (scalars are immutable: no copy needed). */
const defaultOf = (n: WalkNode): unknown => {
  const d = n.s.default;
  if (typeof d === 'object' && d !== null) return cloneJSON(d);
  return Object.is(d, -0) ? 0 : d; // the JSON round trip turns -0 into 0
};

// ---------------------------------------------------------------------------------------------
// Paths of pruned fields, built on demand from a stack of segments (number: list index).

type Seg = string | number;

function joinPath(base: string, segs: Seg[], n: number): string {
  let p = base;
  for (let i = 0; i < n; i++) {
    const s = segs[i];
    p = typeof s === 'number' ? `${p}[${s}]` : p ? `${p}.${s}` : s;
  }
  return p;
}

class Walk {
  readonly segs: Seg[] = [];
  depth = 0;
  constructor(
    readonly base: string,
    readonly pruned: string[] | undefined,
  ) {}

  push(s: Seg): void {
    this.segs[this.depth++] = s;
  }
  pop(): void {
    this.depth--;
  }
  /** Records the path of key k of the current value as pruned. */
  prunedKey(k: string): void {
    if (!this.pruned) return;
    const p = joinPath(this.base, this.segs, this.depth);
    this.pruned.push(p ? `${p}.${k}` : k);
  }
}

// ---------------------------------------------------------------------------------------------
// Defaulting alone (what reads apply to stored objects): defaultValue over compiled nodes.

/** Structural defaulting in place, as defaultValue in schema-validator.ts. */
export function defaultWalk(n: WalkNode, x: unknown): void {
  if (Array.isArray(x)) {
    const it = n.items;
    if (!it) return;
    for (let i = 0; i < x.length; i++) {
      if (x[i] === null && it.hasDefault && !it.nullable) x[i] = defaultOf(it);
      defaultWalk(it, x[i]);
    }
    return;
  }
  if (!isPlainObject(x) || !n.objectWork) return;
  // The reference drops nulls, adds defaults, then walks every key. Here the values already
  // there are walked first (defaulting a child never touches its siblings, and nothing below a
  // null or a scalar changes), then this object's own nulls and defaults, as pruneWalk does.
  let sawNull = false;
  let at = 0;
  for (const k in x) {
    const v = x[k];
    const i = at++;
    if (v === null) sawNull = true;
    else if (typeof v === 'object') {
      const d = childAt(n, k, i) || defaultNodeFor(n, k);
      if (d) defaultWalk(d, v);
    }
  }
  ownDefaults(n, x, sawNull);
}

/** An object's own defaulting once its values are walked: nulls dropped, defaults added (and walked). */
function ownDefaults(n: WalkNode, x: Obj, sawNull: boolean): void {
  if (sawNull) dropNonNullableNulls(n, x);
  if (n.defaults.length) {
    const added: { key: string; node: WalkNode }[] = [];
    addDefaults(n, x, added);
    for (const d of added) defaultWalk(d.node, x[d.key]);
  }
  if (sawNull && n.addl) {
    // additionalProperties' default replaces a null value (after the properties' defaults).
    const addl = n.addl;
    for (const k of Object.keys(x)) {
      if (x[k] !== null || defaultNodeFor(n, k) !== addl) continue;
      if (addl.hasDefault && !addl.nullable) {
        x[k] = defaultOf(addl);
        defaultWalk(addl, x[k]);
      }
    }
  }
}

/** PruneNonNullableNullsWithoutDefaults, as the reference words it. */
function dropNonNullableNulls(n: WalkNode, x: Obj): void {
  const props = n.props;
  const addl = n.addl?.s;
  for (const k of Object.keys(x)) {
    if (x[k] !== null) continue;
    const ps = props && isPlainObject(props[k]) ? props[k] : !props || !(k in props) ? addl : undefined;
    if (ps && ps.nullable !== true && ps.default === undefined) delete x[k];
  }
}

/** Absent (or non-nullable null) properties with a default get a copy of it; `added` collects them. */
function addDefaults(n: WalkNode, x: Obj, added: { key: string; node: WalkNode }[] | undefined): void {
  for (const d of n.defaults) {
    if (!(d.key in x) || (x[d.key] === null && !d.node.nullable)) {
      x[d.key] = defaultOf(d.node);
      if (added) added.push(d);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Pruning, with or without defaulting in the same walk.

/** pruneValue with no schema: every field of every object goes. */
function pruneAll(x: unknown, w: Walk): void {
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) {
      w.push(i);
      pruneAll(x[i], w);
      w.pop();
    }
    return;
  }
  if (!isPlainObject(x)) return;
  for (const k of Object.keys(x)) {
    w.prunedKey(k);
    delete x[k];
  }
}

function pruneEmbeddedMeta(meta: Obj, w: Walk): void {
  for (const k of Object.keys(meta)) {
    if (!OBJECT_META_FIELDS.has(k)) {
      w.prunedKey(k);
      delete meta[k];
    }
  }
}

/**
 * The schema defaulting uses for key k of an object at n (the reference's
 * `props && isPlainObject(props[k]) ? props[k] : additionalProperties`), compiled.
 */
function defaultNodeFor(n: WalkNode, k: string): WalkNode | undefined {
  const c = n.child.get(k);
  if (c) return c;
  if (c === undefined && n.props && isPlainObject(n.props[k])) return walkNode(n.props[k]);
  return n.addl;
}

/**
 * Prunes x along n (pruneValue) and, when `defaults`, defaults it too (defaultValue of the
 * pruned value). `root`: x is the resource root (apiVersion, kind and metadata are kept).
 */
function pruneWalk(n: WalkNode, x: unknown, w: Walk, defaults: boolean, root: boolean): void {
  if (Array.isArray(x)) {
    const it = n.items;
    if (!it) {
      // No item schema: pruning drops everything inside (unless unknown fields are preserved);
      // defaulting has nothing to apply.
      if (!n.preserve) pruneAll(x, w);
      return;
    }
    for (let i = 0; i < x.length; i++) {
      w.push(i);
      pruneWalk(it, x[i], w, defaults, false);
      w.pop();
      if (defaults && x[i] === null && it.hasDefault && !it.nullable) {
        x[i] = defaultOf(it);
        defaultWalk(it, x[i]);
      }
    }
    return;
  }
  if (!isPlainObject(x)) return;
  const embedded = root || n.embedded;
  const preserve = n.preserve;
  let sawNull = false;
  // for-in rather than Object.keys: no key array, and V8 reads x[k] through the enumeration
  // cache. Deleting the key being visited is safe; nothing is added until the loop is over.
  let at = 0;
  for (const k in x) {
    const v = x[k];
    if (v === null) sawNull = true;
    // The common case first: a property the schema declares as an object (and no embedded-resource keys).
    let p = childAt(n, k, at++);
    if (p && !embedded) {
      if (v === null || typeof v !== 'object') continue; // nothing below a scalar to prune or default
      w.push(k);
      pruneWalk(p, v, w, defaults, false);
      w.pop();
      continue;
    }
    // What pruning does with this key: keep it as is (kept), walk it along a schema (p), or
    // prune everything in it (none); otherwise it goes.
    let kept = false;
    if (embedded && (k === 'apiVersion' || k === 'kind') && (preserve || typeof v === 'string')) kept = true;
    else if (embedded && k === 'metadata' && isPlainObject(v)) {
      if (!root) {
        w.push(k);
        pruneEmbeddedMeta(v, w);
        w.pop();
      }
      kept = true;
    } else if (p === undefined) {
      if (preserve) {
        p = n.addl;
        if (!p) kept = true;
      } else if (n.addlAllows) p = n.addl ?? null;
      else {
        if (!(root && w.depth === 0 && w.base === '' && (k === 'apiVersion' || k === 'kind' || k === 'metadata'))) w.prunedKey(k);
        delete x[k];
        continue;
      }
    }
    if (v === null || typeof v !== 'object') continue; // nothing below a scalar to prune or default
    const d = defaults ? defaultNodeFor(n, k) : undefined;
    if (!kept && p && p === d) {
      w.push(k);
      pruneWalk(p, v, w, true, false);
      w.pop();
      continue;
    }
    if (!kept) {
      w.push(k);
      if (p) pruneWalk(p, v, w, false, false);
      else pruneAll(v, w);
      w.pop();
    }
    if (d) defaultWalk(d, v);
  }
  if (defaults && n.objectWork) ownDefaults(n, x, sawNull);
}

/** Prunes obj in place along schema node s; returns the pruned paths (pruneValue's). */
export function pruneCompiled(s: Obj, obj: unknown, isResourceRoot: boolean): string[] {
  const pruned: string[] = [];
  pruneWalk(walkNode(s), obj, new Walk('', pruned), false, isResourceRoot);
  return pruned;
}

/** Prunes then defaults obj in place in one walk; returns the pruned paths. */
export function pruneAndDefaultCompiled(s: Obj, obj: unknown, isResourceRoot: boolean): string[] {
  const pruned: string[] = [];
  pruneWalk(walkNode(s), obj, new Walk('', pruned), true, isResourceRoot);
  return pruned;
}

/** Defaults obj in place along schema node s (defaultValue's result). */
export function defaultCompiled(s: Obj, obj: unknown): void {
  defaultWalk(walkNode(s), obj);
}
