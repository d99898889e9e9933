// Go's strconv: quoting strings and runes as Go source literals (what %q and %#U print in
// kube-apiserver's messages), Atoi, and client-go's Unquote that takes single quotes too.

const GO_ESCAPES: Record<string, string> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '"': '\\"',
  '\\': '\\\\',
};
// Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
const NEEDS_ESCAPE = /["\\]|[\p{C}\p{Z}]/u;
const NON_PRINT = /[\p{C}\p{Z}]/u;

/** strconv.Quote / %q: a double-quoted Go string literal. */
export function goQuote(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return `"${s}"`;
  let out = '"';
  for (const ch of s) {
    const esc = GO_ESCAPES[ch];
    if (esc) {
      out += esc;
      continue;
    }
    if (ch === ' ' || !NON_PRINT.test(ch)) {
      out += ch;
      continue;
    }
    const cp = ch.codePointAt(0)!;
    if (isSurrogate(cp)) out += '\ufffd'; // a lone surrogate decodes to U+FFFD in Go
    else if (cp < 0x80) out += '\\x' + cp.toString(16).padStart(2, '0');
    else if (cp <= 0xffff) out += '\\u' + cp.toString(16).padStart(4, '0');
    else out += '\\U' + cp.toString(16).padStart(8, '0');
  }
  return out + '"';
}

/** Go's unicode.IsPrint for one code point (a lone surrogate reads as U+FFFD, which is printable). */
export function goIsPrint(ch: string): boolean {
  return ch === ' ' || !NON_PRINT.test(ch) || isSurrogate(ch.codePointAt(0)!);
}

const isSurrogate = (cp: number) => cp >= 0xd800 && cp <= 0xdfff;

/** Go's %#U: "U+002A '*'" (the quoted rune only when printable). */
export function goRuneU(r: number): string {
  if (isSurrogate(r)) r = 0xfffd; // Go decodes a broken sequence to U+FFFD
  const hex = `U+${r.toString(16).toUpperCase().padStart(4, '0')}`;
  const ch = String.fromCodePoint(r);
  return goIsPrint(ch) ? `${hex} '${ch}'` : hex;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** strconv.ParseInt(s, 10, 64): the value, or the reason of Go's NumError. */
export function parseInt64(s: string): bigint | 'invalid syntax' | 'value out of range' {
  if (!/^[+-]?[0-9]+$/.test(s)) return 'invalid syntax';
  const b = BigInt(s);
  return b < INT64_MIN || b > INT64_MAX ? 'value out of range' : b;
}

/** strconv.ParseUint(s, 10, 64): the value, or the reason of Go's NumError. */
export function parseUint64(s: string): bigint | 'invalid syntax' | 'value out of range' {
  if (!/^[0-9]+$/.test(s)) return 'invalid syntax';
  const n = BigInt(s);
  return n >= 1n << 64n ? 'value out of range' : n;
}

/** strconv.Atoi on a 64-bit platform: the value, or undefined where Go returns an error. */
export function goAtoi(s: string): number | undefined {
  const b = parseInt64(s);
  return typeof b === 'bigint' ? Number(b) : undefined;
}

/** client-go UnquoteExtend: strconv.Unquote that also takes single-quoted strings. */
export function unquoteExtend(s: string): string | undefined {
  if (s.length < 2) return undefined;
  const quote = s[0];
  if (quote !== s[s.length - 1] || (quote !== '"' && quote !== "'")) return undefined;
  s = s.slice(1, -1);
  if (!s.includes('\\') && !s.includes(quote)) return s;
  // Collected as UTF-8 bytes: \xNN adds a raw byte, as in Go.
  const bytes: number[] = [];
  const pushRune = (cp: number) => {
    for (const b of Buffer.from(String.fromCodePoint(cp), 'utf8')) bytes.push(b);
  };
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === quote) return undefined;
    if (c !== '\\') {
      const cp = s.codePointAt(i)!;
      pushRune(cp);
      i += cp > 0xffff ? 2 : 1;
      continue;
    }
    if (i + 1 >= s.length) return undefined;
    const e = s[i + 1];
    i += 2;
    switch (e) {
      case 'a': bytes.push(7); break;
      case 'b': bytes.push(8); break;
      case 'f': bytes.push(12); break;
      case 'n': bytes.push(10); break;
      case 'r': bytes.push(13); break;
      case 't': bytes.push(9); break;
      case 'v': bytes.push(11); break;
      case '\\': bytes.push(0x5c); break;
      case "'":
      case '"':
        if (e !== quote) return undefined;
        bytes.push(e.charCodeAt(0));
        break;
      case 'x':
      case 'u':
      case 'U': {
        const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
        const hex = s.slice(i, i + n);
        if (hex.length < n || !/^[0-9a-fA-F]+$/.test(hex)) return undefined;
        i += n;
        const v = parseInt(hex, 16);
        if (e === 'x') bytes.push(v);
        else if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return undefined;
        else pushRune(v);
        break;
      }
      default: {
        if (e < '0' || e > '7') return undefined;
        const oct = s.slice(i, i + 2);
        if (oct.length < 2 || !/^[0-7]{2}$/.test(oct)) return undefined;
        i += 2;
        const v = parseInt(e + oct, 8);
        if (v > 255) return undefined;
        bytes.push(v);
      }
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
