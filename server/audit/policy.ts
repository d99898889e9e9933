// The audit policy (--audit-policy-file): an audit.k8s.io/v1 Policy read and validated at start,
// then asked once per request which level, omitted stages and managed-fields omission apply.
// Follows k8s.io/apiserver/pkg/audit/policy (reader.go: LoadPolicyFromFile; checker.go: rule
// matching, first match wins) and pkg/apis/audit/validation (ValidatePolicy, its messages).
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { KUBE_YAML } from '../go/yaml.ts';
import { aggregateErrors } from '../go/errors.ts';
import { goQuote } from '../go/strconv.ts';
import { childPath, fieldErrorText, indexPath, invalidError, notSupportedError, requiredError, type FieldError } from '../validation/field.ts';
import { isDNS1123Subdomain } from '../validation/names.ts';
import type { UserInfo } from '../authentication/user.ts';

export type AuditLevel = 'None' | 'Metadata' | 'Request' | 'RequestResponse';
export type AuditStage = 'RequestReceived' | 'ResponseStarted' | 'ResponseComplete' | 'Panic';

const LEVELS: readonly AuditLevel[] = ['None', 'Metadata', 'Request', 'RequestResponse'];
const STAGES: readonly AuditStage[] = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'];
/** A level's rank: Less(other) is rank < rank(other). */
export const LEVEL_RANK: Readonly<Record<AuditLevel, number>> = { None: 0, Metadata: 1, Request: 2, RequestResponse: 3 };

/** Bits for the omitted stages of a rule (a small set compared per event). */
export const STAGE_BIT: Readonly<Record<AuditStage, number>> = { RequestReceived: 1, ResponseStarted: 2, ResponseComplete: 4, Panic: 8 };

interface GroupResources {
  group: string;
  resources: string[];
  resourceNames: string[];
}

interface PolicyRule {
  level: AuditLevel;
  users: string[];
  userGroups: string[];
  verbs: string[];
  resources: GroupResources[];
  namespaces: string[];
  nonResourceURLs: string[];
  omitStages: number;
  /** undefined: the policy's. */
  omitManagedFields: boolean | undefined;
}

/** What one request is audited at (kube's RequestAuditConfig). */
export interface RequestAuditConfig {
  level: AuditLevel;
  /** STAGE_BIT of each stage not to send. */
  omitStages: number;
  omitManagedFields: boolean;
}

/** What the policy reads of a request (kube's authorizer.Attributes): the authenticated user and what is asked. */
export interface AuditAttributes {
  /** undefined for a request whose authentication failed. */
  user: UserInfo | undefined;
  verb: string;
  isResourceRequest: boolean;
  path: string;
  apiGroup: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

/** The rules in order; the first that matches a request decides (kube's policyRuleEvaluator). */
export class AuditPolicy {
  private readonly defaultConfig: RequestAuditConfig;
  private readonly configs: RequestAuditConfig[];

  constructor(
    private readonly rules: PolicyRule[],
    omitStages: number,
    omitManagedFields: boolean,
  ) {
    this.defaultConfig = { level: 'None', omitStages, omitManagedFields };
    // One config per rule, made once: the policy's omitStages joined to the rule's.
    this.configs = rules.map((r) => ({ level: r.level, omitStages: r.omitStages | omitStages, omitManagedFields: r.omitManagedFields ?? omitManagedFields }));
  }

  evaluate(a: AuditAttributes): RequestAuditConfig {
    for (let i = 0; i < this.rules.length; i++) if (ruleMatches(this.rules[i], a)) return this.configs[i];
    return this.defaultConfig;
  }
}

function ruleMatches(r: PolicyRule, a: AuditAttributes): boolean {
  if (r.users.length) {
    if (!a.user || !r.users.includes(a.user.name)) return false;
  }
  if (r.userGroups.length) {
    if (!a.user || !a.user.groups.some((g) => r.userGroups.includes(g))) return false;
  }
  if (r.verbs.length && !r.verbs.includes(a.verb)) return false;
  if (r.namespaces.length || r.resources.length) return ruleMatchesResource(r, a);
  if (r.nonResourceURLs.length) return ruleMatchesNonResource(r, a);
  return true;
}

function ruleMatchesResource(r: PolicyRule, a: AuditAttributes): boolean {
  if (!a.isResourceRequest) return false;
  if (r.namespaces.length && !r.namespaces.includes(a.namespace)) return false;
  if (!r.resources.length) return true;
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  for (const gr of r.resources) {
    if (gr.group !== a.apiGroup) continue;
    if (!gr.resources.length) return true;
    if (gr.resourceNames.length && !gr.resourceNames.includes(a.name)) continue;
    for (const res of gr.resources) {
      if (res === combined || res === '*') return true;
      if (a.subresource && res.startsWith('*/') && res.slice(2) === a.subresource) return true;
      if (res.endsWith('/*') && res.slice(0, -2) === a.resource) return true;
    }
  }
  return false;
}

function ruleMatchesNonResource(r: PolicyRule, a: AuditAttributes): boolean {
  if (a.isResourceRequest) return false;
  for (const spec of r.nonResourceURLs) {
    if (spec === '*' || spec === a.path) return true;
    if (spec.endsWith('*') && a.path.startsWith(spec.slice(0, -1))) return true;
  }
  return false;
}

/**
 * --audit-policy-file read and validated, with kube's messages (LoadPolicyFromFile): refused
 * before anything is bound or written.
 */
export function loadAuditPolicy(file: string): AuditPolicy {
  if (file === '') throw new Error('file path not specified');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const reason = err.code === 'ENOENT' ? 'no such file or directory' : err.code === 'EACCES' ? 'permission denied' : err.code === 'EISDIR' ? 'is a directory' : err.message;
    throw new Error(`failed to read file path ${goQuote(file)}: open ${file}: ${reason}`);
  }
  try {
    return parseAuditPolicy(text);
  } catch (e) {
    throw new Error(`${(e as Error).message}: from file ${file}`);
  }
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** LoadPolicyFromBytes: decoded (JSON is YAML), of audit.k8s.io/v1 only, validated, at least one rule. */
export function parseAuditPolicy(text: string): AuditPolicy {
  let doc: unknown;
  try {
    doc = YAML.parse(text, KUBE_YAML);
  } catch (e) {
    throw new Error(`failed decoding: error converting YAML to JSON: yaml: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!isObj(doc)) throw new Error(`failed decoding: couldn't get version/kind; json parse error: json: cannot unmarshal ${Array.isArray(doc) ? 'array' : typeof doc} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`);
  const apiVersion = typeof doc.apiVersion === 'string' ? doc.apiVersion : '';
  const kind = typeof doc.kind === 'string' ? doc.kind : '';
  if (!kind) throw new Error(`failed decoding: Object 'Kind' is missing in '${JSON.stringify(doc)}'`);
  // kube 1.36's audit scheme holds v1 alone: v1alpha1 and v1beta1 are no longer read.
  if (apiVersion !== 'audit.k8s.io/v1' || kind !== 'Policy') throw new Error(`failed decoding: no kind ${goQuote(kind)} is registered for version ${goQuote(apiVersion)} in scheme "k8s.io/apiserver/pkg/audit/scheme.go:30"`);
  const errors: FieldError[] = [];
  const rules = (Array.isArray(doc.rules) ? doc.rules : []).map((raw, i) => readRule(raw, indexPath('rules', i), errors));
  const omitStages = readStages(doc.omitStages, 'omitStages', errors, false);
  if (errors.length) throw new Error(aggregateErrors(errors.map(fieldErrorText)));
  if (!rules.length) throw new Error('loaded illegal policy with 0 rules');
  return new AuditPolicy(rules, omitStages, doc.omitManagedFields === true);
}

/** A []string as field errors print it (%#v). */
const goStrings = (l: string[]) => `[]string{${l.map(goQuote).join(', ')}}`;

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

function readStages(v: unknown, at: string, errors: FieldError[], validate: boolean): number {
  let bits = 0;
  strings(v).forEach((s, i) => {
    if ((STAGES as readonly string[]).includes(s)) bits |= STAGE_BIT[s as AuditStage];
    else if (validate) errors.push(invalidError(indexPath(at, i), goQuote(s), `allowed stages are ${STAGES.join(',')}`));
  });
  return bits;
}

/** One rule, with ValidatePolicy's errors for it (policy-level omitStages are not validated by kube). */
function readRule(raw: unknown, at: string, errors: FieldError[]): PolicyRule {
  const r = isObj(raw) ? raw : {};
  const level = typeof r.level === 'string' ? r.level : '';
  if (level === '') errors.push(requiredError(childPath(at, 'level')));
  else if (!(LEVELS as readonly string[]).includes(level)) errors.push(notSupportedError(childPath(at, 'level'), goQuote(level), [...LEVELS]));
  const nonResourceURLs = strings(r.nonResourceURLs);
  nonResourceURLs.forEach((url, i) => {
    if (url === '*') return;
    const here = indexPath(childPath(at, 'nonResourceURLs'), i);
    if (!url.startsWith('/')) errors.push(invalidError(here, goQuote(url), "non-resource URL rules must begin with a '/' character"));
    if (url !== '' && url.slice(0, -1).includes('*')) errors.push(invalidError(here, goQuote(url), "non-resource URL wildcards '*' must be the final character of the rule"));
  });
  const resources: GroupResources[] = (Array.isArray(r.resources) ? r.resources : []).map((g) => {
    const o = isObj(g) ? g : {};
    const gr = { group: typeof o.group === 'string' ? o.group : '', resources: strings(o.resources), resourceNames: strings(o.resourceNames) };
    if (gr.group) {
      const msgs = isDNS1123Subdomain(gr.group);
      if (msgs.length) errors.push(invalidError(childPath(childPath(at, 'resources'), 'group'), goQuote(gr.group), msgs.join(',')));
    }
    if (gr.resourceNames.length && !gr.resources.length) errors.push(invalidError(childPath(childPath(at, 'resources'), 'resourceNames'), goStrings(gr.resourceNames), 'using resourceNames requires at least one resource'));
    return gr;
  });
  const omitStages = readStages(r.omitStages, childPath(at, 'omitStages'), errors, true);
  const namespaces = strings(r.namespaces);
  if (nonResourceURLs.length && (resources.length || namespaces.length)) {
    errors.push(invalidError(childPath(at, 'nonResourceURLs'), goStrings(nonResourceURLs), 'rules cannot apply to both regular resources and non-resource URLs'));
  }
  return {
    level: level as AuditLevel,
    users: strings(r.users),
    userGroups: strings(r.userGroups),
    verbs: strings(r.verbs),
    resources,
    namespaces,
    nonResourceURLs,
    omitStages,
    omitManagedFields: typeof r.omitManagedFields === 'boolean' ? r.omitManagedFields : undefined,
  };
}
