// CEL values as the Kubernetes libraries handle them: the types their functions are declared
// with, a list's items, and the ordering and equality the lists and sets libraries use (numbers
// compared across int, uint and double as JavaScript numbers). ext.Lists' sort and distinct use
// CEL's own `<` and `==` instead (bufbuild-gaps/ext-lists.ts), as cel-go does there.
import { CelScalar, isCelList, isCelMap, listType, mapType } from '@bufbuild/cel';

export const DYN = CelScalar.DYN;
export const STRING = CelScalar.STRING;
export const BOOL = CelScalar.BOOL;
export const INT = CelScalar.INT;
export const DOUBLE = CelScalar.DOUBLE;
export const LIST = listType(DYN);
export const MAP = mapType(DYN, DYN);

/** The order of list elements for isSorted, min and max. */
export function compareCel(a: any, b: any): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) {
    const x = Number(a);
    const y = Number(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (typeof a === 'object' && a?.value !== undefined && typeof b === 'object' && b?.value !== undefined) return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
  throw new Error('no such overload: comparison');
}

/** Element equality for indexOf, lastIndexOf and the sets functions. */
export function celEquals(a: any, b: any): boolean {
  if (a === b) return true;
  if (typeof a === 'bigint' || typeof b === 'bigint' || typeof a === 'number' || typeof b === 'number') {
    return (typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number') && Number(a) === Number(b);
  }
  if (isCelList(a) && isCelList(b)) {
    if (a.size !== b.size) return false;
    for (let i = 0; i < a.size; i++) if (!celEquals(a.get(i), b.get(i))) return false;
    return true;
  }
  if (isCelMap(a) && isCelMap(b)) {
    if (a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !celEquals(v, b.get(k))) return false;
    return true;
  }
  return false;
}

export function listItems(l: any): any[] {
  return isCelList(l) ? [...l] : [];
}
