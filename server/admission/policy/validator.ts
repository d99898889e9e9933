// One ValidatingAdmissionPolicy compiled (kube's validating/plugin.go compilePolicy) and evaluated
// for one invocation — a binding and one param (kube's validating/validator.go): match
// conditions first, then each validation (with its message or messageExpression and reason),
// then the audit annotations, each decision as kube's PolicyDecision.
import { compilePolicyExpression, matchConditions, PolicyActivation, type CompiledCondition, type CompiledVariable, type PolicyExpression, type PolicyScope } from '../cel.ts';

type Obj = Record<string, unknown>;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const list = (v: unknown): Obj[] => (Array.isArray(v) ? (v.filter((x) => x !== null && typeof x === 'object') as Obj[]) : []);

/** kube's celconfig.MaxEvaluatedMessageExpressionSizeBytes. */
const MAX_EVALUATED_MESSAGE_EXPRESSION_SIZE_BYTES = 5 * 1024;

export type FailurePolicy = 'Fail' | 'Ignore';

export interface CompiledValidation {
  expression: string;
  compiled: PolicyExpression;
  message: string;
  reason: string;
  messageExpression?: { expression: string; compiled: PolicyExpression };
}

export interface CompiledAuditAnnotation {
  key: string;
  valueExpression: string;
  compiled: PolicyExpression;
}

export interface CompiledValidatingPolicy {
  failurePolicy: FailurePolicy;
  hasParams: boolean;
  variables: CompiledVariable[];
  matchConditions: CompiledCondition[];
  validations: CompiledValidation[];
  auditAnnotations: CompiledAuditAnnotation[];
}

/** Compiles variables in order, each seeing those declared before it (kube's CompileAndStoreVariables). */
export function compileVariables(spec: Obj, hasParams: boolean): CompiledVariable[] {
  const out: CompiledVariable[] = [];
  for (const v of list(spec.variables)) {
    const scope: PolicyScope = { hasParams, variableNames: out.map((x) => x.name) };
    out.push({ name: str(v.name), expression: compilePolicyExpression(str(v.expression), scope, 'any') });
  }
  return out;
}

export function compileValidatingPolicy(policy: Obj): CompiledValidatingPolicy {
  const spec = (policy.spec ?? {}) as Obj;
  const hasParams = spec.paramKind !== undefined && spec.paramKind !== null;
  const variables = compileVariables(spec, hasParams);
  const scope: PolicyScope = { hasParams, variableNames: variables.map((v) => v.name) };
  return {
    failurePolicy: spec.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    hasParams,
    variables,
    matchConditions: list(spec.matchConditions).map((c) => ({ name: str(c.name), expression: str(c.expression), compiled: compilePolicyExpression(str(c.expression), scope, 'bool') })),
    validations: list(spec.validations).map((v) => ({
      expression: str(v.expression),
      compiled: compilePolicyExpression(str(v.expression), scope, 'bool'),
      message: str(v.message),
      reason: str(v.reason),
      messageExpression: v.messageExpression ? { expression: str(v.messageExpression), compiled: compilePolicyExpression(str(v.messageExpression), { ...scope, withoutAuthorizer: true }, 'string') } : undefined,
    })),
    auditAnnotations: list(spec.auditAnnotations).map((a) => ({ key: str(a.key), valueExpression: str(a.valueExpression), compiled: compilePolicyExpression(str(a.valueExpression), scope, 'string', true) })),
  };
}

export interface PolicyDecision {
  action: 'admit' | 'deny';
  evaluation: 'admit' | 'deny' | 'error';
  message: string;
  reason: string;
}

export type AuditAnnotationResult = { action: 'publish'; key: string; value: string } | { action: 'error'; key: string; error: string } | { action: 'exclude' };

export interface ValidateResult {
  decisions: PolicyDecision[];
  auditAnnotations: AuditAnnotationResult[];
}

const errorDecision = (f: FailurePolicy, message: string): PolicyDecision => ({ action: f === 'Ignore' ? 'admit' : 'deny', evaluation: 'error', message, reason: '' });


export function validate(policy: CompiledValidatingPolicy, activation: PolicyActivation): ValidateResult {
  const f = policy.failurePolicy;
  // Errors of match conditions follow the failure policy.
  if (policy.matchConditions.length) {
    const m = matchConditions(policy.matchConditions, activation);
    if (m === 'skip') return { decisions: [], auditAnnotations: [] };
    if (m !== 'match') return f === 'Fail' ? { decisions: [errorDecision(f, m.error)], auditAnnotations: [] } : { decisions: [], auditAnnotations: [] };
  }
  const decisions: PolicyDecision[] = [];
  for (const v of policy.validations) {
    const r = activation.evaluate(v.expression, v.compiled);
    if ('error' in r) {
      decisions.push(errorDecision(f, r.error));
      continue;
    }
    if (r.value === true) {
      decisions.push({ action: 'admit', evaluation: 'admit', message: '', reason: '' });
      continue;
    }
    decisions.push({ action: 'deny', evaluation: 'deny', message: failureMessage(v, activation), reason: v.reason || 'Invalid' });
  }
  const auditAnnotations = policy.auditAnnotations.map((a): AuditAnnotationResult => {
    const r = activation.evaluate(a.valueExpression, a.compiled);
    if ('error' in r) return f === 'Ignore' ? { action: 'exclude' } : { action: 'error', key: a.key, error: r.error };
    if (r.value === null) return { action: 'exclude' };
    if (typeof r.value !== 'string') {
      return { action: 'error', key: a.key, error: `valueExpression '${a.valueExpression}' resulted in unsupported return type: ${celTypeName(r.value)}. Return type must be either string or null.` };
    }
    const value = r.value.trim();
    return value ? { action: 'publish', key: a.key, value } : { action: 'exclude' };
  });
  return { decisions, auditAnnotations };
}

/** The messageExpression's value if it is a usable string, else the message, else "failed expression: <expression>". */
function failureMessage(v: CompiledValidation, activation: PolicyActivation): string {
  let message = '';
  if (v.messageExpression) {
    const m = activation.evaluate(v.messageExpression.expression, v.messageExpression.compiled);
    if (!('error' in m) && typeof m.value === 'string') {
      message = m.value.trim();
      if (Buffer.byteLength(message) > MAX_EVALUATED_MESSAGE_EXPRESSION_SIZE_BYTES || message.includes('\n')) message = '';
    }
  }
  if (!message && v.message) message = v.message.trim();
  if (!message) message = `failed expression: ${v.expression.trim()}`;
  return message;
}

function celTypeName(v: unknown): string {
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'double';
  if (Array.isArray(v)) return 'list';
  if (v !== null && typeof v === 'object') return 'map';
  return typeof v;
}
