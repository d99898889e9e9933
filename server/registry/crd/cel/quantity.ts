// kube's quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go): quantity(),
// isQuantity() and the Quantity methods, over exact rational values (k8s resource.Quantity).
// isGreaterThan, isLessThan and compareTo, which Semver declares too, are in environment.ts.
import { celFunc, celMethod } from '@bufbuild/cel';
import { parseQuantity, addRationals, subtractRationals, compareRationals, type Rational } from '../../../util/quantity.ts';
import { expectTag, tagged } from './bufbuild-gaps/opaque-values.ts';
import { BOOL, DOUBLE, DYN, INT, MAP, STRING } from './values.ts';

const quantityValue = (r: Rational) => tagged('quantity', { num: r.num, den: r.den });
export const ratOf = (v: any): Rational => {
  if (typeof v === 'bigint') return { num: v, den: 1n };
  const q = expectTag(v, 'quantity', 'quantity');
  return { num: q.get('num'), den: q.get('den') };
};
export const cmpRat = compareRationals;

export const QUANTITY_LIBRARY = [
  celFunc('quantity', [STRING], MAP, (s: string) => {
    const r = parseQuantity(s);
    if (!r) throw new Error('quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'');
    return quantityValue(r);
  }),
  celFunc('isQuantity', [STRING], BOOL, (s: string) => parseQuantity(s) !== undefined),
  celMethod('isInteger', MAP, [], BOOL, function () {
    const r = ratOf(this);
    return r.den === 1n && r.num >= -(2n ** 63n) && r.num < 2n ** 63n;
  }),
  celMethod('asInteger', MAP, [], INT, function () {
    const r = ratOf(this);
    if (r.den !== 1n || r.num < -(2n ** 63n) || r.num >= 2n ** 63n) throw new Error('cannot convert value to integer');
    return r.num;
  }),
  celMethod('asApproximateFloat', MAP, [], DOUBLE, function () {
    const r = ratOf(this);
    return Number(r.num) / Number(r.den);
  }),
  celMethod('sign', MAP, [], INT, function () {
    const r = ratOf(this);
    return r.num > 0n ? 1n : r.num < 0n ? -1n : 0n;
  }),
  celMethod('add', MAP, [DYN], MAP, function (o) {
    const a = ratOf(this);
    const b = ratOf(o);
    return quantityValue(addRationals(a, b));
  }),
  celMethod('sub', MAP, [DYN], MAP, function (o) {
    const a = ratOf(this);
    const b = ratOf(o);
    return quantityValue(subtractRationals(a, b));
  }),
];
