// Gap: @bufbuild/cel/ext has no lists extension. This is cel-go's ext.Lists at version 3, which
// kube's environment includes: slice, flatten, sort, sortBy (expanded by macros.ts to
// @sortByAssociatedKeys), reverse, distinct and lists.range. Its ordering and equality are CEL's
// own `<` and `==`, run by @bufbuild/cel itself.
import { celEnv, celFunc, celMethod, isCelList, isCelUint, parse, plan } from '@bufbuild/cel';
import { DYN, INT, LIST, listItems } from '../values.ts';

// CEL equality and ordering, as CEL itself has them (for sort, sortBy and distinct).

type Binary = (ctx: { a: unknown; b: unknown }) => unknown;
let eqPlan: Binary | undefined;
let ltPlan: Binary | undefined;
function celEq(a: unknown, b: unknown): boolean {
  eqPlan ??= plan(celEnv({ variables: { a: DYN, b: DYN } }), parse('a == b')) as Binary;
  return eqPlan({ a, b }) === true;
}
function celLess(a: unknown, b: unknown): boolean {
  ltPlan ??= plan(celEnv({ variables: { a: DYN, b: DYN } }), parse('a < b')) as Binary;
  const r = ltPlan({ a, b });
  if (typeof r !== 'boolean') throw new Error('list elements must be comparable');
  return r;
}
/** The CEL type name of a comparable value (traits.Comparer in cel-go), else undefined. */
function comparableType(v: any): string | undefined {
  switch (typeof v) {
    case 'bigint':
      return 'int';
    case 'number':
      return 'double';
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
  }
  if (isCelUint(v)) return 'uint';
  if (v instanceof Uint8Array) return 'bytes';
  const t = v?.message?.$typeName;
  return t === 'google.protobuf.Timestamp' || t === 'google.protobuf.Duration' ? t : undefined;
}
/** cel-go's sortListByAssociatedKeys: the items of list in the order of their keys. */
function sortByKeys(items: any[], keys: any[]): any[] {
  if (items.length !== keys.length) {
    throw new Error(`@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got ${items.length} and ${keys.length} elements respectively`);
  }
  if (items.length === 0) return items;
  const t = comparableType(keys[0]);
  if (t === undefined) throw new Error('list elements must be comparable');
  if (keys.some((k) => comparableType(k) !== t)) throw new Error('list elements must have the same type');
  const order = keys.map((_, i) => i);
  order.sort((i, j) => (celLess(keys[i], keys[j]) ? -1 : celLess(keys[j], keys[i]) ? 1 : 0));
  return order.map((i) => items[i]);
}
function flattenList(l: any, depth: bigint): any[] {
  if (depth < 0n) throw new Error('level must be non-negative');
  const out: any[] = [];
  for (const v of l) {
    if (isCelList(v) && depth > 0n) out.push(...flattenList(v, depth - 1n));
    else out.push(v);
  }
  return out;
}

/** cel-go's ext.Lists at version 3. */
export const EXT_LISTS_LIBRARY = [
  celMethod('slice', LIST, [INT, INT], LIST, function (start: bigint, end: bigint) {
    const a = listItems(this);
    if (start < 0n || end < 0n) throw new Error(`cannot slice(${start}, ${end}), negative indexes not supported`);
    if (start > end) throw new Error(`cannot slice(${start}, ${end}), start index must be less than or equal to end index`);
    if (BigInt(a.length) < end) throw new Error(`cannot slice(${start}, ${end}), list is length ${a.length}`);
    return a.slice(Number(start), Number(end));
  }),
  celMethod('flatten', LIST, [], LIST, function () {
    return flattenList(this, 1n);
  }),
  celMethod('flatten', LIST, [INT], LIST, function (depth: bigint) {
    return flattenList(this, depth);
  }),
  celMethod('sort', LIST, [], LIST, function () {
    const a = listItems(this);
    return sortByKeys(a, a);
  }),
  celMethod('@sortByAssociatedKeys', LIST, [LIST], LIST, function (keys) {
    return sortByKeys(listItems(this), listItems(keys));
  }),
  celMethod('reverse', LIST, [], LIST, function () {
    return listItems(this).reverse();
  }),
  celMethod('distinct', LIST, [], LIST, function () {
    const out: any[] = [];
    for (const v of listItems(this)) if (!out.some((x) => celEq(v, x))) out.push(v);
    return out;
  }),
  celFunc('lists.range', [INT], LIST, (n: bigint) => {
    if (n < 0n) throw new Error(`lists.range: size must be non-negative, got ${n}`);
    if (n > 10_000_000n) throw new Error(`lists.range: size ${n} exceeds maximum allowed (10000000)`);
    return Array.from({ length: Number(n) }, (_, i) => BigInt(i));
  }),
];
