// Gap: what @bufbuild/cel's planner cannot run, lowered after checking to what it can
// (lowerForPlan), and the internal functions the lowering calls. Comprehensions over two
// variables become one-variable ones over the (index, value) or (key, value) pairs of their
// range, with both variables bound per iteration by bindings (a comprehension over [] whose
// accumulator is the variable, as cel.bind expands); the optional syntax and or/orValue become
// calls of internal functions. Rule text cannot name the lowering's identifiers: they start
// with '@'.
import { celFunc, celList, celMap, isCelList, isCelMap, isCelUint } from '@bufbuild/cel';
import { OPT_INDEX_FN, OPT_SELECT_FN, type Expr, type SourceInfo } from '../ast.ts';
import { BOOL, DYN, LIST, MAP, STRING } from '../values.ts';
import { AstBuilder, mapChildren } from './ast-builder.ts';
import { expectTag, tagOf } from './opaque-values.ts';
import { optNone, optOf } from './optional-types.ts';
import { goKey, goValueText } from './runtime-errors.ts';

/** The internal function lowered two-variable comprehensions iterate (not reachable from rule text). */
const PAIRS = '@pairs';
/** The internal functions the optional syntax is lowered to (see lowerForPlan; not reachable from rule text). */
const OPT_SELECT = '@optSelect';
const OPT_INDEX = '@optIndex';
const OPT_LIST = '@optList';
const OPT_MAP = '@optMap';
/** Whether an optional holds a value, failing as `fn` does on what is not an optional (or/orValue, lowered). */
const OPT_PRESENT = '@optPresent';
/** The argument of `or`, checked to be an optional as `or` checks it. */
const OPT_OR_ARG = '@optOrArg';
/** The variables of the lowering's bindings: a pair of a two-variable comprehension, the target of or/orValue. */
const PAIR_VAR = '@kv';
const OR_VAR = '@or';

/** Whether e reads one of the names (a comprehension or binding that rebinds it hides it below). */
function readsAny(e: Expr, names: Set<string>): boolean {
  switch (e.exprKind.case) {
    case 'identExpr':
      return names.has(e.exprKind.value.name);
    case 'comprehensionExpr': {
      const c = e.exprKind.value;
      if (readsAny(c.iterRange, names) || readsAny(c.accuInit, names)) return true;
      const inner = new Set([...names].filter((n) => n !== c.iterVar && n !== c.iterVar2 && n !== c.accuVar));
      return inner.size > 0 && (readsAny(c.loopCondition, inner) || readsAny(c.loopStep, inner) || readsAny(c.result, inner));
    }
  }
  let found = false;
  mapChildren(e, (c) => {
    found ||= readsAny(c, names);
    return c;
  });
  return found;
}

/**
 * Lowers what @bufbuild/cel's planner cannot run (after checking): each comprehension over two
 * variables becomes one over @pairs(range), its variables bound from each pair; the optional
 * syntax becomes calls of internal functions: `_?._` and selections on optional values
 * @optSelect(operand, field), `_[?_]` and indexing of optional values @optIndex(operand, key),
 * has() of a field of an optional value @optSelect(operand, field).hasValue(), and list and map
 * literals with optional elements or entries @optList([elements], [optional indices]) and
 * @optMap([keys], [values], [optional indices]). optChain holds the ids of the selections and
 * index calls whose operand the checker typed optional.
 */
export function lowerForPlan(parsed: { expr: Expr; sourceInfo: SourceInfo }, optChain: ReadonlySet<string>): void {
  const b = new AstBuilder(parsed.sourceInfo);
  const ints = (o: number, xs: number[]) => b.list(o, xs.map((x) => b.int(o, BigInt(x))));
  const visit = (e: Expr): Expr => {
    mapChildren(e, visit);
    const o = parsed.sourceInfo.positions[String(e.id)] ?? 0;
    const v = e.exprKind.value;
    switch (e.exprKind.case) {
      case 'callExpr':
        if (v.function === OPT_SELECT_FN) v.function = OPT_SELECT;
        else if (v.function === OPT_INDEX_FN || (v.function === '_[_]' && optChain.has(String(e.id)))) v.function = OPT_INDEX;
        else if ((v.function === 'orValue' || v.function === 'or') && v.target && v.args.length === 1) {
          // cel-go evaluates the argument only when the target is none (an error in it is not
          // reached otherwise): x.orValue(d) is bind(t, x, t has a value ? t.value() : d).
          const t = () => b.ident(o, OR_VAR);
          const present = b.call(o, OPT_PRESENT, [t(), b.str(o, v.function)]);
          const [then, otherwise] = v.function === 'orValue' ? [b.call(o, 'value', [], t()), v.args[0]] : [t(), b.call(o, OPT_OR_ARG, [v.args[0]])];
          return b.bind(o, OR_VAR, v.target, b.call(o, '_?_:_', [present, then, otherwise]));
        }
        return e;
      case 'selectExpr': {
        if (!optChain.has(String(e.id))) return e;
        const sel = b.call(o, OPT_SELECT, [v.operand, b.str(o, v.field)]);
        return v.testOnly ? b.call(o, 'hasValue', [], sel) : sel;
      }
      case 'listExpr': {
        const idx = (v.optionalIndices ?? []) as number[];
        if (idx.length === 0) return e;
        return b.call(o, OPT_LIST, [b.list(o, v.elements), ints(o, [...idx])]);
      }
      case 'structExpr': {
        // A constructed object (Object{...}, JSONPatch{...}: the checker let only those through)
        // is run as a map of its field names.
        if (v.messageName) {
          v.messageName = '';
          for (const en of v.entries) if (en.keyKind?.case === 'fieldKey') en.keyKind = { case: 'mapKey', value: b.str(o, en.keyKind.value) };
        }
        if (!v.entries.some((en: any) => en.optionalEntry)) return e;
        const entries = v.entries as any[];
        const opt = entries.flatMap((en, i) => (en.optionalEntry ? [i] : []));
        return b.call(o, OPT_MAP, [b.list(o, entries.map((en) => en.keyKind.value)), b.list(o, entries.map((en) => en.value)), ints(o, opt)]);
      }
      case 'comprehensionExpr':
        break;
      default:
        return e;
    }
    if (!v.iterVar2) return e;
    const c = v;
    const vars = new Set<string>([c.iterVar, c.iterVar2]);
    const bound = (body: Expr) =>
      b.bind(o, c.iterVar, b.call(o, '_[_]', [b.ident(o, PAIR_VAR), b.int(o, 0n)]), b.bind(o, c.iterVar2, b.call(o, '_[_]', [b.ident(o, PAIR_VAR), b.int(o, 1n)]), body));
    c.iterRange = b.call(o, PAIRS, [c.iterRange]);
    if (readsAny(c.loopCondition, vars)) c.loopCondition = bound(c.loopCondition);
    c.loopStep = bound(c.loopStep);
    c.iterVar = PAIR_VAR;
    c.iterVar2 = '';
    return e;
  };
  parsed.expr = visit(parsed.expr);
}

const NONE = Symbol('none');
/** The value an optional-chain step reads: an optional's value (NONE when it has none), else x itself. */
function optionalReceiver(x: any): any {
  if (tagOf(x) !== 'optional') return x;
  return x.get('has') === true ? x.get('v') : NONE;
}

/** The (index, value) / (key, value) pairs lowered two-variable comprehensions iterate. */
export const PAIRS_FUNCS = [
  celFunc(PAIRS, [DYN], LIST, (r) => {
    if (isCelList(r)) return [...r].map((v, i) => celList([BigInt(i), v]));
    if (isCelMap(r)) return [...r.keys()].map((k) => celList([k, r.get(k) as any]));
    throw new Error('no such overload: comprehension range');
  }),
];

/**
 * The optional syntax: a.?b and selections on optionals, a[?k] and indexing of optionals,
 * optional list elements and map entries (see lowerForPlan).
 */
export const OPTIONAL_SYNTAX_FUNCS = [
  celFunc(OPT_PRESENT, [DYN, STRING], BOOL, (x: unknown, fn: string) => expectTag(x, 'optional', fn).get('has') === true),
  celFunc(OPT_OR_ARG, [DYN], MAP, (x: unknown) => expectTag(x, 'optional', 'or')),
  celFunc(OPT_SELECT, [DYN, STRING], MAP, (x: unknown, field: string) => {
    const v = optionalReceiver(x);
    if (v === NONE) return optNone();
    if (!isCelMap(v) || tagOf(v) !== undefined) throw new Error('no such overload: _?._');
    const r = v.get(field);
    return r === undefined ? optNone() : optOf(r);
  }),
  celFunc(OPT_INDEX, [DYN, DYN], MAP, (x: unknown, k: any) => {
    const v = optionalReceiver(x);
    if (v === NONE) return optNone();
    if (isCelList(v)) {
      let i: number;
      if (typeof k === 'bigint') i = Number(k);
      else if (isCelUint(k)) i = Number(k.value);
      else if (typeof k === 'number' && Number.isInteger(k)) i = k;
      else throw new Error('unsupported index type');
      return i >= 0 && i < v.size ? optOf(v.get(i)) : optNone();
    }
    if (isCelMap(v) && tagOf(v) === undefined) {
      const r = v.get(k);
      return r === undefined ? optNone() : optOf(r);
    }
    throw new Error('no such overload: _[?_]');
  }),
  celFunc(OPT_LIST, [LIST, LIST], LIST, (elems: any, optional: any) => {
    const opt = new Set([...optional].map(Number));
    const out: any[] = [];
    let i = 0;
    for (const el of elems) {
      if (!opt.has(i++)) out.push(el);
      else if (tagOf(el) !== 'optional') throw new Error(`cannot initialize optional list element from non-optional value ${goValueText(el)}`);
      else if (el.get('has') === true) out.push(el.get('v'));
    }
    return out;
  }),
  celFunc(OPT_MAP, [LIST, LIST, LIST], MAP, (keys: any, values: any, optional: any) => {
    const opt = new Set([...optional].map(Number));
    const entries = new Map<unknown, unknown>();
    for (let i = 0; i < keys.size; i++) {
      let k = keys.get(i);
      if (typeof k === 'number') {
        if (!Number.isInteger(k)) throw new Error('unsupported key type');
        k = BigInt(k);
      } else if (!(typeof k === 'string' || typeof k === 'bigint' || typeof k === 'boolean' || isCelUint(k))) throw new Error('unsupported key type');
      let v = values.get(i);
      if (opt.has(i)) {
        if (tagOf(v) !== 'optional') throw new Error(`cannot initialize optional entry '${goKey(k)}' from non-optional value ${goValueText(v)}`);
        if (v.get('has') !== true) {
          entries.delete(k);
          continue;
        }
        v = v.get('v');
      }
      if (entries.has(k)) throw new Error(`map key conflict: ${goKey(k)}`);
      entries.set(k, v);
    }
    return celMap(entries as ReadonlyMap<any, any>);
  }),
];
