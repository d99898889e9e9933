// kube's lists library (k8s.io/apiserver/pkg/cel/library/lists.go): isSorted, sum, min, max,
// indexOf and lastIndexOf on lists. (cel-go's ext.Lists, which kube's environment also has, is in
// bufbuild-gaps/ext-lists.ts.)
import { celMethod } from '@bufbuild/cel';
import { BOOL, DYN, INT, LIST, celEquals, compareCel, listItems } from './values.ts';

export const LISTS_LIBRARY = [
  celMethod('isSorted', LIST, [], BOOL, function () {
    const a = listItems(this);
    for (let i = 1; i < a.length; i++) if (compareCel(a[i - 1], a[i]) > 0) return false;
    return true;
  }),
  celMethod('sum', LIST, [], DYN, function () {
    const a = listItems(this);
    if (a.length === 0) return 0n;
    if (a.every((x) => typeof x === 'bigint')) return a.reduce((s: bigint, x: bigint) => s + x, 0n);
    return a.reduce((s: number, x: any) => s + Number(x), 0);
  }),
  celMethod('min', LIST, [], DYN, function () {
    const a = listItems(this);
    if (a.length === 0) throw new Error('min called on empty list');
    return a.reduce((m, x) => (compareCel(x, m) < 0 ? x : m));
  }),
  celMethod('max', LIST, [], DYN, function () {
    const a = listItems(this);
    if (a.length === 0) throw new Error('max called on empty list');
    return a.reduce((m, x) => (compareCel(x, m) > 0 ? x : m));
  }),
  celMethod('indexOf', LIST, [DYN], INT, function (v) {
    const a = listItems(this);
    return BigInt(a.findIndex((x) => celEquals(x, v)));
  }),
  celMethod('lastIndexOf', LIST, [DYN], INT, function (v) {
    const a = listItems(this);
    for (let i = a.length - 1; i >= 0; i--) if (celEquals(a[i], v)) return BigInt(i);
    return -1n;
  }),
];
