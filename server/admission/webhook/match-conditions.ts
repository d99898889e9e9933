// Admission webhooks' matchConditions, compiled and evaluated with the admission CEL environment
// policies use (../cel.ts, kube's admission/plugin/cel and matchconditions): `object`,
// `oldObject`, `namespaceObject` (null: kube fills it only for policies) and the typed `request`;
// every condition must be a bool. A false condition skips the webhook; errors with no false
// condition follow the webhook's failurePolicy (Fail: the request is forbidden with the
// aggregated errors; Ignore: the webhook is skipped). `authorizer` asks the server's authorizer
// chain, as kube's does.
import { compilePolicyExpression, matchConditions, PolicyActivation, type CompiledCondition } from '../cel.ts';

export type { CompiledCondition } from '../cel.ts';

const WEBHOOK_SCOPE = { hasParams: false, variableNames: [] };

/** The detail of a field error for an expression, or undefined when it compiles (for validation). */
export function matchConditionCompileError(expression: string): string | undefined {
  return compilePolicyExpression(expression, WEBHOOK_SCOPE, 'bool').error;
}

export function compileConditions(raw: unknown): CompiledCondition[] {
  const list: unknown[] = Array.isArray(raw) ? raw : [];
  return list.map((c) => {
    const o = (c !== null && typeof c === 'object' ? c : {}) as Record<string, unknown>;
    const expression = typeof o.expression === 'string' ? o.expression.trim() : '';
    return { name: typeof o.name === 'string' ? o.name : '', expression, compiled: compilePolicyExpression(expression, WEBHOOK_SCOPE, 'bool') };
  });
}

export interface MatchInput {
  object: unknown;
  oldObject: unknown;
  request: Record<string, unknown>;
  /** The request's `authorizer` (a CEL value, requestAuthorizer's), when the plugin has the chain. */
  authorizer?: unknown;
}

/** matcher.Match: matches, or not, or the errors' text when they decide (failurePolicy Fail). */
export function evaluateConditions(conditions: readonly CompiledCondition[], input: MatchInput, failClosed: boolean): { matches: boolean; error?: string } {
  const activation = new PolicyActivation({ object: input.object, oldObject: input.oldObject, request: input.request, namespaceObject: null, hasParams: false, authorizer: input.authorizer }, []);
  const r = matchConditions([...conditions], activation);
  if (r === 'match') return { matches: true };
  if (r === 'skip' || !failClosed) return { matches: false };
  return { matches: false, error: r.error };
}
