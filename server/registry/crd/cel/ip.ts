// kube's IP library (k8s.io/apiserver/pkg/cel/library/ip.go): ip(), isIP(), ip.isCanonical() and
// the IP methods (family, isUnspecified, isLoopback, isLinkLocalMulticast, isLinkLocalUnicast,
// isGlobalUnicast). string() of an IP is in environment.ts.
import { celFunc, celMethod } from '@bufbuild/cel';
import { isIPv4 } from 'node:net';
import { goQuote } from '../../../go/strconv.ts';
import { formatIPv6, ipv6Groups } from '../../../util/net.ts';
import { expectTag, tagged } from './bufbuild-gaps/opaque-values.ts';
import { BOOL, INT, MAP, STRING } from './values.ts';

export function ipBytes(s: string): { fam: 4 | 6; bytes: number[] } | undefined {
  if (s.includes('%')) return undefined;
  if (isIPv4(s)) return { fam: 4, bytes: s.split('.').map(Number) };
  const g = ipv6Groups(s);
  if (!g) return undefined;
  const bytes: number[] = [];
  for (const x of g) bytes.push(x >> 8, x & 255);
  // IPv4-mapped IPv6 addresses are not accepted by the Kubernetes ip library.
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 255 && bytes[11] === 255) return undefined;
  return { fam: 6, bytes };
}
export function ipString(fam: 4 | 6, bytes: number[]): string {
  if (fam === 4) return bytes.join('.');
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i] << 8) | bytes[i + 1]);
  return formatIPv6(groups);
}
const ipValue = (fam: 4 | 6, bytes: number[]) => tagged('ip', { family: BigInt(fam), addr: ipString(fam, bytes) });
export function parseIPValue(s: string): Map<string, any> {
  const b = ipBytes(s);
  if (!b) throw new Error(`IP Address ${goQuote(s)} parse error during conversion from string`);
  return ipValue(b.fam, b.bytes);
}

export const IP_LIBRARY = [
  celFunc('ip', [STRING], MAP, (s: string) => parseIPValue(s)),
  celFunc('isIP', [STRING], BOOL, (s: string) => ipBytes(s) !== undefined),
  celFunc('ip.isCanonical', [STRING], BOOL, (s: string) => {
    const b = ipBytes(s);
    if (!b) throw new Error(`IP Address ${goQuote(s)} parse error during conversion from string`);
    return ipString(b.fam, b.bytes) === s;
  }),
  celMethod('family', MAP, [], INT, function () {
    return expectTag(this, 'ip', 'family').get('family');
  }),
  celMethod('isUnspecified', MAP, [], BOOL, function () {
    const a = String(expectTag(this, 'ip', 'isUnspecified').get('addr'));
    return a === '0.0.0.0' || a === '::';
  }),
  celMethod('isLoopback', MAP, [], BOOL, function () {
    const a = String(expectTag(this, 'ip', 'isLoopback').get('addr'));
    return a.startsWith('127.') || a === '::1';
  }),
  celMethod('isLinkLocalMulticast', MAP, [], BOOL, function () {
    const a = String(expectTag(this, 'ip', 'isLinkLocalMulticast').get('addr'));
    return a.startsWith('224.0.0.') || /^ff[0-9a-f]2:/.test(a);
  }),
  celMethod('isLinkLocalUnicast', MAP, [], BOOL, function () {
    const a = String(expectTag(this, 'ip', 'isLinkLocalUnicast').get('addr'));
    return a.startsWith('169.254.') || /^fe[89ab][0-9a-f]:/.test(a);
  }),
  celMethod('isGlobalUnicast', MAP, [], BOOL, function () {
    const ipv = expectTag(this, 'ip', 'isGlobalUnicast');
    const a = String(ipv.get('addr'));
    const b = ipBytes(a)!;
    if (b.fam === 4) return !(a === '0.0.0.0' || a === '255.255.255.255' || b.bytes[0] === 127 || b.bytes[0] >= 224 || (b.bytes[0] === 169 && b.bytes[1] === 254));
    return !(a === '::' || a === '::1' || b.bytes[0] === 0xff || (b.bytes[0] === 0xfe && (b.bytes[1] & 0xc0) === 0x80));
  }),
];
