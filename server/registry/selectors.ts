// Label and field selectors: the query-string forms parsed as apimachinery's labels and fields
// packages parse them (the grammar is validation/selectors.ts, shared with authorization; here a
// selector that does not parse is a 400 with kube's message), compiled once per request into
// matchers, and matched against the field set each kind exposes (looked up in the kinds'
// registry, kinds/fields.ts).
import type { ResourceInfo } from '../schema/types.ts';
import { kindFieldsOf, isBuiltinGroup } from './kinds/fields.ts';
import { notKnownFieldSelector, stringField, type KindFields } from './strategy.ts';
import { badRequest } from '../errors.ts';
import { goQuote, parseInt64 } from '../go/strconv.ts';
import {
  newLabelRequirement,
  parseFieldRequirements,
  parseLabelRequirements,
  SelectorParseError,
  type FieldRequirement,
  type LabelOp,
  type LabelRequirement,
} from '../validation/selectors.ts';

export type { FieldRequirement } from '../validation/selectors.ts';

// =============================================================================================
// Label selectors

export interface LabelSelector {
  matches(labels: Record<string, string> | undefined): boolean;
  /** True when the selector does not restrict anything (matches every object). */
  readonly empty: boolean;
  /**
   * Labels a matching object must carry, each with the values it may have (undefined: any):
   * what `=`, `==`, `in`, `exists`, `gt` and `lt` require. Storage reads by them before
   * matches() decides; the other requirements restrict nothing here.
   */
  readonly required: readonly RequiredLabel[];
}

export interface RequiredLabel {
  key: string;
  values?: readonly string[];
}

const hasOwn = Object.prototype.hasOwnProperty;
type Labels = Record<string, string> | undefined;
type LabelTest = (labels: Labels) => boolean;

function compileRequirement(r: LabelRequirement): LabelTest {
  const key = r.key;
  const lookup = (l: Labels): string | undefined => (l && hasOwn.call(l, key) ? l[key] : undefined);
  switch (r.op) {
    case 'in':
    case '=':
    case '==': {
      if (r.values.length === 1) {
        const want = r.values[0];
        return (l) => lookup(l) === want;
      }
      const set = new Set(r.values);
      return (l) => {
        const v = lookup(l);
        return v !== undefined && set.has(v);
      };
    }
    case 'notin':
    case '!=': {
      if (r.values.length === 1) {
        const not = r.values[0];
        return (l) => lookup(l) !== not;
      }
      const set = new Set(r.values);
      return (l) => {
        const v = lookup(l);
        return v === undefined || !set.has(v);
      };
    }
    case 'exists':
      return (l) => lookup(l) !== undefined;
    case '!':
      return (l) => lookup(l) === undefined;
    case 'gt':
    case 'lt': {
      const bound = r.values.length === 1 ? parseInt64(r.values[0]) : undefined;
      if (typeof bound !== 'bigint') return () => false;
      const gt = r.op === 'gt';
      return (l) => {
        const v = lookup(l);
        if (v === undefined) return false;
        const n = parseInt64(v);
        if (typeof n !== 'bigint') return false;
        return gt ? n > bound : n < bound;
      };
    }
  }
}

function makeLabelSelector(reqs: LabelRequirement[] | null): LabelSelector {
  if (reqs === null) return { empty: false, required: [], matches: () => false }; // labels.Nothing()
  if (reqs.length === 0) return { empty: true, required: [], matches: () => true };
  const tests = reqs.map(compileRequirement);
  const required = requiredLabels(reqs);
  if (tests.length === 1) {
    const t = tests[0];
    return { empty: false, required, matches: (l) => t(l) };
  }
  return {
    empty: false,
    required,
    matches(l) {
      for (let i = 0; i < tests.length; i++) if (!tests[i](l)) return false;
      return true;
    },
  };
}

function requiredLabels(reqs: LabelRequirement[]): RequiredLabel[] {
  const out: RequiredLabel[] = [];
  for (const r of reqs) {
    if (r.op === '=' || r.op === '==' || r.op === 'in') out.push({ key: r.key, values: r.values });
    else if (r.op === 'exists' || r.op === 'gt' || r.op === 'lt') out.push({ key: r.key });
  }
  return out;
}

/**
 * Parse the `labelSelector` query parameter (labels.Parse): `a=b`, `a==b`, `a!=b`, `a in (x,y)`,
 * `a notin (x)`, `a`, `!a`, `a>1`, `a<1`, comma-separated (AND). Errors are ApiError 400
 * BadRequest with kube's message.
 */
export function parseLabelSelector(s: string | undefined): LabelSelector {
  if (s === undefined || s === '') return makeLabelSelector([]);
  try {
    return makeLabelSelector(parseLabelRequirements(s));
  } catch (e) {
    if (e instanceof SelectorParseError) throw badRequest(e.message);
    throw e;
  }
}

const SELECTOR_OPS: Record<string, LabelOp> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/**
 * A metav1.LabelSelector object (matchLabels, matchExpressions with In/NotIn/Exists/DoesNotExist)
 * as metav1.LabelSelectorAsSelector reads it: null/undefined selects nothing, {} selects
 * everything. Invalid selectors throw ApiError 400 with kube's message.
 */
export function labelSelectorFromObject(sel: unknown): LabelSelector {
  if (sel === null || sel === undefined) return makeLabelSelector(null);
  if (typeof sel !== 'object' || Array.isArray(sel)) throw badRequest('invalid label selector: not an object');
  const { matchLabels, matchExpressions } = sel as { matchLabels?: unknown; matchExpressions?: unknown };
  const ml = matchLabels && typeof matchLabels === 'object' && !Array.isArray(matchLabels) ? (matchLabels as Record<string, unknown>) : {};
  const me = Array.isArray(matchExpressions) ? matchExpressions : [];
  const reqs: LabelRequirement[] = [];
  for (const k of Object.keys(ml)) {
    const { req, err } = newLabelRequirement(k, '=', [String(ml[k] ?? '')], null);
    if (err) throw badRequest(err);
    reqs.push(req);
  }
  for (const raw of me) {
    const e = (raw && typeof raw === 'object' ? raw : {}) as { key?: unknown; operator?: unknown; values?: unknown };
    const operator = typeof e.operator === 'string' ? e.operator : '';
    const op = hasOwn.call(SELECTOR_OPS, operator) ? SELECTOR_OPS[operator] : undefined;
    if (!op) throw badRequest(`${goQuote(operator)} is not a valid label selector operator`);
    const values = Array.isArray(e.values) && e.values.length ? e.values.map((v) => String(v)) : null;
    const { req, err } = newLabelRequirement(typeof e.key === 'string' ? e.key : '', op, values, null);
    if (err) throw badRequest(err);
    reqs.push(req);
  }
  return makeLabelSelector(reqs);
}

// =============================================================================================
// Field selectors

export interface FieldSelector {
  matches(fields: Record<string, string>): boolean;
  readonly requirements: FieldRequirement[];
  readonly empty: boolean;
}

/** Parse the `fieldSelector` query parameter (fields.ParseSelector); errors are ApiError 400. */
export function parseFieldSelector(s: string | undefined): FieldSelector {
  let requirements: FieldRequirement[];
  try {
    requirements = parseFieldRequirements(s ?? '');
  } catch (e) {
    if (e instanceof SelectorParseError) throw badRequest(e.message);
    throw e;
  }
  const n = requirements.length;
  const fieldsOf = requirements.map((r) => r.field);
  const valuesOf = requirements.map((r) => r.value);
  const negOf = requirements.map((r) => r.op === '!=');
  return {
    requirements,
    empty: n === 0,
    matches(fields) {
      for (let i = 0; i < n; i++) {
        const f = fieldsOf[i];
        const v = hasOwn.call(fields, f) ? fields[f] : '';
        if ((v === valuesOf[i]) === negOf[i]) return false;
      }
      return true;
    },
  };
}

// --- Field sets: each kind's from the kinds' registry (kinds/fields.ts) -----------------------

/**
 * The field set an object exposes to field selectors (the registry's GetAttrs): metadata.name,
 * metadata.namespace for namespaced kinds, and the kind's own fields. CRD-backed kinds: see fieldsOf.
 */
export function selectableFields(group: string, resource: string, obj: any, namespaced: boolean): Record<string, string> {
  const kind = kindFieldsOf(group, resource);
  const out: Record<string, string> = kind?.fields ? kind.fields(obj) : {};
  const meta = obj?.metadata ?? {};
  out['metadata.name'] = stringField(meta.name);
  if (namespaced) out['metadata.namespace'] = stringField(meta.namespace);
  return out;
}

/** The labels each kind's field-label conversion accepts, as sets. */
const accepted = new WeakMap<KindFields, ReadonlySet<string>>();
function acceptedBy(kind: KindFields): ReadonlySet<string> {
  let set = accepted.get(kind);
  if (!set) accepted.set(kind, (set = new Set(kind.accepted)));
  return set;
}

export interface FieldSupportOptions {
  /** Served version, for messages that name it (ResourceSlice). Default "v1". */
  version?: string;
  /** Scope, for CRD-backed kinds (metadata.namespace is refused on cluster-scoped ones). */
  namespaced?: boolean;
  /** A CRD's spec.versions[].selectableFields[].jsonPath values. */
  selectableFields?: readonly string[];
}

/**
 * Throws ApiError 400 for the first field (in sorted order, as kube transforms them) the
 * resource does not support. Kinds with their own conversion say `field label not supported:
 * <label>`; kinds without one say `"<label>" is not a known field selector: only
 * "metadata.name", "metadata.namespace"`; CRD-backed kinds accept metadata.name,
 * metadata.namespace when namespaced, and their selectableFields.
 */
export function checkFieldSelectorSupported(group: string, resource: string, sel: FieldSelector, opts: FieldSupportOptions = {}): void {
  if (sel.empty) return;
  const kind = kindFieldsOf(group, resource);
  const builtin = isBuiltinGroup(group);
  for (const { field } of sel.requirements) {
    if (kind) {
      if (acceptedBy(kind).has(field)) continue;
      throw badRequest(kind.message ? kind.message(field, opts.version ?? 'v1') : `field label not supported: ${field}`);
    }
    if (builtin) {
      if (field === 'metadata.name' || field === 'metadata.namespace') continue;
      throw badRequest(notKnownFieldSelector(field));
    }
    if (field === 'metadata.name') continue;
    if (field === 'metadata.namespace' && opts.namespaced !== false) continue;
    const custom = opts.selectableFields?.some((p) => (p.startsWith('.') ? p.slice(1) : p) === field);
    if (custom) continue;
    throw badRequest(`field label not supported: ${field}`);
  }
}

/** The JSON path of a selectable field of a built-in kind whose value is a string read as it is (KindFields.stringFieldPaths). */
export function stringFieldPath(info: ResourceInfo, field: string): string | undefined {
  return info.custom ? undefined : kindFieldsOf(info.group, info.resource)?.stringFieldPaths?.[field];
}

/** The field set of an object of any resource, built-in or custom. */
export function fieldsOf(info: ResourceInfo, obj: any): Record<string, string> {
  return info.custom ? info.custom.fields(obj) : selectableFields(info.group, info.resource, obj, info.namespaced);
}

/** 400 for a field selector the resource cannot serve. */
export function checkFieldSelectorFor(info: ResourceInfo, sel: FieldSelector): void {
  if (info.custom) checkFieldSelectorSupported(info.group, info.resource, sel, { namespaced: info.namespaced, selectableFields: info.custom.selectableFields, version: info.version });
  else checkFieldSelectorSupported(info.group, info.resource, sel);
}
