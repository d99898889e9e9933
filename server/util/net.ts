// IP address and CIDR parsing shared by validation (NetworkPolicy ipBlocks) and CEL's ip/cidr library.
import { isIPv6 } from 'node:net';

/** The eight 16-bit groups of an IPv6 address (an embedded IPv4 tail included); undefined if it is not one. */
export function ipv6Groups(s: string): number[] | undefined {
  if (!isIPv6(s)) return undefined;
  let head = s;
  const tail: number[] = [];
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const parts = v4[1].split('.').map(Number);
    tail.push((parts[0] << 8) | parts[1], (parts[2] << 8) | parts[3]);
    head = s.slice(0, s.length - v4[1].length);
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const [l, r] = head.split('::');
  const parse16 = (x: string) => (x ? x.split(':').filter((p) => p !== '').map((p) => parseInt(p, 16)) : []);
  const left = parse16(l);
  const right = r === undefined ? [] : parse16(r);
  const fill = 8 - tail.length - left.length - right.length;
  if (r === undefined && fill !== 0) return undefined;
  return [...left, ...Array(Math.max(0, fill)).fill(0), ...right, ...tail];
}

/**
 * Go's net.ParseCIDR as kube's netutils.ParseCIDRSloppy keeps it (IPv4 octets may carry leading
 * zeros, read as decimal): the network (address bytes with the host bits cleared) and the prefix
 * length; undefined when it does not parse.
 */
export function parseCIDRSloppy(s: string): { bytes: number[]; bits: number } | undefined {
  const slash = s.indexOf('/');
  if (slash < 0) return undefined;
  const addr = s.slice(0, slash);
  const prefix = s.slice(slash + 1);
  if (!/^[0-9]+$/.test(prefix)) return undefined;
  let bytes: number[] | undefined;
  if (/^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$/.test(addr)) {
    const octets = addr.split('.').map(Number);
    if (octets.every((o) => o <= 255)) bytes = octets;
  } else if (!addr.includes('%')) {
    const groups = ipv6Groups(addr);
    if (groups) bytes = groups.flatMap((g) => [g >> 8, g & 255]);
  }
  const bits = Number(prefix);
  if (!bytes || bits > bytes.length * 8) return undefined;
  return { bytes: bytes.map((b, i) => b & (0xff << (8 - Math.max(0, Math.min(8, bits - i * 8)))) & 0xff), bits };
}

/** Whether network `outer` holds the address `ip` (a network's bytes): same family, same leading bits. */
export function cidrContains(outer: { bytes: number[]; bits: number }, ip: number[]): boolean {
  if (outer.bytes.length !== ip.length) return false;
  for (let i = 0; i < ip.length; i++) {
    const keep = Math.max(0, Math.min(8, outer.bits - i * 8));
    const mask = (0xff << (8 - keep)) & 0xff;
    if ((ip[i] & mask) !== outer.bytes[i]) return false;
  }
  return true;
}
