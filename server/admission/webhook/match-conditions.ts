// Admission webhooks' matchConditions in CEL, as kube's admission/plugin/webhook/matchconditions
// and admission/plugin/cel evaluate them: the variables `object`, `oldObject` and
// `namespaceObject` (dyn; null where the request has none) and `request` (the typed
// AdmissionRequest); every condition must be a bool. A false condition skips the webhook; errors
// with no false condition follow the webhook's failurePolicy (Fail: the request is forbidden with
// the aggregated errors; Ignore: the webhook is skipped). The `authorizer` variable kube also
// declares is not offered (hearth's CEL has no authorizer library): an expression naming it fails
// to compile.
import { CelEvaluationError, CelTypes, compileExpression, jsonToCel, type CompiledExpression } from '../../registry/crd/cel/index.ts';

const S = CelTypes.string;
const gvk = CelTypes.objectOf({ group: S, version: S, kind: S });
const gvr = CelTypes.objectOf({ group: S, version: S, resource: S });

/** kube's buildRequestType: the AdmissionRequest as CEL sees it. */
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

const VARIABLES = { object: CelTypes.dyn, oldObject: CelTypes.dyn, namespaceObject: CelTypes.dyn, request: REQUEST_TYPE };

export interface CompiledCondition {
  name: string;
  expression: string;
  compiled?: CompiledExpression;
  /** Why it did not compile (a stored configuration validated by an older rule). */
  error?: string;
}

/** Compiles one expression: the program, or kube's detail ("compilation failed: ...", "must evaluate to bool"). */
export function compileMatchCondition(expression: string): { compiled: CompiledExpression } | { error: string } {
  const r = compileExpression(expression, VARIABLES);
  if ('error' in r) return { error: `compilation failed: ${r.error}` };
  if (r.compiled.resultType !== 'bool') return { error: 'must evaluate to bool' };
  return r;
}

/** The detail of a field error for an expression, or undefined when it compiles (for validation). */
export function matchConditionCompileError(expression: string): string | undefined {
  const r = compileMatchCondition(expression);
  return 'error' in r ? r.error : undefined;
}

export function compileConditions(raw: unknown): CompiledCondition[] {
  const list: unknown[] = Array.isArray(raw) ? raw : [];
  return list.map((c) => {
    const o = (c !== null && typeof c === 'object' ? c : {}) as Record<string, unknown>;
    const expression = typeof o.expression === 'string' ? o.expression.trim() : '';
    const name = typeof o.name === 'string' ? o.name : '';
    const r = compileMatchCondition(expression);
    return 'error' in r ? { name, expression, error: r.error } : { name, expression, compiled: r.compiled };
  });
}

export interface MatchInput {
  object: unknown;
  oldObject: unknown;
  request: unknown;
}

/** matcher.Match: matches, or not, or the errors' text when they decide (failurePolicy Fail). */
export function evaluateConditions(conditions: readonly CompiledCondition[], input: MatchInput, failClosed: boolean): { matches: boolean; error?: string } {
  const vars = { object: jsonToCel(input.object ?? null), oldObject: jsonToCel(input.oldObject ?? null), namespaceObject: null, request: jsonToCel(input.request) };
  const errors: string[] = [];
  for (const c of conditions) {
    if (!c.compiled) {
      errors.push(`compilation failed: ${c.error ?? ''}`);
      continue;
    }
    let v: unknown;
    try {
      v = c.compiled.evaluate(vars);
    } catch (e) {
      errors.push(`expression '${c.expression}' resulted in error: ${e instanceof CelEvaluationError ? e.message : String(e)}`);
      continue;
    }
    if (v === false) return { matches: false };
  }
  if (errors.length === 0) return { matches: true };
  if (!failClosed) return { matches: false };
  // utilerrors.NewAggregate: one error as is, several in brackets.
  return { matches: false, error: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` };
}
