// kube's sets library (k8s.io/apiserver/pkg/cel/library/sets.go): sets.contains, sets.equivalent
// and sets.intersects over lists.
import { celFunc } from '@bufbuild/cel';
import { BOOL, LIST, celEquals, listItems } from './values.ts';

export const SETS_LIBRARY = [
  celFunc('sets.contains', [LIST, LIST], BOOL, (a, b) => listItems(b).every((x) => listItems(a).some((y) => celEquals(x, y)))),
  celFunc('sets.equivalent', [LIST, LIST], BOOL, (a, b) => listItems(b).every((x) => listItems(a).some((y) => celEquals(x, y))) && listItems(a).every((x) => listItems(b).some((y) => celEquals(x, y)))),
  celFunc('sets.intersects', [LIST, LIST], BOOL, (a, b) => listItems(a).some((x) => listItems(b).some((y) => celEquals(x, y)))),
];
