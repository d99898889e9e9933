// The CEL environment of admission policies (kube's admission/plugin/cel: compile.go's variables,
// activation.go's values, composition.go's lazily evaluated `variables`), on the CEL stack CRD
// validation rules use (registry/crd/cel). Expressions see `object`, `oldObject`, `request` (an
// AdmissionRequest without uid, object and oldObject), `namespaceObject`, `params` (declared only
// when the policy has a paramKind) and `variables` (one field per declared variable).
import { aggregateErrors as aggregate } from '../go/errors.ts';
import { celMap, type CelInput } from '@bufbuild/cel';
import type { UserInfo } from '../authentication/user.ts';
import { authorizerValue, CelEvaluationError, CelTypes, compileExpression, jsonToCel, type CelType, type CompiledExpression } from '../registry/crd/cel/index.ts';
import type { AdmissionAttributes } from './types.ts';

const S = CelTypes.string;
const gvk = CelTypes.objectOf({ group: S, version: S, kind: S });
const gvr = CelTypes.objectOf({ group: S, version: S, resource: S });

/** kube's BuildRequestType. */
const REQUEST_TYPE = CelTypes.objectOf({
  kind: gvk,
  resource: gvr,
  subResource: S,
  requestKind: gvk,
  requestResource: gvr,
  requestSubResource: S,
  name: S,
  namespace: S,
  operation: S,
  userInfo: CelTypes.objectOf({ username: S, uid: S, groups: CelTypes.listOf(S), extra: CelTypes.mapOf(S, CelTypes.listOf(S)) }),
  dryRun: CelTypes.bool,
  options: CelTypes.dyn,
});

/** kube's BuildNamespaceType: the fields of a Namespace a policy may read. */
const NAMESPACE_TYPE = CelTypes.objectOf({
  metadata: CelTypes.objectOf({
    name: S,
    generateName: S,
    namespace: S,
    labels: CelTypes.mapOf(S, S),
    annotations: CelTypes.mapOf(S, S),
    UID: S,
    creationTimestamp: CelTypes.dyn,
    deletionGracePeriodSeconds: CelTypes.dyn,
    deletionTimestamp: CelTypes.dyn,
    generation: CelTypes.dyn,
    resourceVersion: S,
    finalizers: CelTypes.listOf(S),
  }),
  spec: CelTypes.objectOf({ finalizers: CelTypes.listOf(S) }),
  status: CelTypes.objectOf({ conditions: CelTypes.listOf(CelTypes.dyn), phase: S }),
});

/** What a policy's expressions are compiled with. */
export interface PolicyScope {
  hasParams: boolean;
  /** The names of the variables declared before the expression (all of them for validations). */
  variableNames: string[];
  /** The types of object/oldObject and params where known (type checking, typechecking.ts); dyn otherwise. */
  objectType?: CelType;
  paramsType?: CelType;
  /** messageExpressions see no `authorizer` (kube compiles them without it). */
  withoutAuthorizer?: boolean;
}

function declarations(scope: PolicyScope): Record<string, CelType> {
  const objectType = scope.objectType ?? CelTypes.dyn;
  const decls: Record<string, CelType> = { object: objectType, oldObject: objectType, namespaceObject: NAMESPACE_TYPE, request: REQUEST_TYPE };
  if (scope.hasParams) decls.params = scope.paramsType ?? CelTypes.dyn;
  if (!scope.withoutAuthorizer) decls.authorizer = CelTypes.authorizer;
  decls.variables = CelTypes.objectOf(Object.fromEntries(scope.variableNames.map((n) => [n, CelTypes.dyn])));
  return decls;
}

/** cel-go's name of a checked type as kube's "must evaluate to" message prints it. */
export type ReturnType = 'bool' | 'string' | 'any';

/**
 * An expression compiled for a policy, or kube's compile error text ("compilation failed: ERROR:
 * <input>:1:1: ..." or "must evaluate to bool but got string").
 */
export type PolicyExpression = { compiled: CompiledExpression; error?: undefined } | { error: string; compiled?: undefined };

export function compilePolicyExpression(src: string, scope: PolicyScope, returns: ReturnType, nullable = false, objectConstruction = false): PolicyExpression {
  const r = compileExpression(src, declarations(scope), { objectConstruction });
  if ('error' in r) return { error: `compilation failed: ${r.error}` };
  const t = r.compiled.resultType;
  // kube: dyn passes any declared return type (checked again at run time).
  if (returns !== 'any' && t !== returns && t !== 'dyn' && !(nullable && t === 'null_type')) {
    return { error: nullable ? `must evaluate to one of [${returns} null_type] but got ${t}` : `must evaluate to ${returns} but got ${t}` };
  }
  return { compiled: r.compiled };
}

/** cel-go's issues of an expression, with no return type required (typechecking.go's typeCheckingCompiler), or undefined. */
export function typeCheckIssues(src: string, scope: PolicyScope): string | undefined {
  const r = compileExpression(src, declarations(scope));
  return 'error' in r ? r.error : undefined;
}

/** The request variable (kube's CreateAdmissionRequest, as unstructured: empty omitempty fields left out). */
export function admissionRequestOf(a: AdmissionAttributes, resource: { group: string; version: string; resource: string }, kind: { group: string; version: string; kind: string }): Record<string, unknown> {
  const req: Record<string, unknown> = {
    kind,
    resource,
    requestKind: a.kind,
    requestResource: { group: a.info.group, version: a.info.version, resource: a.info.resource },
  };
  if (a.subresource) {
    req.subResource = a.subresource;
    req.requestSubResource = a.subresource;
  }
  if (a.name) req.name = a.name;
  if (a.namespace) req.namespace = a.namespace;
  req.operation = a.operation;
  req.userInfo = userInfoOf(a.user);
  // (kube sets DryRun always: false is there too)
  req.dryRun = a.dryRun;
  req.options = a.options;
  return req;
}


function userInfoOf(u: UserInfo): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (u.name) out.username = u.name;
  if (u.uid) out.uid = u.uid;
  if (u.groups?.length) out.groups = u.groups;
  if (u.extra && Object.keys(u.extra).length) out.extra = u.extra;
  return out;
}

/** The `authorizer` of a request (kube's NewAuthorizerVal with NewResourceAuthorizerVal as its requestResource). */
export function requestAuthorizer(a: AdmissionAttributes, checkId: string): unknown {
  return authorizerValue(checkId, a.user, { group: a.info.group, version: a.info.version, resource: a.info.resource, subresource: a.subresource, namespace: a.namespace, name: a.name });
}

/** kube's CreateNamespaceObject: only the fields BuildNamespaceType declares. */
export function namespaceObjectOf(ns: Record<string, unknown> | undefined): Record<string, unknown> | null {
  if (!ns) return null;
  const meta = (ns.metadata ?? {}) as Record<string, unknown>;
  const m: Record<string, unknown> = {};
  for (const f of ['name', 'generateName', 'namespace', 'labels', 'annotations', 'creationTimestamp', 'deletionGracePeriodSeconds', 'deletionTimestamp', 'generation', 'resourceVersion', 'finalizers']) {
    if (meta[f] !== undefined) m[f] = meta[f];
  }
  if (meta.uid !== undefined) m.UID = meta.uid;
  return { metadata: m, spec: ns.spec ?? {}, status: ns.status ?? {} };
}

/** A compiled variable: its name and expression (undefined with the compile error kube reports at use). */
export interface CompiledVariable {
  name: string;
  expression: PolicyExpression;
}

/**
 * The activation one invocation (policy, binding, param) evaluates in: the CEL values are made
 * once, `variables` evaluates each variable the first time an expression reads it (kube's
 * lazy.MapValue) and keeps the value or the error for the rest of the invocation.
 */
export class PolicyActivation {
  readonly values: Record<string, unknown>;

  constructor(inputs: { object: unknown; oldObject: unknown; request: Record<string, unknown>; namespaceObject: Record<string, unknown> | null; params?: unknown; hasParams: boolean; authorizer?: unknown }, variables: CompiledVariable[]) {
    this.values = {
      object: jsonToCel(inputs.object ?? null),
      oldObject: jsonToCel(inputs.oldObject ?? null),
      request: jsonToCel(inputs.request),
      namespaceObject: jsonToCel(inputs.namespaceObject),
    };
    if (inputs.hasParams) this.values.params = jsonToCel(inputs.params ?? null);
    // (a CEL value already: authorizerValue's)
    this.values.authorizer = inputs.authorizer ?? null;
    this.values.variables = celMap(new LazyVariables(variables, this.values) as unknown as Map<string, CelInput>);
  }

  /** Evaluates one compiled expression: its value, or kube's error text. */
  evaluate(expression: string, compiled: PolicyExpression): { value: unknown } | { error: string } {
    if (compiled.error !== undefined) return { error: `compilation error: ${compiled.error}` };
    try {
      return { value: compiled.compiled.evaluate(this.values) };
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      return { error: `expression '${expression}' resulted in error: ${message}` };
    }
  }
}

class LazyVariables extends Map<string, unknown> {
  private readonly byName = new Map<string, CompiledVariable>();
  private readonly done = new Map<string, { value: unknown } | { error: string }>();

  constructor(
    variables: CompiledVariable[],
    private readonly activation: Record<string, unknown>,
  ) {
    super();
    for (const v of variables) this.byName.set(v.name, v);
  }

  override has(name: string): boolean {
    return this.byName.has(name);
  }

  override get(name: string): unknown {
    let r = this.done.get(name);
    if (!r) {
      r = this.compute(name);
      this.done.set(name, r);
    }
    if ('error' in r) throw new CelEvaluationError(r.error);
    return r.value;
  }

  private compute(name: string): { value: unknown } | { error: string } {
    const v = this.byName.get(name);
    if (!v) return { error: `no such key: ${name}` };
    if (v.expression.error !== undefined) return { error: `composited variable "${name}" fails to compile: ${v.expression.error}` };
    try {
      return { value: v.expression.compiled.evaluateValue(this.activation) };
    } catch (e) {
      return { error: `composited variable "${name}" fails to evaluate: ${e instanceof Error ? e.message : String(e)}` };
    }
  }
}

/** A compiled match condition (webhooks and policies alike). */
export interface CompiledCondition {
  name: string;
  expression: string;
  compiled: PolicyExpression;
}

/**
 * Match conditions (kube's matchconditions.Matcher): any false skips the policy ('skip'); else
 * their errors, aggregated; else 'match'.
 */
export function matchConditions(conditions: CompiledCondition[], activation: PolicyActivation): 'match' | 'skip' | { error: string } {
  const errors: string[] = [];
  for (const c of conditions) {
    const r = activation.evaluate(c.expression, c.compiled);
    if ('error' in r) errors.push(r.error);
    else if (r.value === false) return 'skip';
  }
  return errors.length ? { error: aggregate(errors) } : 'match';
}
