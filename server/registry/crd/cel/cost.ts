// Cost estimation, in the spirit of cel-go's estimator with kube's library costs: a static
// estimate the checker (checker.ts) computes over the AST, with sizes from the schema (types.ts).
// Per expression: base costs of 1 per identifier/select/call, 10 per list literal and 30 per map
// literal; string traversals cost 0.1 per character (equality and comparisons on the shorter
// operand; contains: the product of both traversal costs; matches: input traversal × 0.25 per
// pattern character, as cel-go's RegexStringLengthCostFactor); list functions and `in` cost the
// list size; comprehensions cost range size × (condition + step). compile.ts multiplies each
// estimate by the number of times the rule can run (product of maxItems/maxProperties above it,
// or the request-size bound when unbounded) and compares it with kube's limits (limits.ts).
// Runtime cost budgets are not enforced.
import type { Expr } from './ast.ts';
import { MaxRequestSizeBytes } from './limits.ts';
import type { CT } from './types.ts';

export const sizeOf = (t: CT): number => t.max ?? (t.k === 'dyn' ? MaxRequestSizeBytes : 1);
export const strCost = (n: number, f = 0.1): number => Math.ceil(n * f);
/** cel-go's ListCreateBaseCost, charged by the ext.Lists functions that build a list. */
export const LIST_CREATE_COST = 10;
/** A size cel-go cannot bound (math.MaxUint64): any cost multiplied by it is over budget. */
export const UNBOUNDED = 2 ** 64;
/** kube's MaxNameFormatRegexSize × RegexStringLengthCostFactor: validate()'s cost per traversed character. */
export const FORMAT_VALIDATE_FACTOR = 128 * 0.25;

/** The value of an int literal argument (cel-go's nodeAsUintValue), else undefined. */
export function constUint(e: Expr | undefined): number | undefined {
  const c = e?.exprKind?.case === 'constExpr' ? e.exprKind.value.constantKind : undefined;
  if ((c?.case === 'int64Value' || c?.case === 'uint64Value') && c.value >= 0n) return Number(c.value);
  return undefined;
}

export function costErrorMessage(costName: string, cost: number, limit: number): string {
  const f = cost / limit;
  const factor = f > 100 ? 'more than 100x' : f < 1.5 ? `${f.toFixed(6)}x` : `${f.toFixed(1)}x`;
  return `${costName} exceeds budget by factor of ${factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}
