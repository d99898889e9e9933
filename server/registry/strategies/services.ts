// Services: cluster IPs from the service CIDR, node ports from the node-port range, IP family
// fields, and the update rules that keep allocated values stable (kube-apiserver's service REST:
// normalizeClusterIPs, patchAllocatedValues, dropTypeDependentFields, the allocators, and the
// clusterIPs immutability checks of ValidateServiceUpdate). Single-stack IPv4.
//
// Allocation reads every stored Service (O(n), fine at homelab scale). Like kube-apiserver, a
// dynamically chosen value comes from the upper part of each range first and the lower "static"
// band (10.96.0.1-10.96.1.0 and 30000-30085 by default) is left for values users ask for, such
// as a DNS service at 10.96.0.10; within a band the first free value is taken (kube picks at
// random). 10.96.0.1 goes to default/kubernetes when it asks for none.
import { isIPv6 } from 'node:net';
import type { FieldError } from '../../schema/types.ts';
import { invalid, internalError } from '../../errors.ts';
import { goQuote, isDNS1123Label } from '../metadata-validation.ts';
import { PORT_RANGE, portNameErrors } from '../pod-validation.ts';
import { duplicateError, requiredError } from '../crd/schema-validator.ts';
import type { Strategy } from '../strategy.ts';
import { isPlainObject } from '../../util/json.ts';

export interface ServiceAllocatorOptions {
  /** IPv4 service CIDR (kube-apiserver --service-cluster-ip-range). */
  serviceCIDR?: string;
  /** Inclusive node-port range (--service-node-port-range). */
  nodePortRange?: [number, number];
  /** How long a dynamically chosen value stays reserved for the request that took it (covers the window before it is stored). */
  reservationMillis?: number;
}

const DEFAULT_CIDR = '10.96.0.0/12';
const DEFAULT_NODE_PORTS: [number, number] = [30000, 32767];

type Obj = Record<string, any>;
const list = (v: unknown): any[] => (Array.isArray(v) ? v : []);
const zero = (v: unknown): boolean => v === undefined || v === null || v === 0 || v === '';
const typeOf = (spec: Obj): string => (typeof spec.type === 'string' && spec.type ? spec.type : 'ClusterIP');
const needsClusterIP = (spec: Obj): boolean => typeOf(spec) !== 'ExternalName';
const needsNodePort = (spec: Obj): boolean => typeOf(spec) === 'NodePort' || typeOf(spec) === 'LoadBalancer';
const needsHealthCheck = (spec: Obj): boolean => typeOf(spec) === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local';
const externallyAccessible = (spec: Obj): boolean =>
  needsNodePort(spec) || (typeOf(spec) === 'ClusterIP' && list(spec.externalIPs).length > 0);
const sameJSON = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
const clusterIPsOf = (spec: Obj): string[] => list(spec.clusterIPs);
const headless = (spec: Obj): boolean => spec.clusterIP === 'None' || clusterIPsOf(spec)[0] === 'None';
const selectorless = (spec: Obj): boolean => !isPlainObject(spec.selector) || Object.keys(spec.selector).length === 0;

// ---- field errors, worded as kube-apiserver words them ----

/** A bad value as field.Error prints it: numbers bare, strings quoted, the rest as JSON. */
function valueText(v: unknown): string {
  if (v === undefined || v === null) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'string') return goQuote(v);
  return JSON.stringify(v);
}
function fieldInvalid(field: string, value: unknown, detail: string): FieldError {
  return { reason: 'FieldValueInvalid', field, message: `Invalid value: ${valueText(value)}: ${detail}` };
}
function fail(obj: Obj, errors: FieldError[]): never {
  throw invalid('', 'Service', obj.metadata?.name ?? '', errors);
}

// ---- IPv4 arithmetic ----

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const IPV4 = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);

function parseIPv4(s: unknown): number | undefined {
  if (typeof s !== 'string' || !IPV4.test(s)) return undefined;
  return s.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
}
function formatIPv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** A range of values with a lower static band; dynamic allocation tries the upper band first. */
interface Band {
  first: number;
  last: number;
  dynamicFirst: number;
}

function ipBand(cidr: string): Band {
  const [addr, bitsText] = cidr.split('/');
  const base = parseIPv4(addr);
  const bits = Number(bitsText);
  if (base === undefined || !Number.isInteger(bits) || bits < 1 || bits > 30) throw new Error(`invalid IPv4 service CIDR ${cidr}`);
  const size = 2 ** (32 - bits);
  const network = base - (base % size);
  // calculateRangeOffset: min(max(16, size/16), 256), none for tiny ranges.
  const offset = size <= 16 ? 0 : Math.min(Math.max(16, Math.floor(size / 16)), 256);
  return { first: network + 1, last: network + size - 2, dynamicFirst: network + 1 + offset };
}

function portBand([lo, hi]: [number, number]): Band {
  const size = hi - lo + 1;
  // calculateRangeOffset: min(max(16, size/32), 128), none for tiny ranges.
  const offset = size <= 16 ? 0 : Math.min(Math.max(16, Math.floor(size / 32)), 128);
  return { first: lo, last: hi, dynamicFirst: lo + offset };
}

/** First free value of the band: upper part first, then the static part. */
function firstFree(band: Band, taken: (n: number) => boolean): number | undefined {
  for (let n = band.dynamicFirst; n <= band.last; n++) if (!taken(n)) return n;
  for (let n = band.first; n < band.dynamicFirst; n++) if (!taken(n)) return n;
  return undefined;
}

// ---- the strategy ----

interface Usage {
  ips: Set<number>;
  ports: Set<number>;
}

export function createServiceStrategy(listAllServices: () => any[], opts: ServiceAllocatorOptions = {}): Strategy {
  const cidr = opts.serviceCIDR ?? DEFAULT_CIDR;
  const ips = ipBand(cidr);
  const portRange = opts.nodePortRange ?? DEFAULT_NODE_PORTS;
  const ports = portBand(portRange);
  const portRangeText = `${portRange[0]}-${portRange[1]}`;
  const reservationMillis = opts.reservationMillis ?? 60_000;
  /** Dynamically chosen values not yet visible in the store ("ip:N" / "port:N" → expiry). */
  const reserved = new Map<string, number>();

  function isReserved(key: string): boolean {
    const until = reserved.get(key);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    reserved.delete(key);
    return false;
  }
  function reserve(key: string): void {
    reserved.set(key, Date.now() + reservationMillis);
  }

  /** IPs and node ports held by stored Services, except the one being updated. */
  function usage(except?: { ns: string; name: string }): Usage {
    const u: Usage = { ips: new Set(), ports: new Set() };
    for (const svc of listAllServices()) {
      const meta = svc?.metadata ?? {};
      if (except && (meta.namespace ?? '') === except.ns && meta.name === except.name) continue;
      const spec = svc?.spec;
      if (!isPlainObject(spec)) continue;
      if (needsClusterIP(spec)) {
        for (const ip of [spec.clusterIP, ...clusterIPsOf(spec)]) {
          const n = parseIPv4(ip);
          if (n !== undefined) u.ips.add(n);
        }
      }
      for (const p of list(spec.ports)) if (isPlainObject(p) && typeof p.nodePort === 'number' && p.nodePort > 0) u.ports.add(p.nodePort);
      if (typeof spec.healthCheckNodePort === 'number' && spec.healthCheckNodePort > 0) u.ports.add(spec.healthCheckNodePort);
    }
    return u;
  }

  // -- IP families (initIPFamilyFields, single-stack IPv4 cluster) --

  function initIPFamilyFields(obj: Obj, spec: Obj, oldSpec: Obj | undefined): void {
    if (spec.ipFamilyPolicy === undefined || spec.ipFamilyPolicy === null) {
      if (oldSpec && typeof oldSpec.ipFamilyPolicy === 'string') spec.ipFamilyPolicy = oldSpec.ipFamilyPolicy;
      else if (headless(spec) && selectorless(spec)) spec.ipFamilyPolicy = 'RequireDualStack';
      else spec.ipFamilyPolicy = 'SingleStack';
    }
    const clusterIPs = clusterIPsOf(spec);
    const errors: FieldError[] = [];
    clusterIPs.forEach((ip, i) => {
      if (i === 0 && ip === 'None') return;
      if (parseIPv4(ip) === undefined && !(typeof ip === 'string' && isIPv6(ip))) {
        errors.push(fieldInvalid(`spec.clusterIPs[${i}]`, ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'));
      }
    });
    if (errors.length) fail(obj, errors);

    const families: string[] = list(spec.ipFamilies).filter((f) => typeof f === 'string');
    if (spec.ipFamilyPolicy === 'SingleStack') {
      if (clusterIPs.length === 2) errors.push(fieldInvalid('spec.ipFamilyPolicy', spec.ipFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"));
      if (families.length === 2) errors.push(fieldInvalid('spec.ipFamilyPolicy', spec.ipFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"));
    }
    for (let i = 0; i < clusterIPs.length; i++) {
      if (clusterIPs[i] === 'None') break;
      if (i < families.length) continue;
      if (isIPv6(clusterIPs[i])) errors.push(fieldInvalid(`spec.clusterIPs[${i}]`, clusterIPs, 'IPv6 is not configured on this cluster'));
      else families.push('IPv4');
    }
    if (errors.length) fail(obj, errors);

    if (headless(spec) && selectorless(spec)) {
      if (!families.length) families.push('IPv4');
      if (families.length < 2 && spec.ipFamilyPolicy !== 'SingleStack') families.push(families[0] === 'IPv4' ? 'IPv6' : 'IPv4');
      spec.ipFamilies = families;
      return;
    }
    if (spec.ipFamilyPolicy === 'RequireDualStack') errors.push(fieldInvalid('spec.ipFamilyPolicy', spec.ipFamilyPolicy, 'this cluster is not configured for dual-stack services'));
    families.forEach((f, i) => {
      if (f !== 'IPv4') errors.push(fieldInvalid(`spec.ipFamilies[${i}]`, f, 'not configured on this cluster'));
    });
    if (errors.length) fail(obj, errors);
    if (!families.length) families.push('IPv4');
    spec.ipFamilies = families;
  }

  // -- cluster IPs --

  function allocClusterIPs(obj: Obj, spec: Obj, used: Usage): void {
    const clusterIPs = clusterIPsOf(spec);
    if (clusterIPs[0] === 'None') {
      spec.clusterIP = 'None';
      return;
    }
    const requested = clusterIPs[0];
    let ip: number;
    if (typeof requested === 'string' && requested !== '') {
      const n = parseIPv4(requested)!; // format checked by initIPFamilyFields
      if (n < ips.first || n > ips.last) {
        fail(obj, [fieldInvalid('spec.clusterIPs', clusterIPs, `failed to allocate IP ${requested}: the provided network does not match the current range`)]);
      }
      if (used.ips.has(n)) fail(obj, [fieldInvalid('spec.clusterIPs', clusterIPs, `failed to allocate IP ${requested}: provided IP is already allocated`)]);
      ip = n;
    } else {
      const meta = obj.metadata ?? {};
      const apiServerService = meta.namespace === 'default' && meta.name === 'kubernetes';
      const taken = (n: number) => used.ips.has(n) || isReserved(`ip:${n}`) || (n === ips.first && !apiServerService);
      const next = apiServerService && !taken(ips.first) ? ips.first : firstFree(ips, taken);
      if (next === undefined) throw internalError('failed to allocate a serviceIP: range is full');
      reserve(`ip:${next}`);
      ip = next;
    }
    used.ips.add(ip);
    spec.clusterIP = formatIPv4(ip);
    spec.clusterIPs = [spec.clusterIP];
  }

  // -- node ports --

  /** Why a requested node port cannot be had, or undefined when it can. */
  function portProblem(n: number, taken: (n: number) => boolean): string | undefined {
    if (n < ports.first || n > ports.last) return `provided port is not in the valid range. The range of valid ports is ${portRangeText}`;
    if (taken(n)) return 'provided port is already allocated';
    return undefined;
  }

  function nextPort(taken: (n: number) => boolean): number {
    const n = firstFree(ports, (p) => taken(p) || isReserved(`port:${p}`));
    if (n === undefined) throw internalError('failed to allocate a nodePort: range is full');
    reserve(`port:${n}`);
    return n;
  }

  const shouldAllocateNodePorts = (spec: Obj): boolean => !(typeOf(spec) === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts === false);

  /** Create: ports sharing a port number (TCP and UDP) share a node port; requested ones are honoured. */
  function initNodePorts(obj: Obj, spec: Obj, used: Usage): void {
    const svcPorts = list(spec.ports);
    const byPort = new Map<unknown, number>();
    const taken = (n: number) => used.ports.has(n);
    svcPorts.forEach((p, i) => {
      if (!isPlainObject(p)) return;
      if (zero(p.nodePort) && !shouldAllocateNodePorts(spec)) return;
      const field = `spec.ports[${i}].nodePort`;
      const allocated = byPort.get(p.port);
      if (allocated === undefined) {
        const requested = svcPorts.find((q) => isPlainObject(q) && q.port === p.port && typeof q.nodePort === 'number' && q.nodePort !== 0)?.nodePort as number | undefined;
        let n: number;
        if (requested !== undefined) {
          const problem = portProblem(requested, taken);
          if (problem) fail(obj, [fieldInvalid(field, requested, problem)]);
          n = requested;
        } else {
          n = nextPort(taken);
        }
        used.ports.add(n);
        p.nodePort = n;
        byPort.set(p.port, n);
      } else if (p.nodePort !== allocated) {
        if (zero(p.nodePort)) {
          p.nodePort = allocated;
        } else {
          const problem = portProblem(p.nodePort, taken);
          if (problem) fail(obj, [fieldInvalid(field, p.nodePort, problem)]);
          used.ports.add(p.nodePort);
        }
      }
    });
  }

  /** Update: ports the service already holds stay; new requested ones must be free; missing ones are allocated. */
  function updateNodePorts(obj: Obj, spec: Obj, oldSpec: Obj, used: Usage): void {
    const held = new Set<number>();
    for (const p of list(oldSpec.ports)) if (isPlainObject(p) && typeof p.nodePort === 'number' && p.nodePort > 0) held.add(p.nodePort);
    const taken = (n: number) => used.ports.has(n) || held.has(n);
    const mine = new Set<number>();
    list(spec.ports).forEach((p, i) => {
      if (!isPlainObject(p)) return;
      if (zero(p.nodePort)) {
        if (!shouldAllocateNodePorts(spec)) return;
        p.nodePort = nextPort(taken);
      } else if (!held.has(p.nodePort) && !mine.has(p.nodePort)) {
        const problem = portProblem(p.nodePort, (n) => used.ports.has(n));
        if (problem) fail(obj, [fieldInvalid(`spec.ports[${i}].nodePort`, p.nodePort, problem)]);
      }
      mine.add(p.nodePort);
      used.ports.add(p.nodePort);
    });
  }

  function allocHealthCheckNodePort(spec: Obj, used: Usage, held: Set<number> = new Set()): void {
    const requested = spec.healthCheckNodePort;
    const taken = (n: number) => used.ports.has(n) || held.has(n);
    if (typeof requested === 'number' && requested !== 0) {
      const problem = portProblem(requested, taken);
      if (problem) throw internalError(`failed to allocate requested HealthCheck NodePort ${requested}: ${problem}`);
      used.ports.add(requested);
      return;
    }
    spec.healthCheckNodePort = nextPort(taken);
    used.ports.add(spec.healthCheckNodePort);
  }

  // -- update helpers --

  /** A resubmitted manifest without the allocated values keeps them (patchAllocatedValues). */
  function patchAllocatedValues(spec: Obj, oldSpec: Obj): void {
    if (needsClusterIP(oldSpec) && needsClusterIP(spec)) {
      if (zero(spec.clusterIP) && typeof oldSpec.clusterIP === 'string') spec.clusterIP = oldSpec.clusterIP;
      if (clusterIPsOf(spec).length === 0 && clusterIPsOf(oldSpec).length > 0) spec.clusterIPs = [...clusterIPsOf(oldSpec)];
    }
    if (needsNodePort(oldSpec) && needsNodePort(spec)) {
      const nodePorts = (s: Obj) => new Set(list(s.ports).filter((p) => isPlainObject(p) && !zero(p.nodePort)).map((p) => p.nodePort));
      const newPorts = nodePorts(spec);
      const inBoth = new Set([...nodePorts(oldSpec)].filter((n) => newPorts.has(n)));
      const byName = new Map<string, number>();
      for (const p of list(oldSpec.ports)) if (isPlainObject(p)) byName.set(p.name ?? '', p.nodePort);
      for (const p of list(spec.ports)) {
        if (!isPlainObject(p) || !zero(p.nodePort)) continue;
        const old = byName.get(p.name ?? '');
        if (typeof old === 'number' && old > 0 && !inBoth.has(old)) p.nodePort = old;
      }
    }
    if (needsHealthCheck(oldSpec) && needsHealthCheck(spec) && zero(spec.healthCheckNodePort)) {
      spec.healthCheckNodePort = oldSpec.healthCheckNodePort;
    }
  }

  /** Keeps clusterIP and clusterIPs in step when a client sets only one of them (normalizeClusterIPs). */
  function normalizeClusterIPs(spec: Obj, oldSpec: Obj | undefined): void {
    if (!oldSpec) {
      if (typeof spec.clusterIP === 'string' && spec.clusterIP !== '' && clusterIPsOf(spec).length === 0) spec.clusterIPs = [spec.clusterIP];
      return;
    }
    if (clusterIPsOf(oldSpec).length > 0 && clusterIPsOf(spec).length === 0 && (oldSpec.clusterIP ?? '') === (spec.clusterIP ?? '')) {
      spec.clusterIPs = [...clusterIPsOf(oldSpec)];
    }
    if ((oldSpec.clusterIP ?? '') !== (spec.clusterIP ?? '')) {
      const same = sameJSON(clusterIPsOf(oldSpec), clusterIPsOf(spec));
      if (!zero(oldSpec.clusterIP) && zero(spec.clusterIP)) {
        if (same) delete spec.clusterIPs;
      } else if (same) {
        spec.clusterIPs = [spec.clusterIP];
      }
    }
  }

  /** Wipes values that no longer apply after a type change, when the client left them as they were. */
  function dropTypeDependentFields(obj: Obj, spec: Obj, oldSpec: Obj): void {
    if (needsClusterIP(oldSpec) && !needsClusterIP(spec)) {
      if (sameJSON(clusterIPsOf(oldSpec), clusterIPsOf(spec))) {
        delete spec.clusterIP;
        delete spec.clusterIPs;
      }
      if (sameJSON(oldSpec.ipFamilies, spec.ipFamilies)) delete spec.ipFamilies;
      if (sameJSON(oldSpec.ipFamilyPolicy, spec.ipFamilyPolicy)) delete spec.ipFamilyPolicy;
    }
    if (needsNodePort(oldSpec) && !needsNodePort(spec)) {
      const oldPorts = new Set(list(oldSpec.ports).map((p) => p?.nodePort));
      const newPorts = list(spec.ports).filter((p) => isPlainObject(p) && !zero(p.nodePort));
      if (newPorts.every((p) => oldPorts.has(p.nodePort))) for (const p of newPorts) delete p.nodePort;
    }
    if (needsHealthCheck(oldSpec) && !needsHealthCheck(spec) && oldSpec.healthCheckNodePort === spec.healthCheckNodePort) {
      delete spec.healthCheckNodePort;
    }
    if (typeOf(oldSpec) === 'LoadBalancer' && typeOf(spec) !== 'LoadBalancer') {
      if (typeof spec.allocateLoadBalancerNodePorts === 'boolean' && spec.allocateLoadBalancerNodePorts === oldSpec.allocateLoadBalancerNodePorts) {
        delete spec.allocateLoadBalancerNodePorts;
      }
    }
    if (externallyAccessible(oldSpec) && !externallyAccessible(spec) && spec.externalTrafficPolicy === oldSpec.externalTrafficPolicy) {
      delete spec.externalTrafficPolicy;
    }
    if (typeOf(spec) !== 'LoadBalancer') obj.status = { ...(isPlainObject(obj.status) ? obj.status : {}), loadBalancer: {} };
  }

  return {
    prepareForCreate(obj) {
      const spec = obj.spec;
      if (!isPlainObject(spec)) return;
      obj.status = { loadBalancer: {} };
      normalizeClusterIPs(spec, undefined);
      const used = usage();
      if (needsClusterIP(spec)) {
        initIPFamilyFields(obj, spec, undefined);
        allocClusterIPs(obj, spec, used);
      }
      if (needsNodePort(spec)) initNodePorts(obj, spec, used);
      if (needsHealthCheck(spec)) allocHealthCheckNodePort(spec, used);
    },

    prepareForUpdate(obj, old) {
      const spec = obj.spec;
      const oldSpec = old.spec;
      if (!isPlainObject(spec) || !isPlainObject(oldSpec)) return;
      patchAllocatedValues(spec, oldSpec);
      normalizeClusterIPs(spec, oldSpec);
      dropTypeDependentFields(obj, spec, oldSpec);
      const used = usage({ ns: old.metadata?.namespace ?? '', name: old.metadata?.name ?? '' });
      if (needsClusterIP(spec)) {
        initIPFamilyFields(obj, spec, oldSpec);
        // Only a service that had no cluster IP gets one now; changes are refused by validateUpdate.
        if (!needsClusterIP(oldSpec) || clusterIPsOf(oldSpec).length === 0) allocClusterIPs(obj, spec, used);
      }
      if (needsNodePort(spec)) updateNodePorts(obj, spec, oldSpec, used);
      if (needsHealthCheck(spec)) {
        if (!needsHealthCheck(oldSpec)) {
          const held = new Set<number>(list(oldSpec.ports).map((p) => p?.nodePort).filter((n) => typeof n === 'number'));
          allocHealthCheckNodePort(spec, used, held);
        } else if (spec.healthCheckNodePort !== oldSpec.healthCheckNodePort) {
          fail(obj, [fieldInvalid('spec.healthCheckNodePort', spec.healthCheckNodePort, 'cannot change healthCheckNodePort on loadBalancer service with externalTraffic=Local during update')]);
        }
      }
    },

    validate: (obj) => validatePorts(isPlainObject(obj.spec) ? obj.spec : {}),

    validateUpdate(obj, old) {
      const spec = isPlainObject(obj.spec) ? obj.spec : {};
      const oldSpec = isPlainObject(old.spec) ? old.spec : {};
      return [...validatePorts(spec), ...validateClusterIPsUpdate(spec, oldSpec), ...validateIPFamiliesUpdate(spec, oldSpec)];
    },
  };
}

/** ValidateService's port checks: ports required unless headless or ExternalName; validateServicePort for each. */
function validatePorts(spec: Obj): FieldError[] {
  const errors: FieldError[] = [];
  const ports = list(spec.ports).map((p) => (isPlainObject(p) ? p : {}));
  const headless = typeOf(spec) === 'ClusterIP' && clusterIPsOf(spec)[0] === 'None';
  if (ports.length === 0 && !headless && typeOf(spec) !== 'ExternalName') errors.push(requiredError('spec.ports'));
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const at = `spec.ports[${i}]`;
    const name = typeof p.name === 'string' ? p.name : '';
    if (ports.length > 1 && name === '') errors.push(requiredError(`${at}.name`));
    else if (name !== '') {
      for (const m of isDNS1123Label(name)) errors.push(fieldInvalid(`${at}.name`, name, m));
      if (names.has(name)) errors.push(duplicateError(`${at}.name`, goQuote(name)));
      else names.add(name);
    }
    if (typeof p.port === 'number' && (p.port < 1 || p.port > 65535)) errors.push(fieldInvalid(`${at}.port`, p.port, PORT_RANGE));
    const target = p.targetPort;
    if (typeof target === 'number' && (target < 1 || target > 65535)) errors.push(fieldInvalid(`${at}.targetPort`, target, PORT_RANGE));
    else if (typeof target === 'string') for (const m of portNameErrors(target)) errors.push(fieldInvalid(`${at}.targetPort`, target, m));
  });
  return errors;
}

/** validateUpgradeDowngradeClusterIPs: the primary cluster IP may not change once set. */
function validateClusterIPsUpdate(spec: Obj, oldSpec: Obj): FieldError[] {
  if (!needsClusterIP(spec) || !needsClusterIP(oldSpec)) return [];
  const isHeadless = (s: Obj) => clusterIPsOf(s).length === 1 && clusterIPsOf(s)[0] === 'None';
  if (isHeadless(spec) && isHeadless(oldSpec)) return [];
  const now = clusterIPsOf(spec);
  const before = clusterIPsOf(oldSpec);
  const errors: FieldError[] = [];
  if (before.length === now.length) {
    before.forEach((ip, i) => {
      if (ip !== now[i]) errors.push(fieldInvalid(`spec.clusterIPs[${i}]`, now, 'may not change once set'));
    });
  } else if (before.length > now.length) {
    if (now.length === 0) errors.push(fieldInvalid('spec.clusterIPs[0]', now, 'primary clusterIP can not be unset'));
    if (now.length > 0 && now[0] !== before[0]) errors.push(fieldInvalid('spec.clusterIPs[0]', now, 'may not change once set'));
    if (now.length === 1 && spec.ipFamilyPolicy !== 'SingleStack') {
      errors.push(fieldInvalid('spec.ipFamilyPolicy', spec.ipFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary clusterIP"));
    }
  } else if (before.length > 0 && now[0] !== before[0]) {
    errors.push(fieldInvalid('spec.clusterIPs[0]', now, 'may not change once set'));
  }
  return errors;
}

/** validateUpgradeDowngradeIPFamilies, for the families a single-stack cluster can have. */
function validateIPFamiliesUpdate(spec: Obj, oldSpec: Obj): FieldError[] {
  if (!needsClusterIP(spec) || !needsClusterIP(oldSpec)) return [];
  const isHeadless = (s: Obj) => clusterIPsOf(s).length === 1 && clusterIPsOf(s)[0] === 'None';
  if (isHeadless(spec) || isHeadless(oldSpec)) return [];
  const now = list(spec.ipFamilies);
  const before = list(oldSpec.ipFamilies);
  if (before.length === now.length && before.some((f, i) => f !== now[i])) {
    return [fieldInvalid('spec.ipFamilies[0]', now, 'may not change once set')];
  }
  return [];
}
