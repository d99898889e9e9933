// Evaluation of compiled x-kubernetes-validations on a custom object (kube's schema/cel Validator):
// rules run on each value that has them, oldSelf bound where an old value correlates (object
// fields, map entries, list-type map items by key), failures worded as kube words them (message,
// messageExpression, reason, fieldPath), and ratcheting: on an update, failures of rules that do
// not read oldSelf on unchanged values become warnings.
import { isCelError } from '@bufbuild/cel';
import { goQuote } from '../../../go/strconv.ts';
import { deepEqual, isPlainObject } from '../../../util/json.ts';
import { childPath, duplicateError, forbiddenError, goValue, indexPath, invalidError, requiredError, type FieldError } from '../../../validation/field.ts';
import { optNone, optOf } from './bufbuild-gaps/optional-types.ts';
import { isOverloadError, runtimeErrorText } from './bufbuild-gaps/runtime-errors.ts';
import type { CelNode, CompiledSchemaRules, ValidationRule } from './compile.ts';
import { toCelValue } from './unstructured.ts';
import type { Obj } from './types.ts';

function ruleErrorString(r: ValidationRule): string {
  return typeof r.message === 'string' && r.message.trim() !== '' ? r.message.trim() : String(r.rule ?? '').trim();
}
function ruleMessageOrDefault(r: ValidationRule): string {
  return typeof r.message === 'string' && r.message.trim() !== '' ? r.message.trim() : `failed rule: ${String(r.rule ?? '').trim()}`;
}

function schemaTypeText(s: Obj): string {
  return goQuote(typeof s.type === 'string' ? s.type : '');
}

function fieldErrorForReason(path: string, valueText: string | null, detail: string, reason: string | undefined): FieldError {
  switch (reason) {
    case 'FieldValueForbidden':
      return forbiddenError(path, detail);
    case 'FieldValueRequired':
      return requiredError(path, detail);
    case 'FieldValueDuplicate':
      return duplicateError(path, valueText);
    default:
      return invalidError(path, valueText, detail);
  }
}

const readsOld = new WeakMap<CelNode, boolean>();
function readsOldSelf(node: CelNode): boolean {
  let r = readsOld.get(node);
  if (r === undefined) readsOld.set(node, (r = node.rules.some((x) => x.transition || x.rule.optionalOldSelf === true || x.messageProgram !== undefined)));
  return r;
}

/**
 * The nearest value at or above a node that correlates with the stored object (see evalNode),
 * and whether it is unchanged, compared once when a rule first fails under it.
 */
interface Correlated {
  obj: unknown;
  old: unknown;
  unchanged?: boolean;
}

/** Where a rule's failures go: errors, or (ratcheted on an update) warnings. */
interface Sinks {
  errs: FieldError[];
  warnings: FieldError[] | undefined;
}

function evalNodeRules(node: CelNode, path: string, obj: unknown, old: unknown, near: Correlated | undefined, sinks: Sinks): void {
  const errs = sinks.errs;
  if (node.rules.length === 0) return;
  const self = toCelValue(obj, node.schema, node.isResourceRoot);
  const hasOld = old !== undefined && old !== null;
  // oldSelf only where a rule (or its message) can read it
  const oldSelf = hasOld && readsOldSelf(node) ? toCelValue(old, node.schema, node.isResourceRoot) : null;
  let plain: { self: unknown; oldSelf: unknown } | undefined;
  for (const r of node.rules) {
    const optional = r.rule.optionalOldSelf === true;
    if (r.transition && !hasOld && !optional) continue;
    const ctx = optional ? { self, oldSelf: hasOld ? optOf(oldSelf) : optNone() } : (plain ??= { self, oldSelf });
    let result: unknown;
    let thrown: string | undefined;
    try {
      result = r.program(ctx);
    } catch (e) {
      thrown = String((e as Error | undefined)?.message ?? e);
    }
    if (result === true) continue;
    if (isCelError(result) || thrown !== undefined) {
      const msg = thrown ?? (result as Error).message;
      const at = path || '<nil>';
      if (isOverloadError(msg)) errs.push(invalidError(at, schemaTypeText(node.schema), `'no such overload': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(r.rule)}`));
      else errs.push(invalidError(at, schemaTypeText(node.schema), `${runtimeErrorText(msg)} evaluating rule: ${ruleErrorString(r.rule)}`));
      continue;
    }
    // kube validates with a nil root path: errors on the object itself print as "<nil>".
    const target = (r.fieldPath ? childPath(path, r.fieldPath) : path) || '<nil>';
    let detail: string | undefined;
    if (r.messageProgram) {
      let m: unknown;
      try {
        m = r.messageProgram(ctx);
      } catch {
        m = undefined;
      }
      if (typeof m === 'string') {
        const t = m.trim();
        if (t !== '' && !/\n/.test(t) && t.length <= 5120) detail = t;
      }
    }
    detail ??= ruleMessageOrDefault(r.rule);
    const t = node.schema.type;
    const valueText = t === 'object' || t === 'array' ? null : goValue(obj);
    const e = fieldErrorForReason(target, valueText, detail, r.rule.reason);
    // kube's ratcheting: a rule that does not read oldSelf fails only a changed value; on an
    // unchanged one its failure becomes a warning.
    if (!r.transition && near !== undefined && sinks.warnings !== undefined && (near.unchanged ??= deepEqual(near.obj, near.old))) sinks.warnings.push(e);
    else errs.push(e);
  }
}

/**
 * Identity of a list-type map item by its keys: equal exactly when the JSON of the key values
 * (`[v1, v2...]`, absent ones null) is; a single string or number key skips JSON.
 */
function listMapKey(item: unknown, keys: string[]): string | undefined {
  if (!isPlainObject(item)) return undefined;
  if (keys.length === 1) {
    const v = item[keys[0]] ?? null;
    if (typeof v === 'string') return 's' + v;
    if (typeof v === 'number' && Number.isFinite(v)) return 'n' + v;
    return 'j' + JSON.stringify([v]);
  }
  const values: unknown[] = [];
  for (const k of keys) values.push(item[k] ?? null);
  return 'j' + JSON.stringify(values);
}

/** What evaluation reads of a node's schema, looked up once per node. */
interface EvalPlan {
  /** x-kubernetes-list-map-keys of a list-type map (old items correlate by them), else undefined. */
  listMapKeys?: string[];
  /** x-kubernetes-map-type: atomic (rules below it get no oldSelf). */
  atomic: boolean;
  properties?: [string, CelNode][];
}
const evalPlans = new WeakMap<CelNode, EvalPlan>();
function evalPlan(node: CelNode): EvalPlan {
  let p = evalPlans.get(node);
  if (p) return p;
  const s = node.schema;
  const keys = Array.isArray(s['x-kubernetes-list-map-keys']) ? (s['x-kubernetes-list-map-keys'] as string[]) : [];
  p = {
    listMapKeys: s['x-kubernetes-list-type'] === 'map' ? keys : undefined,
    atomic: s['x-kubernetes-map-type'] === 'atomic',
    properties: node.properties ? [...node.properties] : undefined,
  };
  evalPlans.set(node, p);
  return p;
}

/**
 * `old`: the old value that correlates with obj (ratcheting compares them). `inAtomicMap`: obj is
 * inside an x-kubernetes-map-type: atomic map, where kube still correlates old values for
 * ratcheting (CorrelatedObject.Key looks at no map type) but gives rules no oldSelf.
 */
function evalNode(node: CelNode, path: string, obj: unknown, old: unknown, near: Correlated | undefined, sinks: Sinks, inAtomicMap = false): void {
  if (obj === null || obj === undefined) return;
  // (an old value here means this value correlates: it becomes the nearest for what is below)
  if (old !== undefined && sinks.warnings !== undefined) near = { obj, old };
  if (node.rules.length) evalNodeRules(node, path, obj, inAtomicMap ? undefined : old, near, sinks);
  if (Array.isArray(obj)) {
    const items = node.items;
    if (!items) return;
    const keys = evalPlan(node).listMapKeys;
    let oldByKey: Map<string, unknown> | undefined;
    if (keys && Array.isArray(old)) {
      oldByKey = new Map();
      for (const o of old) {
        const k = listMapKey(o, keys);
        if (k !== undefined) oldByKey.set(k, o);
      }
    }
    for (let i = 0; i < obj.length; i++) {
      const item = obj[i];
      const k = oldByKey ? listMapKey(item, keys!) : undefined;
      evalNode(items, indexPath(path, i), item, k !== undefined ? oldByKey!.get(k) : undefined, near, sinks, inAtomicMap);
    }
    return;
  }
  if (!isPlainObject(obj)) return;
  if (!node.additionalProperties && !node.properties) return;
  const plan = evalPlan(node);
  const oldObj = isPlainObject(old) ? old : undefined;
  const atomic = inAtomicMap || plan.atomic;
  if (node.additionalProperties) {
    for (const k of Object.keys(obj)) evalNode(node.additionalProperties, indexPath(path, k), obj[k], oldValueAt(oldObj, k), near, sinks, atomic);
  }
  if (plan.properties) {
    // Only the properties with rules below them are visited; their errors are reported in the
    // object's key order (kube's), so the rare case of errors under several gets reordered.
    let chunks: { key: string; start: number; end: number }[] | undefined;
    for (let i = 0; i < plan.properties.length; i++) {
      const [k, child] = plan.properties[i];
      if (!Object.prototype.hasOwnProperty.call(obj, k)) continue;
      const errs = sinks.errs;
      const start = errs.length;
      evalNode(child, childPath(path, k), obj[k], oldValueAt(oldObj, k), near, sinks, atomic);
      if (errs.length > start) (chunks ??= []).push({ key: k, start, end: errs.length });
    }
    if (chunks && chunks.length > 1) inKeyOrder(obj, chunks, sinks.errs);
  }
}

/** The old map's own entry at k (a key such as "constructor" must not find Object's). */
function oldValueAt(old: Obj | undefined, k: string): unknown {
  return old !== undefined && Object.prototype.hasOwnProperty.call(old, k) ? old[k] : undefined;
}

/** Reorders the error runs of several properties (the tail of errs) into obj's key order. */
function inKeyOrder(obj: Obj, chunks: { key: string; start: number; end: number }[], errs: FieldError[]): void {
  const order = new Map(Object.keys(obj).map((k, i) => [k, i]));
  const from = chunks[0].start;
  const runs = chunks.map((c) => ({ at: order.get(c.key)!, errs: errs.slice(c.start, c.end) }));
  runs.sort((a, b) => a.at - b.at);
  errs.length = from;
  for (const r of runs) errs.push(...r.errs);
}

export interface EvaluateOptions {
  /** Path of obj in the request ("" for a whole custom object). */
  basePath?: string;
  /**
   * On an update, where the failures that ratcheting forgives go (kube sends them as warnings):
   * those of rules that do not read oldSelf, on a value unchanged from oldObj (the nearest value
   * above it that correlates, when it does not itself). Without it every failure is an error.
   */
  warnings?: FieldError[];
}

/**
 * Evaluates the compiled rules against obj (and oldObj on updates). Transition rules (those
 * using oldSelf) run only where an old value correlates (object fields, map entries, list-type
 * map items by key) unless optionalOldSelf is set. Failures use `message`, the evaluated
 * `messageExpression`, or "failed rule: <rule>", with the rule's reason and fieldPath.
 */
export function evaluateRules(compiled: CompiledSchemaRules, obj: unknown, oldObj?: unknown, opts: EvaluateOptions = {}): FieldError[] {
  const sinks: Sinks = { errs: [], warnings: oldObj === undefined ? undefined : opts.warnings };
  if (compiled.root) evalNode(compiled.root, opts.basePath ?? '', obj, oldObj, undefined, sinks);
  return sinks.errs;
}
