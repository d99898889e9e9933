// Ingresses as kube validates their rules (validateIngressRules, validateHTTPIngressPath,
// validateIngressBackend): hosts are DNS names, paths of Exact and Prefix rules are clean absolute
// paths, and each backend names one service with one port. (TLS, the default backend's own rules
// and wildcard hosts' wording are not checked here.) Also IngressClasses' parameters scope default.
import { isIP } from 'node:net';
import type { Obj, Strategy } from '../../strategy.ts';
import { isPlainObject, objectsOf } from '../../../util/json.ts';
import { isDNS1035Label, isDNS1123Subdomain } from '../../../validation/names.ts';
import { goQuote } from '../../../go/strconv.ts';
import { goValue, invalidError, notSupportedError, requiredError, type FieldError } from '../../../validation/field.ts';
import { PORT_RANGE, portNameErrors } from '../core/pods/validation.ts';
import { setPtr, type Defaulters } from '../../defaulting.ts';

const objects = objectsOf;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

const INVALID_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F'];
const INVALID_SUFFIXES = ['/..', '/.'];
const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];

function backendErrors(errs: FieldError[], backend: unknown, at: string): void {
  const b: Obj = isPlainObject(backend) ? backend : {};
  const hasResource = isPlainObject(b.resource);
  const hasService = isPlainObject(b.service);
  if (hasResource && hasService) return void errs.push(invalidError(at, '""', 'cannot set both resource and service backends'));
  if (hasResource) return;
  if (!hasService) return void errs.push(invalidError(at, '""', 'resource or service backend is required'));
  const name = str(b.service.name);
  if (name === '') errs.push(requiredError(`${at}.service.name`));
  else for (const m of isDNS1035Label(name)) errs.push(invalidError(`${at}.service.name`, goQuote(name), m));
  const port: Obj = isPlainObject(b.service.port) ? b.service.port : {};
  const portName = str(port.name);
  const portNumber = typeof port.number === 'number' ? port.number : 0;
  if (portName && portNumber) errs.push(invalidError(at, '""', 'cannot set both port name & port number'));
  else if (portName) for (const m of portNameErrors(portName)) errs.push(invalidError(`${at}.service.port.name`, goQuote(portName), m));
  else if (portNumber) {
    if (portNumber < 1 || portNumber > 65535) errs.push(invalidError(`${at}.service.port.number`, goValue(portNumber), PORT_RANGE));
  } else errs.push(requiredError(at, 'port name or number is required'));
}

function pathErrors(errs: FieldError[], p: Obj, at: string): void {
  // (An absent pathType is the schema walk's Required value.)
  if (p.pathType === undefined) return;
  const path = str(p.path);
  const pathType = str(p.pathType);
  if (pathType === 'Exact' || pathType === 'Prefix') {
    if (!path.startsWith('/')) errs.push(invalidError(`${at}.path`, goQuote(path), 'must be an absolute path'));
    if (path.length > 0) {
      for (const seq of INVALID_SEQUENCES) if (path.includes(seq)) errs.push(invalidError(`${at}.path`, goQuote(path), `must not contain '${seq}'`));
      for (const suffix of INVALID_SUFFIXES) if (path.endsWith(suffix)) errs.push(invalidError(`${at}.path`, goQuote(path), `cannot end with '${suffix}'`));
    }
  } else if (pathType === 'ImplementationSpecific') {
    if (path.length > 0 && !path.startsWith('/')) errs.push(invalidError(`${at}.path`, goQuote(path), 'must be an absolute path'));
  } else errs.push(notSupportedError(`${at}.pathType`, goQuote(pathType), PATH_TYPES));
  backendErrors(errs, p.backend, `${at}.backend`);
}

function validateIngress(ing: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const spec: Obj = isPlainObject(ing.spec) ? ing.spec : {};
  objects(spec.rules).forEach((rule, i) => {
    const at = `spec.rules[${i}]`;
    const host = str(rule.host);
    if (host !== '') {
      if (isIP(host)) errs.push(invalidError(`${at}.host`, goQuote(host), 'must be a DNS name, not an IP address'));
      if (!host.includes('*')) for (const m of isDNS1123Subdomain(host)) errs.push(invalidError(`${at}.host`, goQuote(host), m));
    }
    if (!isPlainObject(rule.http)) return;
    const paths = objects(rule.http.paths);
    if (paths.length === 0) errs.push(requiredError(`${at}.http.paths`));
    paths.forEach((p, j) => pathErrors(errs, p, `${at}.http.paths[${j}]`));
  });
  return errs;
}

export const ingressStrategy: Strategy = { validate: validateIngress };

/** IngressClasses, by definition. */
export const ingressClassDefaults: Defaulters = {
  'io.k8s.api.networking.v1.IngressClass': (ic) => {
    if (isPlainObject(ic.spec) && isPlainObject(ic.spec.parameters)) setPtr(ic.spec.parameters, 'scope', 'Cluster');
  },
};
