// The printers of networking.k8s.io (ingresses, ingress classes, network policies, service CIDRs,
// IP addresses) and discovery.k8s.io (endpoint slices).
import { age, nameOf, str, arr, formatLabelSelector, listWithMore, col, nameCol, ageCol, printer } from './columns.ts';

// ---------------------------------------------------------------------------
// networking
// ---------------------------------------------------------------------------

function ingressHosts(rules: unknown): string {
  const list = arr(rules);
  const max = 3;
  const hosts: string[] = [];
  let more = false;
  for (const r of list) {
    if (hosts.length === max) more = true;
    if (!more && str(r?.host) !== '') hosts.push(str(r.host));
  }
  if (hosts.length === 0) return '*';
  return more ? `${hosts.join(',')} + ${list.length - max} more...` : hosts.join(',');
}

function lbAddresses(ingress: unknown): string {
  const set = new Set<string>();
  for (const i of arr(ingress)) {
    if (str(i?.ip) !== '') set.add(str(i.ip));
    else if (str(i?.hostname) !== '') set.add(str(i.hostname));
  }
  return [...set].sort().join(',');
}

export const ingressPrinter = printer(
  [
    nameCol(),
    col('Class', 'string', 'The name of the IngressClass resource that should be used for additional configuration'),
    col('Hosts', 'string', 'Hosts that incoming requests are matched against before the ingress rule'),
    col('Address', 'string', 'Address is a list containing ingress points for the load-balancer'),
    col('Ports', 'string', 'Ports of TLS configurations that open'),
    ageCol(),
  ],
  (o, now) => [
    nameOf(o),
    typeof o?.spec?.ingressClassName === 'string' ? o.spec.ingressClassName : '<none>',
    ingressHosts(o?.spec?.rules),
    lbAddresses(o?.status?.loadBalancer?.ingress),
    arr(o?.spec?.tls).length > 0 ? '80, 443' : '80',
    age(o, now),
  ],
);

export const ingressClassPrinter = printer(
  [
    nameCol(),
    col('Controller', 'string', 'Controller that is responsible for handling this class'),
    col('Parameters', 'string', 'A reference to a resource with additional parameters'),
    ageCol(),
  ],
  (o, now) => {
    const p = o?.spec?.parameters;
    let params = '<none>';
    if (p && typeof p === 'object') {
      params = str(p.kind);
      if (typeof p.apiGroup === 'string') params += `.${p.apiGroup}`;
      params += `/${str(p.name)}`;
    }
    return [nameOf(o), str(o?.spec?.controller), params, age(o, now)];
  },
);

export const networkPolicyPrinter = printer(
  [nameCol(), col('Pod-Selector', 'string', 'Pods to which this policy applies.'), ageCol()],
  (o, now) => [nameOf(o), formatLabelSelector(o?.spec?.podSelector ?? {}), age(o, now)],
);

export const serviceCIDRPrinter = printer(
  [nameCol(), col('CIDRs', 'string', 'CIDR ranges of the ServiceCIDR.'), ageCol()],
  (o, now) => [nameOf(o), arr(o?.spec?.cidrs).map(str).join(','), age(o, now)],
);

export const ipAddressPrinter = printer(
  [nameCol(), col('ParentRef', 'string', 'The object this IP address is allocated to.')],
  (o) => {
    const p = o?.spec?.parentRef;
    let parent = '<none>';
    if (p && typeof p === 'object') {
      const gr = str(p.group) === '' ? str(p.resource) : `${str(p.resource)}.${str(p.group)}`;
      parent = gr.toLowerCase();
      if (str(p.namespace) !== '') parent += `/${str(p.namespace)}`;
      parent += `/${str(p.name)}`;
    }
    return [nameOf(o), parent];
  },
);

// ---------------------------------------------------------------------------
// discovery
// ---------------------------------------------------------------------------

export const endpointSlicePrinter = printer(
  [
    nameCol(),
    col('AddressType', 'string', 'Type of addresses carried by this slice.'),
    col('Ports', 'string', 'Ports exposed by the endpoints.'),
    col('Endpoints', 'string', 'Addresses of the endpoints.'),
    ageCol(),
  ],
  (o, now) => {
    const ports = arr(o?.ports).map((p) =>
      typeof p?.port === 'number' ? String(p.port) : typeof p?.name === 'string' ? p.name : '*',
    );
    const addresses: string[] = [];
    for (const e of arr(o?.endpoints)) for (const a of arr(e?.addresses)) addresses.push(str(a));
    return [
      nameOf(o),
      str(o?.addressType),
      listWithMore(ports, ports.length, 3, '<unset>'),
      listWithMore(addresses, addresses.length, 3, '<unset>'),
      age(o, now),
    ];
  },
);
