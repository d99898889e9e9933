// Path elements (structured-merge-diff's fieldpath.PathElement): what names one step of a field
// path, their order, and how kube prints them. Their FieldsV1 names are in serialize-pe.ts.
import { compareStrings } from '../../../go/strings.ts';
import { compareValues, valueToString } from './value.ts';

/**
 * `f:<name>` (a struct field or map key), `k:<json>` (the element of a list-map, named by its key
 * fields), `v:<json>` (the element of a set) and `i:<index>` (an element of an atomic list; never
 * produced from a schema, only carried when read).
 */
export type PathElement =
  | { readonly field: string }
  | { readonly key: ReadonlyArray<readonly [string, unknown]> }
  | { readonly value: unknown }
  | { readonly index: number };

export const fieldPE = (name: string): PathElement => ({ field: name });
export const valuePE = (value: unknown): PathElement => ({ value });
export const indexPE = (index: number): PathElement => ({ index });
/** A list-map element named by its key fields (kept sorted by name, as kube does). */
export function keyPE(fields: Record<string, unknown>): PathElement {
  const key = Object.keys(fields)
    .sort(compareStrings)
    .map((k) => [k, fields[k]] as const);
  return { key };
}

const kindRank = (pe: PathElement): number => ('field' in pe ? 0 : 'key' in pe ? 1 : 'value' in pe ? 2 : 3);

export function comparePathElements(a: PathElement, b: PathElement): number {
  if ('field' in a && 'field' in b) return compareStrings(a.field, b.field);
  const ra = kindRank(a);
  const rb = kindRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  if ('field' in a) return compareStrings(a.field, (b as { field: string }).field);
  if ('key' in a) {
    const ka = a.key;
    const kb = (b as { key: ReadonlyArray<readonly [string, unknown]> }).key;
    for (let i = 0; ; i++) {
      if (i >= ka.length && i >= kb.length) return 0;
      if (i >= ka.length) return -1;
      if (i >= kb.length) return 1;
      let c = compareStrings(ka[i][0], kb[i][0]);
      if (c !== 0) return c;
      c = compareValues(ka[i][1], kb[i][1]);
      if (c !== 0) return c;
    }
  }
  if ('value' in a) return compareValues(a.value, (b as { value: unknown }).value);
  const ia = a.index;
  const ib = (b as { index: number }).index;
  return ia < ib ? -1 : ia > ib ? 1 : 0;
}

/** `.spec`, `[name="nginx"]`, `[=value]`, `[0]` — how kube prints a path element. */
export function pathElementString(pe: PathElement): string {
  if ('field' in pe) return '.' + pe.field;
  if ('key' in pe) return '[' + pe.key.map(([k, v]) => `${k}=${valueToString(v)}`).join(',') + ']';
  if ('value' in pe) return `[=${valueToString(pe.value)}]`;
  return `[${pe.index}]`;
}
