// Services: cluster IPs from the service CIDRs (--service-cluster-ip-range: one family, or both
// for dual-stack), node ports from the node-port range, IP family fields, and the update rules that
// keep allocated values stable (kube-apiserver's service REST: initIPFamilyFields,
// normalizeClusterIPs, patchAllocatedValues, dropTypeDependentFields, the allocators and their
// errors, and the clusterIPs/ipFamilies checks of ValidateService and ValidateServiceUpdate).
//
// Allocation reads every stored Service (O(n), fine at homelab scale). Like kube-apiserver, a
// dynamically chosen value comes from the upper part of each range first and the lower "static"
// band (10.96.0.1-10.96.1.0 and 30000-30085 by default) is left for values users ask for, such
// as a DNS service at 10.96.0.10; within a band the first free value is taken (kube picks at
// random). The first address of the primary range goes to default/kubernetes only.
import { invalid, internalError } from '../../../../errors.ts';
import { isDNS1123Label } from '../../../../validation/names.ts';
import { goStringSlice } from '../../../../go/fmt.ts';
import { goQuote } from '../../../../go/strconv.ts';
import { PORT_RANGE, portNameErrors } from '../pods/validation.ts';
import { duplicateError, notSupportedError, requiredError, type FieldError } from '../../../../validation/field.ts';
import type { Obj, Strategy } from '../../../strategy.ts';
import { isPlainObject } from '../../../../util/json.ts';
import {
  DEFAULT_SERVICE_CLUSTER_IP_RANGE,
  formatIP,
  parseIP,
  parseServiceClusterIPRange,
  parseServiceNodePortRange,
  portRangeText,
  type IPFamily,
  type PortRange,
  type ServiceCIDR,
} from './ranges.ts';

export interface ServiceAllocatorOptions {
  /** The service CIDRs, primary first (kube-apiserver --service-cluster-ip-range); default 10.96.0.0/12. */
  serviceCIDRs?: ServiceCIDR[];
  /** Inclusive node-port range (--service-node-port-range); default 30000-32767. */
  nodePortRange?: PortRange;
  /** How long a dynamically chosen value stays reserved for the request that took it (covers the window before it is stored). */
  reservationMillis?: number;
}

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
const familiesOf = (spec: Obj): string[] => list(spec.ipFamilies);
/** isHeadlessService of validation: exactly one cluster IP, "None". */
const isHeadlessService = (spec: Obj): boolean => clusterIPsOf(spec).length === 1 && clusterIPsOf(spec)[0] === 'None';
const selectorless = (spec: Obj): boolean => !isPlainObject(spec.selector) || Object.keys(spec.selector).length === 0;
const otherFamily = (f: string): IPFamily => (f === 'IPv4' ? 'IPv6' : 'IPv4');
const IP_FAMILIES = ['IPv4', 'IPv6'];
const IP_FAMILY_POLICIES = ['PreferDualStack', 'RequireDualStack', 'SingleStack'];

// ---- field errors, worded as kube-apiserver words them ----

/** A bad value as field.Error prints it: numbers bare, strings quoted, slices as Go's %#v (`[]string{"a"}`). */
function valueText(v: unknown, sliceType = 'string'): string {
  if (v === undefined || v === null) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'string') return goQuote(v);
  if (Array.isArray(v)) return sliceType === 'string' ? goStringSlice(v.map(String)) : `[]${sliceType}{${v.map((x) => goQuote(String(x))).join(', ')}}`;
  return JSON.stringify(v);
}
function fieldInvalid(field: string, value: unknown, detail: string, sliceType?: string): FieldError {
  return { reason: 'FieldValueInvalid', field, message: `Invalid value: ${valueText(value, sliceType)}: ${detail}` };
}
/** ipFamilies are a []core.IPFamily in kube's errors. */
const familiesInvalid = (field: string, value: unknown, detail: string): FieldError => fieldInvalid(field, value, detail, 'core.IPFamily');
function fail(obj: Obj, errors: FieldError[]): never {
  throw invalid('', 'Service', obj.metadata?.name ?? '', errors);
}

/** A range of values (addresses, ports) whose values from dynamicFirst up are handed out first. */
interface Bands {
  first: bigint;
  dynamicFirst: bigint;
  last: bigint;
}

/** The first value of the range not taken: from its upper (dynamic) part first, then its static band. */
function firstFree(r: Bands, taken: (n: bigint) => boolean): bigint | undefined {
  for (let n = r.dynamicFirst; n <= r.last; n++) if (!taken(n)) return n;
  for (let n = r.first; n < r.dynamicFirst; n++) if (!taken(n)) return n;
  return undefined;
}

/** The node-port range's static band: min(max(16, size/32), 128) ports, none for ranges of 16 or fewer. */
function portDynamicFirst(r: PortRange): number {
  const size = r.last - r.first + 1;
  return r.first + (size <= 16 ? 0 : Math.min(Math.max(16, Math.floor(size / 32)), 128));
}

/** The key of an address in the sets of used and reserved ones. */
const ipKey = (family: string, value: bigint): string => `${family}/${value}`;

/**
 * ValidateServiceClusterIPsRelatedFields, as initIPFamilyFields runs it before allocating:
 * clusterIP and clusterIPs in step, known families and policy, valid IPs (then at most two, one
 * per family, each of the family ipFamilies names).
 */
function clusterIPsRelatedErrors(spec: Obj): FieldError[] {
  const errors: FieldError[] = [];
  const clusterIPs = clusterIPsOf(spec);
  const families = familiesOf(spec);
  if (!zero(spec.clusterIP)) {
    if (clusterIPs.length === 0) errors.push(requiredError('spec.clusterIPs'));
    else if (clusterIPs[0] !== spec.clusterIP) errors.push(fieldInvalid('spec.clusterIPs', clusterIPs, 'first value must match `clusterIP`'));
  } else if (clusterIPs.length !== 0) {
    errors.push(fieldInvalid('spec.clusterIPs', clusterIPs, 'must be empty when `clusterIP` is not specified'));
  }
  const seen = new Set<string>();
  families.forEach((f, i) => {
    if (!IP_FAMILIES.includes(f)) errors.push(notSupportedError(`spec.ipFamilies[${i}]`, goQuote(String(f)), IP_FAMILIES));
    if (seen.has(f)) errors.push(duplicateError(`spec.ipFamilies[${i}]`, goQuote(String(f))));
    seen.add(f);
  });
  if (spec.ipFamilyPolicy !== undefined && spec.ipFamilyPolicy !== null && !IP_FAMILY_POLICIES.includes(spec.ipFamilyPolicy)) {
    errors.push(notSupportedError('spec.ipFamilyPolicy', goQuote(String(spec.ipFamilyPolicy)), IP_FAMILY_POLICIES));
  }
  let badIPs = false;
  clusterIPs.forEach((ip, i) => {
    if (i === 0 && ip === 'None') {
      if (clusterIPs.length > 1) {
        badIPs = true;
        errors.push(fieldInvalid('spec.clusterIPs', clusterIPs, "'None' must be the first and only value"));
      }
      return;
    }
    if (!parseIP(ip)) {
      badIPs = true;
      errors.push(fieldInvalid(`spec.clusterIPs[${i}]`, ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'));
    }
  });
  if (clusterIPs.length > 2) errors.push(fieldInvalid('spec.clusterIPs', clusterIPs, 'may only hold up to 2 values'));
  if (badIPs) return errors;
  const familyOf = (ip: string) => parseIP(ip)!.family;
  if (clusterIPs.length > 1 && !(clusterIPs.some((ip) => familyOf(ip) === 'IPv4') && clusterIPs.some((ip) => familyOf(ip) === 'IPv6'))) {
    errors.push(fieldInvalid('spec.clusterIPs', clusterIPs, 'may specify no more than one IP for each IP family'));
  }
  if (!isHeadlessService(spec) && clusterIPs.length > 0 && families.length > 0) {
    clusterIPs.forEach((ip, i) => {
      if (i >= families.length) return;
      if (families[i] === 'IPv4' && familyOf(ip) === 'IPv6') errors.push(fieldInvalid(`spec.clusterIPs[${i}]`, ip, `expected an IPv4 value as indicated by \`ipFamilies[${i}]\``));
      if (families[i] === 'IPv6' && familyOf(ip) !== 'IPv6') errors.push(fieldInvalid(`spec.clusterIPs[${i}]`, ip, `expected an IPv6 value as indicated by \`ipFamilies[${i}]\``));
    });
  }
  return errors;
}

/**
 * isMatchingPreferDualStackClusterIPFields: an update of a PreferDualStack service that keeps its
 * type, cluster IPs and families is left as it is, whatever the cluster's families are now.
 */
function keepsPreferDualStack(spec: Obj, oldSpec: Obj | undefined): boolean {
  if (!oldSpec || spec.ipFamilyPolicy === undefined || spec.ipFamilyPolicy === null) return false;
  if (typeOf(oldSpec) !== typeOf(spec) || !needsClusterIP(spec)) return false;
  if (spec.ipFamilyPolicy !== 'PreferDualStack' || (oldSpec.ipFamilyPolicy != null && oldSpec.ipFamilyPolicy !== 'PreferDualStack')) return false;
  return sameJSON(clusterIPsOf(oldSpec), clusterIPsOf(spec)) && sameJSON(familiesOf(oldSpec), familiesOf(spec));
}

// ---- the strategy ----

interface Usage {
  /** ipKey of each address a stored Service holds. */
  ips: Set<string>;
  ports: Set<number>;
}

export function createServiceStrategy(listAllServices: () => any[], opts: ServiceAllocatorOptions = {}): Strategy {
  const cidrs = opts.serviceCIDRs ?? parseServiceClusterIPRange(DEFAULT_SERVICE_CLUSTER_IP_RANGE);
  const cidrOf = new Map<string, ServiceCIDR>(cidrs.map((r) => [r.family, r]));
  const defaultFamily = cidrs[0].family;
  const portRange = opts.nodePortRange ?? parseServiceNodePortRange();
  const ports = { first: portRange.first, last: portRange.last, dynamicFirst: portDynamicFirst(portRange) };
  const portBands: Bands = { first: BigInt(ports.first), dynamicFirst: BigInt(ports.dynamicFirst), last: BigInt(ports.last) };
  const portRangeString = portRangeText(portRange);
  const reservationMillis = opts.reservationMillis ?? 60_000;
  /** Dynamically chosen values not yet visible in the store ("ip:<ipKey>" / "port:N" → expiry). */
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
        for (const text of [spec.clusterIP, ...clusterIPsOf(spec)]) {
          const ip = parseIP(text);
          if (ip) u.ips.add(ipKey(ip.family, ip.value));
        }
      }
      for (const p of list(spec.ports)) if (isPlainObject(p) && typeof p.nodePort === 'number' && p.nodePort > 0) u.ports.add(p.nodePort);
      if (typeof spec.healthCheckNodePort === 'number' && spec.healthCheckNodePort > 0) u.ports.add(spec.healthCheckNodePort);
    }
    return u;
  }

  // -- IP families (initIPFamilyFields) --

  function initIPFamilyFields(obj: Obj, spec: Obj, oldSpec: Obj | undefined): void {
    if (keepsPreferDualStack(spec, oldSpec)) return;
    if (spec.ipFamilyPolicy === undefined || spec.ipFamilyPolicy === null) {
      if (oldSpec && typeof oldSpec.ipFamilyPolicy === 'string') spec.ipFamilyPolicy = oldSpec.ipFamilyPolicy;
      else if (spec.clusterIP === 'None' && selectorless(spec)) spec.ipFamilyPolicy = 'RequireDualStack';
      else spec.ipFamilyPolicy = 'SingleStack';
    }
    const related = clusterIPsRelatedErrors(spec);
    if (related.length) fail(obj, related);

    const errors: FieldError[] = [];
    if (oldSpec) {
      if (spec.ipFamilyPolicy === 'SingleStack') {
        // Going single-stack while leaving the fields as they were releases the secondary values.
        if (sameJSON(clusterIPsOf(oldSpec), clusterIPsOf(spec)) && clusterIPsOf(spec).length > 1) spec.clusterIPs = clusterIPsOf(spec).slice(0, 1);
        if (sameJSON(familiesOf(oldSpec), familiesOf(spec)) && familiesOf(spec).length > 1) spec.ipFamilies = familiesOf(spec).slice(0, 1);
      } else {
        const reduced = (now: unknown[], before: unknown[]) => now.length > 0 && now.length < before.length;
        if (reduced(clusterIPsOf(spec), clusterIPsOf(oldSpec))) errors.push(fieldInvalid('spec.ipFamilyPolicy', spec.ipFamilyPolicy, "must be 'SingleStack' to release the secondary cluster IP"));
        if (reduced(familiesOf(spec), familiesOf(oldSpec))) errors.push(fieldInvalid('spec.ipFamilyPolicy', spec.ipFamilyPolicy, "must be 'SingleStack' to release the secondary IP family"));
      }
    }
    const clusterIPs = clusterIPsOf(spec);
    const families: string[] = [...familiesOf(spec)];
    if (spec.ipFamilyPolicy === 'SingleStack') {
      if (clusterIPs.length === 2) errors.push(fieldInvalid('spec.ipFamilyPolicy', spec.ipFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"));
      if (families.length === 2) errors.push(fieldInvalid('spec.ipFamilyPolicy', spec.ipFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"));
    }
    // Families not given follow the cluster IPs given.
    for (let i = 0; i < clusterIPs.length; i++) {
      if (clusterIPs[i] === 'None') break;
      if (i < families.length) continue;
      const family = parseIP(clusterIPs[i])!.family;
      if (!cidrOf.has(family)) errors.push(fieldInvalid(`spec.clusterIPs[${i}]`, clusterIPs, `${family} is not configured on this cluster`));
      else families.push(family);
    }
    if (errors.length) fail(obj, errors);

    // Headless and selectorless: any families, even on a single-stack cluster.
    if (spec.clusterIP === 'None' && selectorless(spec)) {
      if (!families.length) families.push(defaultFamily);
      if (families.length < 2 && spec.ipFamilyPolicy !== 'SingleStack') families.push(otherFamily(families[0]));
      spec.ipFamilies = families;
      return;
    }
    if (spec.ipFamilyPolicy === 'RequireDualStack' && cidrs.length < 2) errors.push(fieldInvalid('spec.ipFamilyPolicy', spec.ipFamilyPolicy, 'this cluster is not configured for dual-stack services'));
    families.forEach((f, i) => {
      if (!cidrOf.has(f)) errors.push(fieldInvalid(`spec.ipFamilies[${i}]`, f, 'not configured on this cluster'));
    });
    if (errors.length) fail(obj, errors);
    if (!families.length) families.push(defaultFamily);
    // A service that may be dual-stack gets both families on a dual-stack cluster.
    if (spec.ipFamilyPolicy !== 'SingleStack' && families.length === 1 && cidrs.length === 2) families.push(otherFamily(families[0]));
    spec.ipFamilies = families;
  }

  // -- cluster IPs --

  /**
   * allocIPs: an address of `family` for the service, the one asked for (`requested`) when it
   * is free and in the family's range. Errors as kube's allocators word them.
   */
  function allocIP(obj: Obj, spec: Obj, family: string, requested: string, used: Usage): string {
    const range = cidrOf.get(family)!;
    if (requested !== '') {
      const ip = parseIP(requested)!; // format checked by initIPFamilyFields
      const refuse = (why: string): never => fail(obj, [fieldInvalid('spec.clusterIPs', clusterIPsOf(spec), `failed to allocate IP ${requested}: ${why}`)]);
      // The MetaAllocator finds no range holding the address; the range's allocator refuses its network (and IPv4 broadcast) address.
      if (ip.family !== family || ip.value < range.network || ip.value > range.broadcast) refuse('the provided network does not match the current range');
      if (ip.value < range.first || ip.value > range.last) refuse(`the provided IP (${requested}) is not in the valid range. The range of valid IPs is ${range.cidr}`);
      if (used.ips.has(ipKey(family, ip.value))) refuse('provided IP is already allocated');
      used.ips.add(ipKey(family, ip.value));
      return requested;
    }
    const meta = obj.metadata ?? {};
    const apiServerService = meta.namespace === 'default' && meta.name === 'kubernetes' && range === cidrs[0];
    const taken = (n: bigint) => used.ips.has(ipKey(family, n)) || isReserved(`ip:${ipKey(family, n)}`) || (n === range.first && range === cidrs[0] && !apiServerService);
    const next = apiServerService && !taken(range.first) ? range.first : firstFree(range, taken);
    if (next === undefined) throw internalError('failed to allocate a serviceIP: range is full');
    reserve(`ip:${ipKey(family, next)}`);
    used.ips.add(ipKey(family, next));
    return formatIP(next, family as IPFamily);
  }

  /** allocClusterIPs: an address for each of the service's families (none for a headless one). */
  function allocClusterIPs(obj: Obj, spec: Obj, used: Usage): void {
    if (clusterIPsOf(spec)[0] === 'None') {
      spec.clusterIP = 'None';
      return;
    }
    const families = familiesOf(spec);
    // (kube marks the families without an address with "", and its errors show them so)
    const clusterIPs = [...clusterIPsOf(spec)];
    while (clusterIPs.length < families.length) clusterIPs.push('');
    spec.clusterIPs = clusterIPs;
    families.forEach((family, i) => {
      clusterIPs[i] = allocIP(obj, spec, family, clusterIPs[i], used);
    });
    spec.clusterIP = clusterIPs[0];
  }

  /** updateClusterIPs' upgrade to dual-stack: the secondary family gets an address. */
  function allocSecondaryClusterIP(obj: Obj, spec: Obj, used: Usage): void {
    const clusterIPs = [...clusterIPsOf(spec)];
    if (clusterIPs.length < 2) clusterIPs.push('');
    spec.clusterIPs = clusterIPs;
    clusterIPs[1] = allocIP(obj, spec, familiesOf(spec)[1], clusterIPs[1], used);
  }

  // -- node ports --

  /** Why a requested node port cannot be had, or undefined when it can. */
  function portProblem(n: number, taken: (n: number) => boolean): string | undefined {
    if (n < ports.first || n > ports.last) return `provided port is not in the valid range. The range of valid ports is ${portRangeString}`;
    if (taken(n)) return 'provided port is already allocated';
    return undefined;
  }

  function nextPort(taken: (n: number) => boolean): number {
    const found = firstFree(portBands, (p) => taken(Number(p)) || isReserved(`port:${p}`));
    if (found === undefined) throw internalError('failed to allocate a nodePort: range is full');
    const n = Number(found);
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
        const kept = keepsPreferDualStack(spec, oldSpec);
        initIPFamilyFields(obj, spec, oldSpec);
        // A service that had no cluster IP gets them all; one going dual-stack its secondary one.
        // Other changes are refused by validateUpdate.
        if (!needsClusterIP(oldSpec) || clusterIPsOf(oldSpec).length === 0) allocClusterIPs(obj, spec, used);
        else if (!kept && !isHeadlessService(oldSpec) && familiesOf(oldSpec).length === 1 && familiesOf(spec).length === 2) allocSecondaryClusterIP(obj, spec, used);
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
      return [...validateClusterIPsUpdate(spec, oldSpec), ...validateIPFamiliesUpdate(spec, oldSpec), ...validatePorts(spec)];
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
  if (isHeadlessService(spec) && isHeadlessService(oldSpec)) return [];
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

/** validateUpgradeDowngradeIPFamilies: the primary family stays; the secondary one goes only with SingleStack. */
function validateIPFamiliesUpdate(spec: Obj, oldSpec: Obj): FieldError[] {
  if (!needsClusterIP(spec) || !needsClusterIP(oldSpec)) return [];
  // Headless services may change families; to or from headless is not checked.
  if (isHeadlessService(spec) || isHeadlessService(oldSpec)) return [];
  const now = familiesOf(spec);
  const before = familiesOf(oldSpec);
  const errors: FieldError[] = [];
  if (before.length === now.length) {
    before.forEach((f, i) => {
      if (f !== now[i]) errors.push(familiesInvalid('spec.ipFamilies[0]', now, 'may not change once set'));
    });
  } else if (before.length > now.length) {
    if (clusterIPsOf(spec).length === 0) errors.push(familiesInvalid('spec.ipFamilies[0]', now, 'primary ipFamily can not be unset'));
    if (now.length > 0 && now[0] !== before[0]) errors.push(fieldInvalid('spec.ipFamilies[0]', clusterIPsOf(spec), 'may not change once set'));
    if (now.length === 1 && spec.ipFamilyPolicy !== 'SingleStack') {
      errors.push(fieldInvalid('spec.ipFamilyPolicy', spec.ipFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary ipFamily"));
    }
  } else if (before.length > 0 && now.length > 0 && now[0] !== before[0]) {
    errors.push(fieldInvalid('spec.ipFamilies[0]', clusterIPsOf(spec), 'may not change once set'));
  }
  return errors;
}

/**
 * What kube's repair controllers log about stored Services outside the configured ranges (after
 * the ranges changed): they keep their values, and the user is told to recreate them.
 */
export function outOfRangeServiceReports(services: any[], cidrs: ServiceCIDR[], portRange: PortRange): string[] {
  const lines: string[] = [];
  for (const svc of services) {
    const spec = svc?.spec;
    if (!isPlainObject(spec)) continue;
    const ns = svc.metadata?.namespace ?? '';
    const name = svc.metadata?.name ?? '';
    if (needsClusterIP(spec)) {
      for (const text of clusterIPsOf(spec)) {
        const ip = parseIP(text);
        if (!ip) continue;
        if (!cidrs.some((r) => r.family === ip.family && ip.value >= r.network && ip.value <= r.broadcast)) {
          lines.push(`the ClusterIP [${ip.family}]: ${text} for Service ${ns}/${name} is not within any service CIDR; please recreate`);
        }
      }
    }
    const nodePorts = [...list(spec.ports).map((p) => p?.nodePort), spec.healthCheckNodePort].filter((n): n is number => typeof n === 'number' && n > 0);
    for (const port of new Set(nodePorts)) {
      // (kube prints the name before the namespace here)
      if (port < portRange.first || port > portRange.last) lines.push(`the port ${port} for service ${name}/${ns} is not within the port range ${portRangeText(portRange)}; please recreate`);
    }
  }
  return lines;
}
