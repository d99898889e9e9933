// Go's encoding/json as kube-apiserver writes JSON: object keys of maps sorted (by UTF-8 bytes),
// and `<`, `>`, `&`, U+2028 and U+2029 escaped inside strings (its HTML-safe default).
import { compareStrings, toGoString } from './strings.ts';

const GO_JSON_ESCAPED = /[<>&\u2028\u2029]/g;
const goJsonEscape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * JSON text as Go's encoding/json writes it (and so kube-apiserver): `<`, `>` and `&` escaped
 * for HTML, and U+2028 and U+2029, as \u003c, \u003e, \u0026, \u2028, \u2029. They occur only
 * inside strings, so the text stays the same JSON. A few native scans when there are none.
 */
export function goJsonText(text: string): string {
  if (text.indexOf('<') < 0 && text.indexOf('>') < 0 && text.indexOf('&') < 0 && text.indexOf('\u2028') < 0 && text.indexOf('\u2029') < 0) return text;
  return text.replace(GO_JSON_ESCAPED, goJsonEscape);
}

/**
 * json.Marshal of a decoded JSON value (objects are maps): compact, object keys sorted, HTML
 * characters escaped. Go writes a float64 the way JS writes a number ('f', or 'e' below 1e-6 and
 * from 1e21, "e-07" as "e-7"), and -0 decodes to int64 0 in kube: JSON.stringify's numbers.
 * Throws on what JSON cannot hold (undefined, a bigint).
 */
export function goJsonMarshal(v: unknown): string {
  if (typeof v === 'string') return goJsonText(JSON.stringify(v));
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return JSON.stringify(v);
  return goJsonText(JSON.stringify(sortKeys(v)));
}

/** json.Marshal of the Go string s stands for: a lone surrogate is U+FFFD (see toGoString). */
export function goJsonString(s: string): string {
  return goJsonText(JSON.stringify(toGoString(s)));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(o).sort(compareStrings)) out[k] = sortKeys(o[k]);
    return out;
  }
  return v;
}

/** The JSON kind encoding/json names in an UnmarshalTypeError ("cannot unmarshal array into ..."). */
export function jsonKind(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'object':
      return 'object';
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'bool';
    default:
      return typeof v;
  }
}
