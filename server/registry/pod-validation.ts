// The part of kube's ValidatePodSpec users meet first, for Pods and every pod template: containers
// present, named (RFC 1123 labels, unique across init and regular containers) and with an image;
// container ports in range, their names IANA service names, unique per container; env variables
// named; volume mounts naming a volume of the pod; resource requirements (names, values, requests
// within limits); and ValidatePodUpdate's immutable spec. Field paths and messages as kube words
// them. The rest of ValidatePodSpec (probes, env sources, security contexts, affinity, ...) is not
// done here.
import type { FieldError } from '../schema/types.ts';
import { isPlainObject } from '../util/json.ts';
import { goQuote, isDNS1123Label, isQualifiedName, maxLenError } from './metadata-validation.ts';
import { compareRationals, parseQuantity } from '../util/quantity.ts';
import { duplicateError, forbiddenError, invalidError, requiredError } from './crd/schema-validator.ts';

type Obj = Record<string, any>;

const objects = (v: unknown): Obj[] => (Array.isArray(v) ? v.map((x) => (isPlainObject(x) ? x : {})) : []);

/** validation.IsValidPortNum's message. */
export const PORT_RANGE = 'must be between 1 and 65535, inclusive';

/** validation.IsValidPortName (an IANA_SVC_NAME): container ports, service target ports. */
export function portNameErrors(name: string): string[] {
  const errs: string[] = [];
  if (Buffer.byteLength(name, 'utf8') > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(name)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(name)) errs.push('must contain at least one letter (a-z)');
  if (name.includes('--')) errs.push('must not contain consecutive hyphens');
  if (name.length > 0 && (name.startsWith('-') || name.endsWith('-'))) errs.push('must not begin or end with a hyphen');
  return errs;
}

function validatePorts(errs: FieldError[], ports: unknown, path: string): void {
  const names = new Set<string>();
  objects(ports).forEach((p, i) => {
    const at = `${path}[${i}]`;
    if (typeof p.name === 'string' && p.name !== '') {
      const msgs = portNameErrors(p.name);
      if (msgs.length) for (const m of msgs) errs.push(invalidError(`${at}.name`, goQuote(p.name), m));
      else if (names.has(p.name)) errs.push(duplicateError(`${at}.name`, goQuote(p.name)));
      else names.add(p.name);
    }
    if (p.containerPort === 0) errs.push(requiredError(`${at}.containerPort`));
    else if (typeof p.containerPort === 'number' && (p.containerPort < 1 || p.containerPort > 65535)) errs.push(invalidError(`${at}.containerPort`, String(p.containerPort), PORT_RANGE));
    if (typeof p.hostPort === 'number' && p.hostPort !== 0 && (p.hostPort < 1 || p.hostPort > 65535)) errs.push(invalidError(`${at}.hostPort`, String(p.hostPort), PORT_RANGE));
  });
}

/** validation.IsRelaxedEnvVarName's message (relaxed names are the rule since kube 1.34). */
const ENV_NAME = "a valid environment variable name must consist only of printable ASCII characters other than '='";

/** ValidateEnv's name checks: each variable named, with printable ASCII other than '='. */
function validateEnvNames(errs: FieldError[], env: unknown, path: string): void {
  objects(env).forEach((e, i) => {
    const name = typeof e.name === 'string' ? e.name : '';
    if (name === '') errs.push(requiredError(`${path}[${i}].name`));
    else if (!/^[\x20-\x3c\x3e-\x7e]*$/.test(name)) errs.push(invalidError(`${path}[${i}].name`, goQuote(name), ENV_NAME));
  });
}

/** Resource names kube knows without a domain (helper.IsStandardResourceName, quota's included). */
const STANDARD_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage', 'limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'pods', 'resourcequotas', 'services', 'replicationcontrollers', 'secrets', 'persistentvolumeclaims', 'configmaps', 'services.nodeports', 'services.loadbalancers', 'requests.storage']);
const isHugePages = (name: string): boolean => name.startsWith('hugepages-');
/** helper.IsNativeResource: no domain, or a kubernetes.io one. */
const isNative = (name: string): boolean => !name.includes('/') || name.includes('kubernetes.io/');
/** helper.IsExtendedResourceName: a domain-qualified name outside kubernetes.io, usable in quota as requests.<name>. */
const isExtended = (name: string): boolean => !isNative(name) && !name.startsWith('requests.') && isQualifiedName(`requests.${name}`).length === 0;

/**
 * validateContainerResourceName: qualified, then standard for a container (cpu, memory,
 * ephemeral-storage, hugepages-*) or an extended resource. kube prints a ResourceName unquoted.
 */
function resourceNameErrors(errs: FieldError[], name: string, at: string): void {
  const qualified = isQualifiedName(name);
  for (const m of qualified) errs.push(invalidError(at, name, m));
  if (!name.includes('/')) {
    if (qualified.length === 0 && !STANDARD_RESOURCES.has(name) && !isHugePages(name) && !name.startsWith('requests.hugepages-')) {
      errs.push(invalidError(at, name, 'must be a standard resource type or fully qualified'));
    }
    if (!['cpu', 'memory', 'ephemeral-storage'].includes(name) && !isHugePages(name)) errs.push(invalidError(at, name, 'must be a standard resource for containers'));
  } else if (!isNative(name) && !isExtended(name)) {
    errs.push(invalidError(at, name, "doesn't follow extended resource name standard"));
  }
}

/** ValidateResourceQuantityValue: not negative; whole for extended resources. */
function quantityErrors(errs: FieldError[], resource: string, value: unknown, at: string): void {
  const q = typeof value === 'string' ? parseQuantity(value) : undefined;
  if (q === undefined) return; // (the schema walk reports what is no quantity)
  if (q.num < 0n) errs.push(invalidError(at, goQuote(value as string), 'must be greater than or equal to 0'));
  if (isExtended(resource) && q.den !== 1n) errs.push(invalidError(at, goQuote(value as string), 'must be an integer'));
}

/**
 * ValidateResourceRequirements for a container: each resource named and valued as above, a
 * request at most its limit (equal to it for resources that cannot be overcommitted: extended
 * ones and hugepages, which also need a limit), hugepages only with cpu or memory. Keys in sorted
 * order (kube walks a Go map).
 */
function validateResources(errs: FieldError[], r: Obj, path: string): void {
  const limits: Obj = isPlainObject(r.limits) ? r.limits : {};
  const requests: Obj = isPlainObject(r.requests) ? r.requests : {};
  const overcommit = (name: string) => isNative(name) && !isHugePages(name);
  const cpuOrMemory = (names: string[]) => names.includes('cpu') || names.includes('memory');
  const limitNames = Object.keys(limits).sort();
  const requestNames = Object.keys(requests).sort();
  for (const name of limitNames) {
    const at = `${path}.limits[${name}]`;
    resourceNameErrors(errs, name, at);
    quantityErrors(errs, name, limits[name], at);
  }
  for (const name of requestNames) {
    const at = `${path}.requests[${name}]`;
    resourceNameErrors(errs, name, at);
    quantityErrors(errs, name, requests[name], at);
    const request = typeof requests[name] === 'string' ? parseQuantity(requests[name]) : undefined;
    if (name in limits) {
      const limit = typeof limits[name] === 'string' ? parseQuantity(limits[name]) : undefined;
      if (request === undefined || limit === undefined) continue;
      const cmp = compareRationals(request, limit);
      if (cmp !== 0 && !overcommit(name)) errs.push(invalidError(`${path}.requests`, goQuote(requests[name]), `must be equal to ${name} limit of ${limits[name]}`));
      else if (cmp > 0) errs.push(invalidError(`${path}.requests`, goQuote(requests[name]), `must be less than or equal to ${name} limit of ${limits[name]}`));
    } else if (!overcommit(name)) {
      errs.push(requiredError(`${path}.limits`, 'Limit must be set for non overcommitable resources'));
    }
  }
  if (!cpuOrMemory(limitNames) && limitNames.some(isHugePages)) errs.push(forbiddenError(`${path}.limits`, 'HugePages require cpu or memory'));
  if (!cpuOrMemory(requestNames) && requestNames.some(isHugePages)) errs.push(forbiddenError(`${path}.requests`, 'HugePages require cpu or memory'));
}

/** validateContainerCommon's first checks: name, image, ports, env names, volume mounts. */
function validateContainer(errs: FieldError[], c: Obj, path: string, names: Set<string>, volumes: Set<string>): void {
  // (An absent name or containerPort is the schema walk's Required.)
  if (c.name === '') errs.push(requiredError(`${path}.name`));
  else if (typeof c.name === 'string') {
    for (const m of isDNS1123Label(c.name)) errs.push(invalidError(`${path}.name`, goQuote(c.name), m));
    if (names.has(c.name)) errs.push(duplicateError(`${path}.name`, goQuote(c.name)));
    else names.add(c.name);
  }
  if (typeof c.image !== 'string' || c.image === '') errs.push(requiredError(`${path}.image`));
  validatePorts(errs, c.ports, `${path}.ports`);
  validateEnvNames(errs, c.env, `${path}.env`);
  if (isPlainObject(c.resources)) validateResources(errs, c.resources, `${path}.resources`);
  const mountPaths = new Set<string>();
  objects(c.volumeMounts).forEach((m, i) => {
    const at = `${path}.volumeMounts[${i}]`;
    const name = typeof m.name === 'string' ? m.name : '';
    if (name === '') errs.push(requiredError(`${at}.name`));
    if (!volumes.has(name)) errs.push({ reason: 'FieldValueNotFound', field: `${at}.name`, message: `Not found: ${goQuote(name)}` });
    const mountPath = typeof m.mountPath === 'string' ? m.mountPath : '';
    if (mountPath === '') errs.push(requiredError(`${at}.mountPath`));
    if (mountPaths.has(mountPath)) errs.push(invalidError(`${at}.mountPath`, goQuote(mountPath), 'must be unique'));
    mountPaths.add(mountPath);
  });
}

/** Checks of a PodSpec at `path` ("spec" for a Pod, "spec.template.spec" in a Deployment, ...). */
export function validatePodSpec(spec: unknown, path: string): FieldError[] {
  if (!isPlainObject(spec)) return [];
  const errs: FieldError[] = [];
  const volumes = new Set(objects(spec.volumes).map((v) => (typeof v.name === 'string' ? v.name : '')));
  const names = new Set<string>();
  // An absent list is the schema walk's Required; an empty one is this check's.
  if (Array.isArray(spec.containers) && spec.containers.length === 0) errs.push(requiredError(`${path}.containers`));
  objects(spec.containers).forEach((c, i) => validateContainer(errs, c, `${path}.containers[${i}]`, names, volumes));
  objects(spec.initContainers).forEach((c, i) => validateContainer(errs, c, `${path}.initContainers[${i}]`, names, volumes));
  return errs;
}

/** A pod template's spec, at `path` + ".spec", when the template is there. */
export function validatePodTemplate(template: unknown, path: string): FieldError[] {
  return isPlainObject(template) ? validatePodSpec(template.spec, `${path}.spec`) : [];
}

/** What ValidatePodUpdate names as the only fields a pod's update may change. */
const UPDATABLE_POD_FIELDS = [
  '`spec.containers[*].image`',
  '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`',
  '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
].join(',');

/**
 * ValidatePodUpdate's spec rules: containers neither added nor removed, images present and
 * unpadded, activeDeadlineSeconds only set or lowered, tolerations only added (their
 * tolerationSeconds may change), scheduling gates only removed; any other change of the spec is
 * Forbidden. kube appends a go-cmp diff of the specs to that message (go-cmp's output is
 * deliberately unstable); hearth lists the top-level spec fields that changed in that diff's shape.
 * Equality is kube's semantic one: a list or map that is empty equals one that is absent.
 */
export function validatePodUpdate(pod: Obj, old: Obj): FieldError[] {
  const spec: Obj = isPlainObject(pod.spec) ? pod.spec : {};
  const was: Obj = isPlainObject(old.spec) ? old.spec : {};
  const errs: FieldError[] = [];
  for (const list of ['containers', 'initContainers']) {
    const now = objects(spec[list]);
    if (now.length !== objects(was[list]).length) {
      errs.push(forbiddenError(`spec.${list}`, 'pod updates may not add or remove containers'));
      return errs;
    }
    now.forEach((c, i) => {
      const image = typeof c.image === 'string' ? c.image : '';
      if (image === '') errs.push(requiredError(`spec.${list}[${i}].image`));
      else if (image.trim() !== image) errs.push(invalidError(`spec.${list}[${i}].image`, goQuote(image), 'must not have leading or trailing whitespace'));
    });
  }
  const deadline = spec.activeDeadlineSeconds;
  if (typeof deadline === 'number') {
    if (deadline < 0 || deadline > 2147483647) return [...errs, invalidError('spec.activeDeadlineSeconds', String(deadline), 'must be between 0 and 2147483647, inclusive')];
    if (typeof was.activeDeadlineSeconds === 'number' && was.activeDeadlineSeconds < deadline) return [...errs, invalidError('spec.activeDeadlineSeconds', String(deadline), 'must be less than or equal to previous value')];
  } else if (typeof was.activeDeadlineSeconds === 'number') {
    errs.push(invalidError('spec.activeDeadlineSeconds', '"null"', 'must not update from a positive integer to nil value'));
  }
  // The spec with what may change taken from the old one: anything else that differs is forbidden.
  const munged: Obj = { ...spec };
  for (const list of ['containers', 'initContainers']) {
    if (Array.isArray(spec[list])) munged[list] = objects(spec[list]).map((c, i) => ({ ...c, image: objects(was[list])[i]?.image }));
  }
  setOrDelete(munged, 'activeDeadlineSeconds', was.activeDeadlineSeconds);
  setOrDelete(munged, 'tolerations', was.tolerations);
  setOrDelete(munged, 'schedulingGates', was.schedulingGates);
  if (typeof was.terminationGracePeriodSeconds === 'number' && was.terminationGracePeriodSeconds < 0 && spec.terminationGracePeriodSeconds === 1) {
    munged.terminationGracePeriodSeconds = was.terminationGracePeriodSeconds;
  }
  const changed = [...new Set([...Object.keys(was), ...Object.keys(munged)])].filter((k) => !semanticEqual(was[k], munged[k]));
  if (changed.length) {
    const lines = changed.flatMap((k) => [
      ...(isEmpty(was[k]) ? [] : [`- \t${goFieldName(k)}: ${JSON.stringify(was[k])},`]),
      ...(isEmpty(munged[k]) ? [] : [`+ \t${goFieldName(k)}: ${JSON.stringify(munged[k])},`]),
    ]);
    errs.push(forbiddenError('spec', `pod updates may not change fields other than ${UPDATABLE_POD_FIELDS}\n  core.PodSpec{\n${lines.join('\n')}\n  }\n`));
  }
  errs.push(...tolerationUpdateErrors(objects(spec.tolerations), objects(was.tolerations)));
  const gates = new Set(objects(was.schedulingGates).map((g) => g.name));
  for (const g of objects(spec.schedulingGates)) {
    if (!gates.has(g.name)) errs.push(forbiddenError('spec.schedulingGates', `only deletion is allowed, but found new scheduling gate '${String(g.name)}'`));
  }
  return errs;
}

/** validateOnlyAddedTolerations: every old toleration still there, its tolerationSeconds aside. */
function tolerationUpdateErrors(now: Obj[], was: Obj[]): FieldError[] {
  const withoutSeconds = ({ tolerationSeconds: _, ...t }: Obj) => t;
  for (const old of was) {
    if (!now.some((t) => semanticEqual(withoutSeconds(t), withoutSeconds(old)))) {
      return [forbiddenError('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds')];
    }
  }
  return [];
}

function setOrDelete(o: Obj, k: string, v: unknown): void {
  if (v === undefined) delete o[k];
  else o[k] = v;
}

const isEmpty = (v: unknown): boolean => v === undefined || v === null || (Array.isArray(v) && v.length === 0) || (isPlainObject(v) && Object.keys(v).length === 0);

/** apiequality.Semantic.DeepEqual on JSON: an empty list or map equals an absent one. */
function semanticEqual(a: unknown, b: unknown): boolean {
  if (isEmpty(a) && isEmpty(b)) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => semanticEqual(x, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!semanticEqual(a[k], b[k])) return false;
    return true;
  }
  return a === b;
}

/** The Go field name of a PodSpec JSON key (nodeName → NodeName), as go-cmp names it. */
const goFieldName = (k: string): string => k.charAt(0).toUpperCase() + k.slice(1);
