// Go's string order. Go compares strings by their UTF-8 bytes (strings.Compare, <, sort.Strings,
// the sorted map keys of encoding/json and fmt), which is code point order; JS's < and
// Array.prototype.sort compare UTF-16 code units. The two agree but where a character from
// U+E000 to U+FFFF meets one beyond U+FFFF (written as a surrogate pair): Go puts the first one
// first, JS the second.

/**
 * strings.Compare: -1, 0 or 1 in code point order (UTF-8 byte order). A lone surrogate, which JS
 * strings may hold and UTF-8 cannot, counts as its own code point (where WTF-8 bytes put it).
 */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca !== cb) {
      // Below the surrogates code units order like code points (and UTF-8 bytes).
      if (ca < 0xd800 && cb < 0xd800) return ca < cb ? -1 : 1;
      return compareCodePoints(a, b);
    }
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.codePointAt(i)!;
    const cb = b.codePointAt(i)!;
    if (ca !== cb) return ca < cb ? -1 : 1;
    if (ca > 0xffff) i++;
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

/** A JS string as a Go string holds it: Go strings are UTF-8, where a lone surrogate is U+FFFD. */
export const toGoString = (s: string): string => s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

/** Go's strings.SplitN(s, sep, n). */
export function splitN(s: string, sep: string, n: number): string[] {
  const out: string[] = [];
  let rest = s;
  while (out.length < n - 1) {
    const i = rest.indexOf(sep);
    if (i < 0) break;
    out.push(rest.slice(0, i));
    rest = rest.slice(i + sep.length);
  }
  out.push(rest);
  return out;
}

/** strings.TrimSpace: unicode.IsSpace trimmed from both ends (U+0085 is a space, U+FEFF is not). */
export const trimSpace = (s: string): string => s.replace(GO_SPACE_ENDS, '');
const GO_SPACE_ENDS = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;
