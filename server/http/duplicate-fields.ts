// Duplicate fields in request bodies. JSON.parse keeps the last of two equal keys silently;
// kube-apiserver reports them (a warning, or 400 with fieldValidation=Strict). One linear scan of
// the text finds them (paths are built only for the duplicates), with the path kube prints: "metadata.name", "spec.containers[0].image".
import YAML from 'yaml';
import { KUBE_YAML } from '../go/yaml.ts';

/**
 * Paths of keys that appear twice in the same JSON object. Assumes text is valid JSON; `parsed`,
 * when given, is what JSON.parse made of it: when it has as many keys as the text, no key can
 * have been dropped, and the (slower) scan for which ones were is skipped.
 */
export function duplicateJsonFields(text: string, parsed?: unknown): string[] {
  if (parsed !== undefined && noDuplicateKeys(text, parsed)) return [];
  let out: string[] | undefined;
  // One frame per open object/array; paths are built only when a duplicate is found.
  const frames: Frame[] = [];
  let depth = 0;
  let top: Frame | undefined;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const start = i + 1;
      const end = stringEnd(text, start);
      i = end + 1;
      // A key is a string directly followed (after whitespace) by ':'.
      if (top !== undefined && top.isObject && top.key === PENDING) {
        const raw = text.slice(start, end);
        const key = raw.indexOf('\\') < 0 ? raw : (JSON.parse(text.slice(start - 1, end + 1)) as string);
        if (top.seen(key)) (out ??= []).push(pathOf(frames, depth, key));
        top.key = key;
      }
      continue;
    }
    switch (c) {
      case 0x7b: /* { */
      case 0x5b: /* [ */ {
        top = frames[depth] ??= new Frame();
        top.open(c === 0x7b);
        depth++;
        break;
      }
      case 0x7d: /* } */
      case 0x5d: /* ] */
        depth--;
        top = depth > 0 ? frames[depth - 1] : undefined;
        break;
      case 0x2c: /* , */
        if (top !== undefined) {
          if (top.isObject) top.key = PENDING;
          else top.index++;
        }
        break;
    }
    i++;
  }
  return out ?? [];
}

/**
 * Whether JSON text, which JSON.parse turned into `parsed`, repeats no key. Exact both ways.
 * Each key in the text is followed by one colon outside strings; parsing drops at least one
 * key per duplicate, so there is none exactly when the text has as many keys as `parsed`.
 * Counting the text's keys means finding the end of every string token; colons are cheaper:
 *
 * 1. A key's colon follows its closing quote or whitespace. When the colons that do are as many
 *    as the keys of `parsed` (never more than the text's keys), nothing was dropped. This reads
 *    no string of `parsed`; colons inside strings rarely follow a quote or whitespace.
 * 2. Otherwise, by all colons: every one outside strings ends a key, and the string tokens that
 *    survive parsing hold, decoded, their raw colons plus any written as \u003a. With no such
 *    escape in the text: colons(text) = keys(parsed) + colons in parsed strings + (keys and
 *    string colons of dropped duplicates, at least 1 per duplicate): equal exactly when nothing
 *    was dropped.
 * 3. With the escape, the text's keys are counted.
 */
export function noDuplicateKeys(text: string, parsed: unknown): boolean {
  const keys = countKeys(parsed);
  if (keyEndingColons(text) === keys) return true;
  if (text.indexOf('\\u003') < 0 || !ESCAPED_COLON.test(text)) return keysAndColons(parsed) === colonsIn(text);
  return keys === countTextKeys(text);
}

/** Colons right after a quote or JSON whitespace: the text's keys, plus any string holds so. */
function keyEndingColons(text: string): number {
  let n = 0;
  for (let i = text.indexOf(':'); i >= 0; i = text.indexOf(':', i + 1)) {
    const c = text.charCodeAt(i - 1);
    if (c === 0x22 /* " */ || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) n++;
  }
  return n;
}

const ESCAPED_COLON = /\\u003[aA]/;

/** Colons in s. */
function colonsIn(s: string): number {
  let n = 0;
  for (let i = s.indexOf(':'); i >= 0; i = s.indexOf(':', i + 1)) n++;
  return n;
}

/** Keys of every object in a parsed JSON value, plus the colons in its keys and strings. */
function keysAndColons(v: unknown): number {
  if (typeof v === 'string') return v.indexOf(':') < 0 ? 0 : colonsIn(v);
  if (typeof v !== 'object' || v === null) return 0;
  let n = 0;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) n += keysAndColons(v[i]);
    return n;
  }
  for (const k in v) n += 1 + (k.indexOf(':') < 0 ? 0 : colonsIn(k)) + keysAndColons((v as Record<string, unknown>)[k]);
  return n;
}

/** Keys of every object in a parsed JSON value. */
function countKeys(v: unknown): number {
  if (typeof v !== 'object' || v === null) return 0;
  let n = 0;
  if (Array.isArray(v)) {
    for (const item of v) n += countKeys(item);
    return n;
  }
  for (const k in v) n += 1 + countKeys((v as Record<string, unknown>)[k]);
  return n;
}

/** Keys in JSON text: the colons outside strings. */
function countTextKeys(text: string): number {
  let n = 0;
  let i = 0;
  for (;;) {
    const q = text.indexOf('"', i);
    const gapEnd = q < 0 ? text.length : q;
    for (let j = i; j < gapEnd; j++) if (text.charCodeAt(j) === 0x3a) n++;
    if (q < 0) return n;
    i = stringEnd(text, q + 1) + 1;
  }
}

/** Marks an object frame waiting for its next key. */
const PENDING: unique symbol = Symbol('pending');

class Frame {
  isObject = false;
  index = 0;
  key: string | typeof PENDING = PENDING;
  private keys: string[] = [];
  private set: Set<string> | undefined;

  open(isObject: boolean): void {
    this.isObject = isObject;
    this.index = 0;
    this.key = PENDING;
    this.keys.length = 0;
    this.set = undefined;
  }

  /** Records a key; true when the object had it already. */
  seen(key: string): boolean {
    // Most objects have a few keys: a short array beats a Set.
    if (this.set !== undefined) {
      if (this.set.has(key)) return true;
      this.set.add(key);
      return false;
    }
    if (this.keys.includes(key)) return true;
    this.keys.push(key);
    if (this.keys.length > 16) this.set = new Set(this.keys);
    return false;
  }
}

/** Index of the quote closing the string whose text starts at `from`. */
function stringEnd(text: string, from: number): number {
  let q = text.indexOf('"', from);
  for (;;) {
    // A quote preceded by an odd number of backslashes is escaped.
    let b = q - 1;
    while (b >= from && text.charCodeAt(b) === 0x5c) b--;
    if ((q - 1 - b) % 2 === 0) return q;
    q = text.indexOf('"', q + 1);
  }
}

/** kube's path of a key: "spec.containers[0].image". */
function pathOf(frames: Frame[], depth: number, key: string): string {
  let path = '';
  // frames[depth - 1] is the object holding `key`; the outer frames name where it sits.
  for (let d = 0; d < depth - 1; d++) {
    const f = frames[d];
    if (f.isObject) path = path ? `${path}.${String(f.key)}` : String(f.key);
    else path = `${path}[${f.index}]`;
  }
  return path ? `${path}.${key}` : key;
}

/** Paths of keys that appear twice in the same YAML mapping (first document). */
export function duplicateYamlFields(text: string): string[] {
  const out: string[] = [];
  const doc = YAML.parseDocument(text, { ...KUBE_YAML, uniqueKeys: false });
  const walk = (node: unknown, path: string) => {
    if (YAML.isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const key = String(YAML.isScalar(pair.key) ? pair.key.value : pair.key);
        const p = path ? `${path}.${key}` : key;
        if (seen.has(key)) out.push(p);
        seen.add(key);
        walk(pair.value, p);
      }
    } else if (YAML.isSeq(node)) {
      node.items.forEach((item, idx) => walk(item, `${path}[${idx}]`));
    }
  };
  walk(doc.contents, '');
  return out;
}
