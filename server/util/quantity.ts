// Kubernetes resource quantities ("1.5Gi", "100m", "1e3") as exact rationals: what CEL's
// quantity library and the pod QoS class compute with.

const BIN_SUFFIX: Record<string, bigint> = { Ki: 1n << 10n, Mi: 1n << 20n, Gi: 1n << 30n, Ti: 1n << 40n, Pi: 1n << 50n, Ei: 1n << 60n };
const DEC_SUFFIX: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

export interface Rational {
  num: bigint;
  den: bigint;
}

const gcd = (a: bigint, b: bigint): bigint => {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b) [a, b] = [b, a % b];
  return a || 1n;
};

export const normalize = (r: Rational): Rational => {
  const g = gcd(r.num, r.den);
  return { num: r.num / g, den: r.den / g };
};

/** Parses a Kubernetes quantity into an exact rational; undefined if invalid. */
export function parseQuantity(s: string): Rational | undefined {
  const m = /^([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$/.exec(s);
  if (!m) return undefined;
  const [, sign, digits, suffix = ''] = m;
  const [ip, fp = ''] = digits.split('.');
  let num = BigInt((ip || '0') + fp);
  let den = 10n ** BigInt(fp.length);
  if (sign === '-') num = -num;
  if (suffix in BIN_SUFFIX) num *= BIN_SUFFIX[suffix];
  else {
    const exp = suffix in DEC_SUFFIX ? DEC_SUFFIX[suffix] : Number(suffix.slice(1));
    if (!Number.isFinite(exp) || Math.abs(exp) > 1000) return undefined;
    if (exp >= 0) num *= 10n ** BigInt(exp);
    else den *= 10n ** BigInt(-exp);
  }
  return normalize({ num, den });
}

export const addRationals = (a: Rational, b: Rational): Rational => normalize({ num: a.num * b.den + b.num * a.den, den: a.den * b.den });
export const subtractRationals = (a: Rational, b: Rational): Rational => normalize({ num: a.num * b.den - b.num * a.den, den: a.den * b.den });

export function compareRationals(a: Rational, b: Rational): number {
  const l = a.num * b.den;
  const r = b.num * a.den;
  return l < r ? -1 : l > r ? 1 : 0;
}
