// MutatingAdmissionPolicy (kube's admission/plugin/policy/mutating: compilation.go, dispatcher.go
// and patch/): for each policy whose matchConstraints match, each binding whose matchResources
// match and each param it selects, the match conditions are evaluated, then each mutation in
// order on the object as the previous left it — an ApplyConfiguration (`Object{...}`, merged as
// server-side apply merges, refused where it would replace an atomic list, map or struct) or a
// JSONPatch (`[JSONPatch{op, path, value}]`, not applied at all when a test operation fails).
// With reinvocationPolicy IfNeeded an invocation runs once more when a later one changed the
// object. Failures are kube's generic policy errors: the first, under failurePolicy Fail, refuses
// the request ("policy 'p' with binding 'b' denied request: ..."); the rest are its causes.
import { ApiError } from '../../errors.ts';
import { applyMerge, listRelationship, UNTYPED } from '../../registry/apply/index.ts';
import { applyJsonPatch } from '../../registry/patch/json-patch.ts';
import type { TypeNode } from '../../schema/types.ts';
import { deepEqual } from '../../util/json.ts';
import type { AdmissionAttributes, AdmissionPlugin } from '../types.ts';
import { admissionRequestOf, compilePolicyExpression, namespaceObjectOf, PolicyActivation, requestAuthorizer, type PolicyExpression } from '../cel.ts';
import { collectParams } from './params.ts';
import type { PolicySource } from './source.ts';
import { isExemptResource, requestName, withAuthorizeId, type PolicyLookups, type PolicyMatcher } from './validating.ts';
import { compileVariables, type FailurePolicy } from './validator.ts';
import { matchConditions, type CompiledCondition } from '../cel.ts';
import type { CompiledVariable } from '../cel.ts';

type Obj = Record<string, unknown>;

export const MUTATING_ADMISSION_POLICY = 'MutatingAdmissionPolicy';

export interface CompiledMutation {
  patchType: 'ApplyConfiguration' | 'JSONPatch';
  expression: string;
  compiled: PolicyExpression;
}

export interface CompiledMutatingPolicy {
  failurePolicy: FailurePolicy;
  reinvoke: boolean;
  hasParams: boolean;
  variables: CompiledVariable[];
  matchConditions: CompiledCondition[];
  mutations: CompiledMutation[];
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const list = (v: unknown): Obj[] => (Array.isArray(v) ? (v.filter((x) => x !== null && typeof x === 'object') as Obj[]) : []);

export function compileMutatingPolicy(policy: Obj): CompiledMutatingPolicy {
  const spec = (policy.spec ?? {}) as Obj;
  const hasParams = spec.paramKind !== undefined && spec.paramKind !== null;
  const variables = compileVariables(spec, hasParams);
  const scope = { hasParams, variableNames: variables.map((v) => v.name) };
  const failurePolicy: FailurePolicy = spec.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail';
  const matchConditions: CompiledCondition[] = list(spec.matchConditions).map((c) => ({ name: str(c.name), expression: str(c.expression), compiled: compilePolicyExpression(str(c.expression), scope, 'bool') }));
  return {
    failurePolicy,
    reinvoke: spec.reinvocationPolicy === 'IfNeeded',
    hasParams,
    variables,
    matchConditions,
    mutations: list(spec.mutations).map((m) => {
      const patchType = m.patchType === 'JSONPatch' ? 'JSONPatch' : 'ApplyConfiguration';
      const expression = str(((patchType === 'JSONPatch' ? m.jsonPatch : m.applyConfiguration) as Obj | undefined)?.expression);
      return { patchType, expression, compiled: compilePolicyExpression(expression, scope, 'any', false, true) };
    }),
  };
}

/** What the mutating plugin reads besides what the validating one does. */
export interface MutatingLookups extends PolicyLookups {
  /** The schema of the request's kind (for the apply merge), or undefined. */
  typeOf(a: AdmissionAttributes): TypeNode | undefined;
}

interface PolicyError {
  policy: string;
  binding: string;
  message: string;
  reason: string;
  failurePolicy: FailurePolicy;
}

interface Invocation {
  hook: { name: string; compiled: CompiledMutatingPolicy };
  binding: string;
  param: Obj | null;
  resource: { group: string; version: string; resource: string };
  kind: { group: string; version: string; kind: string };
}

export function mutatingAdmissionPolicy(source: PolicySource<CompiledMutatingPolicy>, matcher: PolicyMatcher, mutatingLookups: MutatingLookups): AdmissionPlugin {
  const lookups = withAuthorizeId(mutatingLookups);
  return {
    name: MUTATING_ADMISSION_POLICY,
    admit(attrs) {
      const hooks = source.hooks();
      if (!hooks.length || isExemptResource(attrs)) return;
      dispatch(hooks, attrs, matcher, lookups);
    },
  };
}

function dispatch(hooks: ReturnType<PolicySource<CompiledMutatingPolicy>['hooks']>, a: AdmissionAttributes, matcher: PolicyMatcher, lookups: MutatingLookups & { authorizeId: string }): void {
  const errors: PolicyError[] = [];
  const invocations: Invocation[] = [];
  for (const hook of hooks) {
    const spec = (hook.policy.spec ?? {}) as Obj;
    let matched: ReturnType<PolicyMatcher['definitionMatches']>;
    try {
      matched = matcher.definitionMatches(spec.matchConstraints, a);
    } catch (e) {
      errors.push({ policy: hook.name, binding: '', message: `failed to configure policy: ${(e as Error).message}`, reason: '', failurePolicy: hook.compiled.failurePolicy });
      continue;
    }
    if (!matched) continue;
    for (const binding of hook.bindings) {
      const bindingName = String((binding.metadata as Obj | undefined)?.name ?? '');
      const bspec = (binding.spec ?? {}) as Obj;
      try {
        if (!matcher.bindingMatches(bspec.matchResources, a)) continue;
        for (const param of collectParams(spec.paramKind as Obj | undefined, bspec.paramRef as Obj | undefined, a.namespace, lookups.params)) {
          invocations.push({ hook, binding: bindingName, param, resource: matched.resource, kind: matched.kind });
        }
      } catch (e) {
        errors.push({ policy: hook.name, binding: bindingName, message: `failed to configure binding: ${(e as Error).message}`, reason: '', failurePolicy: hook.compiled.failurePolicy });
      }
    }
  }
  if (invocations.length && a.object !== undefined && a.object !== null) {
    const nsName = a.info.group === '' && a.info.resource === 'namespaces' ? '' : a.namespace;
    const namespaceObject = nsName ? namespaceObjectOf(lookups.namespace(nsName)) : null;
    const node = lookups.typeOf(a) ?? UNTYPED;
    const authorizer = requestAuthorizer(a, lookups.authorizeId);
    // Invocations that may run again, and whether the object changed since each ran (kube's policyReinvokeContext).
    const reinvocable: Invocation[] = [];
    let changedAfterReinvocable = false;
    for (const inv of invocations) {
      if (invoke(inv, a, namespaceObject, node, authorizer, errors)) changedAfterReinvocable = reinvocable.length > 0;
      if (inv.hook.compiled.reinvoke) reinvocable.push(inv);
    }
    if (changedAfterReinvocable) for (const inv of reinvocable) invoke(inv, a, namespaceObject, node, authorizer, errors);
  }
  const failing = errors.filter((e) => e.failurePolicy !== 'Ignore');
  if (failing.length) throw policyErrorStatus(a, failing);
}

/** One invocation's match conditions and mutations, in order, on a.object; whether it changed it. */
function invoke(inv: Invocation, a: AdmissionAttributes, namespaceObject: Obj | null, node: TypeNode, authorizer: unknown, errors: PolicyError[]): boolean {
  const { compiled } = inv.hook;
  const report = (message: string) => errors.push({ policy: inv.hook.name, binding: inv.binding, message, reason: 'Invalid', failurePolicy: compiled.failurePolicy });
  const request = admissionRequestOf(a, inv.resource, inv.kind);
  const activationOf = (object: unknown) => new PolicyActivation({ object, oldObject: a.oldObject, request, namespaceObject, params: inv.param, hasParams: compiled.hasParams, authorizer }, compiled.variables);
  if (compiled.matchConditions.length) {
    // (an error is the policy's, under its failure policy: dispatch filters it)
    const m = matchConditions(compiled.matchConditions, activationOf(a.object));
    if (m === 'skip') return false;
    if (m !== 'match') {
      report(m.error);
      return false;
    }
  }
  const before = a.object;
  let current = a.object as Obj;
  for (const m of compiled.mutations) {
    const activation = activationOf(current);
    try {
      current = m.patchType === 'JSONPatch' ? jsonPatch(m, activation, current) : applyConfiguration(m, activation, current, node);
    } catch (e) {
      if (e instanceof ApiError && !(e instanceof MutationError)) throw e;
      report((e as Error).message);
    }
  }
  if (current === before) return false;
  const changed = !deepEqual(before, current);
  replaceInPlace(a.object as Obj, current);
  return changed;
}

class MutationError extends Error {}

function evaluateMutation(m: CompiledMutation, activation: PolicyActivation): unknown {
  if (m.compiled.error !== undefined) throw new MutationError(m.compiled.error);
  const r = activation.evaluate(m.expression, m.compiled);
  if ('error' in r) throw new MutationError(r.error);
  return r.value;
}

/** kube's applyConfigPatcher: the Object merged into the object, atomic parts refused. */
function applyConfiguration(m: CompiledMutation, activation: PolicyActivation, object: Obj, node: TypeNode): Obj {
  const patch = evaluateMutation(m, activation);
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) throw new MutationError(`unsupported return type from ApplyConfiguration expression: ${Array.isArray(patch) ? 'list' : typeof patch}`);
  const atomics = findAtomics('', node, patch);
  if (atomics.length) throw new MutationError(`error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: ${atomics.join(', ')}`);
  return applyMerge(node, object, patch) as Obj;
}

/** smd.go's findAtomics: the paths of atomic lists, maps and structs the patch sets. */
function findAtomics(path: string, node: TypeNode, v: unknown): string[] {
  const out: string[] = [];
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    if ((node.type === 'object' || node.type === 'map') && node.mapType === 'atomic') out.push(path);
    for (const [k, x] of Object.entries(v as Obj)) {
      const child = node.type === 'object' ? node.properties?.[k] : node.type === 'map' ? node.values : undefined;
      if (child) out.push(...findAtomics(`${path}.${k}`, child, x));
    }
  } else if (Array.isArray(v) && node.type === 'array') {
    if (listRelationship(node).relationship === 'atomic') out.push(path);
    v.forEach((x, i) => node.items && out.push(...findAtomics(`${path}[${i}]`, node.items, x)));
  }
  return out;
}

/** kube's jsonPatcher: the operations applied to the object; a failed test leaves it as it was. */
function jsonPatch(m: CompiledMutation, activation: PolicyActivation, object: Obj): Obj {
  const ops = evaluateMutation(m, activation);
  if (!Array.isArray(ops)) throw new MutationError('type mismatch: JSONPatchType.expression should evaluate to array');
  const patch = ops.map((op) => {
    const o = (op ?? {}) as Obj;
    const out: Obj = { op: str(o.op), path: str(o.path) };
    if (str(o.from)) out.from = o.from;
    if (o.value !== undefined && o.value !== null) out.value = o.value;
    return out;
  });
  try {
    return applyJsonPatch(object, patch) as Obj;
  } catch (e) {
    const detail = e instanceof ApiError ? String((e as { cause?: unknown }).cause ?? e.message) : String(e);
    if (/^testing value .* failed: test failed$/.test(detail)) return object;
    throw new MutationError(`JSONPath: ${detail}`);
  }
}

/** Mutating plugins change attrs.object in place. */
function replaceInPlace(target: Obj, next: Obj): void {
  for (const k of Object.keys(target)) if (!(k in next)) delete target[k];
  Object.assign(target, next);
}

/**
 * kube's generic policy dispatcher's refusal: admission.NewForbidden (403) whose message is the
 * first error's ("policy 'p' with binding 'b' denied request: ..."), its reason the first error's
 * when it has one, and every error a cause.
 */
function policyErrorStatus(a: AdmissionAttributes, errors: PolicyError[]): ApiError {
  const text = (e: PolicyError) => (e.binding ? `policy '${e.policy}' with binding '${e.binding}' denied request: ${e.message}` : `policy "${e.policy}" denied request: ${e.message}`);
  const first = errors[0];
  return new ApiError(403, first.reason || 'Forbidden', text(first), { name: requestName(a), group: a.info.group || undefined, kind: a.info.resource, causes: errors.map((e) => ({ message: text(e) })) });
}
