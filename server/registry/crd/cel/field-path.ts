// A rule's fieldPath, checked against the schema it sits on and normalized, as kube's
// ValidFieldPath (apiextensions-apiserver's validation) does: `.name` and `['name']` steps
// through properties and map keys.
import { isPlainObject } from '../../../util/json.ts';

/** Validates a rule's fieldPath against the node schema; returns the normalized path or an error. */
export function validFieldPath(jsonPath: string, schema: unknown): { path?: string; error?: string } {
  const tokens: string[] = [];
  for (let i = 0; i < jsonPath.length; ) {
    const ch = jsonPath[i];
    if (ch === '.' || ch === '[' || ch === ']') {
      tokens.push(ch);
      i++;
    } else if (ch === "'") {
      let j = i + 1;
      while (j < jsonPath.length && !(jsonPath[j] === "'" && jsonPath[j - 1] !== '\\')) j++;
      tokens.push(jsonPath.slice(i, Math.min(j + 1, jsonPath.length)));
      i = j + 1;
    } else {
      let j = i;
      while (j < jsonPath.length && !'.[]'.includes(jsonPath[j])) j++;
      tokens.push(jsonPath.slice(i, j));
      i = j;
    }
  }
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
