// MutatingWebhookConfiguration and ValidatingWebhookConfiguration validation, as kube's
// pkg/apis/admissionregistration/validation (validateMutatingWebhook, validateValidatingWebhook,
// validateRuleWithOperations, validateAdmissionReviewVersions, validateMatchConditions) has it.
// On update, what kube relaxes for objects stored before a rule existed is relaxed the same way
// (sideEffects, admissionReviewVersions, unique names, invalid selector values, unchanged match
// conditions). Match conditions are compiled by the CEL environment the admission webhook plugin
// evaluates them in; built-in kinds may not import CEL, so server.ts hands the compiler in.
import type { Obj, Strategy } from '../../strategy.ts';
import { isPlainObject, semanticEqual } from '../../../util/json.ts';
import { validateLabelSelector } from '../../../validation/object-meta.ts';
import { isDNS1035Label, isDNS1123Subdomain, isQualifiedName } from '../../../validation/names.ts';
import { validateWebhookService, validateWebhookURL } from '../../../validation/webhook-client-config.ts';
import { duplicateError, goValue, invalidError, notSupportedError, requiredError, tooManyError, type FieldError } from '../../../validation/field.ts';
import { goStringSlice } from '../../../go/fmt.ts';
import { goQuote } from '../../../go/strconv.ts';

/** Compiles a match condition's expression: undefined when it compiles to bool, else kube's detail. */
export type MatchConditionCompiler = (expression: string) => string | undefined;

let compileMatchCondition: MatchConditionCompiler = () => undefined;

/** The compiler server.ts gives (the admission webhook plugin's CEL environment). */
export function useMatchConditionCompiler(compiler: MatchConditionCompiler): void {
  compileMatchCondition = compiler;
}

const ACCEPTED_REVIEW_VERSIONS = ['v1', 'v1beta1'];
const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const NO_SIDE_EFFECTS = ['None', 'NoneOnDryRun'];
const SIDE_EFFECTS = ['None', 'NoneOnDryRun', 'Some', 'Unknown'];
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const REINVOCATION_POLICIES = ['IfNeeded', 'Never'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const MAX_MATCH_CONDITIONS = 64;

interface Options {
  ignoreMatchConditions: boolean;
  requireNoSideEffects: boolean;
  requireRecognizedAdmissionReviewVersion: boolean;
  requireUniqueWebhookNames: boolean;
  allowInvalidLabelValueInSelector: boolean;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : String(x))) : []);
const webhooksOf = (c: Obj): Obj[] => (Array.isArray(c.webhooks) ? c.webhooks.filter(isPlainObject) : []);
const present = (v: unknown): boolean => v !== undefined && v !== null;

/** utilvalidation.IsFullyQualifiedName. */
function fullyQualifiedNameErrors(path: string, name: string): FieldError[] {
  if (name === '') return [requiredError(path)];
  const errs = isDNS1123Subdomain(name);
  if (errs.length) return [invalidError(path, goQuote(name), errs.join(','))];
  if (name.split('.').length < 3) return [invalidError(path, goQuote(name), 'should be a domain with at least three segments separated by dots')];
  return [];
}

function validateResources(resources: string[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (resources.length === 0) errs.push(requiredError(path));
  const withWildcardSub = new Set<string>();
  const subWithWildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let withoutSub = false;
  resources.forEach((resSub, i) => {
    if (resSub === '') {
      errs.push(requiredError(`${path}[${i}]`));
      return;
    }
    if (resSub === '*/*') doubleWildcard = true;
    if (resSub === '*') singleWildcard = true;
    const slash = resSub.indexOf('/');
    if (slash < 0) {
      withoutSub = resSub !== '*';
      return;
    }
    const res = resSub.slice(0, slash);
    const sub = resSub.slice(slash + 1);
    if (withWildcardSub.has(res)) errs.push(invalidError(`${path}[${i}]`, goQuote(resSub), `if '${res}/*' is present, must not specify ${resSub}`));
    if (subWithWildcardRes.has(sub)) errs.push(invalidError(`${path}[${i}]`, goQuote(resSub), `if '*/${sub}' is present, must not specify ${resSub}`));
    if (sub === '*') withWildcardSub.add(res);
    if (res === '*') subWithWildcardRes.add(sub);
  });
  if (resources.length > 1 && doubleWildcard) errs.push(invalidError(path, goStringSlice(resources), "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && withoutSub) errs.push(invalidError(path, goStringSlice(resources), "if '*' is present, must not specify other resources without subresources"));
  return errs;
}

function validateRuleWithOperations(rule: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const operations = strings(rule.operations);
  if (operations.length === 0) errs.push(requiredError(`${path}.operations`));
  if (operations.length > 1 && operations.includes('*')) errs.push(invalidError(`${path}.operations`, goStringSlice(operations), "if '*' is present, must not specify other operations"));
  operations.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) errs.push(notSupportedError(`${path}.operations[${i}]`, goQuote(op), OPERATIONS));
  });
  const groups = strings(rule.apiGroups);
  if (groups.length === 0) errs.push(requiredError(`${path}.apiGroups`));
  if (groups.length > 1 && groups.includes('*')) errs.push(invalidError(`${path}.apiGroups`, goStringSlice(groups), "if '*' is present, must not specify other API groups"));
  const versions = strings(rule.apiVersions);
  if (versions.length === 0) errs.push(requiredError(`${path}.apiVersions`));
  if (versions.length > 1 && versions.includes('*')) errs.push(invalidError(`${path}.apiVersions`, goStringSlice(versions), "if '*' is present, must not specify other API versions"));
  versions.forEach((v, i) => {
    if (v === '') errs.push(requiredError(`${path}.apiVersions[${i}]`));
  });
  errs.push(...validateResources(strings(rule.resources), `${path}.resources`));
  if (present(rule.scope) && !SCOPES.includes(String(rule.scope))) errs.push(notSupportedError(`${path}.scope`, goQuote(String(rule.scope)), SCOPES));
  return errs;
}

function validateAdmissionReviewVersions(versions: string[], requireRecognized: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (versions.length < 1) return [requiredError(path, `must specify one of ${ACCEPTED_REVIEW_VERSIONS.join(', ')}`)];
  const seen = new Set<string>();
  let accepted = false;
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(invalidError(`${path}[${i}]`, goQuote(v), 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const e of isDNS1035Label(v)) errs.push(invalidError(`${path}[${i}]`, goQuote(v), e));
    if (ACCEPTED_REVIEW_VERSIONS.includes(v)) accepted = true;
  });
  if (requireRecognized && !accepted) errs.push(invalidError(path, goStringSlice(versions), `must include at least one of ${ACCEPTED_REVIEW_VERSIONS.join(', ')}`));
  return errs;
}

function validateMatchConditions(conditions: unknown, path: string): FieldError[] {
  const list: unknown[] = Array.isArray(conditions) ? conditions : [];
  const errs: FieldError[] = [];
  if (list.length > MAX_MATCH_CONDITIONS) errs.push(tooManyError(path, list.length, MAX_MATCH_CONDITIONS));
  const names = new Set<string>();
  list.forEach((raw, i) => {
    const c = isPlainObject(raw) ? raw : {};
    const at = `${path}[${i}]`;
    const expression = typeof c.expression === 'string' ? c.expression.trim() : '';
    if (expression === '') errs.push(requiredError(`${at}.expression`));
    else {
      const detail = compileMatchCondition(expression);
      if (detail !== undefined) errs.push(invalidError(`${at}.expression`, goQuote(expression), detail));
    }
    const name = typeof c.name === 'string' ? c.name : '';
    if (name === '') errs.push(requiredError(`${at}.name`));
    else for (const e of isQualifiedName(name)) errs.push(invalidError(`${at}.name`, goQuote(name), e));
    if (name !== '') {
      if (names.has(name)) errs.push(duplicateError(`${at}.name`, goQuote(name)));
      else names.add(name);
    }
  });
  return errs;
}

/** Selector errors, without the label-value check when the stored object already had bad ones. */
function selectorErrors(selector: unknown, path: string, allowInvalidLabelValue: boolean): FieldError[] {
  const errs = validateLabelSelector(selector, path);
  return allowInvalidLabelValue ? errs.filter((e) => !/\.values\[\d+\]$/.test(e.field)) : errs;
}

function validateWebhook(hook: Obj, mutating: boolean, opts: Options, path: string): FieldError[] {
  const errs: FieldError[] = [...fullyQualifiedNameErrors(`${path}.name`, typeof hook.name === 'string' ? hook.name : '')];
  (Array.isArray(hook.rules) ? hook.rules : []).forEach((r: unknown, i: number) => errs.push(...validateRuleWithOperations(isPlainObject(r) ? r : {}, `${path}.rules[${i}]`)));
  if (present(hook.failurePolicy) && !FAILURE_POLICIES.includes(String(hook.failurePolicy))) errs.push(notSupportedError(`${path}.failurePolicy`, goQuote(String(hook.failurePolicy)), ['Fail', 'Ignore']));
  if (present(hook.matchPolicy) && !MATCH_POLICIES.includes(String(hook.matchPolicy))) errs.push(notSupportedError(`${path}.matchPolicy`, goQuote(String(hook.matchPolicy)), MATCH_POLICIES));
  const allowedSideEffects = opts.requireNoSideEffects ? NO_SIDE_EFFECTS : SIDE_EFFECTS;
  if (!present(hook.sideEffects)) errs.push(requiredError(`${path}.sideEffects`, `must specify one of ${allowedSideEffects.join(', ')}`));
  else if (!allowedSideEffects.includes(String(hook.sideEffects))) errs.push(notSupportedError(`${path}.sideEffects`, goQuote(String(hook.sideEffects)), allowedSideEffects));
  if (present(hook.timeoutSeconds) && (typeof hook.timeoutSeconds !== 'number' || hook.timeoutSeconds > 30 || hook.timeoutSeconds < 1)) {
    errs.push(invalidError(`${path}.timeoutSeconds`, goValue(hook.timeoutSeconds), 'the timeout value must be between 1 and 30 seconds'));
  }
  if (present(hook.namespaceSelector)) errs.push(...selectorErrors(hook.namespaceSelector, `${path}.namespaceSelector`, opts.allowInvalidLabelValueInSelector));
  if (present(hook.objectSelector)) errs.push(...selectorErrors(hook.objectSelector, `${path}.objectSelector`, opts.allowInvalidLabelValueInSelector));
  if (mutating && present(hook.reinvocationPolicy) && !REINVOCATION_POLICIES.includes(String(hook.reinvocationPolicy))) {
    errs.push(notSupportedError(`${path}.reinvocationPolicy`, goQuote(String(hook.reinvocationPolicy)), REINVOCATION_POLICIES));
  }
  const cc = isPlainObject(hook.clientConfig) ? hook.clientConfig : {};
  const hasUrl = typeof cc.url === 'string';
  const hasService = isPlainObject(cc.service);
  if (hasUrl === hasService) errs.push(requiredError(`${path}.clientConfig`, 'exactly one of url or service is required'));
  else if (hasUrl) errs.push(...validateWebhookURL(`${path}.clientConfig.url`, cc.url as string));
  else errs.push(...validateWebhookService(`${path}.clientConfig.service`, cc.service as Record<string, unknown>));
  if (!opts.ignoreMatchConditions) errs.push(...validateMatchConditions(hook.matchConditions, `${path}.matchConditions`));
  return errs;
}

function validateConfiguration(config: Obj, mutating: boolean, opts: Options): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  webhooksOf(config).forEach((hook, i) => {
    const path = `webhooks[${i}]`;
    errs.push(...validateWebhook(hook, mutating, opts, path));
    errs.push(...validateAdmissionReviewVersions(strings(hook.admissionReviewVersions), opts.requireRecognizedAdmissionReviewVersion, `${path}.admissionReviewVersions`));
    const name = typeof hook.name === 'string' ? hook.name : '';
    if (opts.requireUniqueWebhookNames && name !== '') {
      if (names.has(name)) errs.push(duplicateError(`${path}.name`, goQuote(name)));
      else names.add(name);
    }
  });
  return errs;
}

const CREATE_OPTIONS: Options = { ignoreMatchConditions: false, requireNoSideEffects: true, requireRecognizedAdmissionReviewVersion: true, requireUniqueWebhookNames: true, allowInvalidLabelValueInSelector: false };

/** What an update keeps of the old rules: what the stored object already broke stays allowed. */
function updateOptions(next: Obj, old: Obj): Options {
  const oldHooks = webhooksOf(old);
  const newHooks = webhooksOf(next);
  const names = oldHooks.map((h) => h.name);
  return {
    ignoreMatchConditions: oldHooks.length === newHooks.length && oldHooks.every((h, i) => semanticEqual(h.matchConditions ?? null, newHooks[i]!.matchConditions ?? null)),
    requireNoSideEffects: oldHooks.every((h) => NO_SIDE_EFFECTS.includes(String(h.sideEffects))),
    requireRecognizedAdmissionReviewVersion: oldHooks.every((h) => {
      const versions = strings(h.admissionReviewVersions);
      return versions.length === 0 || versions.some((v) => ACCEPTED_REVIEW_VERSIONS.includes(v));
    }),
    requireUniqueWebhookNames: new Set(names).size === names.length,
    allowInvalidLabelValueInSelector: oldHooks.some((h) => validateLabelSelector(h.namespaceSelector, '').length > 0 || validateLabelSelector(h.objectSelector, '').length > 0),
  };
}

export const mutatingWebhookConfigurationStrategy: Strategy = {
  validate: (obj) => validateConfiguration(obj, true, CREATE_OPTIONS),
  validateUpdate: (obj, old) => validateConfiguration(obj, true, updateOptions(obj, old)),
};

export const validatingWebhookConfigurationStrategy: Strategy = {
  validate: (obj) => validateConfiguration(obj, false, CREATE_OPTIONS),
  validateUpdate: (obj, old) => validateConfiguration(obj, false, updateOptions(obj, old)),
};
