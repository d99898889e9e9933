// FlowSchemas and PriorityLevelConfigurations as kube's pkg/apis/flowcontrol/validation
// (validation.go) validates them in 1.36: ValidateFlowSchema (precedence bounds, only `exempt` at
// precedence 1, distinguisher, priority level name, subjects, resource and non-resource rules) and
// ValidatePriorityLevelConfiguration (type Exempt if and only if the name is `exempt`, the limited
// and exempt fields, queuing and shuffle-sharding bounds); the status' conditions; and the
// mandatory objects (`exempt` and `catch-all`), whose spec must equal kube's fixed value — but for
// the exempt level's `spec.exempt`, which operators may tune (ValidateIfMandatory...Object).
// Requests arrive as flowcontrol/v1, where a Limited level's nominalConcurrencyShares may be 0.
import type { Obj, Strategy } from '../../strategy.ts';
import { isPlainObject } from '../../../util/json.ts';
import { isDNS1123Label, isDNS1123Subdomain } from '../../../validation/names.ts';
import { goQuote } from '../../../go/strconv.ts';
import { goNumber } from '../../../go/fmt.ts';
import { childPath, duplicateError, forbiddenError, goValue, indexPath, invalidError, notSupportedError, requiredError, type FieldError } from '../../../validation/field.ts';
import { MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS, PRIORITY_LEVEL_EXEMPT, FLOW_SCHEMA_EXEMPT, specsEqual } from '../../../flowcontrol/config/bootstrap.ts';
import { goSharpVOfFlowSchemaSpec, goSharpVOfPriorityLevelSpec } from './gostring.ts';

/** flowcontrol.FlowSchemaMaxMatchingPrecedence. */
const MAX_MATCHING_PRECEDENCE = 10000;
/** priorityLevelConfigurationQueuingMaxQueues: 10^7. */
const MAX_QUEUES = 10_000_000;
/** shufflesharding.MaxHashBits. */
const MAX_HASH_BITS = 60;
const SUPPORTED_DISTINGUISHER_METHODS = ['ByNamespace', 'ByUser'];
const SUPPORTED_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'proxy', 'update', 'watch'];
const SUPPORTED_SUBJECT_KINDS = ['Group', 'ServiceAccount', 'User'];
const SUPPORTED_ENABLEMENTS = ['Exempt', 'Limited'];
const SUPPORTED_LIMIT_RESPONSES = ['Queue', 'Reject'];
const NAMESPACE_ERROR_INTRO = "each member of this list must be '*' or a DNS-1123 label; ";

const MANDATORY_FLOW_SCHEMA_SPECS = new Map(MANDATORY_FLOW_SCHEMAS.map((fs) => [fs.metadata.name, fs.spec]));
const MANDATORY_PRIORITY_LEVEL_SPECS = new Map(MANDATORY_PRIORITY_LEVELS.map((pl) => [pl.metadata.name, pl.spec]));

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const int = (v: unknown): number => (typeof v === 'number' ? v : 0);
const obj = (v: unknown): Obj | undefined => (isPlainObject(v) ? (v as Obj) : undefined);
/** %#v of a []string, as field.Invalid prints a list. */
const goStrings = (v: string[]): string => `[]string{${v.map(goQuote).join(', ')}}`;

function validateFlowSchemaSpec(name: string, spec: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const precedence = int(spec.matchingPrecedence);
  const precedencePath = childPath(path, 'matchingPrecedence');
  if (precedence <= 0) errs.push(invalidError(precedencePath, goNumber(precedence), 'must be a positive value'));
  if (precedence > MAX_MATCHING_PRECEDENCE) errs.push(invalidError(precedencePath, goNumber(precedence), `must not be greater than ${MAX_MATCHING_PRECEDENCE}`));
  if (precedence === 1 && name !== FLOW_SCHEMA_EXEMPT) errs.push(invalidError(precedencePath, goNumber(precedence), "only the schema named 'exempt' may have matchingPrecedence 1"));
  const method = obj(spec.distinguisherMethod);
  if (method && !SUPPORTED_DISTINGUISHER_METHODS.includes(str(method.type))) {
    // kube reports the whole method (a pointer: its struct, %#v).
    errs.push(notSupportedError(childPath(childPath(path, 'distinguisherMethod'), 'type'), `flowcontrol.FlowDistinguisherMethod{Type:${goQuote(str(method.type))}}`, SUPPORTED_DISTINGUISHER_METHODS));
  }
  const level = str(obj(spec.priorityLevelConfiguration)?.name);
  const levelPath = childPath(childPath(path, 'priorityLevelConfiguration'), 'name');
  if (level) for (const m of isDNS1123Subdomain(level)) errs.push(invalidError(levelPath, goQuote(level), m));
  else errs.push(requiredError(levelPath, 'must reference a priority level'));
  const rules = Array.isArray(spec.rules) ? spec.rules : [];
  rules.forEach((r, i) => errs.push(...validatePolicyRulesWithSubjects(obj(r) ?? {}, indexPath(childPath(path, 'rules'), i))));
  return errs;
}

function validatePolicyRulesWithSubjects(rule: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const subjects = Array.isArray(rule.subjects) ? rule.subjects : [];
  if (subjects.length) subjects.forEach((s, i) => errs.push(...validateSubject(obj(s) ?? {}, indexPath(childPath(path, 'subjects'), i))));
  else errs.push(requiredError(childPath(path, 'subjects'), 'subjects must contain at least one value'));
  const resourceRules = Array.isArray(rule.resourceRules) ? rule.resourceRules : [];
  const nonResourceRules = Array.isArray(rule.nonResourceRules) ? rule.nonResourceRules : [];
  if (!resourceRules.length && !nonResourceRules.length) errs.push(requiredError(path, 'at least one of resourceRules and nonResourceRules has to be non-empty'));
  resourceRules.forEach((r, i) => errs.push(...validateResourceRule(obj(r) ?? {}, indexPath(childPath(path, 'resourceRules'), i))));
  nonResourceRules.forEach((r, i) => errs.push(...validateNonResourceRule(obj(r) ?? {}, indexPath(childPath(path, 'nonResourceRules'), i))));
  return errs;
}

function validateSubject(subject: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const kind = str(subject.kind);
  const forbidOthers = (own: 'user' | 'group' | 'serviceAccount') => {
    if (own !== 'user' && subject.user != null) errs.push(forbiddenError(childPath(path, 'user'), "user is forbidden when subject kind is not 'User'"));
    if (own !== 'group' && subject.group != null) errs.push(forbiddenError(childPath(path, 'group'), "group is forbidden when subject kind is not 'Group'"));
    if (own !== 'serviceAccount' && subject.serviceAccount != null) errs.push(forbiddenError(childPath(path, 'serviceAccount'), "serviceAccount is forbidden when subject kind is not 'ServiceAccount'"));
  };
  switch (kind) {
    case 'ServiceAccount': {
      const sa = obj(subject.serviceAccount);
      const saPath = childPath(path, 'serviceAccount');
      if (!sa) errs.push(requiredError(saPath, "serviceAccount is required when subject kind is 'ServiceAccount'"));
      else {
        const name = str(sa.name);
        if (!name) errs.push(requiredError(childPath(saPath, 'name')));
        else if (name !== '*') for (const m of isDNS1123Subdomain(name)) errs.push(invalidError(childPath(saPath, 'name'), goQuote(name), m));
        const ns = str(sa.namespace);
        if (ns) for (const m of isDNS1123Label(ns)) errs.push(invalidError(childPath(saPath, 'namespace'), goQuote(ns), m));
        else errs.push(requiredError(childPath(saPath, 'namespace'), 'must specify namespace for service account'));
      }
      forbidOthers('serviceAccount');
      break;
    }
    case 'User':
    case 'Group': {
      const own = kind === 'User' ? 'user' : 'group';
      const named = obj(subject[own]);
      if (!named) errs.push(requiredError(childPath(path, own), `${own} is required when subject kind is '${kind}'`));
      else if (!str(named.name)) errs.push(requiredError(childPath(childPath(path, own), 'name')));
      forbidOthers(own);
      break;
    }
    default:
      errs.push(notSupportedError(childPath(path, 'kind'), goQuote(kind), SUPPORTED_SUBJECT_KINDS));
  }
  return errs;
}

function validateVerbs(verbs: string[], path: string): FieldError[] {
  if (!verbs.length) return [requiredError(path, 'verbs must contain at least one value')];
  if (verbs.includes('*')) return verbs.length > 1 ? [invalidError(path, goStrings(verbs), "if '*' is present, must not specify other verbs")] : [];
  return verbs.every((v) => SUPPORTED_VERBS.includes(v)) ? [] : [notSupportedError(path, goStrings(verbs), SUPPORTED_VERBS)];
}

function validateResourceRule(rule: Obj, path: string): FieldError[] {
  const errs = validateVerbs(strings(rule.verbs), childPath(path, 'verbs'));
  const groups = strings(rule.apiGroups);
  if (!groups.length) errs.push(requiredError(childPath(path, 'apiGroups'), 'resource rules must supply at least one api group'));
  else if (groups.length > 1 && groups.includes('*')) errs.push(invalidError(childPath(path, 'apiGroups'), goStrings(groups), "if '*' is present, must not specify other api groups"));
  const resources = strings(rule.resources);
  if (!resources.length) errs.push(requiredError(childPath(path, 'resources'), 'resource rules must supply at least one resource'));
  else if (resources.length > 1 && resources.includes('*')) errs.push(invalidError(childPath(path, 'resources'), goStrings(resources), "if '*' is present, must not specify other resources"));
  const namespaces = strings(rule.namespaces);
  const nsPath = childPath(path, 'namespaces');
  if (!namespaces.length && rule.clusterScope !== true) errs.push(requiredError(nsPath, 'resource rules that are not cluster scoped must supply at least one namespace'));
  else if (namespaces.includes('*')) {
    if (namespaces.length > 1) errs.push(invalidError(nsPath, goStrings(namespaces), "if '*' is present, must not specify other namespaces"));
  } else namespaces.forEach((ns, i) => isDNS1123Label(ns).forEach((m) => errs.push(invalidError(indexPath(nsPath, i), goQuote(ns), NAMESPACE_ERROR_INTRO + m))));
  return errs;
}

function validateNonResourceRule(rule: Obj, path: string): FieldError[] {
  const errs = validateVerbs(strings(rule.verbs), childPath(path, 'verbs'));
  const urls = strings(rule.nonResourceURLs);
  const urlsPath = childPath(path, 'nonResourceURLs');
  if (!urls.length) errs.push(requiredError(urlsPath, 'nonResourceURLs must contain at least one value'));
  else if (urls.includes('*')) {
    if (urls.length > 1) errs.push(invalidError(urlsPath, goStrings(urls), "if '*' is present, must not specify other non-resource URLs"));
  } else
    urls.forEach((u, i) => {
      const m = nonResourceURLError(u);
      if (m) errs.push(invalidError(indexPath(urlsPath, i), goQuote(u), m));
    });
  return errs;
}

/** ValidateNonResourceURLPath. */
function nonResourceURLError(path: string): string | undefined {
  if (path === '') return 'must not be empty';
  if (path === '/') return undefined;
  if (!path.startsWith('/')) return 'must start with slash';
  if (path.includes(' ')) return 'must not contain white-space';
  if (path.includes('//')) return 'must not contain double slash';
  const wildcards = path.split('*').length - 1;
  if (wildcards > 1 || (wildcards === 1 && !path.endsWith('/*'))) return 'wildcard can only do suffix matching';
  return undefined;
}

/** ValidateFlowSchemaStatus / ValidatePriorityLevelConfigurationStatus: condition types present and distinct. */
function validateConditions(status: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const conditions = Array.isArray(obj(status)?.conditions) ? (obj(status)!.conditions as unknown[]) : [];
  const seen = new Set<string>();
  conditions.forEach((c, i) => {
    const type = str(obj(c)?.type);
    const path = indexPath('status.conditions', i);
    if (seen.has(type)) errs.push(duplicateError(childPath(path, 'type'), goQuote(type)));
    seen.add(type);
    if (!type) errs.push(requiredError(childPath(path, 'type'), 'must not be empty'));
  });
  return errs;
}

function validateFlowSchema(fs: Obj): FieldError[] {
  const name = str(fs.metadata?.name);
  const spec = obj(fs.spec) ?? {};
  const errs = validateFlowSchemaSpec(name, spec, 'spec');
  const mandatory = MANDATORY_FLOW_SCHEMA_SPECS.get(name);
  if (mandatory && !specsEqual(spec, mandatory)) errs.push(invalidError('spec', goSharpVOfFlowSchemaSpec(spec), `spec of '${name}' must equal the fixed value`));
  return [...errs, ...validateConditions(fs.status)];
}

function validatePriorityLevelSpec(spec: Obj, name: string, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const type = str(spec.type);
  if ((name === PRIORITY_LEVEL_EXEMPT) !== (type === 'Exempt')) errs.push(invalidError(childPath(path, 'type'), goQuote(type), "type must be 'Exempt' if and only if name is 'exempt'"));
  switch (type) {
    case 'Exempt': {
      if (spec.limited != null) errs.push(forbiddenError(childPath(path, 'limited'), 'must be nil if the type is not Limited'));
      const exempt = obj(spec.exempt);
      if (exempt) {
        const ePath = childPath(path, 'exempt');
        if (typeof exempt.nominalConcurrencyShares === 'number' && exempt.nominalConcurrencyShares < 0) errs.push(invalidError(childPath(ePath, 'nominalConcurrencyShares'), goValue(exempt.nominalConcurrencyShares), 'must be a non-negative integer'));
        errs.push(...lendablePercentErrors(exempt.lendablePercent, childPath(ePath, 'lendablePercent')));
      }
      break;
    }
    case 'Limited': {
      if (spec.exempt != null) errs.push(forbiddenError(childPath(path, 'exempt'), 'must be nil if the type is Limited'));
      const limited = obj(spec.limited);
      if (!limited) errs.push(requiredError(childPath(path, 'limited'), 'must not be empty when type is Limited'));
      else errs.push(...validateLimited(limited, childPath(path, 'limited')));
      break;
    }
    default:
      errs.push(notSupportedError(childPath(path, 'type'), goQuote(type), SUPPORTED_ENABLEMENTS));
  }
  return errs;
}

function lendablePercentErrors(v: unknown, path: string): FieldError[] {
  return typeof v === 'number' && !(v >= 0 && v <= 100) ? [invalidError(path, goValue(v), 'must be between 0 and 100, inclusive')] : [];
}

function validateLimited(limited: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  // flowcontrol/v1 allows zero shares (AllowZeroLimitedNominalConcurrencyShares).
  const shares = int(limited.nominalConcurrencyShares);
  if (shares < 0) errs.push(invalidError(childPath(path, 'nominalConcurrencyShares'), goNumber(shares), 'must be a non-negative integer'));
  errs.push(...validateLimitResponse(obj(limited.limitResponse) ?? {}, childPath(path, 'limitResponse')));
  errs.push(...lendablePercentErrors(limited.lendablePercent, childPath(path, 'lendablePercent')));
  if (typeof limited.borrowingLimitPercent === 'number' && limited.borrowingLimitPercent < 0) errs.push(invalidError(childPath(path, 'borrowingLimitPercent'), goNumber(limited.borrowingLimitPercent), 'if specified, must be a non-negative integer'));
  return errs;
}

function validateLimitResponse(response: Obj, path: string): FieldError[] {
  const type = str(response.type);
  switch (type) {
    case 'Reject':
      return response.queuing != null ? [forbiddenError(childPath(path, 'queuing'), 'must be nil if limited.limitResponse.type is not Limited')] : [];
    case 'Queue': {
      const queuing = obj(response.queuing);
      return queuing ? validateQueuing(queuing, childPath(path, 'queuing')) : [requiredError(childPath(path, 'queuing'), 'must not be empty if limited.limitResponse.type is Limited')];
    }
    default:
      return [notSupportedError(childPath(path, 'type'), goQuote(type), SUPPORTED_LIMIT_RESPONSES)];
  }
}

function validateQueuing(q: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const queueLengthLimit = int(q.queueLengthLimit);
  const queues = int(q.queues);
  const handSize = int(q.handSize);
  if (queueLengthLimit <= 0) errs.push(invalidError(childPath(path, 'queueLengthLimit'), goNumber(queueLengthLimit), 'must be positive'));
  if (queues <= 0) errs.push(invalidError(childPath(path, 'queues'), goNumber(queues), 'must be positive'));
  else if (queues > MAX_QUEUES) errs.push(invalidError(childPath(path, 'queues'), goNumber(queues), `must not be greater than ${MAX_QUEUES}`));
  if (handSize <= 0) errs.push(invalidError(childPath(path, 'handSize'), goNumber(handSize), 'must be positive'));
  else if (handSize > queues) errs.push(invalidError(childPath(path, 'handSize'), goNumber(handSize), `should not be greater than queues (${queues})`));
  // shufflesharding.RequiredEntropyBits: ceil(log2(deckSize) * handSize).
  else if (Math.ceil(Math.log2(queues) * handSize) > MAX_HASH_BITS) errs.push(invalidError(childPath(path, 'handSize'), goNumber(handSize), `required entropy bits of deckSize ${queues} and handSize ${handSize} should not be greater than ${MAX_HASH_BITS}`));
  return errs;
}

function validatePriorityLevel(pl: Obj): FieldError[] {
  const name = str(pl.metadata?.name);
  const spec = obj(pl.spec) ?? {};
  const errs = validatePriorityLevelSpec(spec, name, 'spec');
  const mandatory = MANDATORY_PRIORITY_LEVEL_SPECS.get(name);
  if (mandatory) {
    if (name === PRIORITY_LEVEL_EXEMPT) {
      // The exempt level's spec.exempt is the operator's to tune; the rest is fixed.
      if (!specsEqual({ ...spec, exempt: mandatory.exempt }, mandatory)) errs.push(invalidError('spec', goSharpVOfPriorityLevelSpec(spec), `spec of '${name}' except the 'spec.exempt' field must equal the fixed value`));
    } else if (!specsEqual(spec, mandatory)) errs.push(invalidError('spec', goSharpVOfPriorityLevelSpec(spec), `spec of '${name}' must equal the fixed value`));
  }
  return [...errs, ...validateConditions(pl.status)];
}

export const flowSchemaStrategy: Strategy = {
  validate: validateFlowSchema,
  // The status subresource validates the status alone (ValidateFlowSchemaStatusUpdate).
  validateUpdate: (fs, _old, subresource) => (subresource === 'status' ? validateConditions(fs.status) : validateFlowSchema(fs)),
};

export const priorityLevelConfigurationStrategy: Strategy = {
  validate: validatePriorityLevel,
  validateUpdate: (pl, _old, subresource) => (subresource === 'status' ? validateConditions(pl.status) : validatePriorityLevel(pl)),
};
