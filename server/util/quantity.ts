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

/**
 * Parses a Kubernetes quantity into an exact rational; undefined if invalid. Results are shared
 * (remembered by text: the same few quantities recur in every pod), so callers never change them.
 */
export function parseQuantity(s: string): Rational | undefined {
  let r = PARSED.get(s);
  if (r === undefined && !PARSED.has(s)) {
    r = parseQuantityText(s);
    remember(PARSED, s, r && Object.freeze(r));
  }
  return r;
}

/** Texts remembered per cache: enough for the quantities a cluster uses, bounded against the rest. */
const REMEMBERED = 1000;
const PARSED = new Map<string, Rational | undefined>();
const CANONICAL = new Map<string, string | undefined>();

function remember<T>(cache: Map<string, T>, key: string, value: T): void {
  if (cache.size >= REMEMBERED) cache.clear();
  cache.set(key, value);
}

function parseQuantityText(s: string): Rational | undefined {
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

// ---------------------------------------------------------------------------------------------
// Canonical form: how kube-apiserver writes back a Quantity it decoded ("1000m" → "1",
// "1024Mi" → "1Gi", "0.5" → "500m"), following resource.ParseQuantity and Quantity.String.

const QUANTITY_TEXT = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$/;
const DEC_TEXT: Record<number, string> = { [-9]: 'n', [-6]: 'u', [-3]: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E' };
const BIN_TEXT = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const NANOS = 1_000_000_000n;
const MAX_INT64 = (1n << 63n) - 1n;

/**
 * The text kube writes for a quantity (a string, or a JSON number as its text); undefined when it
 * is not one. Values finer than 1n are rounded up to it. As kube does, a text already in canonical
 * form is kept as given (so "+5" stays "+5").
 */
export function canonicalQuantity(input: string): string | undefined {
  let c = CANONICAL.get(input);
  if (c === undefined && !CANONICAL.has(input)) remember(CANONICAL, input, (c = canonicalText(input)));
  return c;
}

function canonicalText(input: string): string | undefined {
  const text = input.trim();
  const m = QUANTITY_TEXT.exec(text);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined;
  const negative = m[1] === '-';
  const num = m[2].replace(/^0+/, '') || '0';
  const denom = m[3] ?? '';
  const suffix = m[4] ?? '';
  const binary = suffix.length === 2 && suffix[1] === 'i';
  const exponent = binary ? 10 * (BIN_TEXT.indexOf(suffix)) : suffix[0] === 'e' || suffix[0] === 'E' ? Number(suffix.slice(1)) : DEC_SUFFIX[suffix];
  const shifted = num + denom;
  // ParseQuantity keeps the text of an int64-sized value that is canonical already.
  if (binary) {
    const precision = 15 - num.length - Math.trunc((exponent * 3) / 10) - 1;
    if (precision >= 0 && denom === '' && (BigInt(num) & 7n) !== 0n && BigInt(num) << BigInt(exponent) <= MAX_INT64) return text;
  } else {
    const scale = exponent - denom.length;
    if (18 - shifted.length >= 0 && scale >= -9 && scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0') return text;
  }
  // The exact value in nanos, rounded up (away from zero).
  let value = BigInt(shifted);
  let den = 10n ** BigInt(denom.length);
  if (binary) value <<= BigInt(exponent);
  else if (exponent >= 0) value *= 10n ** BigInt(exponent);
  else den *= 10n ** BigInt(-exponent);
  let nanos = (value * NANOS + den - 1n) / den;
  if (binary && nanos > MAX_INT64 * NANOS) nanos = MAX_INT64 * NANOS;
  if (nanos === 0n) return '0';
  const sign = negative ? '-' : '';
  if (binary && nanos >= 1024n * NANOS && nanos % NANOS === 0n) {
    let whole = nanos / NANOS;
    let e = 0;
    while (whole % 1024n === 0n) {
      whole /= 1024n;
      e++;
    }
    return sign + whole.toString() + BIN_TEXT[e];
  }
  let mantissa = nanos;
  let e = -9;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    e++;
  }
  const r = ((e % 3) + 3) % 3;
  if (r !== 0) {
    mantissa *= 10n ** BigInt(r);
    e -= r;
  }
  if (suffix[0] === 'e' || suffix[0] === 'E') return sign + mantissa.toString() + (e === 0 ? '' : `e${e}`);
  const unit = DEC_TEXT[e];
  return unit === undefined ? text : sign + mantissa.toString() + unit;
}
