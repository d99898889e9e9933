// kube's JSONPatch library (k8s.io/apiserver/pkg/cel/library/jsonpatch.go), which mutating
// admission policies' environment adds: jsonpatch.escapeKey(k), a map key as a JSON pointer
// token (~ as ~0, / as ~1). The checker declares it only where objects are constructed.
import { celFunc } from '@bufbuild/cel';
import { STRING } from './values.ts';

export const JSON_PATCH_LIBRARY = [celFunc('jsonpatch.escapeKey', [STRING], STRING, (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1'))];
