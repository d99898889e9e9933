// CEL expressions over named variables other than self/oldSelf — what kube's authentication CEL
// (k8s.io/apiserver/pkg/authentication/cel: `claims` and `user`) and similar callers compile —
// in the same environment, checker and planner as x-kubernetes-validations (compile.ts), so the
// server has one CEL stack. Values come in as JSON (jsonToCel: integers as int, as kube's
// unstructured conversion gives them) and results go out as JSON-ish values (celToJson).
import { isCelError, isCelList, isCelMap, celList, celMap, type CelInput } from '@bufbuild/cel';
import { compileInScope } from './compile.ts';
import { isOverloadError, runtimeErrorText } from './bufbuild-gaps/runtime-errors.ts';
import { T, listOf, mapOf, typeName, type CT } from './types.ts';

/** The CEL types a caller declares its variables with. */
export const CelTypes = {
  dyn: T.dyn,
  string: T.string,
  bool: T.bool,
  listOf: (e: CT): CT => listOf(e),
  mapOf: (key: CT, value: CT): CT => mapOf(key, value),
  /** An object type with these fields (kube's NewObjectType). */
  objectOf: (fields: Record<string, CT>): CT => ({ k: 'object', fields: new Map(Object.entries(fields)), min: 2 }),
  /** kube's Authorizer (authz.ts: the value is made by authorizerValue). */
  authorizer: T.authorizer,
};
export type CelType = CT;

export interface CompiledExpression {
  /** The expression's value for these variables (JSON values through jsonToCel), or throws a CelEvaluationError. */
  evaluate(variables: Record<string, unknown>): unknown;
  /** The same, as the CEL value itself (what another expression reads as a variable: admission policies' `variables`). */
  evaluateValue(variables: Record<string, unknown>): unknown;
  /** The checked result type as cel-go names it (string, bool, list(string), dyn…). */
  resultType: string;
  /** Whether the expression selects `operand.field` anywhere (kube's hasSelectExp). */
  selects(operand: string, field: string): boolean;
}

export class CelEvaluationError extends Error {}

/**
 * Compiles src with the given variables (objectConstruction: mutating admission policies'
 * `Object{...}` and `JSONPatch{...}`, run as maps), or returns cel-go's issues text ("ERROR: <input>:1:1: ..."). */
export function compileExpression(src: string, variables: Record<string, CT>, opts: { objectConstruction?: boolean } = {}): { compiled: CompiledExpression } | { error: string } {
  const c = compileInScope(src, new Map(Object.entries(variables)), opts);
  if (c.error !== undefined || !c.program) return { error: c.error ?? 'compilation failed' };
  const program = c.program as unknown as (ctx: Record<string, unknown>) => unknown;
  const parsed: unknown = c.parsed;
  const evaluateValue = (vars: Record<string, unknown>): unknown => {
    let result: unknown;
    try {
      result = program(vars);
    } catch (e) {
      throw new CelEvaluationError(runtimeErrorText(String((e as Error | undefined)?.message ?? e)));
    }
    if (isCelError(result)) {
      const msg = result.message;
      throw new CelEvaluationError(isOverloadError(msg) ? 'no such overload' : runtimeErrorText(msg));
    }
    return result;
  };
  return {
    compiled: {
      resultType: typeName(c.resultType ?? T.dyn),
      evaluate: (vars) => celToJson(evaluateValue(vars)),
      evaluateValue,
      selects: (operand, field) => selectsField(parsed, operand, field),
    },
  };
}

/** A JSON value as a CEL value: objects as maps, arrays as lists, integers as int (kube's unstructured). */
export function jsonToCel(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return celList(v.map(jsonToCel) as CelInput[]);
  if (typeof v === 'object') {
    const m = new Map<string, CelInput>();
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) m.set(k, jsonToCel(x) as CelInput);
    return celMap(m);
  }
  return v;
}

/** A CEL result as plain values: lists as arrays, maps as objects, ints as numbers. */
export function celToJson(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (isCelList(v)) return [...v].map(celToJson);
  if (isCelMap(v)) {
    const o: Record<string, unknown> = {};
    for (const [k, x] of v) o[String(k)] = celToJson(x);
    return o;
  }
  if (v !== null && typeof v === 'object' && 'value' in v && typeof (v as { value: unknown }).value === 'bigint') return Number((v as { value: bigint }).value);
  return v;
}

/** kube's hasSelectExp: `operand.field` or `operand.?field` (lowered to @optSelect) anywhere in the planned AST. */
function selectsField(expr: unknown, operand: string, field: string): boolean {
  const seen = new Set<unknown>();
  const walk = (node: unknown): boolean => {
    if (node === null || typeof node !== 'object' || seen.has(node)) return false;
    seen.add(node);
    const n = node as { exprKind?: { case?: string; value?: Record<string, unknown> } };
    const kind = n.exprKind;
    if (kind?.case === 'selectExpr' && kind.value) {
      const sel = kind.value as { operand?: { exprKind?: { case?: string; value?: { name?: string } } }; field?: string };
      if (sel.field === field && sel.operand?.exprKind?.case === 'identExpr' && sel.operand.exprKind.value?.name === operand) return true;
    }
    if (kind?.case === 'callExpr' && kind.value) {
      const call = kind.value as { function?: string; args?: { exprKind?: { case?: string; value?: { name?: string; constantKind?: { case?: string; value?: unknown } } } }[] };
      const [a, b] = call.args ?? [];
      if ((call.function === '_?._' || call.function === '@optSelect') && a?.exprKind?.case === 'identExpr' && a.exprKind.value?.name === operand && b?.exprKind?.case === 'constExpr' && b.exprKind.value?.constantKind?.value === field) return true;
    }
    for (const value of Object.values(node)) {
      if (Array.isArray(value)) {
        if (value.some(walk)) return true;
      } else if (value !== null && typeof value === 'object' && walk(value)) return true;
    }
    return false;
  };
  const root = (expr as { expr?: unknown } | undefined)?.expr ?? expr;
  return walk(root);
}
