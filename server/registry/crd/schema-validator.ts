// Validation, pruning and defaulting of custom objects against one CRD version's
// openAPIV3Schema, compiled once per version (the caller caches the result).
//
// Validation runs the schema through ajv (configured for OpenAPI v3 as Kubernetes reads it:
// `nullable`, boolean exclusiveMinimum/Maximum, x-kubernetes-int-or-string, only the formats
// apiextensions-apiserver validates, RE2 patterns) and translates ajv's errors into the field
// errors kube-apiserver derives from kube-openapi results, e.g.
//   spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"
//   spec.size: Unsupported value: "x": supported values: "a", "b"
//   spec.count: Invalid value: 11: spec.count in body should be less than or equal to 10
// Paths inside those messages use kube-openapi's names: "spec.items[0].name", map values
// "spec.labels.key". Embedded resources (apiVersion, kind, full ObjectMeta) and then list-type
// set/map uniqueness are checked afterwards, as the CR strategy does, with apimachinery paths
// ("spec.ports[1]").
//
// Pruning and defaulting follow apiextensions-apiserver's structural algorithms: unknown fields
// go except under x-kubernetes-preserve-unknown-fields; embedded resources keep apiVersion,
// kind and metadata; defaults fill absent (or non-nullable null) properties of objects that
// exist, recursing into what was defaulted.
import { createRequire } from 'node:module';
import type { CustomResourceSchema, TypeNode } from '../../schema/types.ts';
import { childPath, duplicateError, goValue, indexPath, invalidError, notSupportedError, requiredError, tooLongError, tooManyError, typeInvalidError, jsonTypeName, type FieldError } from '../../validation/field.ts';
import { TypeModel } from '../../schema/model.ts';
import { deepEqual, isPlainObject } from '../../util/json.ts';
import { validateObjectMeta } from '../../validation/object-meta.ts';
import { isDNS1035Label } from '../../validation/names.ts';
import { goQuote } from '../../go/strconv.ts';
import { goFloat, goSharpV } from '../../go/fmt.ts';
import { re2Matcher } from '../../go/regexp.ts';
import { FORMAT_CHECKS, isSupportedFormat } from '../../validation/formats.ts';
import { OBJECT_META_FIELDS, defaultCompiled, pruneAndDefaultCompiled, pruneCompiled } from './prune-default.ts';

type Obj = Record<string, any>;


// ---------------------------------------------------------------------------------------------
// ajv, configured once.

const require = createRequire(import.meta.url);
const AjvClass: any = require('ajv');
const AjvCtor: new (opts: object) => any = AjvClass.default ?? AjvClass;

const re2Engine: any = (pattern: string) => re2Matcher(pattern);
re2Engine.code = 'RE2 via @bufbuild/cel';

/**
 * Two instances: `check` (stops at the first error, no error details) answers whether an object
 * is valid, at about half the cost; `report` (every error, with data and schema) is compiled
 * for a schema only once an object fails it, and its errors become the field errors.
 * `checkUtf16` is `check` measuring maxLength in UTF-16 units rather than counting code points
 * (kube counts code points, which is never more): for schemas without minLength it can only
 * fail objects `report` then accepts, never pass one it would fail.
 */
type AjvKind = 'check' | 'checkUtf16' | 'report';
const ajvInstances: Partial<Record<AjvKind, any>> = {};
const registeredFormats = new Set<string>();

function ajvInstance(kind: AjvKind): any {
  let ajv = ajvInstances[kind];
  if (!ajv) {
    const report = kind === 'report';
    ajv = ajvInstances[kind] = new AjvCtor({
      unicode: kind !== 'checkUtf16',
      allErrors: report,
      strict: false,
      verbose: report,
      validateFormats: true,
      validateSchema: false,
      logger: false,
      code: { regExp: re2Engine },
    });
    for (const name of registeredFormats) addFormat(ajv, name);
  }
  return ajv;
}

const addFormat = (ajv: any, name: string): void => ajv.addFormat(name, { type: 'string', validate: FORMAT_CHECKS[name.replaceAll('-', '')] });

function registerFormat(name: string): void {
  if (registeredFormats.has(name)) return;
  registeredFormats.add(name);
  for (const ajv of Object.values(ajvInstances)) if (ajv) addFormat(ajv, name);
}

/** ajv's validator of a schema; ajv's own cache does not keep it (the compiled schema does). */
function ajvCompile(kind: AjvKind, ajvSchema: Obj): any {
  const ajv = ajvInstance(kind);
  try {
    return ajv.compile(ajvSchema);
  } finally {
    // The caller keeps the compiled schema; do not let ajv's cache grow with every CRD write.
    ajv.removeSchema(ajvSchema);
  }
}

/** Whether an ajv schema (toAjvSchema's output) has a minLength anywhere. */
function hasMinLength(s: unknown): boolean {
  if (Array.isArray(s)) return s.some(hasMinLength);
  if (!isPlainObject(s)) return false;
  if (s.minLength !== undefined) return true;
  for (const k of Object.keys(s)) if (k !== 'enum' && typeof s[k] === 'object' && hasMinLength(s[k])) return true;
  return false;
}

/** The x-kubernetes-int-or-string anyOf pattern kube treats as part of the type. */
function isIntOrStringAnyOf(v: unknown): boolean {
  if (!Array.isArray(v) || v.length !== 2) return false;
  const only = (x: unknown, t: string) => isPlainObject(x) && Object.keys(x).length === 1 && x.type === t;
  return only(v[0], 'integer') && only(v[1], 'string');
}

/** A CRD schema node as the JSON Schema ajv reads (OpenAPI v3.0 semantics). */
function toAjvSchema(s: unknown): Obj {
  if (!isPlainObject(s)) return {};
  const out: Obj = {};
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  if (intOrString) out.type = ['integer', 'string'];
  else if (typeof s.type === 'string' && s.type) out.type = s.type;
  if (s.nullable === true && out.type !== undefined) out.nullable = true;
  for (const k of ['maxLength', 'minLength', 'maxItems', 'minItems', 'maxProperties', 'minProperties', 'multipleOf']) {
    if (typeof s[k] === 'number') out[k] = s[k];
  }
  if (typeof s.pattern === 'string') out.pattern = s.pattern;
  if (Array.isArray(s.required)) out.required = s.required.filter((r) => typeof r === 'string');
  if (Array.isArray(s.enum) && s.enum.length > 0) out.enum = s.enum; // kube-openapi skips an empty enum
  if (typeof s.maximum === 'number') {
    if (s.exclusiveMaximum === true) out.exclusiveMaximum = s.maximum;
    else out.maximum = s.maximum;
  }
  if (typeof s.minimum === 'number') {
    if (s.exclusiveMinimum === true) out.exclusiveMinimum = s.minimum;
    else out.minimum = s.minimum;
  }
  if (isSupportedFormat(s.format)) {
    registerFormat(s.format);
    out.format = s.format;
  }
  if (isPlainObject(s.properties)) {
    out.properties = {};
    for (const [k, v] of Object.entries(s.properties)) out.properties[k] = toAjvSchema(v);
  }
  if (isPlainObject(s.items)) out.items = toAjvSchema(s.items);
  if (isPlainObject(s.additionalProperties)) out.additionalProperties = toAjvSchema(s.additionalProperties);
  for (const k of ['allOf', 'oneOf', 'anyOf'] as const) {
    if (!Array.isArray(s[k]) || s[k].length === 0) continue;
    if (k === 'anyOf' && intOrString && isIntOrStringAnyOf(s[k])) continue;
    let list = s[k] as unknown[];
    if (k === 'allOf' && intOrString && isPlainObject(list[0]) && isIntOrStringAnyOf(list[0].anyOf)) {
      list = [{ ...list[0], anyOf: undefined }, ...list.slice(1)];
    }
    out[k] = list.map(toAjvSchema);
  }
  if (isPlainObject(s.not)) out.not = toAjvSchema(s.not);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Translation of ajv errors into kube-apiserver field errors.

interface AjvError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Obj;
  data?: unknown;
  schema?: unknown;
  parentSchema?: Obj;
}

function decodePointer(p: string): string[] {
  if (p === '') return [];
  return p
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** kube-openapi's name for a location: "spec.items[0].name", map values as ".key". */
function openapiName(root: unknown, pointer: string, prefix: string): string {
  let name = prefix;
  let cur: any = root;
  for (const seg of decodePointer(pointer)) {
    if (Array.isArray(cur)) {
      name = `${name}[${seg}]`;
      cur = cur[Number(seg)];
    } else {
      name = name ? `${name}.${seg}` : seg;
      cur = isPlainObject(cur) ? cur[seg] : undefined;
    }
  }
  return name;
}

function limitText(limit: unknown, parent: Obj | undefined): string {
  if (typeof limit !== 'number') return String(limit);
  const integerType = parent?.type === 'integer' || (Array.isArray(parent?.type) && parent!.type[0] === 'integer');
  if (integerType && Number.isInteger(limit)) return BigInt(limit).toString();
  return goFloat(limit);
}

function translate(e: AjvError, root: unknown, prefix: string, fieldFor: (name: string) => string): FieldError | undefined {
  const name = openapiName(root, e.instancePath, prefix);
  const field = fieldFor(name);
  const data = e.data;
  switch (e.keyword) {
    case 'type': {
      const expected = Array.isArray(e.params.type) ? e.params.type.join(',') : String(e.params.type);
      const actual = jsonTypeName(data);
      return typeInvalidError(field, goQuote(actual), `${name} in body must be of type ${expected}: ${goQuote(actual)}`);
    }
    case 'required':
      return requiredError(fieldFor(name ? `${name}.${e.params.missingProperty}` : String(e.params.missingProperty)));
    case 'enum': {
      const allowed = Array.isArray(e.schema) ? e.schema : [];
      return notSupportedError(field, goValue(data), allowed.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))));
    }
    case 'maxLength':
      return tooLongError(field, Number(e.params.limit));
    case 'minLength':
      return invalidError(field, goValue(data), `${name} in body should be at least ${e.params.limit} chars long`);
    case 'pattern':
      return invalidError(field, goValue(data), `${name} in body should match '${e.params.pattern}'`);
    case 'format':
      return typeInvalidError(field, goValue(data), `${name} in body must be of type ${e.params.format}: ${goQuote(String(data))}`);
    case 'maximum':
      return invalidError(field, goValue(data), `${name} in body should be less than or equal to ${limitText(e.params.limit, e.parentSchema)}`);
    case 'exclusiveMaximum':
      return invalidError(field, goValue(data), `${name} in body should be less than ${limitText(e.params.limit, e.parentSchema)}`);
    case 'minimum':
      return invalidError(field, goValue(data), `${name} in body should be greater than or equal to ${limitText(e.params.limit, e.parentSchema)}`);
    case 'exclusiveMinimum':
      return invalidError(field, goValue(data), `${name} in body should be greater than ${limitText(e.params.limit, e.parentSchema)}`);
    case 'multipleOf':
      return invalidError(field, goValue(data), `${name} in body should be a multiple of ${limitText(e.params.multipleOf, e.parentSchema)}`);
    case 'maxItems':
      return tooManyError(field, Array.isArray(data) ? data.length : 0, Number(e.params.limit));
    case 'minItems':
      return invalidError(field, String(Array.isArray(data) ? data.length : 0), `${name} in body should have at least ${e.params.limit} items`);
    case 'maxProperties':
      // kube-openapi reports the limit as the value (TooManyProperties keeps n = maxProperties).
      return tooManyError(field, Number(e.params.limit), Number(e.params.limit));
    case 'minProperties':
      return invalidError(field, String(e.params.limit), `${name} in body should have at least ${e.params.limit} properties`);
    default:
      return invalidError(field, '""', `${name} in body is invalid: ${e.keyword}`);
  }
}

const COMPOSITE = new Set(['anyOf', 'oneOf', 'not']);

/**
 * Groups ajv's flat error list the way kube-openapi reports composites: a failing anyOf/oneOf
 * yields its own error plus the errors of its best (fewest-errors) branch; allOf adds
 * `must validate all the schemas (allOf)` after the errors of its failing clauses.
 */
function arrangeErrors(errors: AjvError[], ajvSchema: Obj, root: unknown, prefix: string, fieldFor: (name: string) => string, compositeField: string): FieldError[] {
  // Drop branch errors of failed anyOf/oneOf except the best branch.
  const dropped = new Set<AjvError>();
  /** Kept branch errors → their composite, which kube-openapi reports before them. */
  const compositeOf = new Map<AjvError, AjvError>();
  for (const c of errors) {
    if (c.keyword !== 'anyOf' && c.keyword !== 'oneOf') continue;
    const base = c.schemaPath + '/';
    const branches = new Map<string, AjvError[]>();
    for (const e of errors) {
      if (e === c || !e.schemaPath.startsWith(base)) continue;
      const idx = e.schemaPath.slice(base.length).split('/', 1)[0];
      let l = branches.get(idx);
      if (!l) branches.set(idx, (l = []));
      l.push(e);
    }
    let best: string | undefined;
    for (const [idx, l] of branches) if (best === undefined || l.length < branches.get(best)!.length) best = idx;
    for (const [idx, l] of branches) for (const e of l) {
      if (idx !== best) dropped.add(e);
      else if (!compositeOf.has(e)) compositeOf.set(e, c);
    }
  }
  const emitted = new Set<AjvError>();
  const out: FieldError[] = [];
  // Strings validate maxLength, then minLength, then pattern, stopping at the first failure.
  const stringFailed = new Set<string>();
  const seenAllOf = new Map<string, { clauses: Set<string>; count: number; name: string }>();
  const pendingAllOf: string[] = [];
  const ordered: AjvError[] = [];
  for (const e of errors) {
    if (dropped.has(e) || emitted.has(e)) continue;
    const c = compositeOf.get(e);
    if (c && !emitted.has(c)) {
      const chain: AjvError[] = [];
      for (let x: AjvError | undefined = c; x && !emitted.has(x); x = compositeOf.get(x)) chain.unshift(x);
      for (const x of chain) {
        emitted.add(x);
        ordered.push(x);
      }
    }
    emitted.add(e);
    ordered.push(e);
  }
  for (const e of ordered) {
    const name = openapiName(root, e.instancePath, prefix);
    for (const allOfMatch of e.schemaPath.matchAll(/\/allOf\/(\d+)\//g)) {
      const allOfPath = e.schemaPath.slice(0, allOfMatch.index! + '/allOf'.length);
      const at = instancePrefix(e.instancePath, allOfPath);
      const key = `${allOfPath}|${at}`;
      let rec = seenAllOf.get(key);
      if (!rec) {
        seenAllOf.set(key, (rec = { clauses: new Set(), count: allOfClauseCount(ajvSchema, allOfPath), name: openapiName(root, at, prefix) }));
        pendingAllOf.push(key);
      }
      rec.clauses.add(allOfMatch[1]);
    }
    if (COMPOSITE.has(e.keyword)) {
      let msg: string;
      if (e.keyword === 'anyOf') msg = `${goQuote(name)} must validate at least one schema (anyOf)`;
      else if (e.keyword === 'not') msg = `${goQuote(name)} must not validate the schema (not)`;
      else {
        const passing = e.params.passingSchemas;
        const extra = Array.isArray(passing) ? `Found ${passing.length} valid alternatives` : 'Found none valid';
        msg = `${goQuote(name)} must validate one and only one schema (oneOf). ${extra}`;
      }
      out.push(invalidError(compositeField, '""', msg));
      continue;
    }
    if (e.keyword === 'maxLength' || e.keyword === 'minLength' || e.keyword === 'pattern') {
      const key = `${e.instancePath}|${e.schemaPath.replace(/\/[^/]+$/, '')}`;
      if (stringFailed.has(key)) continue;
      stringFailed.add(key);
    }
    const fe = translate(e, root, prefix, fieldFor);
    if (fe) out.push(fe);
  }
  for (const key of pendingAllOf) {
    const rec = seenAllOf.get(key)!;
    const none = rec.count > 0 && rec.clauses.size >= rec.count;
    out.push(invalidError(compositeField, '""', `${goQuote(rec.name)} must validate all the schemas (allOf)${none ? '. None validated' : ''}`));
  }
  return out;
}

/** The instance location of the schema at schemaPath, as a prefix of an error's instancePath. */
function instancePrefix(instancePath: string, schemaPath: string): string {
  const segs = schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean);
  let depth = 0;
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i];
    if (s === 'properties') {
      depth++;
      i++;
    } else if (s === 'items' || s === 'additionalProperties') depth++;
    else if (s === 'allOf' || s === 'anyOf' || s === 'oneOf') i++;
  }
  const parts = instancePath === '' ? [] : instancePath.slice(1).split('/');
  return parts.length === 0 || depth === 0 ? '' : '/' + parts.slice(0, depth).join('/');
}

/** Number of clauses of the allOf at a schema path ("#/properties/spec/allOf"). */
function allOfClauseCount(ajvSchema: Obj, allOfPath: string): number {
  let cur: any = ajvSchema;
  for (const seg of allOfPath.replace(/^#\/?/, '').split('/').filter(Boolean)) cur = cur?.[seg.replace(/~1/g, '/').replace(/~0/g, '~')];
  return Array.isArray(cur) ? cur.length : 0;
}

// ---------------------------------------------------------------------------------------------
// Post-schema checks, as the custom-resource strategy runs them after the OpenAPI validator:
// first every embedded resource (objectmeta.Validate), then list-type set/map uniqueness
// (listtype.ValidateListSetsAndMaps). Both walk the value along the schema.

/**
 * A set element's identity: scalars by value, objects and lists by their key-sorted JSON. Strings
 * and numbers (most set elements) skip JSON; the type letter keeps the kinds apart.
 */
const sortedKeys = (_k: string, x: unknown): unknown => (isPlainObject(x) ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, x[k]])) : x);
const canonical = (v: unknown): string => {
  if (typeof v === 'string') return 's' + v;
  if (typeof v === 'number' && Number.isFinite(v)) return 'n' + JSON.stringify(v);
  return v !== null && typeof v === 'object' ? 'j' + JSON.stringify(v, sortedKeys) : 'j' + (JSON.stringify(v) ?? 'undefined');
};
const asKey = (c: unknown): string => c as string;

/**
 * kube's validateListSet: the index of the first repeat of each value (a third or later copy is
 * not reported again).
 */
function firstRepeats(items: unknown[], key: (x: unknown) => string = canonical): number[] {
  if (items.length <= 1) return [];
  const seen = new Map<string, number>();
  const out: number[] = [];
  for (let i = 0; i < items.length; i++) {
    const c = key(items[i]);
    const n = seen.get(c) ?? 0;
    if (n === 1) out.push(i);
    seen.set(c, n + 1);
  }
  return out;
}

// Short lists of distinct scalars (most sets and list-type maps) are recognised by comparing
// values pairwise, without the canonical keys and Map of the checks above; anything else (a
// repeat included) goes to those checks, which stay the reference.
const PAIRWISE_MAX = 32;
const isScalarKey = (x: unknown): boolean => typeof x === 'string' || (typeof x === 'number' && Number.isFinite(x));

/** True when v is a short list of strings and finite numbers with no repeat (firstRepeats(v) is empty). */
function distinctScalars(v: unknown[]): boolean {
  if (v.length > PAIRWISE_MAX) return false;
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (!isScalarKey(x)) return false;
    for (let j = 0; j < i; j++) if (v[j] === x) return false;
  }
  return true;
}

/**
 * True when v, a list-type map with one key field, is a short list of objects that all have it,
 * as a string or finite number, with no repeat (listMapErrors(s, v) is empty).
 */
function distinctByOneKey(s: Obj, v: unknown[]): boolean {
  const keys = s['x-kubernetes-list-map-keys'];
  if (v.length > PAIRWISE_MAX || !Array.isArray(keys) || keys.length !== 1 || typeof keys[0] !== 'string') return false;
  const k = keys[0];
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (!isPlainObject(x) || !Object.prototype.hasOwnProperty.call(x, k)) return false;
    const kx = x[k];
    if (!isScalarKey(kx)) return false;
    for (let j = 0; j < i; j++) if ((v[j] as Obj)[k] === kx) return false;
  }
  return true;
}

/** A list-type map's duplicate keys (kube's validateListMap). */
function listMapErrors(s: Obj, v: unknown[], path: string): FieldError[] {
  // only null and objects are allowed; the first other item ends the check
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (x !== null && !isPlainObject(x)) return [invalidError(indexPath(path, i), goValue(x), 'must be an object for an array of list-type map')];
  }
  if (v.length <= 1) return [];
  const keyFields = (Array.isArray(s['x-kubernetes-list-map-keys']) ? s['x-kubernetes-list-map-keys'] : []).filter((k: unknown): k is string => typeof k === 'string');
  if (keyFields.length === 1) {
    // One key: an item without it (or a null item) has the "unspecified" key, distinct from null.
    const k = keyFields[0];
    const UNSPECIFIED = '\u0000unspecified';
    const keys: string[] = [];
    for (const x of v) keys.push(isPlainObject(x) && Object.prototype.hasOwnProperty.call(x, k) ? canonical(x[k]) : UNSPECIFIED);
    return firstRepeats(keys, asKey).map((i) => {
      const x = v[i];
      const shown = isPlainObject(x) && Object.prototype.hasOwnProperty.call(x, k) ? { [k]: x[k] } : {};
      return duplicateError(indexPath(path, i), goSharpV(shown));
    });
  }
  const keys = v.map((x) => {
    const key: Obj = {};
    if (isPlainObject(x)) for (const k of keyFields) if (Object.prototype.hasOwnProperty.call(x, k)) key[k] = x[k];
    return key;
  });
  return firstRepeats(keys).map((i) => duplicateError(indexPath(path, i), goSharpV(keys[i])));
}

/**
 * The part of a schema a post-schema walk needs: only the nodes on a path to one that matters
 * (an embedded resource, a list-type set/map), so values under plain subtrees are never visited.
 * Built once per schema node (schemas are not changed once compiled) and dropped with it.
 */
interface WalkPlan {
  node: Obj;
  props?: [string, WalkPlan][];
  items?: WalkPlan;
  addl?: WalkPlan;
}

function walkPlan(s: Obj, here: (s: Obj) => boolean, cache: WeakMap<Obj, WalkPlan | null>): WalkPlan | null {
  const hit = cache.get(s);
  if (hit !== undefined) return hit;
  let props: [string, WalkPlan][] | undefined;
  if (isPlainObject(s.properties)) {
    for (const [k, p] of Object.entries(s.properties)) {
      const c = isPlainObject(p) ? walkPlan(p, here, cache) : null;
      if (c) (props ??= []).push([k, c]);
    }
  }
  const items = isPlainObject(s.items) ? walkPlan(s.items, here, cache) : null;
  const addl = isPlainObject(s.additionalProperties) ? walkPlan(s.additionalProperties, here, cache) : null;
  const plan = here(s) || props || items || addl ? { node: s, props, items: items ?? undefined, addl: addl ?? undefined } : null;
  cache.set(s, plan);
  return plan;
}

const isEmbedded = (s: Obj): boolean => s['x-kubernetes-embedded-resource'] === true;
const hasListType = (s: Obj): boolean => s['x-kubernetes-list-type'] === 'set' || s['x-kubernetes-list-type'] === 'map';
const embeddedPlans = new WeakMap<Obj, WalkPlan | null>();
const listPlans = new WeakMap<Obj, WalkPlan | null>();
const hasOwn = (o: Obj, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/** kube's listtype.ValidateListSetsAndMaps over a value and its schema (`reference`: without the pairwise quick check). */
export function validateListSetsAndMaps(s: unknown, v: unknown, path: string, reference = false): FieldError[] {
  const errs: FieldError[] = [];
  const plan = isPlainObject(s) ? walkPlan(s, hasListType, listPlans) : null;
  if (plan) listWalk(plan, v, path, errs, !reference);
  return errs;
}

function listWalk(plan: WalkPlan, v: unknown, path: string, errs: FieldError[], quick: boolean): void {
  const s = plan.node;
  if (Array.isArray(v)) {
    const lt = s['x-kubernetes-list-type'];
    if (lt === 'set') {
      if (!(quick && distinctScalars(v))) for (const i of firstRepeats(v)) errs.push(duplicateError(indexPath(path, i), goValue(v[i])));
    } else if (lt === 'map') {
      if (!(quick && distinctByOneKey(s, v))) errs.push(...listMapErrors(s, v, path));
    }
    if (plan.items) for (let i = 0; i < v.length; i++) listWalk(plan.items, v[i], indexPath(path, i), errs, quick);
    return;
  }
  if (!isPlainObject(v)) return;
  // kube applies additionalProperties to every key and properties to the keys they name
  if (plan.addl) for (const k of Object.keys(v)) listWalk(plan.addl, v[k], indexPath(path, k), errs, quick);
  if (plan.props) for (const [k, p] of plan.props) if (hasOwn(v, k)) listWalk(p, v[k], childPath(path, k), errs, quick);
}

/**
 * kube's objectmeta.Validate: every x-kubernetes-embedded-resource object in the value gets its
 * apiVersion, kind and metadata checked. `isResourceRoot` treats the value itself as one.
 */
export function validateEmbeddedResources(s: unknown, v: unknown, path: string, isResourceRoot = false): FieldError[] {
  const errs: FieldError[] = [];
  const schema = isPlainObject(s) ? s : isResourceRoot ? {} : undefined;
  if (!schema) return errs;
  if (isResourceRoot && isPlainObject(v) && !isEmbedded(schema)) errs.push(...validateEmbeddedResource(v, path));
  const plan = walkPlan(schema, isEmbedded, embeddedPlans);
  if (plan) embeddedWalk(plan, v, path, errs);
  return errs;
}

function embeddedWalk(plan: WalkPlan, v: unknown, path: string, errs: FieldError[]): void {
  const s = plan.node;
  if (Array.isArray(v)) {
    if (plan.items) for (let i = 0; i < v.length; i++) embeddedWalk(plan.items, v[i], indexPath(path, i), errs);
    return;
  }
  if (!isPlainObject(v)) return;
  if (isEmbedded(s)) errs.push(...validateEmbeddedResource(v, path));
  if (plan.props) for (const [k, p] of plan.props) if (hasOwn(v, k)) embeddedWalk(p, v[k], childPath(path, k), errs);
  // additionalProperties apply to the keys properties do not name
  if (plan.addl) {
    const props = isPlainObject(s.properties) ? s.properties : undefined;
    for (const k of Object.keys(v)) if (!(props && isPlainObject(props[k]))) embeddedWalk(plan.addl, v[k], indexPath(path, k), errs);
  }
}

/**
 * kube's objectmeta.Coerce as CRD default validation runs it: the first embedded apiVersion or
 * kind that is not a string (decoding a custom object rejects those before validation).
 */
export function embeddedTypeMetaError(s: unknown, v: unknown, path: string, isResourceRoot = false): FieldError | undefined {
  const walk = (sch: unknown, x: unknown, p: string, embedded: boolean): FieldError | undefined => {
    if (!isPlainObject(sch)) return undefined;
    if (Array.isArray(x)) {
      if (!isPlainObject(sch.items)) return undefined;
      for (let i = 0; i < x.length; i++) {
        const e = walk(sch.items, x[i], indexPath(p, i), sch.items['x-kubernetes-embedded-resource'] === true);
        if (e) return e;
      }
      return undefined;
    }
    if (!isPlainObject(x)) return undefined;
    const props = isPlainObject(sch.properties) ? sch.properties : undefined;
    for (const k of Object.keys(x)) {
      if (embedded && (k === 'apiVersion' || k === 'kind') && typeof x[k] !== 'string') return invalidError(childPath(p, k), goValue(x[k]), 'must be a string');
      let e: FieldError | undefined;
      if (props && isPlainObject(props[k])) e = walk(props[k], x[k], childPath(p, k), props[k]['x-kubernetes-embedded-resource'] === true);
      else if (isPlainObject(sch.additionalProperties)) e = walk(sch.additionalProperties, x[k], indexPath(p, k), sch.additionalProperties['x-kubernetes-embedded-resource'] === true);
      if (e) return e;
    }
    return undefined;
  };
  return walk(isPlainObject(s) ? s : isResourceRoot ? {} : undefined, v, path, isResourceRoot || (isPlainObject(s) && s['x-kubernetes-embedded-resource'] === true));
}

/** apimachinery's ParseGroupVersion error, if any. */
function groupVersionError(gv: string): string | undefined {
  if (gv === '' || gv === '/') return undefined;
  const n = gv.split('/').length - 1;
  if (n === 0 || n === 1) return undefined;
  return `unexpected GroupVersion string: ${gv}`;
}

/** Prefixes ObjectMeta errors ("metadata.name") with the embedded resource's path. */
const underPath = (path: string, errs: FieldError[]): FieldError[] => (path ? errs.map((e) => ({ ...e, field: `${path}.${e.field}` })) : errs);

/**
 * What objectmeta's validateEmbeddedResource checks on one x-kubernetes-embedded-resource
 * object: apiVersion and kind present, non-empty strings, a parseable group/version and a
 * DNS-1035 kind (any case); metadata through the full ObjectMeta validation, with path-segment
 * names, a namespace only checked when set, and a stand-in name when none is given.
 */
export function validateEmbeddedResource(x: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!('apiVersion' in x)) errs.push(requiredError(childPath(path, 'apiVersion')));
  if (!('kind' in x)) errs.push(requiredError(childPath(path, 'kind')));
  for (const k of Object.keys(x)) {
    const v = x[k];
    if (k === 'apiVersion') {
      if (typeof v !== 'string') errs.push(invalidError(childPath(path, k), goValue(v), 'must be a string'));
      else if (v.length === 0) errs.push(requiredError(childPath(path, k)));
      else {
        const gvErr = groupVersionError(v);
        if (gvErr) errs.push(invalidError(childPath(path, k), goQuote(v), gvErr));
      }
    } else if (k === 'kind') {
      if (typeof v !== 'string') errs.push(invalidError(childPath(path, k), goValue(v), 'must be a string'));
      else if (v.length === 0) errs.push(requiredError(childPath(path, k)));
      else {
        const le = isDNS1035Label(v.toLowerCase());
        if (le.length) errs.push(invalidError(childPath(path, k), goQuote(v), 'may have mixed case, but should otherwise match: ' + le.join(',')));
      }
    } else if (k === 'metadata' && (isPlainObject(v) || v === null)) {
      // Non-object metadata never gets here: decoding the custom object rejects it first.
      const meta: Obj = isPlainObject(v) ? { ...v } : {};
      if (typeof meta.name !== 'string' || meta.name === '') meta.name = 'fakename';
      const namespaced = typeof meta.namespace === 'string' && meta.namespace !== '';
      errs.push(...underPath(path, validateObjectMeta(meta, { namespaced, nameRule: 'pathSegment', isCreate: true })));
    }
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Pruning.

function pruneEmbeddedMeta(meta: Obj, path: string, pruned: string[]): void {
  for (const k of Object.keys(meta)) {
    if (!OBJECT_META_FIELDS.has(k)) {
      pruned.push(childPath(path, k));
      delete meta[k];
    }
  }
}

/**
 * Removes fields the schema does not specify, in place, appending their paths to `pruned`.
 * `isResourceRoot` treats the node as a resource root (apiVersion/kind/metadata kept; root
 * metadata is left to ObjectMeta handling).
 */
export function pruneValue(s: unknown, x: unknown, path: string, pruned: string[], isResourceRoot = false): void {
  const schema = isPlainObject(s) ? s : undefined;
  if (schema && schema['x-kubernetes-preserve-unknown-fields'] === true) return skipPrune(schema, x, path, pruned, isResourceRoot);
  if (Array.isArray(x)) {
    const items = schema && isPlainObject(schema.items) ? schema.items : undefined;
    x.forEach((v, i) => pruneValue(items, v, indexPath(path, i), pruned));
    return;
  }
  if (!isPlainObject(x)) return;
  if (!schema) {
    for (const k of Object.keys(x)) {
      pruned.push(childPath(path, k));
      delete x[k];
    }
    return;
  }
  const embedded = isResourceRoot || schema['x-kubernetes-embedded-resource'] === true;
  const props = isPlainObject(schema.properties) ? schema.properties : undefined;
  for (const k of Object.keys(x)) {
    const v = x[k];
    if (embedded) {
      if ((k === 'apiVersion' || k === 'kind') && typeof v === 'string') continue;
      if (k === 'metadata' && isPlainObject(v)) {
        if (!isResourceRoot) pruneEmbeddedMeta(v, childPath(path, k), pruned);
        continue;
      }
    }
    if (props && Object.prototype.hasOwnProperty.call(props, k)) {
      pruneValue(props[k], v, childPath(path, k), pruned);
    } else if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) {
      pruneValue(isPlainObject(schema.additionalProperties) ? schema.additionalProperties : undefined, v, childPath(path, k), pruned);
    } else {
      if (!(isResourceRoot && path === '' && (k === 'apiVersion' || k === 'kind' || k === 'metadata'))) pruned.push(childPath(path, k));
      delete x[k];
    }
  }
}

/** Under x-kubernetes-preserve-unknown-fields: unknown fields stay, known ones are still pruned inside. */
function skipPrune(schema: Obj, x: unknown, path: string, pruned: string[], isResourceRoot: boolean): void {
  if (Array.isArray(x)) {
    if (isPlainObject(schema.items)) x.forEach((v, i) => pruneValue(schema.items, v, indexPath(path, i), pruned));
    return;
  }
  if (!isPlainObject(x)) return;
  const embedded = isResourceRoot || schema['x-kubernetes-embedded-resource'] === true;
  const props = isPlainObject(schema.properties) ? schema.properties : undefined;
  for (const k of Object.keys(x)) {
    const v = x[k];
    if (embedded && k === 'metadata' && isPlainObject(v)) {
      if (!isResourceRoot) pruneEmbeddedMeta(v, childPath(path, k), pruned);
      continue;
    }
    if (embedded && (k === 'apiVersion' || k === 'kind')) continue;
    if (props && Object.prototype.hasOwnProperty.call(props, k)) pruneValue(props[k], v, childPath(path, k), pruned);
    else if (isPlainObject(schema.additionalProperties)) pruneValue(schema.additionalProperties, v, childPath(path, k), pruned);
  }
}

// ---------------------------------------------------------------------------------------------
// Defaulting.

const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));

/**
 * Structural defaulting, in place: null values of non-nullable fields without a default are
 * dropped; absent (or non-nullable null) properties with a default get a copy of it; defaults
 * apply inside objects and list items that exist (including ones just defaulted).
 */
export function defaultValue(s: unknown, x: unknown): void {
  if (!isPlainObject(s)) return;
  if (Array.isArray(x)) {
    const items = isPlainObject(s.items) ? s.items : undefined;
    if (!items) return;
    for (let i = 0; i < x.length; i++) {
      if (x[i] === null && items.default !== undefined && items.nullable !== true) x[i] = clone(items.default);
      defaultValue(items, x[i]);
    }
    return;
  }
  if (!isPlainObject(x)) return;
  const props = isPlainObject(s.properties) ? s.properties : undefined;
  const addl = isPlainObject(s.additionalProperties) ? s.additionalProperties : undefined;
  // PruneNonNullableNullsWithoutDefaults
  for (const k of Object.keys(x)) {
    if (x[k] !== null) continue;
    const ps = props && isPlainObject(props[k]) ? props[k] : !props || !(k in props) ? addl : undefined;
    if (ps && ps.nullable !== true && ps.default === undefined) delete x[k];
  }
  if (props) {
    for (const k of Object.keys(props)) {
      const p = props[k];
      if (!isPlainObject(p) || p.default === undefined) continue;
      if (!(k in x) || (x[k] === null && p.nullable !== true)) x[k] = clone(p.default);
    }
  }
  for (const k of Object.keys(x)) {
    if (props && isPlainObject(props[k])) defaultValue(props[k], x[k]);
    else if (addl) {
      if (x[k] === null && addl.default !== undefined && addl.nullable !== true) x[k] = clone(addl.default);
      defaultValue(addl, x[k]);
    }
  }
}

/**
 * kube's CRD validation ratcheting (CRDValidationRatcheting, GA in 1.33) for one error: on an
 * update, an error is dropped when the deepest value on its path that correlates with the stored
 * object is unchanged from it (kube turns it into a warning it does not send). Values correlate
 * from the root down through object fields and map entries present in both (never apiVersion or
 * kind of the root) and list-type map items by their keys; set and atomic list items do not.
 * `unchanged` caches the comparison per correlated path.
 */
function ratcheted(schema: Obj, obj: unknown, old: unknown, pointer: string, unchanged: Map<string, boolean>): boolean {
  let s: Obj = schema;
  let now: unknown = obj;
  let was: unknown = old;
  let at = '';
  if (pointer !== '') {
    for (const raw of pointer.slice(1).split('/')) {
      const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      let next: { s: Obj; now: unknown; was: unknown } | undefined;
      if (Array.isArray(now)) {
        if (s['x-kubernetes-list-type'] !== 'map' || !Array.isArray(was) || !isPlainObject(s.items)) break;
        const keys: string[] = Array.isArray(s['x-kubernetes-list-map-keys']) ? s['x-kubernetes-list-map-keys'] : [];
        const item = now[Number(seg)];
        if (!isPlainObject(item)) break;
        const match = was.find((o) => isPlainObject(o) && keys.every((k) => deepEqual(o[k], item[k])));
        if (match === undefined) break;
        next = { s: s.items, now: item, was: match };
      } else if (isPlainObject(now)) {
        if (!isPlainObject(was) || !Object.hasOwn(now, seg) || !Object.hasOwn(was, seg)) break;
        if (at === '' && (seg === 'apiVersion' || seg === 'kind')) break;
        const child = isPlainObject(s.properties) && isPlainObject(s.properties[seg]) ? s.properties[seg] : isPlainObject(s.additionalProperties) ? s.additionalProperties : undefined;
        if (!child) break;
        next = { s: child, now: now[seg], was: was[seg] };
      } else break;
      at += `/${raw}`;
      ({ s, now, was } = next);
    }
  }
  let same = unchanged.get(at);
  if (same === undefined) unchanged.set(at, (same = deepEqual(now, was)));
  return same;
}

// ---------------------------------------------------------------------------------------------
// The compiled schema.

export interface ValidateOptions {
  /**
   * Name prefix for paths (kube-openapi's root name), e.g. the CRD path of a default value.
   * With a prefix, errors about the whole value and composite (anyOf...) errors carry the prefix
   * as their field; without one they carry "<nil>", as kube-apiserver reports them for objects.
   */
  pathPrefix?: string;
  /** Skip embedded-resource and list-type checks (plain schema validation only). */
  schemaOnly?: boolean;
  /**
   * The stored object on an update, for kube's ratcheting: schema errors on values unchanged
   * from it are dropped (see ratcheted), and list-type set/map duplicates are only reported
   * when it had none (customResourceStrategy.ValidateUpdate).
   */
  oldObject?: unknown;
}

/** One openAPIV3Schema compiled: the store's pruning and defaults (CustomResourceSchema), validation, pruning alone. */
export interface CompiledSchema extends CustomResourceSchema {
  readonly schema: Obj;
  /** Schema violations of obj (not modified), in kube-apiserver's wording. */
  validate(obj: unknown, opts?: ValidateOptions): FieldError[];
  /** Removes unknown fields in place; returns their paths ("spec.foo", "spec.items[0].bar"). */
  prune(obj: unknown): string[];
  /** The schema as the shared TypeNode view (for patch/apply/tables), built on first use. */
  readonly typeNode: TypeNode;
}

export interface CompileOptions {
  /** The schema is a resource root (a CRD version's openAPIV3Schema): default true. */
  isResourceRoot?: boolean;
}

/** Compiled schemas by their JSON text: validating a CRD and then serving it compile the same schema. */
const compiledByText = new Map<string, CompiledSchema>();
const MAX_COMPILED_SCHEMAS = 500;

/**
 * Compiles one CRD version's openAPIV3Schema. Throws if ajv cannot build a validator. Results are
 * shared by equal schemas (the cache owns a copy, so callers may change theirs afterwards).
 */
export function compileVersionSchema(schema: unknown, opts: CompileOptions = {}): CompiledSchema {
  const text = `${opts.isResourceRoot !== false}|${JSON.stringify(schema ?? null)}`;
  let compiled = compiledByText.get(text);
  if (compiled) {
    compiledByText.delete(text); // most recently used goes last
  } else {
    compiled = compileSchema(JSON.parse(text.slice(text.indexOf('|') + 1)), opts);
    if (compiledByText.size >= MAX_COMPILED_SCHEMAS) compiledByText.delete(compiledByText.keys().next().value!);
  }
  compiledByText.set(text, compiled);
  return compiled;
}

function compileSchema(schema: unknown, opts: CompileOptions): CompiledSchema {
  const root: Obj = isPlainObject(schema) ? schema : {};
  const isResourceRoot = opts.isResourceRoot !== false;
  const ajvSchema = toAjvSchema(root);
  const checkFn = ajvCompile(hasMinLength(ajvSchema) ? 'check' : 'checkUtf16', ajvSchema);
  // V8 compiles the generated function on its first call (milliseconds for a big schema): pay it
  // here, with the rest of the compilation, rather than on the first object validated.
  checkFn(undefined);
  let reportFn: any;
  let typeNode: TypeNode | undefined;
  return {
    schema: root,
    // (A property named "default" counts too: a false positive only costs a fast path.)
    hasDefaults: JSON.stringify(root).includes('"default":'),
    validate(obj: unknown, vopts: ValidateOptions = {}): FieldError[] {
      const prefix = vopts.pathPrefix ?? '';
      const errs: FieldError[] = [];
      if (!checkFn(obj)) {
        reportFn ??= ajvCompile('report', ajvSchema);
        if (!reportFn(obj)) {
          const fieldFor = (name: string): string => (name === '' ? prefix || '<nil>' : name);
          let found = reportFn.errors as AjvError[];
          if (vopts.oldObject !== undefined) {
            const unchanged = new Map<string, boolean>();
            found = found.filter((e) => !ratcheted(root, obj, vopts.oldObject, e.instancePath, unchanged));
          }
          if (found.length) errs.push(...arrangeErrors(found, ajvSchema, obj, prefix, fieldFor, prefix || '<nil>'));
        }
      }
      if (!vopts.schemaOnly) {
        // As the strategy calls it: a custom object's root is not checked as an embedded resource
        // (its ObjectMeta is the store's), unless its schema says it is one.
        const embeddedErrs = validateEmbeddedResources(root, obj, prefix);
        if (embeddedErrs.length) errs.push(...embeddedErrs);
        // Ratcheting as kube's ValidateUpdate: list-type errors count only when the stored object
        // had none (so the stored object is only checked when the new one has some).
        const listErrs = validateListSetsAndMaps(root, obj, prefix);
        if (listErrs.length && (vopts.oldObject === undefined || validateListSetsAndMaps(root, vopts.oldObject, prefix).length === 0)) errs.push(...listErrs);
      }
      return errs;
    },
    // Compiled walks (prune-default.ts); pruneValue and defaultValue above are their reference.
    prune(obj: unknown): string[] {
      return pruneCompiled(root, obj, isResourceRoot);
    },
    applyDefaults(obj: unknown): void {
      defaultCompiled(root, obj);
    },
    pruneAndDefault(obj: unknown): string[] {
      return pruneAndDefaultCompiled(root, obj, isResourceRoot);
    },
    get typeNode(): TypeNode {
      if (!typeNode) typeNode = new TypeModel({}).fromSchema(root);
      return typeNode;
    },
  };
}
