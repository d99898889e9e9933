// Resource lists (kube's corev1.ResourceList: name → Quantity) and the arithmetic quota and the
// LimitRanger do on them, following apimachinery's resource.Quantity (a sum keeps the format of
// its first non-zero operand; String() is the canonical text in that format) and
// pkg/quota/v1/resources.go (Add, SubtractWithNonNegativeResult, Mask, LessThanOrEqual, IsZero,
// RemoveZeros, ...). Values are exact rationals, as inf.Dec keeps them.
import { parseQuantity, canonicalQuantity, addRationals, subtractRationals, compareRationals, type Rational } from '../../util/quantity.ts';

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

export interface Quantity {
  readonly value: Rational;
  readonly format: QuantityFormat;
}

export type ResourceList = Map<string, Quantity>;

const ZERO: Rational = Object.freeze({ num: 0n, den: 1n });

/** A quantity parsed from its text (the format from its suffix, as ParseQuantity gives it); undefined if it is not one. */
export function quantityOf(text: unknown): Quantity | undefined {
  if (typeof text === 'number') text = String(text);
  if (typeof text !== 'string') return undefined;
  const value = parseQuantity(text.trim());
  if (!value) return undefined;
  const suffix = /(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?[0-9]+)$/.exec(text.trim())?.[1];
  const format: QuantityFormat = suffix === undefined ? 'DecimalSI' : suffix.endsWith('i') ? 'BinarySI' : 'DecimalExponent';
  return { value, format };
}

/** resource.NewQuantity(n, DecimalSI). */
export function count(n: number | bigint): Quantity {
  return { value: { num: BigInt(n), den: 1n }, format: 'DecimalSI' };
}

/** resource.Quantity{Format: DecimalSI}: a zero that prints "0". */
export const zeroQuantity = (): Quantity => ({ value: ZERO, format: 'DecimalSI' });

export const isZero = (q: Quantity): boolean => q.value.num === 0n;
export const sign = (q: Quantity): number => (q.value.num > 0n ? 1 : q.value.num < 0n ? -1 : 0);
export const compare = (a: Quantity, b: Quantity): number => compareRationals(a.value, b.value);

/** Quantity.Add: the first operand's format, unless it is zero. */
export function add(a: Quantity, b: Quantity): Quantity {
  return { value: addRationals(a.value, b.value), format: isZero(a) ? b.format : a.format };
}

/** Quantity.Sub: the first operand's format, unless it is zero. */
export function subtract(a: Quantity, b: Quantity): Quantity {
  return { value: subtractRationals(a.value, b.value), format: isZero(a) ? b.format : a.format };
}

/** Quantity.String(): kube's canonical text in the quantity's format. */
export function quantityString(q: Quantity): string {
  const { num, den } = q.value;
  if (num === 0n) return '0';
  // BinarySI holds only for whole numbers of at least 1024 in magnitude (CanonicalizeBytes).
  if (q.format === 'BinarySI' && den === 1n && (num >= 1024n || num <= -1024n)) {
    return num % 1024n === 0n ? canonicalQuantity(`${num / 1024n}Ki`)! : num.toString();
  }
  // In nanos, rounded away from zero as kube rounds a value finer than 1n.
  const magnitude = num < 0n ? -num : num;
  const nanos = (magnitude * 1_000_000_000n + den - 1n) / den;
  const text = `${num < 0n ? '-' : ''}${nanos}`;
  return canonicalQuantity(q.format === 'DecimalExponent' ? `${text}e-9` : `${text}n`)!;
}

/** A resource list from an object's field (`{cpu: "1", memory: "1Gi"}`); what is not a quantity is left out. */
export function resourceListOf(field: unknown): ResourceList {
  const out: ResourceList = new Map();
  if (!field || typeof field !== 'object') return out;
  for (const [name, text] of Object.entries(field as Record<string, unknown>)) {
    const q = quantityOf(text);
    if (q) out.set(name, q);
  }
  return out;
}

/** A resource list as JSON, each quantity as kube writes it, in name order (as Go writes a map). */
export function resourceListJson(list: ResourceList): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of [...list.keys()].sort()) out[name] = quantityString(list.get(name)!);
  return out;
}

/** quota.Add: every key of either, summed where both have it. */
export function addLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, v] of a) {
    const other = b.get(k);
    out.set(k, other ? add(v, other) : v);
  }
  for (const [k, v] of b) if (!out.has(k)) out.set(k, v);
  return out;
}

/** quota.SubtractWithNonNegativeResult: a's keys, less b, never below zero. */
export function subtractNonNegative(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, v] of a) {
    const other = b.get(k);
    let r = other ? subtract(v, other) : v;
    if (sign(r) < 0) r = { value: ZERO, format: r.format };
    out.set(k, r);
  }
  return out;
}

/** quota.Mask: only the named keys. */
export function mask(list: ResourceList, names: Iterable<string>): ResourceList {
  const out: ResourceList = new Map();
  for (const k of names) {
    const v = list.get(k);
    if (v) out.set(k, v);
  }
  return out;
}

/** quota.RemoveZeros. */
export function removeZeros(list: ResourceList): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, v] of list) if (!isZero(v)) out.set(k, v);
  return out;
}

/** quota.IsNegative: the names of the negative quantities. */
export function negativeNames(list: ResourceList): string[] {
  return [...list].filter(([, v]) => sign(v) < 0).map(([k]) => k);
}

/** quota.LessThanOrEqual: whether every value of a is at most b's (a key b lacks is fine), and the keys that are not. */
export function lessThanOrEqual(a: ResourceList, b: ResourceList): { allowed: boolean; exceeded: string[] } {
  const exceeded: string[] = [];
  for (const [k, v] of a) {
    const limit = b.get(k);
    if (limit && compare(v, limit) > 0) exceeded.push(k);
  }
  return { allowed: exceeded.length === 0, exceeded };
}

/** quota.Equals: the same keys with equal values. */
export function equalLists(a: ResourceList, b: ResourceList): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const other = b.get(k);
    if (!other || compare(v, other) !== 0) return false;
  }
  return true;
}

/** prettyPrint of the quota admission: `name=value` sorted by name, joined by ",". */
export function prettyPrint(list: ResourceList): string {
  return [...list.keys()].sort().map((k) => `${k}=${quantityString(list.get(k)!)}`).join(',');
}

/** The larger of two quantities (the first when equal), as the pod resource helpers' max. */
export function maxQuantity(a: Quantity, b: Quantity): Quantity {
  return compare(b, a) > 0 ? b : a;
}
