// How deeply a request body may nest, and the checks that hold every body to it before anything
// walks it. kube's decoders refuse JSON and YAML nested deeper than 10,000 levels (encoding/json's
// maxNestingDepth, go-yaml's max_flow_level and max_indents) and CBOR deeper than 64 (its decode
// mode's MaxNestedLevels); Go's growable stacks then walk whatever they accepted. hearth's walkers
// (duplicate fields, Go type checks, pruning, defaulting, validation, merges, managed fields, CEL,
// JSON.stringify and the YAML library) recurse on Node's fixed stack, and the shallowest of them
// gives out first: writing YAML with the `yaml` library fails near 640 levels on a fresh stack,
// JSON.stringify near 4,170 (bench/depth-probe.ts measures each). So hearth refuses bodies
// nested deeper than MAX_BODY_DEPTH, in the words kube's decoder uses for its own limit, checked
// iteratively before a body is parsed (JSON text, YAML tokens) or right after (CBOR, protobuf,
// patch results), and everything it accepts has well over half of the stack to spare.
// These checks are loops with their own stacks: a hostile body cannot overflow them.

/**
 * Levels of objects and arrays a body may nest (`{}` is one level). Realistic objects stay under
 * 40 (a CRD's schema with an embedded pod template); the managedFields of an object add 4.
 */
export const MAX_BODY_DEPTH = 256;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The byte offset of the `{` or `[` that opens nesting level `limit + 1` in JSON text, or -1.
 * Strings are skipped whole; syntax is not checked (the parser does that), so for text that is
 * not JSON the answer only bounds the parser's work.
 */
export function jsonDepthExceededAt(text: Uint8Array, limit = MAX_BODY_DEPTH): number {
  // Each level takes at least one byte: short texts cannot be too deep.
  if (text.length <= limit) return -1;
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text[i];
    if (c === QUOTE) {
      // To the closing quote: one not preceded by an odd run of backslashes.
      for (i++; i < n; i++) {
        const s = text[i];
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return i;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return -1;
}

/** Whether a decoded value nests objects and arrays deeper than `limit`. A loop, not recursion. */
export function valueDepthExceeds(value: unknown, limit = MAX_BODY_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  // Pending containers and their levels, side by side.
  const values: object[] = [value];
  const levels: number[] = [1];
  while (values.length > 0) {
    const v = values.pop()!;
    const level = levels.pop()!;
    if (level > limit) return true;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (let i = 0; i < children.length; i++) {
      const c: unknown = children[i];
      if (typeof c === 'object' && c !== null) {
        values.push(c);
        levels.push(level + 1);
      }
    }
  }
  return false;
}

/**
 * A deep copy of a JSON value and the bytes of its JSON text as Go's json.Marshal writes it
 * (numbers as JavaScript writes them): what a JSON patch's copy operations are limited by. A
 * loop: the value may nest deeper than any recursive copy could follow.
 */
export function cloneMeasured(value: unknown): { copy: unknown; size: number } {
  let size = 0;
  const scalar = (v: unknown): unknown => {
    if (typeof v === 'string') size += quotedLength(v);
    else size += v === undefined ? 4 : JSON.stringify(v).length; // (undefined is written as null)
    return v === undefined ? null : v;
  };
  if (typeof value !== 'object' || value === null) return { copy: scalar(value), size };
  const root: unknown = Array.isArray(value) ? new Array(value.length) : {};
  // Containers to fill: each source with its empty copy.
  const from: object[] = [value];
  const into: Record<string, unknown>[] = [root as Record<string, unknown>];
  while (from.length > 0) {
    const src = from.pop()!;
    const dst = into.pop()!;
    if (Array.isArray(src)) {
      size += 2 + Math.max(0, src.length - 1);
      for (let i = 0; i < src.length; i++) dst[i] = child(src[i]);
    } else {
      const keys = Object.keys(src);
      size += 2 + Math.max(0, keys.length - 1) + keys.length; // braces, commas, colons
      for (const k of keys) {
        size += quotedLength(k);
        const c = child((src as Record<string, unknown>)[k]);
        if (k === '__proto__') Object.defineProperty(dst, k, { value: c, enumerable: true, writable: true, configurable: true });
        else dst[k] = c;
      }
    }
  }
  return { copy: root, size };

  function child(v: unknown): unknown {
    if (typeof v !== 'object' || v === null) return scalar(v);
    const c: Record<string, unknown> = Array.isArray(v) ? (new Array(v.length) as unknown as Record<string, unknown>) : {};
    from.push(v);
    into.push(c);
    return c;
  }
}

/** The bytes of a string as Go's encoding/json quotes it: UTF-8, `<` `>` `&` and U+2028/9 as \uXXXX. */
function quotedLength(s: string): number {
  const quoted = JSON.stringify(s);
  let n = ASCII.test(s) ? quoted.length : Buffer.byteLength(quoted);
  if (GO_ESCAPED.test(s)) for (const m of s.matchAll(GO_ESCAPED_ALL)) n += m[0] < '\u0080' ? 5 : 3;
  return n;
}

// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;
const GO_ESCAPED = /[<>&\u2028\u2029]/;
const GO_ESCAPED_ALL = /[<>&\u2028\u2029]/g;

/**
 * JSON text of a value as JSON.stringify writes it, for values too deep for JSON.stringify (its
 * recursion gives out near 4,170 levels); `sortKeys` writes map keys in Go's order. A loop.
 */
export function jsonTextOf(value: unknown, sortKeys = false): string {
  const parts: string[] = [];
  // Work items: a value to write, or literal text (closing brackets, separators).
  const work: ({ v: unknown } | string)[] = [{ v: value }];
  while (work.length > 0) {
    const item = work.pop()!;
    if (typeof item === 'string') {
      parts.push(item);
      continue;
    }
    const v = item.v;
    if (typeof v !== 'object' || v === null) {
      parts.push(v === undefined ? 'null' : JSON.stringify(v));
      continue;
    }
    const pending: ({ v: unknown } | string)[] = [];
    if (Array.isArray(v)) {
      pending.push('[');
      v.forEach((x, i) => pending.push(...(i ? [','] : []), { v: x }));
      pending.push(']');
    } else {
      const keys = Object.keys(v).filter((k) => (v as Record<string, unknown>)[k] !== undefined);
      if (sortKeys) keys.sort();
      pending.push('{');
      keys.forEach((k, i) => pending.push(`${i ? ',' : ''}${JSON.stringify(k)}:`, { v: (v as Record<string, unknown>)[k] }));
      pending.push('}');
    }
    for (let i = pending.length - 1; i >= 0; i--) work.push(pending[i]);
  }
  return parts.join('');
}
