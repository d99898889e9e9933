// IP address and CIDR parsing shared by validation (NetworkPolicy ipBlocks, pod DNS nameservers) and CEL's ip/cidr library.
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

/** An IPv4 address as Go's old net.ParseIP reads it: four decimal fields of at most 255, leading zeros allowed. */
export function parseIPv4Sloppy(s: string): number[] | undefined {
  const parts = s.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^[0-9]+$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.map(Number);
}

/** An IPv6 address as Go's old net.ParseIP reads it (hex fields of any length up to 0xffff, one "::", an IPv4 tail, no zone): its 16 bytes. */
export function parseIPv6Sloppy(s: string): number[] | undefined {
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const fields = (h: string): number[] | undefined => {
    if (h === '') return [];
    const out: number[] = [];
    const groups = h.split(':');
    for (let i = 0; i < groups.length; i++) {
      const g = groups[i];
      if (i === groups.length - 1 && g.includes('.')) {
        const v4 = parseIPv4Sloppy(g);
        if (!v4) return undefined;
        out.push(...v4);
      } else {
        if (!/^[0-9a-fA-F]+$/.test(g) || parseInt(g, 16) > 0xffff) return undefined;
        const n = parseInt(g, 16);
        out.push(n >> 8, n & 0xff);
      }
    }
    return out;
  };
  const head = fields(halves[0]);
  const tail = halves.length === 2 ? fields(halves[1]) : [];
  if (!head || !tail) return undefined;
  // An IPv4 tail ends the address: it may not stand in the first half of one with "::".
  if (halves.length === 2 && halves[0].includes('.')) return undefined;
  if (halves.length === 1) return head.length === 16 ? head : undefined;
  const fill = 16 - head.length - tail.length;
  return fill >= 2 ? [...head, ...new Array(fill).fill(0), ...tail] : undefined;
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
  const bytes = addr.includes(':') ? parseIPv6Sloppy(addr) : parseIPv4Sloppy(addr);
  const bits = Number(prefix);
  if (!bytes || bits > bytes.length * 8) return undefined;
  return { bytes: maskNetwork(bytes, bits), bits };
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

/** An address's bytes with all but the first `bits` cleared: the network they lie in. */
export function maskNetwork(bytes: readonly number[], bits: number): number[] {
  return bytes.map((b, i) => b & (0xff << (8 - Math.max(0, Math.min(8, bits - i * 8)))) & 0xff);
}

/**
 * Eight IPv6 groups as Go's netip.Addr.String writes them (RFC 5952): lower-case hex without
 * leading zeros, the first longest run of two or more zero groups as "::".
 */
export function formatIPv6(groups: readonly number[]): string {
  let bestAt = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [bestAt, bestLen] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = (gs: readonly number[]) => gs.map((g) => g.toString(16)).join(':');
  return bestAt < 0 ? hex(groups) : `${hex(groups.slice(0, bestAt))}::${hex(groups.slice(bestAt + bestLen))}`;
}
