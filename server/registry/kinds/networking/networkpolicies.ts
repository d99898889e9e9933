// NetworkPolicies as kube validates their spec (ValidateNetworkPolicySpec): the pod selector; each
// rule's ports (protocol, a port number or name, an end port only after a numeric port) and peers
// (exactly one kind of peer, or pod and namespace selectors together; an ipBlock's CIDR and its
// exceptions strictly inside it); at most the two policy types. Also their defaults (policy types,
// port protocol).
import type { Obj, Strategy } from '../../strategy.ts';
import { isPlainObject, objectsOf } from '../../../util/json.ts';
import { validateLabelSelector } from '../../../validation/object-meta.ts';
import { goQuote } from '../../../go/strconv.ts';
import { forbiddenError, invalidError, notSupportedError, requiredError, type FieldError } from '../../../validation/field.ts';
import { PORT_RANGE, portNameErrors } from '../core/pods/validation.ts';
import { cidrContains, parseCIDRSloppy } from '../../../util/net.ts';
import { list, setPtr, struct, type Defaulters } from '../../defaulting.ts';

const objects = objectsOf;
const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];
const POLICY_TYPES = ['Ingress', 'Egress'];
const CIDR_MESSAGE = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';

function portErrors(errs: FieldError[], p: Obj, path: string): void {
  if (p.protocol != null && !PROTOCOLS.includes(String(p.protocol))) errs.push(notSupportedError(`${path}.protocol`, goQuote(String(p.protocol)), PROTOCOLS));
  const port = p.port;
  const end = p.endPort;
  const hasEnd = typeof end === 'number';
  if (typeof port === 'number') {
    if (port < 1 || port > 65535) errs.push(invalidError(`${path}.port`, String(port), PORT_RANGE));
    if (hasEnd) {
      if (end < port) errs.push(invalidError(`${path}.endPort`, String(port), 'must be greater than or equal to `port`'));
      if (end < 1 || end > 65535) errs.push(invalidError(`${path}.endPort`, String(end), PORT_RANGE));
    }
  } else if (typeof port === 'string') {
    if (hasEnd) errs.push(invalidError(`${path}.endPort`, String(end), 'may not be specified when `port` is non-numeric'));
    for (const m of portNameErrors(port)) errs.push(invalidError(`${path}.port`, goQuote(port), m));
  } else if (hasEnd) {
    errs.push(invalidError(`${path}.endPort`, String(end), 'may not be specified when `port` is not specified'));
  }
}

/** ValidateIPBlock: a CIDR, and exceptions strictly inside it. */
function ipBlockErrors(errs: FieldError[], b: Obj, path: string): void {
  const cidr = typeof b.cidr === 'string' ? b.cidr : '';
  if (cidr === '') return void errs.push(requiredError(`${path}.cidr`));
  const net = parseCIDRSloppy(cidr);
  if (!net) return void errs.push(invalidError(`${path}.cidr`, goQuote(cidr), CIDR_MESSAGE));
  (Array.isArray(b.except) ? b.except : []).forEach((x: unknown, i: number) => {
    const text = String(x);
    const except = parseCIDRSloppy(text);
    if (!except) return void errs.push(invalidError(`${path}.except[${i}]`, goQuote(text), CIDR_MESSAGE));
    if (!cidrContains(net, except.bytes) || net.bits >= except.bits) errs.push(invalidError(`${path}.except[${i}]`, goQuote(text), 'must be a strict subset of `cidr`'));
  });
}

/** ValidateNetworkPolicyPeer. */
function peerErrors(errs: FieldError[], peer: Obj, path: string): void {
  let peers = 0;
  if (isPlainObject(peer.podSelector)) {
    peers++;
    errs.push(...validateLabelSelector(peer.podSelector, `${path}.podSelector`));
  }
  if (isPlainObject(peer.namespaceSelector)) {
    peers++;
    errs.push(...validateLabelSelector(peer.namespaceSelector, `${path}.namespaceSelector`));
  }
  if (isPlainObject(peer.ipBlock)) {
    peers++;
    ipBlockErrors(errs, peer.ipBlock, `${path}.ipBlock`);
  }
  if (peers === 0) errs.push(requiredError(path, 'must specify a peer'));
  else if (peers > 1 && isPlainObject(peer.ipBlock)) errs.push(forbiddenError(path, 'may not specify both ipBlock and another peer'));
}

function validateNetworkPolicy(np: Obj): FieldError[] {
  const spec: Obj = isPlainObject(np.spec) ? np.spec : {};
  const errs = validateLabelSelector(spec.podSelector, 'spec.podSelector');
  for (const [rules, peersKey] of [['ingress', 'from'], ['egress', 'to']]) {
    objects(spec[rules]).forEach((rule, i) => {
      const at = `spec.${rules}[${i}]`;
      objects(rule.ports).forEach((p, j) => portErrors(errs, p, `${at}.ports[${j}]`));
      objects(rule[peersKey]).forEach((peer, j) => peerErrors(errs, peer, `${at}.${peersKey}[${j}]`));
    });
  }
  const types: unknown[] = Array.isArray(spec.policyTypes) ? spec.policyTypes : [];
  if (types.length > POLICY_TYPES.length) {
    // (the slice as Go's %#v prints it)
    errs.push(invalidError('spec.policyTypes', `[]networking.PolicyType{${types.map((t) => goQuote(String(t))).join(', ')}}`, 'may not specify more than two policyTypes'));
    return errs;
  }
  types.forEach((t, i) => {
    if (!POLICY_TYPES.includes(String(t))) errs.push(notSupportedError(`spec.policyTypes[${i}]`, goQuote(String(t)), POLICY_TYPES));
  });
  return errs;
}

export const networkPolicyStrategy: Strategy = { validate: validateNetworkPolicy };

/** NetworkPolicies, by definition. */
export const networkPolicyDefaults: Defaulters = {
  'io.k8s.api.networking.v1.NetworkPolicy': (np) => {
    const spec = struct(np, 'spec');
    if (!spec || list(spec.policyTypes).length) return;
    spec.policyTypes = list(spec.egress).length ? ['Ingress', 'Egress'] : ['Ingress'];
  },
  'io.k8s.api.networking.v1.NetworkPolicyPort': (p) => setPtr(p, 'protocol', 'TCP'),
};
