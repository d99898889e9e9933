// The ranges Services take their values from: kube-apiserver's --service-cluster-ip-range (one
// CIDR, or an IPv4 and an IPv6 one for dual-stack) and --service-node-port-range, read and checked
// as kube-apiserver reads them at start (getServiceIPAndRanges, ServiceIPRange,
// validateClusterIPFlags, utilnet.PortRange), with kube's messages; and the address arithmetic
// the allocators need (bigints, so IPv6 ranges work like IPv4 ones).
import { formatIPv6, parseCIDRSloppy, parseIPv4Sloppy, parseIPv6Sloppy } from '../../../../util/net.ts';

export type IPFamily = 'IPv4' | 'IPv6';

/** A service CIDR and the addresses it hands out: network+1 up to the broadcast address (IPv4: the one before it). */
export interface ServiceCIDR {
  /** As kube prints it: the network address and prefix length (10.96.0.0/12). */
  cidr: string;
  family: IPFamily;
  network: bigint;
  /** The last address of the prefix (its broadcast address). */
  broadcast: bigint;
  first: bigint;
  last: bigint;
  /**
   * KEP-3070: dynamically chosen addresses come from the upper part of the range first, from
   * here up; the addresses below are left for those users ask for (a DNS service's 10.96.0.10).
   */
  dynamicFirst: bigint;
}

/** An inclusive node-port range (--service-node-port-range). */
export interface PortRange {
  first: number;
  last: number;
}

/** kubeadm's service range, which hearth has always used (kube-apiserver's own default is 10.0.0.0/24: README). */
export const DEFAULT_SERVICE_CLUSTER_IP_RANGE = '10.96.0.0/12';
/** kube-apiserver's DefaultServiceNodePortRange. */
export const DEFAULT_SERVICE_NODE_PORT_RANGE = '30000-32767';

/** An address's family and value; undefined when `s` is no IP address (Go's sloppy parse: IPv4 octets may have leading zeros). */
export function parseIP(s: unknown): { family: IPFamily; value: bigint } | undefined {
  if (typeof s !== 'string') return undefined;
  const v6 = s.includes(':');
  const bytes = v6 ? parseIPv6Sloppy(s) : parseIPv4Sloppy(s);
  return bytes ? { family: v6 ? 'IPv6' : 'IPv4', value: bytesToBigInt(bytes) } : undefined;
}

function bytesToBigInt(bytes: number[]): bigint {
  return bytes.reduce((acc, b) => (acc << 8n) | BigInt(b), 0n);
}

/** An address as Go's net.IP.String() writes it: dotted IPv4; IPv6 in lowercase hex with the longest run of zero groups as "::". */
export function formatIP(value: bigint, family: IPFamily): string {
  if (family === 'IPv4') return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 255n)).join('.');
  return formatIPv6(Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(112 - 16 * i)) & 0xffffn)));
}

/** calculateRangeOffset: min(max(16, size/16), 256) addresses form the static band; none in ranges of 16 or fewer. */
function rangeOffset(size: bigint): bigint {
  if (size <= 16n) return 0n;
  const offset = size / 16n;
  return offset < 16n ? 16n : offset > 256n ? 256n : offset;
}

function serviceCIDR(network: bigint, prefix: number, family: IPFamily): ServiceCIDR {
  const width = family === 'IPv4' ? 32 : 128;
  const size = 1n << BigInt(width - prefix);
  const broadcast = network + size - 1n;
  const first = network + 1n;
  const last = family === 'IPv4' ? broadcast - 1n : broadcast;
  return { cidr: `${formatIP(network, family)}/${prefix}`, family, network, broadcast, first, last, dynamicFirst: first + rangeOffset(size) };
}

/** One CIDR as netutils.ParseCIDRSloppy reads it (the network of the address given). */
function parseServiceCIDR(text: string): ServiceCIDR | undefined {
  const parsed = parseCIDRSloppy(text);
  if (!parsed) return undefined;
  return serviceCIDR(bytesToBigInt(parsed.bytes), parsed.bits, parsed.bytes.length === 16 ? 'IPv6' : 'IPv4');
}

/** netutils.RangeSize: the number of addresses, 0 for the ranges it declines to count (an IPv4 /1 or /0). */
function rangeSize(r: ServiceCIDR): bigint {
  const hostBits = (r.family === 'IPv4' ? 32 : 128) - prefixOf(r);
  if ((r.family === 'IPv4' && hostBits >= 31) || (r.family === 'IPv6' && hostBits >= 127)) return 0n;
  return 1n << BigInt(hostBits);
}

const prefixOf = (r: ServiceCIDR): number => Number(r.cidr.slice(r.cidr.indexOf('/') + 1));

/**
 * --service-cluster-ip-range: the primary CIDR (which the default/kubernetes Service's address
 * comes from), and optionally a second one of the other family. Throws kube-apiserver's errors.
 */
export function parseServiceClusterIPRange(text: string = DEFAULT_SERVICE_CLUSTER_IP_RANGE): ServiceCIDR[] {
  const entries = text === '' ? [DEFAULT_SERVICE_CLUSTER_IP_RANGE] : text.split(',');
  const primary = parseServiceCIDR(entries[0]);
  if (!primary) throw new Error('service-cluster-ip-range[0] is not a valid cidr');
  // ServiceIPRange (min(size, 2^16), checked against 8).
  if (rangeSize(primary) < 8n) throw new Error('error determining service IP ranges for primary service cidr: the service cluster IP range must be at least 8 IP addresses');
  const ranges = [primary];
  if (entries.length > 1) {
    const secondary = parseServiceCIDR(entries[1]);
    if (!secondary) throw new Error('service-cluster-ip-range[1] is not an ip net');
    ranges.push(secondary);
  }
  // validateClusterIPFlags.
  const problems: string[] = [];
  if (entries.length > 2) problems.push('--service-cluster-ip-range must not contain more than two entries');
  if (ranges.length === 2 && ranges[0].family === ranges[1].family) problems.push('--service-cluster-ip-range[0] and --service-cluster-ip-range[1] must be of different IP family');
  if (problems.length) throw new Error(problems.length === 1 ? problems[0] : `[${problems.join(', ')}]`);
  // NewIPAllocator refuses these (kube logs it and serves no addresses of that family; hearth refuses to start).
  for (const r of ranges) {
    if (r.family === 'IPv6' && prefixOf(r) < 64) throw new Error(`shortest allowed prefix length for service CIDR is 64, got ${prefixOf(r)}`);
  }
  return ranges;
}

/** strconv.Atoi on a port, with Go's error. */
function atoi(s: string): number {
  if (!/^[+-]?[0-9]+$/.test(s)) throw new Error(`strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`);
  const n = Number(s);
  if (!Number.isSafeInteger(n)) throw new Error(`strconv.Atoi: parsing ${JSON.stringify(s)}: value out of range`);
  return n;
}

/**
 * --service-node-port-range as utilnet.PortRange.Set reads it: "min-max", "port" or "min+offset";
 * empty is the default. Throws PortRange's errors.
 */
export function parseServiceNodePortRange(text: string = DEFAULT_SERVICE_NODE_PORT_RANGE): PortRange {
  const value = text.trim();
  if (value === '') return parseServiceNodePortRange(DEFAULT_SERVICE_NODE_PORT_RANGE);
  const hyphen = value.indexOf('-');
  const plus = value.indexOf('+');
  let low: number;
  let high: number;
  if (hyphen === -1 && plus === -1) low = high = atoi(value);
  else if (plus === -1) [low, high] = [atoi(value.slice(0, hyphen)), atoi(value.slice(hyphen + 1))];
  else if (hyphen === -1) {
    low = atoi(value.slice(0, plus));
    high = low + atoi(value.slice(plus + 1));
  } else throw new Error(`unable to parse port range: ${value}`);
  if (low > 65535 || high > 65535) throw new Error(`the port range cannot be greater than 65535: ${value}`);
  if (high < low) throw new Error(`end port cannot be less than start port: ${value}`);
  return { first: low, last: high };
}

/** PortRange.String(): "30000-32767". */
export const portRangeText = (r: PortRange): string => `${r.first}-${r.last}`;
