// The scheduling and DNS parts of kube's ValidatePodSpec: affinity (node
// affinity with its selector terms; pod affinity and anti-affinity with their terms), DNS config
// (with dnsPolicy None's rules), readiness gates, scheduling gates and topology spread
// constraints. Field paths and messages as kube-apiserver 1.36 words them, with its default
// options for a new object: label values in selectors and in required node affinity are checked,
// DNS searches are relaxed (RelaxedDNSSearchValidation, GA), nameservers are strict IPs
// (StrictIPCIDRValidation, beta), and a spread constraint's matchLabelKeys get the rules of pod
// affinity's (MatchLabelKeysInPodTopologySpreadSelectorMerge, on).
//
// A field the schema requires and the request leaves out is the schema walk's Required value;
// these checks look at the values that are there.
import { isPlainObject, objectsOf as objects } from '../../../../util/json.ts';
import { validateLabelSelector } from '../../../../validation/object-meta.ts';
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue, maxLenError, regexError, DNS1123SubdomainMaxLength } from '../../../../validation/names.ts';
import { goStringSlice } from '../../../../go/fmt.ts';
import { goQuote } from '../../../../go/strconv.ts';
import { duplicateError, forbiddenError, goValue, invalidError, notSupportedError, requiredError, type FieldError } from '../../../../validation/field.ts';
import { parseIPv4Sloppy, parseIPv6Sloppy } from '../../../../util/net.ts';
import type { Obj } from '../../../strategy.ts';

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : '')) : []);
const NOT_POSITIVE = 'must be greater than zero';
const WEIGHT_RANGE = 'must be in the range 1-100';
const NO_SELECTOR = 'must not be specified when labelSelector is not set';

/** ValidateLabelName / ValidateQualifiedName: each problem of a qualified name, as Invalid at `path`. */
function qualifiedName(errs: FieldError[], name: string, path: string): void {
  for (const m of isQualifiedName(name)) errs.push(invalidError(path, goQuote(name), m));
}

// ---------------------------------------------------------------------------------------------
// Affinity.

const NODE_OPERATORS_WITH_VALUES = ['In', 'NotIn'];

/**
 * ValidateNodeSelectorRequirement: the operator's rule on values, the key, and (in required
 * node affinity; preferred terms allow any) each value as a label value.
 */
function nodeSelectorRequirement(errs: FieldError[], r: Obj, path: string, checkValues: boolean): void {
  const values = strings(r.values);
  const operator = r.operator;
  if (typeof operator === 'string') {
    if (NODE_OPERATORS_WITH_VALUES.includes(operator)) {
      if (values.length === 0) errs.push(requiredError(`${path}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (operator === 'Exists' || operator === 'DoesNotExist') {
      if (values.length > 0) errs.push(forbiddenError(`${path}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    } else if (operator === 'Gt' || operator === 'Lt') {
      if (values.length !== 1) errs.push(requiredError(`${path}.values`, "must be specified single value when `operator` is 'Lt' or 'Gt'"));
    } else {
      errs.push(invalidError(`${path}.operator`, goQuote(operator), 'not a valid selector operator'));
    }
  }
  if (typeof r.key === 'string') qualifiedName(errs, r.key, `${path}.key`);
  if (checkValues) values.forEach((v, j) => {
    for (const m of isValidLabelValue(v)) errs.push(invalidError(`${path}.values[${j}]`, goQuote(v), m));
  });
}

/** ValidateNodeFieldSelectorRequirement: In or NotIn one value, of the one field there is, metadata.name (a node name). */
function nodeFieldSelectorRequirement(errs: FieldError[], r: Obj, path: string): void {
  const values = strings(r.values);
  if (typeof r.operator === 'string') {
    if (NODE_OPERATORS_WITH_VALUES.includes(r.operator)) {
      if (values.length !== 1) errs.push(requiredError(`${path}.values`, "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
    } else {
      errs.push(invalidError(`${path}.operator`, goQuote(r.operator), 'not a valid selector operator'));
    }
  }
  if (typeof r.key !== 'string') return;
  if (r.key !== 'metadata.name') return void errs.push(invalidError(`${path}.key`, goQuote(r.key), 'not a valid field selector key'));
  values.forEach((v, j) => {
    for (const m of isDNS1123Subdomain(v)) errs.push(invalidError(`${path}.values[${j}]`, goQuote(v), m));
  });
}

/** ValidateNodeSelectorTerm: its matchExpressions, then its matchFields. */
function nodeSelectorTerm(errs: FieldError[], term: Obj, path: string, checkValues: boolean): void {
  objects(term.matchExpressions).forEach((r, j) => nodeSelectorRequirement(errs, r, `${path}.matchExpressions[${j}]`, checkValues));
  objects(term.matchFields).forEach((r, j) => nodeFieldSelectorRequirement(errs, r, `${path}.matchFields[${j}]`));
}

/** A weight of a preferred term: 1 to 100. */
function weight(errs: FieldError[], w: unknown, path: string): void {
  if (typeof w === 'number' && (w <= 0 || w > 100)) errs.push(invalidError(path, goValue(w), WEIGHT_RANGE));
}

/** validateNodeAffinity: the required selector (at least one term), then the weighted preferred terms. */
function nodeAffinity(errs: FieldError[], na: Obj, path: string): void {
  const required = na.requiredDuringSchedulingIgnoredDuringExecution;
  if (isPlainObject(required)) {
    const at = `${path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`;
    if (Array.isArray(required.nodeSelectorTerms) && required.nodeSelectorTerms.length === 0) errs.push(requiredError(at, 'must have at least one node selector term'));
    else objects(required.nodeSelectorTerms).forEach((term, i) => nodeSelectorTerm(errs, term, `${at}[${i}]`, true));
  }
  objects(na.preferredDuringSchedulingIgnoredDuringExecution).forEach((term, i) => {
    const at = `${path}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
    weight(errs, term.weight, `${at}.weight`);
    if (isPlainObject(term.preference)) nodeSelectorTerm(errs, term.preference, `${at}.preference`, false);
  });
}

/** validateLabelKeys: label keys need a label selector, and each is a qualified name. */
function labelKeys(errs: FieldError[], keys: string[], selector: unknown, path: string): void {
  if (keys.length === 0) return;
  if (!isPlainObject(selector)) return void errs.push(forbiddenError(path, NO_SELECTOR));
  keys.forEach((k, i) => qualifiedName(errs, k, `${path}[${i}]`));
}

/**
 * ValidateMatchLabelKeysAndMismatchLabelKeys: both lists' keys; a matchLabelKeys key may not
 * appear twice in the selector (for a pod kube has already added it there); and a key may not be
 * in both lists. kube reports the selector clash at `path` indexed by the key's position in
 * matchLabelKeys (…[0][1] for a spread constraint), as it is written.
 */
export function validateMatchLabelKeys(errs: FieldError[], matchLabelKeys: unknown, mismatchLabelKeys: unknown, selector: unknown, path: string): void {
  const match = strings(matchLabelKeys);
  const mismatch = strings(mismatchLabelKeys);
  labelKeys(errs, match, selector, `${path}.matchLabelKeys`);
  labelKeys(errs, mismatch, selector, `${path}.mismatchLabelKeys`);
  if (isPlainObject(selector)) {
    const position = new Map<string, number>();
    match.forEach((k, i) => position.set(k, i));
    const seen = new Set(isPlainObject(selector.matchLabels) ? Object.keys(selector.matchLabels) : []);
    for (const e of objects(selector.matchExpressions)) {
      const key = typeof e.key === 'string' ? e.key : '';
      const i = position.get(key);
      if (i !== undefined && seen.has(key)) errs.push(invalidError(`${path}[${i}]`, goQuote(key), 'exists in both matchLabelKeys and labelSelector'));
      seen.add(key);
    }
  }
  const mismatched = new Set(mismatch);
  match.forEach((k, i) => {
    if (mismatched.has(k)) errs.push(invalidError(`${path}.matchLabelKeys[${i}]`, goQuote(k), 'exists in both matchLabelKeys and mismatchLabelKeys'));
  });
}

/**
 * validatePodAffinityTerm: its label and namespace selectors, its namespaces (RFC 1123 labels,
 * reported at ".namespace" as kube does), its label keys, and its topology key.
 */
function podAffinityTerm(errs: FieldError[], term: Obj, path: string): void {
  errs.push(...validateLabelSelector(term.labelSelector, `${path}.labelSelector`));
  errs.push(...validateLabelSelector(term.namespaceSelector, `${path}.namespaceSelector`));
  for (const ns of strings(term.namespaces)) {
    for (const m of isDNS1123Label(ns)) errs.push(invalidError(`${path}.namespace`, goQuote(ns), m));
  }
  validateMatchLabelKeys(errs, term.matchLabelKeys, term.mismatchLabelKeys, term.labelSelector, path);
  if (typeof term.topologyKey !== 'string') return;
  if (term.topologyKey === '') errs.push(requiredError(`${path}.topologyKey`, 'can not be empty'));
  qualifiedName(errs, term.topologyKey, `${path}.topologyKey`);
}

/** validatePodAffinity / validatePodAntiAffinity: the required terms, then the weighted preferred ones. */
function podAffinity(errs: FieldError[], a: Obj, path: string): void {
  objects(a.requiredDuringSchedulingIgnoredDuringExecution).forEach((term, i) => podAffinityTerm(errs, term, `${path}.requiredDuringSchedulingIgnoredDuringExecution[${i}]`));
  objects(a.preferredDuringSchedulingIgnoredDuringExecution).forEach((term, j) => {
    const at = `${path}.preferredDuringSchedulingIgnoredDuringExecution[${j}]`;
    weight(errs, term.weight, `${at}.weight`);
    if (isPlainObject(term.podAffinityTerm)) podAffinityTerm(errs, term.podAffinityTerm, `${at}.podAffinityTerm`);
  });
}

/** validateAffinity: node affinity, pod affinity, pod anti-affinity. */
export function validateAffinity(errs: FieldError[], affinity: unknown, path: string): void {
  if (!isPlainObject(affinity)) return;
  if (isPlainObject(affinity.nodeAffinity)) nodeAffinity(errs, affinity.nodeAffinity, `${path}.nodeAffinity`);
  if (isPlainObject(affinity.podAffinity)) podAffinity(errs, affinity.podAffinity, `${path}.podAffinity`);
  if (isPlainObject(affinity.podAntiAffinity)) podAffinity(errs, affinity.podAntiAffinity, `${path}.podAntiAffinity`);
}

// ---------------------------------------------------------------------------------------------
// DNS config.

const MAX_NAMESERVERS = 3;
const MAX_SEARCH_PATHS = 32;
const MAX_SEARCH_LIST_CHARS = 2048;

/**
 * IsValidIPForLegacyField with strict validation (StrictIPCIDRValidation): an address Go's old
 * parser reads, without leading zeros (which Go's netip refuses) and not IPv4-mapped IPv6.
 */
function legacyIPErrors(value: string): string[] {
  const firstDot = value.indexOf('.');
  const firstColon = value.indexOf(':');
  const isV4 = firstDot >= 0 && (firstColon < 0 || firstDot < firstColon);
  const bytes = isV4 ? parseIPv4Sloppy(value) : firstColon >= 0 ? parseIPv6Sloppy(value) : undefined;
  if (!bytes) return ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'];
  const octets = isV4 ? value.split('.') : (value.split(':').pop() ?? '').includes('.') ? (value.split(':').pop() as string).split('.') : [];
  const hexGroups = isV4 ? [] : value.split(':').filter((g) => g !== '' && !g.includes('.'));
  if (octets.some((o) => o.length > 1 && o.startsWith('0')) || hexGroups.some((g) => g.length > 4)) return ['must not have leading 0s'];
  if (!isV4 && bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) return ['must not be an IPv4-mapped IPv6 address'];
  return [];
}

const dns1123LabelWithUnderscoreFmt = '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?';
const dns1123SubdomainWithUnderscoreFmt = `${dns1123LabelWithUnderscoreFmt}(\\.${dns1123LabelWithUnderscoreFmt})*`;
const dns1123SubdomainWithUnderscoreRe = new RegExp(`^${dns1123SubdomainWithUnderscoreFmt}$`);

/** validation.IsDNS1123SubdomainWithUnderscore: an RFC 1123 subdomain whose labels may also hold (and start with) '_'. */
function dns1123SubdomainWithUnderscoreErrors(value: string): string[] {
  const errs: string[] = [];
  if (Buffer.byteLength(value, 'utf8') > DNS1123SubdomainMaxLength) errs.push(maxLenError(DNS1123SubdomainMaxLength));
  if (!dns1123SubdomainWithUnderscoreRe.test(value)) {
    errs.push(regexError("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character", dns1123SubdomainWithUnderscoreFmt, 'example.com'));
  }
  return errs;
}

/**
 * validatePodDNSConfig: dnsPolicy None needs a config with a nameserver; a config has at most 3
 * nameservers, each an IP, at most 32 searches of at most 2048 characters together, each a
 * subdomain (relaxed: '_' allowed, "." alone allowed, one trailing dot ignored), and named options.
 */
export function validatePodDNSConfig(errs: FieldError[], config: unknown, dnsPolicy: unknown, path: string): void {
  if (dnsPolicy === 'None') {
    if (!isPlainObject(config)) return void errs.push(requiredError(path, 'must provide `dnsConfig` when `dnsPolicy` is None'));
    if (strings(config.nameservers).length === 0) return void errs.push(requiredError(`${path}.nameservers`, 'must provide at least one DNS nameserver when `dnsPolicy` is None'));
  }
  if (!isPlainObject(config)) return;
  const nameservers = strings(config.nameservers);
  if (nameservers.length > MAX_NAMESERVERS) errs.push(invalidError(`${path}.nameservers`, goStringSlice(nameservers), `must not have more than ${MAX_NAMESERVERS} nameservers`));
  nameservers.forEach((ns, i) => {
    for (const m of legacyIPErrors(ns)) errs.push(invalidError(`${path}.nameservers[${i}]`, goQuote(ns), m));
  });
  const searches = strings(config.searches);
  if (searches.length > MAX_SEARCH_PATHS) errs.push(invalidError(`${path}.searches`, goStringSlice(searches), `must not have more than ${MAX_SEARCH_PATHS} search paths`));
  if (Buffer.byteLength(searches.join(' '), 'utf8') > MAX_SEARCH_LIST_CHARS) {
    errs.push(invalidError(`${path}.searches`, goStringSlice(searches), `must not have more than ${MAX_SEARCH_LIST_CHARS} characters (including spaces) in the search list`));
  }
  searches.forEach((search, i) => {
    if (search === '.') return;
    const trimmed = search.endsWith('.') ? search.slice(0, -1) : search;
    for (const m of dns1123SubdomainWithUnderscoreErrors(trimmed)) errs.push(invalidError(`${path}.searches[${i}]`, goQuote(trimmed), m));
  });
  objects(config.options).forEach((o, i) => {
    if (typeof o.name !== 'string' || o.name === '') errs.push(requiredError(`${path}.options[${i}]`, 'must not be empty'));
  });
}

// ---------------------------------------------------------------------------------------------
// Gates.

/** validateReadinessGates: each condition type a qualified name. */
export function validateReadinessGates(errs: FieldError[], list: unknown, path: string): void {
  objects(list).forEach((g, i) => {
    if (typeof g.conditionType === 'string') qualifiedName(errs, g.conditionType, `${path}[${i}].conditionType`);
  });
}

/** validateSchedulingGates: each name a qualified name (reported at the gate), named once. */
export function validateSchedulingGates(errs: FieldError[], list: unknown, path: string): void {
  const seen = new Set<string>();
  objects(list).forEach((g, i) => {
    if (typeof g.name !== 'string') return;
    qualifiedName(errs, g.name, `${path}[${i}]`);
    if (seen.has(g.name)) errs.push(duplicateError(`${path}[${i}]`, goQuote(g.name)));
    seen.add(g.name);
  });
}

// ---------------------------------------------------------------------------------------------
// Topology spread constraints.

const SCHEDULE_ACTIONS = ['DoNotSchedule', 'ScheduleAnyway'];
const NODE_INCLUSION_POLICIES = ['Honor', 'Ignore'];

/**
 * validateTopologySpreadConstraints, per constraint: maxSkew positive, a topology key, a known
 * whenUnsatisfiable, no later constraint with the same {topologyKey, whenUnsatisfiable},
 * minDomains positive and only with DoNotSchedule, known node inclusion policies, the
 * matchLabelKeys rules (ValidateMatchLabelKeysAndMismatchLabelKeys), the label selector.
 */
export function validateTopologySpreadConstraints(errs: FieldError[], list: unknown, path: string): void {
  const constraints = objects(list);
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  constraints.forEach((c, i) => {
    const at = `${path}[${i}]`;
    if (typeof c.maxSkew === 'number' && c.maxSkew <= 0) errs.push(invalidError(`${at}.maxSkew`, goValue(c.maxSkew), NOT_POSITIVE));
    if (c.topologyKey === '') errs.push(requiredError(`${at}.topologyKey`, 'can not be empty'));
    if (typeof c.whenUnsatisfiable === 'string' && !SCHEDULE_ACTIONS.includes(c.whenUnsatisfiable)) errs.push(notSupportedError(`${at}.whenUnsatisfiable`, goQuote(c.whenUnsatisfiable), SCHEDULE_ACTIONS));
    const key = str(c.topologyKey);
    const action = str(c.whenUnsatisfiable);
    if (constraints.slice(i + 1).some((o) => str(o.topologyKey) === key && str(o.whenUnsatisfiable) === action)) {
      errs.push(duplicateError(`${at}.{topologyKey, whenUnsatisfiable}`, goQuote(`{${key}, ${action}}`)));
    }
    if (typeof c.minDomains === 'number') {
      if (c.minDomains <= 0) errs.push(invalidError(`${at}.minDomains`, goValue(c.minDomains), NOT_POSITIVE));
      if (action !== 'DoNotSchedule') errs.push(invalidError(`${at}.minDomains`, goValue(c.minDomains), `can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ${action}`));
    }
    for (const policy of ['nodeAffinityPolicy', 'nodeTaintsPolicy']) {
      const v = c[policy];
      if (typeof v === 'string' && !NODE_INCLUSION_POLICIES.includes(v)) errs.push(notSupportedError(`${at}.${policy}`, goQuote(v), NODE_INCLUSION_POLICIES));
    }
    validateMatchLabelKeys(errs, c.matchLabelKeys, undefined, c.labelSelector, at);
    errs.push(...validateLabelSelector(c.labelSelector, `${at}.labelSelector`));
  });
}
