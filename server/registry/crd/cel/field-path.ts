// kube's ValidFieldPath (apiextensions-apiserver's schema/cel): a JSON path of `.name` and
// `['name']` steps through properties and map keys, checked against a schema and normalized. A
// rule's fieldPath takes both steps; a selectable field's jsonPath only `.name` (kube calls it
// with array notation disallowed), and may cross additionalProperties: true.
import { isPlainObject } from '../../../util/json.ts';

/** Validates a rule's fieldPath against the node schema; returns the normalized path or an error. */
export function validFieldPath(jsonPath: string, schema: unknown): { path?: string; error?: string } {
  const tokens = fieldPathTokens(jsonPath);
  let s: any = schema;
  let path = '';
  const append = (name: string, named: boolean): string | undefined => {
    if (named) {
      path = path === '' ? name : `${path}.${name}`;
      const p = isPlainObject(s?.properties) ? s.properties[name] : undefined;
      if (!isPlainObject(p)) return 'does not refer to a valid field';
      s = p;
    } else {
      path = `${path}[${name}]`;
      s = isPlainObject(s?.additionalProperties) ? s.additionalProperties : undefined;
    }
    return undefined;
  };
  const namedHere = (): boolean | undefined => (isPlainObject(s?.properties) ? true : s?.additionalProperties !== undefined ? false : undefined);
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i];
    if (tok === '[') {
      const q = tokens[++i];
      if (q === undefined) return { error: 'unexpected end of JSON path' };
      if (q.length < 2 || q[0] !== "'" || q[q.length - 1] !== "'") return { error: `expected single quoted string but got ${q}` };
      let bad: string | undefined;
      const unescaped = q.slice(1, -1).replace(/\\./g, (m) => {
        const map: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', "'": "'", '\\': '\\' };
        if (!(m[1] in map)) bad = `invalid escape char ${m}`;
        return map[m[1]] ?? '';
      });
      if (bad) return { error: `invalid string literal: ${bad}` };
      const named = namedHere();
      if (named === undefined) return { error: 'does not refer to a valid field' };
      const err = append(unescaped, named);
      if (err) return { error: err };
      const close = tokens[++i];
      if (close === undefined) return { error: 'unexpected end of JSON path' };
      if (close !== ']') return { error: `expected ] but got ${close}` };
    } else if (tok === '.') {
      const name = tokens[++i];
      if (name === undefined) return { error: 'unexpected end of JSON path' };
      const named = namedHere();
      if (named === undefined) return { error: 'does not refer to a valid field' };
      const err = append(name, named);
      if (err) return { error: err };
    } else {
      return { error: `expected [ or . but got: ${tok}` };
    }
  }
  return { path };
}

/** How kube's ValidFieldPath splits a path: ".", "[" and "]" alone, a leading-quote token up to its closing quote. */
function fieldPathTokens(p: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < p.length; ) {
    if (p[i] === "'") {
      let j = i + 1;
      while (j < p.length && !(p[j] === "'" && p[j - 1] !== '\\')) j++;
      out.push(p.slice(i, Math.min(j + 1, p.length)));
      i = j + 1;
    } else if (p[i] === '.' || p[i] === '[' || p[i] === ']') {
      out.push(p[i++]);
    } else {
      let j = i;
      while (j < p.length && p[j] !== '.' && p[j] !== '[' && p[j] !== ']') j++;
      out.push(p.slice(i, j));
      i = j;
    }
  }
  return out;
}

/**
 * kube's ValidFieldPath with array notation disallowed (selectable fields): the normalized path
 * (field.Path form), its first segment and the schema it reaches, or the error text.
 */
export function selectableFieldPath(jsonPath: string, schema: unknown): { path: string; root: string; schema: unknown } | { error: string } {
  const tokens = fieldPathTokens(jsonPath);
  let s: unknown = schema;
  let path = '';
  let root = '';
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i];
    if (tok === '[') return { error: 'array notation is not allowed' };
    if (tok !== '.') return { error: `expected [ or . but got: ${tok}` };
    const name = tokens[++i];
    if (name === undefined) return { error: 'unexpected end of JSON path' };
    if (isPlainObject(s) && isPlainObject(s.properties)) {
      const p = s.properties[name];
      if (!isPlainObject(p)) return { error: 'does not refer to a valid field' };
      path = path === '' ? name : `${path}.${name}`;
      s = p;
    } else if (isPlainObject(s) && s.additionalProperties !== undefined && s.additionalProperties !== false) {
      path = `${path}[${name}]`;
      s = isPlainObject(s.additionalProperties) ? s.additionalProperties : undefined;
    } else {
      return { error: 'does not refer to a valid field' };
    }
    if (root === '') root = path;
  }
  return { path, root, schema: s };
}
