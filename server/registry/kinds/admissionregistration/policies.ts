// Validation of the admission policy kinds (kube's pkg/apis/admissionregistration/validation:
// ValidateValidatingAdmissionPolicy, ...Binding, ValidateMutatingAdmissionPolicy, ...Binding and
// their status): failure and match policies, paramKind and paramRef, matchConstraints and their
// rules, validation actions, and every CEL expression compiled with kube's messages. The kinds
// below the store may not import CEL (registry/crd/), so the compiler is passed in: the policy
// plugin (admission/policy/strategies.ts) registers these strategies with it.
import { goQuote } from '../../../go/strconv.ts';
import { isPlainObject } from '../../../util/json.ts';
import { childPath, duplicateError, forbiddenError, indexPath, invalidError, notSupportedError, requiredError, tooManyError, type FieldError } from '../../../validation/field.ts';
import { isDNS1035Label, isDNS1123Subdomain, isPathSegmentName, isQualifiedName } from '../../../validation/names.ts';
import { validateLabelSelector } from '../../../validation/object-meta.ts';
import type { Obj, Strategy } from '../../strategy.ts';

/** Compiles an expression of a policy: undefined when it compiles, else kube's detail ("compilation failed: ..."). */
export type PolicyExpressionCheck = (expression: string, opts: { hasParams: boolean; variableNames: string[]; returns: 'bool' | 'string' | 'any'; nullable?: boolean; mutation?: 'ApplyConfiguration' | 'JSONPatch'; withoutAuthorizer?: boolean }) => string | undefined;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const rec = (v: unknown): Obj => (isPlainObject(v) ? (v as Obj) : {});
const has = (o: Obj, k: string): boolean => o[k] !== undefined && o[k] !== null;

const SUPPORTED_FAILURE_POLICIES = ['Fail', 'Ignore'];
const SUPPORTED_MATCH_POLICIES = ['Equivalent', 'Exact'];
const SUPPORTED_OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const VALID_SCOPES = ['*', 'Cluster', 'Namespaced'];
const SUPPORTED_VALIDATION_POLICY_REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge'];
const SUPPORTED_MUTATING_OPERATIONS = ['*', 'CREATE', 'UPDATE'];
const SUPPORTED_PATCH_TYPES = ['ApplyConfiguration', 'JSONPatch'];
const SUPPORTED_REINVOCATION_POLICIES = ['IfNeeded', 'Never'];
const VALID_VALIDATION_ACTIONS = ['Audit', 'Deny', 'Warn'];
/** kube's maxAuditAnnotations and maxAuditAnnotationValueExpressionLength. */
const MAX_AUDIT_ANNOTATIONS = 20;
const MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH = 5 * 1024;

/** A list of strings as Go's %#v prints a typed slice (the value of an Invalid error). */
const goSlice = (type: string, values: unknown[]): string => `[]${type}{${values.map((v) => goQuote(str(v))).join(', ')}}`;

const hasWildcard = (values: unknown[]): boolean => values.includes('*');

function validateResources(resources: unknown[], at: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!resources.length) errs.push(requiredError(at));
  const resourcesWithWildcardSubresources = new Set<string>();
  const subresourcesWithWildcardResource = new Set<string>();
  let hasDoubleWildcard = false;
  let hasSingleWildcard = false;
  let hasResourceWithoutSubresource = false;
  resources.forEach((raw, i) => {
    const resSub = str(raw);
    if (resSub === '') {
      errs.push(requiredError(indexPath(at, i)));
      return;
    }
    if (resSub === '*/*') hasDoubleWildcard = true;
    if (resSub === '*') hasSingleWildcard = true;
    const slash = resSub.indexOf('/');
    if (slash < 0) {
      hasResourceWithoutSubresource = resSub !== '*';
      return;
    }
    const res = resSub.slice(0, slash);
    const sub = resSub.slice(slash + 1);
    if (resourcesWithWildcardSubresources.has(res)) errs.push(invalidError(indexPath(at, i), goQuote(resSub), `if '${res}/*' is present, must not specify ${resSub}`));
    if (subresourcesWithWildcardResource.has(sub)) errs.push(invalidError(indexPath(at, i), goQuote(resSub), `if '*/${sub}' is present, must not specify ${resSub}`));
    if (sub === '*') resourcesWithWildcardSubresources.add(res);
    if (res === '*') subresourcesWithWildcardResource.add(sub);
  });
  if (resources.length > 1 && hasDoubleWildcard) errs.push(invalidError(at, goSlice('string', resources), "if '*/*' is present, must not specify other resources"));
  if (hasSingleWildcard && hasResourceWithoutSubresource) errs.push(invalidError(at, goSlice('string', resources), "if '*' is present, must not specify other resources without subresources"));
  return errs;
}

/** validateRuleWithOperations with validateRule (subresources allowed). */
function validateRuleWithOperations(rule: Obj, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const operations = arr(rule.operations);
  if (!operations.length) errs.push(requiredError(childPath(at, 'operations')));
  if (operations.length > 1 && hasWildcard(operations)) errs.push(invalidError(childPath(at, 'operations'), goSlice('admissionregistration.OperationType', operations), "if '*' is present, must not specify other operations"));
  operations.forEach((op, i) => {
    if (!SUPPORTED_OPERATIONS.includes(str(op))) errs.push(notSupportedError(indexPath(childPath(at, 'operations'), i), goQuote(str(op)), SUPPORTED_OPERATIONS));
  });
  const groups = arr(rule.apiGroups);
  if (!groups.length) errs.push(requiredError(childPath(at, 'apiGroups')));
  if (groups.length > 1 && hasWildcard(groups)) errs.push(invalidError(childPath(at, 'apiGroups'), goSlice('string', groups), "if '*' is present, must not specify other API groups"));
  const versions = arr(rule.apiVersions);
  if (!versions.length) errs.push(requiredError(childPath(at, 'apiVersions')));
  if (versions.length > 1 && hasWildcard(versions)) errs.push(invalidError(childPath(at, 'apiVersions'), goSlice('string', versions), "if '*' is present, must not specify other API versions"));
  versions.forEach((v, i) => {
    if (v === '') errs.push(requiredError(indexPath(childPath(at, 'apiVersions'), i)));
  });
  errs.push(...validateResources(arr(rule.resources), childPath(at, 'resources')));
  if (has(rule, 'scope') && !VALID_SCOPES.includes(str(rule.scope))) errs.push(notSupportedError(childPath(at, 'scope'), goQuote(str(rule.scope)), VALID_SCOPES));
  return errs;
}

function validateNamedRuleWithOperations(rule: Obj, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  arr(rule.resourceNames).forEach((raw, i) => {
    const name = str(raw);
    for (const m of isPathSegmentName(name)) errs.push(invalidError(indexPath(childPath(at, 'resourceNames'), i), goQuote(name), m));
    if (seen.has(name)) errs.push(duplicateError(indexPath(childPath(at, 'resourceNames'), i), goQuote(name)));
    else seen.add(name);
  });
  errs.push(...validateRuleWithOperations(rule, at));
  return errs;
}

function validateMatchResources(m: unknown, at: string): FieldError[] {
  if (!isPlainObject(m)) return [];
  const mc = m as Obj;
  const errs: FieldError[] = [];
  if (!has(mc, 'matchPolicy')) errs.push(requiredError(childPath(at, 'matchPolicy')));
  else if (!SUPPORTED_MATCH_POLICIES.includes(str(mc.matchPolicy))) errs.push(notSupportedError(childPath(at, 'matchPolicy'), goQuote(str(mc.matchPolicy)), SUPPORTED_MATCH_POLICIES));
  if (!has(mc, 'namespaceSelector')) errs.push(requiredError(childPath(at, 'namespaceSelector')));
  else errs.push(...validateLabelSelector(mc.namespaceSelector, childPath(at, 'namespaceSelector')));
  if (!has(mc, 'objectSelector')) errs.push(requiredError(childPath(at, 'objectSelector')));
  else errs.push(...validateLabelSelector(mc.objectSelector, childPath(at, 'objectSelector')));
  arr(mc.resourceRules).forEach((r, i) => errs.push(...validateNamedRuleWithOperations(rec(r), indexPath(childPath(at, 'resourceRules'), i))));
  arr(mc.excludeResourceRules).forEach((r, i) => errs.push(...validateNamedRuleWithOperations(rec(r), indexPath(childPath(at, 'excludeResourceRules'), i))));
  return errs;
}

function validateParamKind(pk: Obj, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const apiVersion = str(pk.apiVersion);
  if (!apiVersion) errs.push(requiredError(childPath(at, 'apiVersion')));
  else {
    const slashes = apiVersion.split('/').length - 1;
    if (slashes > 1) errs.push(invalidError(childPath(at, 'apiVersion'), goQuote(apiVersion), `unexpected GroupVersion string: ${apiVersion}`));
    else {
      const [group, version] = apiVersion === '/' ? ['', ''] : slashes === 0 ? ['', apiVersion] : apiVersion.split('/');
      if (group) {
        const e = isDNS1123Subdomain(group);
        if (e.length) errs.push(invalidError(childPath(at, 'apiVersion'), goQuote(group), e.join(',')));
      }
      if (!version) errs.push(invalidError(childPath(at, 'apiVersion'), goQuote(apiVersion), 'version must be specified'));
      else {
        const e = isDNS1035Label(version);
        if (e.length) errs.push(invalidError(childPath(at, 'apiVersion'), goQuote(version), e.join(',')));
      }
    }
  }
  const kind = str(pk.kind);
  if (!kind) errs.push(requiredError(childPath(at, 'kind')));
  else {
    const e = isDNS1035Label(kind.toLowerCase());
    if (e.length) errs.push(invalidError(childPath(at, 'kind'), goQuote(kind), `may have mixed case, but should otherwise match: ${e.join(',')}`));
  }
  return errs;
}

function validateFailurePolicy(spec: Obj, at: string): FieldError[] {
  if (!has(spec, 'failurePolicy')) return [requiredError(childPath(at, 'failurePolicy'))];
  if (!SUPPORTED_FAILURE_POLICIES.includes(str(spec.failurePolicy))) return [notSupportedError(childPath(at, 'failurePolicy'), goQuote(str(spec.failurePolicy)), SUPPORTED_FAILURE_POLICIES)];
  return [];
}

const CEL_IDENT = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
const CEL_RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);

/** An expression checked, as convertCELErrorToValidationError reports a failure: Invalid with the expression. */
function expressionErrors(check: PolicyExpressionCheck, expression: string, opts: Parameters<PolicyExpressionCheck>[1], at: string): FieldError[] {
  const detail = check(expression, opts);
  return detail === undefined ? [] : [invalidError(at, goQuote(expression), detail)];
}

function validateMatchConditions(conditions: unknown[], check: PolicyExpressionCheck, hasParams: boolean, at: string): FieldError[] {
  const errs: FieldError[] = [];
  if (conditions.length > 64) errs.push(tooManyError(at, conditions.length, 64));
  const names = new Set<string>();
  conditions.forEach((raw, i) => {
    const c = rec(raw);
    const here = indexPath(at, i);
    const expression = str(c.expression).trim();
    if (!expression) errs.push(requiredError(childPath(here, 'expression')));
    else errs.push(...expressionErrors(check, expression, { hasParams, variableNames: [], returns: 'bool' }, childPath(here, 'expression')));
    const name = str(c.name);
    if (!name) errs.push(requiredError(childPath(here, 'name')));
    else for (const m of isQualifiedName(name)) errs.push(invalidError(childPath(here, 'name'), goQuote(name), m));
    if (name) {
      if (names.has(name)) errs.push(duplicateError(childPath(here, 'name'), goQuote(name)));
      else names.add(name);
    }
  });
  return errs;
}

/** Variables, each compiled with those before it; returns the names declared. */
function validateVariables(variables: unknown[], check: PolicyExpressionCheck, hasParams: boolean, at: string, errs: FieldError[]): string[] {
  const names: string[] = [];
  variables.forEach((raw, i) => {
    const v = rec(raw);
    const here = indexPath(at, i);
    const name = str(v.name);
    if (!name.trim()) errs.push(requiredError(childPath(here, 'name'), 'name is not specified'));
    else if (!CEL_IDENT.test(name) || CEL_RESERVED.has(name)) errs.push(invalidError(childPath(here, 'name'), goQuote(name), 'name is not a valid CEL identifier'));
    const expression = str(v.expression);
    if (!expression.trim()) errs.push(requiredError(childPath(here, 'expression'), 'expression is not specified'));
    else errs.push(...expressionErrors(check, expression, { hasParams, variableNames: [...names], returns: 'any' }, childPath(here, 'expression')));
    names.push(name);
  });
  return names;
}

const NEWLINES = /[\n\r]+/;

function validateValidation(v: Obj, check: PolicyExpressionCheck, hasParams: boolean, variableNames: string[], at: string): FieldError[] {
  const errs: FieldError[] = [];
  const expression = str(v.expression);
  const message = str(v.message);
  const messageExpression = str(v.messageExpression);
  if (!expression.trim()) errs.push(requiredError(childPath(at, 'expression'), 'expression is not specified'));
  else errs.push(...expressionErrors(check, expression, { hasParams, variableNames, returns: 'bool' }, childPath(at, 'expression')));
  if (messageExpression && !messageExpression.trim()) errs.push(invalidError(childPath(at, 'messageExpression'), goQuote(messageExpression), 'must be non-empty if specified'));
  else if (messageExpression.trim()) errs.push(...expressionErrors(check, messageExpression, { hasParams, variableNames, returns: 'string', withoutAuthorizer: true }, childPath(at, 'messageExpression')));
  if (message && !message.trim()) errs.push(invalidError(childPath(at, 'message'), goQuote(message), 'message must be non-empty if specified'));
  else if (NEWLINES.test(message.trim())) errs.push(invalidError(childPath(at, 'message'), goQuote(message), 'message must not contain line breaks'));
  if (has(v, 'reason') && !SUPPORTED_VALIDATION_POLICY_REASONS.includes(str(v.reason))) errs.push(notSupportedError(childPath(at, 'reason'), goQuote(str(v.reason)), SUPPORTED_VALIDATION_POLICY_REASONS));
  return errs;
}

function validateAuditAnnotation(policyName: string, a: Obj, check: PolicyExpressionCheck, hasParams: boolean, variableNames: string[], at: string): FieldError[] {
  const errs: FieldError[] = [];
  const key = str(a.key);
  if (policyName) for (const m of isQualifiedName(`${policyName}/${key}`)) errs.push(invalidError(childPath(at, 'key'), goQuote(`${policyName}/${key}`), m));
  else errs.push(invalidError(childPath(at, 'key'), goQuote(key), 'requires metadata.name be non-empty'));
  const valueExpression = str(a.valueExpression);
  const trimmed = valueExpression.trim();
  if (!trimmed) errs.push(requiredError(childPath(at, 'valueExpression'), 'valueExpression is not specified'));
  else if (trimmed.length > MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH) errs.push(requiredError(childPath(at, 'valueExpression'), `must not exceed ${MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH} bytes in length`));
  else {
    const detail = check(trimmed, { hasParams, variableNames, returns: 'string', nullable: true });
    if (detail !== undefined) errs.push(invalidError(childPath(at, 'valueExpression'), goQuote(valueExpression), detail));
  }
  return errs;
}

/** validateMatchConstraints as both policy kinds do: required, with at least one resource rule (and, for mutations, only the operations they take). */
function validateMatchConstraints(spec: Obj, at: string, operations?: string[]): FieldError[] {
  if (!has(spec, 'matchConstraints')) return [requiredError(childPath(at, 'matchConstraints'))];
  const errs = validateMatchResources(spec.matchConstraints, childPath(at, 'matchConstraints'));
  const rules = arr(rec(spec.matchConstraints).resourceRules);
  if (!rules.length) errs.push(requiredError(childPath(childPath(at, 'matchConstraints'), 'resourceRules')));
  if (operations) errs.push(...validateOperations(rules, operations, `${at}.matchConstraints.resourceRules.operations`));
  return errs;
}

function validateOperations(rules: unknown[], operations: string[], at: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const r of rules) for (const op of arr(rec(r).operations)) if (!operations.includes(str(op))) errs.push(notSupportedError(at, goQuote(str(op)), operations));
  return errs;
}

export function validateValidatingAdmissionPolicy(policy: Obj, check: PolicyExpressionCheck): FieldError[] {
  const spec = rec(policy.spec);
  const at = 'spec';
  const errs: FieldError[] = [...validateFailurePolicy(spec, at)];
  const hasParams = has(spec, 'paramKind');
  if (hasParams) errs.push(...validateParamKind(rec(spec.paramKind), childPath(at, 'paramKind')));
  errs.push(...validateMatchConstraints(spec, at));
  errs.push(...validateMatchConditions(arr(spec.matchConditions), check, hasParams, childPath(at, 'matchConditions')));
  const variableNames = validateVariables(arr(spec.variables), check, hasParams, childPath(at, 'variables'), errs);
  const validations = arr(spec.validations);
  const auditAnnotations = arr(spec.auditAnnotations);
  if (!validations.length && !auditAnnotations.length) {
    errs.push(requiredError(childPath(at, 'validations'), 'validations or auditAnnotations must contain at least one item'));
    errs.push(requiredError(childPath(at, 'auditAnnotations'), 'validations or auditAnnotations must contain at least one item'));
  } else {
    validations.forEach((v, i) => errs.push(...validateValidation(rec(v), check, hasParams, variableNames, indexPath(childPath(at, 'validations'), i))));
    if (auditAnnotations.length > MAX_AUDIT_ANNOTATIONS) errs.push(invalidError(childPath(at, 'auditAnnotations'), null, `must not have more than ${MAX_AUDIT_ANNOTATIONS} auditAnnotations`));
    const keys = new Set<string>();
    const policyName = str(rec(policy.metadata).name);
    auditAnnotations.forEach((raw, i) => {
      const a = rec(raw);
      const here = indexPath(childPath(at, 'auditAnnotations'), i);
      errs.push(...validateAuditAnnotation(policyName, a, check, hasParams, variableNames, here));
      if (keys.has(str(a.key))) errs.push(duplicateError(childPath(here, 'key'), goQuote(str(a.key))));
      keys.add(str(a.key));
    });
  }
  return errs;
}

function validateParamRef(pr: unknown, at: string): FieldError[] {
  if (!isPlainObject(pr)) return [];
  const ref = pr as Obj;
  const errs: FieldError[] = [];
  const name = str(ref.name);
  const hasSelector = has(ref, 'selector');
  if (name) {
    for (const m of isPathSegmentName(name)) errs.push(invalidError(childPath(at, 'name'), goQuote(name), m));
    if (hasSelector) errs.push(forbiddenError(childPath(at, 'name'), 'name and selector are mutually exclusive'));
  }
  if (hasSelector) {
    errs.push(...validateLabelSelector(ref.selector, childPath(at, 'selector')));
    if (name) errs.push(forbiddenError(childPath(at, 'selector'), 'name and selector are mutually exclusive'));
  }
  if (!name && !hasSelector) errs.push(requiredError(at, 'one of name or selector must be specified'));
  const action = str(ref.parameterNotFoundAction);
  if (!action) errs.push(requiredError(childPath(at, 'parameterNotFoundAction')));
  else if (action !== 'Deny' && action !== 'Allow') errs.push(notSupportedError(childPath(at, 'parameterNotFoundAction'), goQuote(action), ['Deny', 'Allow']));
  return errs;
}

function validateValidationActions(actions: unknown[], at: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  actions.forEach((raw, i) => {
    const a = str(raw);
    if (!VALID_VALIDATION_ACTIONS.includes(a)) errs.push(notSupportedError(indexPath(at, i), goQuote(a), VALID_VALIDATION_ACTIONS));
    if (seen.has(a)) errs.push(duplicateError(indexPath(at, i), goQuote(a)));
    seen.add(a);
  });
  if (seen.has('Deny') && seen.has('Warn')) errs.push(invalidError(at, goSlice('admissionregistration.ValidationAction', actions), 'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)'));
  if (!seen.size) errs.push(requiredError(at, 'at least one validation action is required'));
  return errs;
}

function validatePolicyName(spec: Obj, at: string): FieldError[] {
  const name = str(spec.policyName);
  if (!name) return [requiredError(childPath(at, 'policyName'))];
  return isDNS1123Subdomain(name).map((m) => invalidError(childPath(at, 'policyName'), goQuote(name), m));
}

export function validateValidatingAdmissionPolicyBinding(binding: Obj): FieldError[] {
  const spec = rec(binding.spec);
  return [
    ...validatePolicyName(spec, 'spec'),
    ...validateParamRef(spec.paramRef, 'spec.paramRef'),
    // (kube's path is spelt so)
    ...validateMatchResources(spec.matchResources, 'spec.matchResouces'),
    ...validateValidationActions(arr(spec.validationActions), 'spec.validationActions'),
  ];
}

/** status.typeChecking.expressionWarnings: each with a warning and a fieldRef. */
export function validateValidatingAdmissionPolicyStatus(policy: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const warnings = arr(rec(rec(rec(policy.status).typeChecking)).expressionWarnings);
  warnings.forEach((raw, i) => {
    const w = rec(raw);
    const here = indexPath('status.typeChecking.expressionWarnings', i);
    if (!str(w.warning)) errs.push(requiredError(childPath(here, 'warning')));
    if (!str(w.fieldRef).trim()) errs.push(requiredError(childPath(here, 'fieldRef')));
  });
  return errs;
}

function validateMutation(m: Obj, check: PolicyExpressionCheck, hasParams: boolean, variableNames: string[], at: string): FieldError[] {
  const patchType = str(m.patchType);
  if (!patchType) return [requiredError(childPath(at, 'patchType'))];
  const errs: FieldError[] = [];
  const patchExpression = (holder: unknown, where: string) => {
    const expression = str(rec(holder).expression).trim();
    if (!expression) errs.push(requiredError(where));
    else errs.push(...expressionErrors(check, expression, { hasParams, variableNames, returns: 'any', mutation: patchType as 'ApplyConfiguration' | 'JSONPatch' }, where));
  };
  if (patchType === 'JSONPatch') {
    if (!has(m, 'jsonPatch')) errs.push(requiredError(childPath(at, 'jsonPatch'), 'must be specified when patchType is JSONPatch'));
    else patchExpression(m.jsonPatch, `${at}.jsonPatch.expression`);
    if (has(m, 'applyConfiguration')) errs.push(invalidError(childPath(at, 'applyConfiguration'), '"{applyConfiguration}"', 'must not be specified when patchType is JSONPatch'));
  } else if (patchType === 'ApplyConfiguration') {
    if (!has(m, 'applyConfiguration')) errs.push(requiredError(childPath(at, 'applyConfiguration'), 'must be specified when patchType is ApplyConfiguration'));
    else patchExpression(m.applyConfiguration, `${at}.applyConfiguration.expression`);
    if (has(m, 'jsonPatch')) errs.push(invalidError(childPath(at, 'jsonPatch'), '"{jsonPatch}"', 'must not be specified when patchType is ApplyConfiguration'));
  } else errs.push(notSupportedError(childPath(at, 'patchType'), goQuote(patchType), SUPPORTED_PATCH_TYPES));
  return errs;
}

export function validateMutatingAdmissionPolicy(policy: Obj, check: PolicyExpressionCheck): FieldError[] {
  const spec = rec(policy.spec);
  const at = 'spec';
  const errs: FieldError[] = [...validateFailurePolicy(spec, at)];
  const hasParams = has(spec, 'paramKind');
  if (hasParams) errs.push(...validateParamKind(rec(spec.paramKind), childPath(at, 'paramKind')));
  errs.push(...validateMatchConstraints(spec, at, SUPPORTED_MUTATING_OPERATIONS));
  errs.push(...validateMatchConditions(arr(spec.matchConditions), check, hasParams, childPath(at, 'matchConditions')));
  const variableNames = validateVariables(arr(spec.variables), check, hasParams, childPath(at, 'variables'), errs);
  const mutations = arr(spec.mutations);
  if (!mutations.length) errs.push(requiredError(childPath(at, 'mutations'), 'mutations must contain at least one item'));
  mutations.forEach((m, i) => errs.push(...validateMutation(rec(m), check, hasParams, variableNames, indexPath(childPath(at, 'mutations'), i))));
  const reinvocation = str(spec.reinvocationPolicy);
  if (!reinvocation) errs.push(requiredError(childPath(at, 'reinvocationPolicy')));
  else if (!SUPPORTED_REINVOCATION_POLICIES.includes(reinvocation)) errs.push(notSupportedError(childPath(at, 'reinvocationPolicy'), goQuote(reinvocation), SUPPORTED_REINVOCATION_POLICIES));
  return errs;
}

export function validateMutatingAdmissionPolicyBinding(binding: Obj): FieldError[] {
  const spec = rec(binding.spec);
  const errs = [...validatePolicyName(spec, 'spec'), ...validateParamRef(spec.paramRef, 'spec.paramRef'), ...validateMatchResources(spec.matchResources, 'spec.matchResources')];
  if (isPlainObject(spec.matchResources)) errs.push(...validateOperations(arr(rec(spec.matchResources).resourceRules), SUPPORTED_MUTATING_OPERATIONS, 'spec.matchResources.resourceRules.operations'));
  return errs;
}

/** The mutating kinds (no status): policies and bindings count generation on spec changes. */
export function mutatingAdmissionPolicyStrategies(check: PolicyExpressionCheck): { policy: Strategy; binding: Strategy } {
  return {
    policy: { tracksGeneration: true, reportsRequired: true, validate: (obj) => validateMutatingAdmissionPolicy(obj, check) },
    binding: { tracksGeneration: true, reportsRequired: true, validate: validateMutatingAdmissionPolicyBinding },
  };
}

/** Policies and bindings count generation on spec changes (kube's strategies). */
export function validatingAdmissionPolicyStrategies(check: PolicyExpressionCheck): { policy: Strategy; binding: Strategy } {
  return {
    policy: {
      tracksGeneration: true,
      reportsRequired: true,
      validate: (obj) => validateValidatingAdmissionPolicy(obj, check),
      validateUpdate: (obj, _old, subresource) => (subresource === 'status' ? validateValidatingAdmissionPolicyStatus(obj) : validateValidatingAdmissionPolicy(obj, check)),
    },
    binding: { tracksGeneration: true, reportsRequired: true, validate: validateValidatingAdmissionPolicyBinding },
  };
}
