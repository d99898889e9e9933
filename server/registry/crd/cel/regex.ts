// kube's regex library (k8s.io/apiserver/pkg/cel/library/regex.go): find() and findAll() on
// strings. (Constant patterns are checked as RE2 when a rule compiles: compile.ts.)
import { celMethod, listType } from '@bufbuild/cel';
import { INT, STRING } from './values.ts';

export const REGEX_LIBRARY = [
  celMethod('find', STRING, [STRING], STRING, function (re: string) {
    const m = new RegExp(re, 'u').exec(this);
    return m ? m[0] : '';
  }),
  celMethod('findAll', STRING, [STRING], listType(STRING), function (re: string) {
    return [...this.matchAll(new RegExp(re, 'gu'))].map((m) => m[0]);
  }),
  celMethod('findAll', STRING, [STRING, INT], listType(STRING), function (re: string, n: bigint) {
    const all = [...this.matchAll(new RegExp(re, 'gu'))].map((m) => m[0]);
    return n < 0n ? all : all.slice(0, Number(n));
  }),
];
