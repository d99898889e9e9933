// Go's fmt rendering of decoded JSON values, for messages kube-apiserver prints with %v or %#v.
import { goQuote } from '../go/strconv.ts';
import { isPlainObject } from './json.ts';

/** strconv.FormatFloat(f, 'g', -1, 64) as fmt's %v prints a float64. */
export function goFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  // Shortest digits; %e form when the exponent is < -4 or >= 6 (strconv's rule for shortest %g).
  const [mant, e] = n.toExponential().split('e');
  const exp = Number(e);
  if (exp < -4 || exp >= 6) return `${mant}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return String(n);
}

/** A JSON number as Go decodes it for unstructured objects: integral values are int64, the rest float64. */
export function goNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return BigInt(n).toString();
  return goFloat(n);
}

/** %#v of an unstructured value: map[string]interface {}{"a":1}, []interface {}{"x"}. */
export function goSharpV(v: unknown): string {
  if (v === null || v === undefined) return 'interface {}(nil)';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) return `[]interface {}{${v.map(goSharpV).join(', ')}}`;
  if (isPlainObject(v)) {
    const keys = Object.keys(v).sort();
    return `map[string]interface {}{${keys.map((k) => `${goQuote(k)}:${goSharpV(v[k])}`).join(', ')}}`;
  }
  return String(v);
}
