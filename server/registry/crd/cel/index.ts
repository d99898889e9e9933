// registry/crd/cel/: x-kubernetes-validations — CEL rules compiled when a CRD is written
// (compile.ts) and evaluated on custom objects (evaluate.ts), on @bufbuild/cel's parser and
// planner. Laid out as kube has it (k8s.io/apiserver/pkg/cel and pkg/apiserver/schema/cel):
//   types.ts          the CEL types of schema nodes (DeclTypes), with their sizes; name escaping
//   unstructured.ts   JSON values as CEL values under a schema node (UnstructuredToVal)
//   checker.ts        the static checks of cel-go's checker, with the cost estimate (cost.ts,
//                     declarations.ts: what the checker knows of the environment), limits.ts
//   environment.ts    the standard library, the strings extension and kube's libraries, one file
//                     each: lists, regex, sets, urls, ip, cidr, quantity, semver, format
//                     (values.ts: what they share)
//   compile.ts        rules and messageExpressions compiled per schema node, the CRD's cost checks
//   field-path.ts     a rule's fieldPath (ValidFieldPath)
//   evaluate.ts       rules run on an object: oldSelf, messages, reasons, ratcheting
//   ast.ts            the parsed AST and cel-go's rendering of issues
//   bufbuild-gaps/    every workaround for what @bufbuild/cel lacks or does differently from
//                     cel-go (its README lists them), each to be deleted when the library closes it
//   expression.ts     expressions over other named variables (authentication's claims and user)
//   authz.ts          kube's authorizer library, for admission policies' `authorizer`
//   jsonpatch.ts      kube's JSONPatch library (jsonpatch.escapeKey), for mutating policies
// Files here import go/, util/, validation/ and each other (schema/ if ever needed); never http/
// or storage/. The rest of the server imports this file.
export { MaxRequestSizeBytes, StaticEstimatedCostLimit, StaticEstimatedCRDCostLimit } from './limits.ts';
export { escapeCelName, schemaDeclType } from './types.ts';
export { toCelValue } from './unstructured.ts';
export { costErrorMessage } from './cost.ts';
export { selectableFieldPath, validFieldPath } from './field-path.ts';
export { compileSchemaRules, goValidationRule, hasValidationRules, type CelNode, type CompiledSchemaRules, type CompileRulesOptions, type ValidationRule } from './compile.ts';
export { evaluateRules, type EvaluateOptions } from './evaluate.ts';
export { authorizerValue, registerAuthzCheck, type AuthzCheck, type AuthzCheckAttributes, type AuthzCheckResult } from './authz.ts';
export { CelEvaluationError, CelTypes, celToJson, compileExpression, jsonToCel, type CelType, type CompiledExpression } from './expression.ts';
