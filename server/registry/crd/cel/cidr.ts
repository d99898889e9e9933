// kube's CIDR library (k8s.io/apiserver/pkg/cel/library/cidr.go): cidr(), isCIDR() and the CIDR
// methods (containsIP, containsCIDR, ip, masked, prefixLength). string() of a CIDR is in
// environment.ts.
import { celFunc, celMethod } from '@bufbuild/cel';
import { goQuote } from '../../../go/strconv.ts';
import { expectTag, tagged } from './bufbuild-gaps/opaque-values.ts';
import { ipBytes, ipString, parseIPValue } from './ip.ts';
import { cidrContains as cidrContainsBytes, maskNetwork } from '../../../util/net.ts';
import { BOOL, DYN, INT, MAP, STRING } from './values.ts';

function cidrParts(s: string): { fam: 4 | 6; bytes: number[]; bits: number } | undefined {
  const slash = s.indexOf('/');
  if (slash < 0) return undefined;
  const b = ipBytes(s.slice(0, slash));
  const bitsStr = s.slice(slash + 1);
  if (!b || !/^\d{1,3}$/.test(bitsStr)) return undefined;
  const bits = Number(bitsStr);
  if (bits > (b.fam === 4 ? 32 : 128)) return undefined;
  return { ...b, bits };
}
const cidrValue = (fam: 4 | 6, bytes: number[], bits: number) => tagged('cidr', { family: BigInt(fam), addr: ipString(fam, bytes), bits: BigInt(bits) });
function parseCIDRValue(s: string): Map<string, any> {
  const c = cidrParts(s);
  if (!c) throw new Error(`network address ${goQuote(s)} parse error during conversion from string`);
  return cidrValue(c.fam, c.bytes, c.bits);
}
function cidrContains(c: any, ipStr: string, bits?: number): boolean {
  const cp = cidrParts(`${c.get('addr')}/${c.get('bits')}`)!;
  const b = ipBytes(ipStr);
  if (!b || b.fam !== cp.fam) return false;
  if (bits !== undefined && bits < cp.bits) return false;
  return cidrContainsBytes({ bytes: maskNetwork(cp.bytes, cp.bits), bits: cp.bits }, b.bytes);
}

export const CIDR_LIBRARY = [
  celFunc('cidr', [STRING], MAP, (s: string) => parseCIDRValue(s)),
  celFunc('isCIDR', [STRING], BOOL, (s: string) => cidrParts(s) !== undefined),
  celMethod('containsIP', MAP, [DYN], BOOL, function (ip) {
    const c = expectTag(this, 'cidr', 'containsIP');
    const s = typeof ip === 'string' ? ip : String(expectTag(ip, 'ip', 'containsIP').get('addr'));
    return cidrContains(c, s);
  }),
  celMethod('containsCIDR', MAP, [DYN], BOOL, function (other) {
    const c = expectTag(this, 'cidr', 'containsCIDR');
    const o = typeof other === 'string' ? parseCIDRValue(other) : expectTag(other, 'cidr', 'containsCIDR');
    return cidrContains(c, String(o.get('addr')), Number(o.get('bits')));
  }),
  celMethod('ip', MAP, [], MAP, function () {
    const c = expectTag(this, 'cidr', 'ip');
    return parseIPValue(String(c.get('addr')));
  }),
  celMethod('masked', MAP, [], MAP, function () {
    const c = expectTag(this, 'cidr', 'masked');
    const p = cidrParts(`${c.get('addr')}/${c.get('bits')}`)!;
    return cidrValue(p.fam, maskNetwork(p.bytes, p.bits), p.bits);
  }),
  celMethod('prefixLength', MAP, [], INT, function () {
    return expectTag(this, 'cidr', 'prefixLength').get('bits');
  }),
];
