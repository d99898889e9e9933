// The type checking of a ValidatingAdmissionPolicy (kube's validating/typechecking.go): each
// validation's expression and messageExpression compiled once per kind the matchConstraints name
// (no wildcards; at most 10 kinds, sorted by group, version and kind), with `object` and
// `oldObject` of that kind's schema and `params` of the paramKind's, each failure becoming an
// expression warning `<group/version>, Kind=<kind>: <cel-go issues>` that the status controller
// writes back. Checking never changes what the policy does.
import { schemaDeclType, type CelType } from '../../registry/crd/cel/index.ts';
import { typeCheckIssues, type PolicyScope } from '../cel.ts';

type Obj = Record<string, unknown>;

/** kube's maxTypesToCheck. */
const MAX_TYPES_TO_CHECK = 10;

export interface GroupVersionKindRef {
  group: string;
  version: string;
  kind: string;
}

/** What the checker reads of the served kinds (server.ts: the catalog and the OpenAPI definitions). */
export interface TypeCheckingLookups {
  /** The kind a group/version/resource serves and the name of its schema definition (kube's RESTMapper.KindsFor). */
  kindFor(group: string, version: string, resource: string): { gvk: GroupVersionKindRef; definition?: string } | undefined;
  /** The definition of a kind by apiVersion and kind (for params). */
  definitionOf(apiVersion: string, kind: string): string | undefined;
  /** All OpenAPI definitions by name (built-in and custom). */
  definitions(): Record<string, unknown>;
}

export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

const arr = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** "apps/v1, Kind=Deployment" (schema.GroupVersionKind's String). */
const gvkString = (g: GroupVersionKindRef): string => `${g.group ? `${g.group}/${g.version}` : g.version}, Kind=${g.kind}`;

/** typesToCheck: the kinds the resource rules name exactly, sorted, at most ten. */
function typesToCheck(policy: Obj, lookups: TypeCheckingLookups): { gvk: GroupVersionKindRef; definition?: string }[] {
  const rules = arr((((policy.spec ?? {}) as Obj).matchConstraints as Obj | undefined)?.resourceRules);
  const found = new Map<string, { gvk: GroupVersionKindRef; definition?: string }>();
  const sorted = () => [...found.values()].sort((a, b) => cmp(a.gvk.group, b.gvk.group) || cmp(a.gvk.version, b.gvk.version) || cmp(a.gvk.kind, b.gvk.kind));
  for (const rule of rules) {
    const groups = strs(rule.apiGroups);
    const versions = strs(rule.apiVersions);
    if (!groups.length || groups.some((g) => g.includes('*')) || !versions.length || versions.some((v) => v.includes('*'))) continue;
    const resources = strs(rule.resources).filter((r) => !/[*/]/.test(r));
    if (!resources.length) continue;
    let count = 0;
    for (const group of [...groups].sort())
      for (const version of [...versions].sort())
        for (const resource of [...resources].sort()) {
          const k = lookups.kindFor(group, version, resource);
          if (!k) continue;
          found.set(gvkString(k.gvk), k);
          if (++count === MAX_TYPES_TO_CHECK) return sorted();
        }
  }
  return sorted();
}

/**
 * A definition with its $refs inlined (kube's schema resolver), a reference back into itself cut
 * to an object of unknown fields; memoized per definition name for one check.
 */
function resolvedSchema(name: string, defs: Record<string, unknown>, path: Set<string> = new Set()): unknown {
  const resolve = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(resolve);
    if (node === null || typeof node !== 'object') return node;
    const o = node as Obj;
    if (typeof o.$ref === 'string') {
      const ref = o.$ref.replace(/^#\/(definitions|components\/schemas)\//, '');
      return resolvedSchema(ref, defs, path);
    }
    if (Array.isArray(o.allOf) && o.allOf.length === 1 && Object.keys(o).every((k) => k === 'allOf' || k === 'description' || k === 'default')) return resolve(o.allOf[0]);
    const out: Obj = {};
    for (const [k, v] of Object.entries(o)) out[k] = k === 'properties' && v && typeof v === 'object' ? Object.fromEntries(Object.entries(v as Obj).map(([p, s]) => [p, resolve(s)])) : k === 'items' || k === 'additionalProperties' ? resolve(v) : v;
    return out;
  };
  if (name === 'io.k8s.apimachinery.pkg.util.intstr.IntOrString') return { 'x-kubernetes-int-or-string': true };
  if (path.has(name)) return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  const def = defs[name];
  if (def === undefined) return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  path.add(name);
  const out = resolve(def);
  path.delete(name);
  return out;
}

function declTypeOf(definition: string | undefined, defs: Record<string, unknown>): CelType | undefined {
  if (!definition || defs[definition] === undefined) return undefined;
  return schemaDeclType(resolvedSchema(definition, defs), true);
}

/** kube's TypeChecker.Check: the warnings of the policy's validations, none when everything checks. */
export function typeCheckPolicy(policy: Obj, lookups: TypeCheckingLookups): ExpressionWarning[] {
  const spec = (policy.spec ?? {}) as Obj;
  const defs = lookups.definitions();
  const kinds = typesToCheck(policy, lookups)
    .map((k) => ({ gvk: k.gvk, type: declTypeOf(k.definition, defs) }))
    .filter((k): k is { gvk: GroupVersionKindRef; type: CelType } => k.type !== undefined);
  if (!kinds.length) return [];
  const paramKind = spec.paramKind as Obj | undefined;
  const paramsType = paramKind ? declTypeOf(lookups.definitionOf(String(paramKind.apiVersion ?? ''), String(paramKind.kind ?? '')), defs) : undefined;
  // kube declares params only when the paramKind's schema resolves.
  const hasParams = paramsType !== undefined;
  const variableNames = arr(spec.variables).map((v) => String(v.name ?? ''));
  const check = (expression: string): string | undefined => {
    const results: string[] = [];
    for (const k of kinds) {
      const scope: PolicyScope = { hasParams, variableNames, objectType: k.type, paramsType };
      const issues = typeCheckIssues(expression, scope);
      if (issues !== undefined) results.push(`${gvkString(k.gvk)}: ${issues}\n`);
    }
    return results.length ? results.join('\n') : undefined;
  };
  const warnings: ExpressionWarning[] = [];
  arr(spec.validations).forEach((v, i) => {
    const w = check(String(v.expression ?? ''));
    if (w !== undefined) warnings.push({ fieldRef: `spec.validations[${i}].expression`, warning: w });
    if (typeof v.messageExpression === 'string' && v.messageExpression) {
      const m = check(v.messageExpression);
      if (m !== undefined) warnings.push({ fieldRef: `spec.validations[${i}].messageExpression`, warning: m });
    }
  });
  return warnings;
}
