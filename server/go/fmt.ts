// Go's fmt as kube-apiserver's messages apply it to decoded JSON values: %v (goSprint), %#v
// (goSharpV, goStringSlice), %T (goTypeName), reflect.Kind (goReflectKind), and how a float64
// and a JSON number print.
import { goQuote } from './strconv.ts';
import { compareStrings } from './strings.ts';

// ---------------------------------------------------------------------------------------------
// The Go types of decoded JSON values.

/**
 * Which JSON numbers stand for a Go int. kube decodes JSON into interface{} with utiljson:
 * objects are map[string]interface{}, arrays []interface{}, an integral number an int64 when it
 * fits and a float64 otherwise ('int64'). Some of hearth's messages count every integral number
 * as an int ('integral'): the two differ only beyond ±2^63, where Go prints 1e+19 and those print
 * 10000000000000000000. The call sites that do so say 'integral', and keep their text.
 */
export type GoIntegers = 'int64' | 'integral';

/** A float64 whose value is integral (JSONPath's float literal "2.0"), which a JS number cannot tell. */
export class GoFloat {
  constructor(readonly v: number) {}
}
/** A uint8: a byte from ranging over a string (in JSONPath). */
export class GoByte {
  constructor(readonly v: number) {}
}

export type GoKind = 'nil' | 'bool' | 'int' | 'uint' | 'float' | 'string' | 'slice' | 'map';

const TWO63 = 2 ** 63;
/** Whether n decodes to an int64: integral and in int64's range. */
export const isInt64 = (n: number): boolean => Number.isInteger(n) && n >= -TWO63 && n < TWO63;

/** The Go kind of a decoded JSON value (GoFloat and GoByte for what JSON cannot say). */
export function goKind(v: unknown, integers: GoIntegers = 'int64'): GoKind {
  switch (typeof v) {
    case 'string': return 'string';
    case 'boolean': return 'bool';
    case 'number': return (integers === 'int64' ? isInt64(v) : Number.isInteger(v)) ? 'int' : 'float';
  }
  if (v === null || v === undefined) return 'nil';
  if (Array.isArray(v)) return 'slice';
  if (v instanceof GoFloat) return 'float';
  if (v instanceof GoByte) return 'uint';
  return 'map';
}

/** The number a GoFloat or GoByte holds; any other value as it is. */
export const unwrapGoValue = (v: unknown): unknown => (v instanceof GoFloat || v instanceof GoByte ? v.v : v);

// ---------------------------------------------------------------------------------------------
// Numbers.

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

/** A JSON number as %v prints it with every integral value an int ('integral'), the rest float64. */
export function goNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return BigInt(n).toString();
  return goFloat(n);
}

// ---------------------------------------------------------------------------------------------
// Verbs.

/** fmt.Sprint (%v) of a decoded JSON value: maps as map[k:v ...] (sorted keys), slices as [a b]. */
export function goSprint(v: unknown, integers: GoIntegers = 'int64'): string {
  switch (goKind(v, integers)) {
    case 'nil': return '<nil>';
    case 'string': return v as string;
    case 'bool': return (v as boolean) ? 'true' : 'false';
    case 'int':
    case 'uint': return String(unwrapGoValue(v));
    case 'float': return goFloat(unwrapGoValue(v) as number);
    case 'slice': return `[${(v as unknown[]).map((e) => goSprint(e, integers)).join(' ')}]`;
    default: {
      const m = v as Record<string, unknown>;
      return `map[${Object.keys(m).sort(compareStrings).map((k) => `${k}:${goSprint(m[k], integers)}`).join(' ')}]`;
    }
  }
}

/** %#v of an unstructured value: map[string]interface {}{"a":1}, []interface {}{"x"}. */
export function goSharpV(v: unknown): string {
  if (v === null || v === undefined) return 'interface {}(nil)';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) return `[]interface {}{${v.map(goSharpV).join(', ')}}`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).sort(compareStrings);
    return `map[string]interface {}{${keys.map((k) => `${goQuote(k)}:${goSharpV(o[k])}`).join(', ')}}`;
  }
  return String(v);
}

/** %#v of a []string: `[]string{"a", "b"}`, or `[]string(nil)` for a nil slice. */
export function goStringSlice(values: readonly string[] | null | undefined): string {
  if (values == null) return '[]string(nil)';
  return `[]string{${values.map(goQuote).join(', ')}}`;
}

/** %T of a decoded JSON value: Go's name for its dynamic type, for error messages. */
export function goTypeName(v: unknown, integers: GoIntegers = 'int64'): string {
  switch (goKind(v, integers)) {
    case 'nil': return '<nil>';
    case 'bool': return 'bool';
    case 'int': return 'int64';
    case 'uint': return 'uint8';
    case 'float': return 'float64';
    case 'string': return 'string';
    case 'slice': return '[]interface {}';
    default: return 'map[string]interface {}';
  }
}

/** reflect.Kind's name for a decoded JSON value's kind ("expected a map, but received a slice"). */
export function goReflectKind(v: unknown, integers: GoIntegers = 'int64'): string {
  switch (goKind(v, integers)) {
    case 'nil': return 'nil';
    case 'int': return 'int64';
    case 'uint': return 'uint8';
    case 'float': return 'float64';
    default: return goKind(v, integers);
  }
}

/** %#v of a []byte: `[]byte{0x2d, 0x2d}`, `[]byte{}` when empty, `[]byte(nil)` for a nil slice. */
export function goByteSlice(bytes: Uint8Array | null | undefined): string {
  if (bytes == null) return '[]byte(nil)';
  const parts: string[] = new Array<string>(bytes.length);
  for (let i = 0; i < bytes.length; i++) parts[i] = `0x${bytes[i]!.toString(16)}`;
  return `[]byte{${parts.join(', ')}}`;
}
