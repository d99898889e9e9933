// The part of kube's ValidatePodSpec users meet first, for Pods and every pod template: containers
// present, named (RFC 1123 labels, unique across init and regular containers) and with an image;
// container ports in range, their names IANA service names, unique per container; env variables
// named; volume mounts naming a volume of the pod; resource requirements (names, values, requests
// within limits). Field paths and messages as kube words them. The rest of ValidatePodSpec (probes,
// env sources, security contexts, affinity, ...) is not done here.
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
