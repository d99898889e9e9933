// Gap: macros of kube's environment that @bufbuild/cel's parser leaves as plain calls, expanded
// after parsing the way cel-go expands them: the two-variable comprehensions (all, exists,
// existsOne, exists_one, transformList, transformMap, transformMapEntry with an index/key and a
// value variable), ext.Lists' sortBy, and the optional library's optMap and optFlatMap. The
// checker then sees cel-go's AST (comprehensions with iterVar2, cel.bind-shaped bindings); the
// planner does not run comprehensions over two variables, so lowering.ts turns them into ones it
// does.
import { celFunc, celMap } from '@bufbuild/cel';
import type { Expr, Issue, SourceInfo } from '../ast.ts';
import { DYN, MAP } from '../values.ts';
import { AstBuilder, identName, mapChildren } from './ast-builder.ts';
import { goKey } from './runtime-errors.ts';

/** cel-go's accumulator variable, and the name it reserves (iteration variables may not take either). */
const ACCU = '@result';
const LEGACY_ACCU = '__result__';
const SORT_BY_VAR = '@__sortBy_input__';

/** The two-variable comprehension macros (ext.TwoVarComprehensions) and their argument counts. */
const TWO_VAR_MACROS = new Map<string, number[]>([
  ['all', [3]],
  ['exists', [3]],
  ['existsOne', [3]],
  ['exists_one', [3]],
  ['transformList', [3, 4]],
  ['transformMap', [3, 4]],
  ['transformMapEntry', [3, 4]],
]);

/** Expands the macros @bufbuild/cel leaves unexpanded (see above); returns the expansion errors. */
export function expandMacros(parsed: { expr: Expr; sourceInfo: SourceInfo }): Issue[] {
  const info = parsed.sourceInfo;
  const b = new AstBuilder(info);
  const issues: Issue[] = [];
  const at = (e: Expr) => info.positions[String(e.id)] ?? 0;
  const fail = (e: Expr, message: string): undefined => {
    issues.push({ offset: at(e), message });
    return undefined;
  };
  const iterVar = (arg: Expr, message: string): string | undefined => {
    const name = identName(arg);
    if (name === undefined) return fail(arg, message);
    if (name === ACCU || name === LEGACY_ACCU) return fail(arg, 'iteration variable overwrites accumulator variable');
    return name;
  };

  const twoVar = (e: Expr, fn: string, target: Expr, args: Expr[]): Expr => {
    const o = at(e);
    const v1 = identName(args[0]);
    const v2 = identName(args[1]);
    if (v1 === undefined) return fail(args[0], 'argument must be a simple name') ?? e;
    if (v2 === undefined) return fail(args[1], 'argument must be a simple name') ?? e;
    if (v1 === v2) return fail(args[1], `duplicate variable name: ${v1}`) ?? e;
    if (v1 === ACCU || v1 === LEGACY_ACCU) return fail(args[0], 'iteration variable overwrites accumulator variable') ?? e;
    if (v2 === ACCU || v2 === LEGACY_ACCU) return fail(args[1], 'iteration variable overwrites accumulator variable') ?? e;
    const accu = () => b.ident(o, ACCU);
    const filter = args.length === 4 ? args[2] : undefined;
    const transform = args[args.length - 1];
    const filtered = (step: Expr) => (filter ? b.call(o, '_?_:_', [filter, step, accu()]) : step);
    let accuInit: Expr;
    let loopCondition: Expr;
    let loopStep: Expr;
    let result: Expr = accu();
    switch (fn) {
      case 'all':
        accuInit = b.bool(o, true);
        loopCondition = b.call(o, '@not_strictly_false', [accu()]);
        loopStep = b.call(o, '_&&_', [accu(), args[2]]);
        break;
      case 'exists':
        accuInit = b.bool(o, false);
        loopCondition = b.call(o, '@not_strictly_false', [b.call(o, '!_', [accu()])]);
        loopStep = b.call(o, '_||_', [accu(), args[2]]);
        break;
      case 'existsOne':
      case 'exists_one':
        accuInit = b.int(o, 0n);
        loopCondition = b.bool(o, true);
        loopStep = b.call(o, '_?_:_', [args[2], b.call(o, '_+_', [accu(), b.int(o, 1n)]), accu()]);
        result = b.call(o, '_==_', [accu(), b.int(o, 1n)]);
        break;
      case 'transformList':
        accuInit = b.list(o, []);
        loopCondition = b.bool(o, true);
        loopStep = filtered(b.call(o, '_+_', [accu(), b.list(o, [transform])]));
        break;
      case 'transformMap':
        accuInit = b.emptyMap(o);
        loopCondition = b.bool(o, true);
        loopStep = filtered(b.call(o, 'cel.@mapInsert', [accu(), b.ident(o, v1), transform]));
        break;
      default: // transformMapEntry
        accuInit = b.emptyMap(o);
        loopCondition = b.bool(o, true);
        loopStep = filtered(b.call(o, 'cel.@mapInsert', [accu(), transform]));
        break;
    }
    return b.macro(b.comprehension(o, { iterRange: target, iterVar: v1, iterVar2: v2, accuVar: ACCU, accuInit, loopCondition, loopStep, result }), fn);
  };

  /** ext.Lists' sortBy: cel.bind(@__sortBy_input__, target, @__sortBy_input__.@sortByAssociatedKeys(@__sortBy_input__.map(v, key))). */
  const sortBy = (e: Expr, target: Expr, args: Expr[]): Expr => {
    const o = at(e);
    if (!['listExpr', 'selectExpr', 'identExpr', 'comprehensionExpr', 'callExpr'].includes(target.exprKind.case)) {
      return fail(target, 'sortBy can only be applied to a list, identifier, comprehension, call or select expression') ?? e;
    }
    const v = iterVar(args[0], 'argument is not an identifier');
    if (v === undefined) return e;
    const keys = b.macro(
      b.comprehension(o, { iterRange: b.ident(o, SORT_BY_VAR), iterVar: v, accuVar: ACCU, accuInit: b.list(o, []), loopCondition: b.bool(o, true), loopStep: b.call(o, '_+_', [b.ident(o, ACCU), b.list(o, [args[1]])]), result: b.ident(o, ACCU) }),
      'map',
    );
    return b.macro(b.bind(o, SORT_BY_VAR, target, b.call(o, '@sortByAssociatedKeys', [keys], b.ident(o, SORT_BY_VAR))), 'sortBy');
  };

  /** optMap: target.hasValue() ? optional.of(cel.bind(v, target.value(), expr)) : optional.none(); optFlatMap without the optional.of. */
  const optMap = (e: Expr, fn: string, target: Expr, args: Expr[]): Expr => {
    const o = at(e);
    const v = identName(args[0]);
    if (v === undefined) return fail(args[0], `${fn}() variable name must be a simple identifier`) ?? e;
    let mapped = b.bind(o, v, b.call(o, 'value', [], target), args[1]);
    if (fn === 'optMap') mapped = b.call(o, 'optional.of', [mapped]);
    return b.macro(b.call(o, '_?_:_', [b.call(o, 'hasValue', [], target), mapped, b.call(o, 'optional.none', [])]), fn);
  };

  const visit = (e: Expr): Expr => {
    mapChildren(e, visit);
    if (e.exprKind.case !== 'callExpr') return e;
    const call = e.exprKind.value;
    const fn = call.function as string;
    const args = call.args as Expr[];
    if (!call.target) return e;
    if (TWO_VAR_MACROS.get(fn)?.includes(args.length)) return twoVar(e, fn, call.target, args);
    if (fn === 'sortBy' && args.length === 2) return sortBy(e, call.target, args);
    if ((fn === 'optMap' || fn === 'optFlatMap') && args.length === 2) return optMap(e, fn, call.target, args);
    return e;
  };
  parsed.expr = visit(parsed.expr);
  return issues;
}

/**
 * cel.@mapInsert of the two-variable comprehensions. The accumulator maps it builds are its own
 * (no expression can reach them before the comprehension ends), so it grows them in place.
 */
const ownMaps = new WeakMap<object, Map<unknown, unknown>>();
function mapInsert(m: any, entries: [unknown, unknown][]): any {
  let inner = ownMaps.get(m);
  let out = m;
  if (!inner) {
    inner = new Map();
    for (const k of m.keys()) inner.set(k, m.get(k));
    out = celMap(inner as ReadonlyMap<any, any>);
    ownMaps.set(out, inner);
  }
  for (const [k, v] of entries) {
    if (out.has(k)) throw new Error(`insert failed: key ${goKey(k)} already exists`);
    inner.set(k, v);
  }
  return out;
}

/** The function transformMap and transformMapEntry expand to (cel-go's cel.@mapInsert). */
export const TWO_VAR_COMPREHENSION_FUNCS = [
  celFunc('cel.@mapInsert', [MAP, DYN, DYN], MAP, (m, k, v) => mapInsert(m, [[k, v]])),
  celFunc('cel.@mapInsert', [MAP, MAP], MAP, (m, u) => mapInsert(m, [...u.keys()].map((k) => [k, u.get(k)]))),
];
