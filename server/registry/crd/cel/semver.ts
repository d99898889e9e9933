// kube's semver library (k8s.io/apiserver/pkg/cel/library/semverlib.go): semver() and isSemver()
// (with the normalize argument) and the major/minor/patch getters, following blang/semver v4 as
// kube uses it. isGreaterThan, isLessThan and compareTo, which Quantity declares too, are in
// environment.ts.
import { celFunc, celMethod } from '@bufbuild/cel';
import { goQuote, parseUint64 } from '../../../go/strconv.ts';
import { splitN } from '../../../go/strings.ts';
import { expectTag, tagged } from './bufbuild-gaps/opaque-values.ts';
import { BOOL, INT, MAP, STRING } from './values.ts';

/** strconv.ParseUint(s, 10, 64), throwing Go's error. */
function mustParseUint64(s: string): bigint {
  const n = parseUint64(s);
  if (typeof n === 'string') throw new Error(`strconv.ParseUint: parsing ${goQuote(s)}: ${n}`);
  return n;
}
const NUMBERS = /^[0-9]*$/;
const ALPHANUM = /^[0-9a-zA-Z-]*$/;
const leadingZero = (s: string) => s.length > 1 && s[0] === '0';
/** semver.Parse: the version as a CEL value (build metadata dropped: it takes no part in comparisons). */
function parseSemver(s: string): Map<string, any> {
  if (s.length === 0) throw new Error('Version string empty');
  const parts = splitN(s, '.', 3);
  if (parts.length !== 3) throw new Error('No Major.Minor.Patch elements found');
  const num = (p: string, what: string): bigint => {
    if (!NUMBERS.test(p)) throw new Error(`Invalid character(s) found in ${what} number ${goQuote(p)}`);
    if (leadingZero(p)) throw new Error(`${what[0].toUpperCase()}${what.slice(1)} number must not contain leading zeroes ${goQuote(p)}`);
    return mustParseUint64(p);
  };
  const major = num(parts[0], 'major');
  const minor = num(parts[1], 'minor');
  let patchStr = parts[2];
  let build: string[] = [];
  let pre: string[] = [];
  const plus = patchStr.indexOf('+');
  if (plus >= 0) [build, patchStr] = [patchStr.slice(plus + 1).split('.'), patchStr.slice(0, plus)];
  const dash = patchStr.indexOf('-');
  if (dash >= 0) [pre, patchStr] = [patchStr.slice(dash + 1).split('.'), patchStr.slice(0, dash)];
  const patch = num(patchStr, 'patch');
  for (const p of pre) {
    if (p.length === 0) throw new Error('Prerelease is empty');
    if (NUMBERS.test(p)) {
      if (leadingZero(p)) throw new Error(`Numeric PreRelease version must not contain leading zeroes ${goQuote(p)}`);
      mustParseUint64(p);
    } else if (!ALPHANUM.test(p)) throw new Error(`Invalid character(s) found in prerelease ${goQuote(p)}`);
  }
  for (const b of build) {
    if (b.length === 0) throw new Error('Build meta data is empty');
    if (!ALPHANUM.test(b)) throw new Error(`Invalid character(s) found in build meta data ${goQuote(b)}`);
  }
  return tagged('semver', { major, minor, patch, pre: pre.join('.') });
}
/** kube's normalizeAndParse: no "v" prefix, missing minor/patch filled in, leading zeroes dropped. */
function parseSemverNormalized(s: string): Map<string, any> {
  if (s.startsWith('v')) s = s.slice(1);
  const parts = splitN(s, '.', 3).map((p) => {
    if (p.length <= 1) return p;
    const t = p.replace(/^0+/, '');
    return t.length === 0 || !/^[0-9]/.test(t) ? '0' + t : t;
  });
  if (parts.length < 3) {
    if (/[+-]/.test(parts[parts.length - 1])) throw new Error('short version cannot contain PreRelease/Build meta data');
    while (parts.length < 3) parts.push('0');
  }
  return parseSemver(parts.join('.'));
}
function semverOk(s: string, normalize: boolean): boolean {
  try {
    (normalize ? parseSemverNormalized : parseSemver)(s);
    return true;
  } catch {
    return false;
  }
}
/** semver.Version.Compare. */
export function cmpSemver(a: Map<string, any>, b: Map<string, any>): number {
  for (const k of ['major', 'minor', 'patch']) {
    const x = a.get(k) as bigint;
    const y = b.get(k) as bigint;
    if (x !== y) return x > y ? 1 : -1;
  }
  const pa = String(a.get('pre'));
  const pb = String(b.get('pre'));
  if (pa === '' || pb === '') return pa === pb ? 0 : pa === '' ? 1 : -1;
  const xs = pa.split('.');
  const ys = pb.split('.');
  for (let i = 0; i < xs.length && i < ys.length; i++) {
    const xn = /^[0-9]+$/.test(xs[i]);
    const yn = /^[0-9]+$/.test(ys[i]);
    let c: number;
    if (xn && yn) c = BigInt(xs[i]) === BigInt(ys[i]) ? 0 : BigInt(xs[i]) > BigInt(ys[i]) ? 1 : -1;
    else if (xn !== yn) c = xn ? -1 : 1;
    else c = xs[i] === ys[i] ? 0 : xs[i] > ys[i] ? 1 : -1;
    if (c !== 0) return c;
  }
  return xs.length === ys.length ? 0 : xs.length < ys.length ? -1 : 1;
}

export const SEMVER_LIBRARY = [
  celFunc('semver', [STRING], MAP, (s: string) => parseSemver(s)),
  celFunc('semver', [STRING, BOOL], MAP, (s: string, normalize: boolean) => (normalize ? parseSemverNormalized(s) : parseSemver(s))),
  celFunc('isSemver', [STRING], BOOL, (s: string) => semverOk(s, false)),
  celFunc('isSemver', [STRING, BOOL], BOOL, (s: string, normalize: boolean) => semverOk(s, normalize)),
  ...(['major', 'minor', 'patch'] as const).map((part) =>
    celMethod(part, MAP, [], INT, function () {
      return BigInt.asIntN(64, expectTag(this, 'semver', part).get(part));
    }),
  ),
];
