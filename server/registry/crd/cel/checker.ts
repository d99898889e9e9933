// The static checks kube-apiserver gets from cel-go's checker, done over the parsed AST because
// @bufbuild/cel exports no type checker. `self` (and `oldSelf`) are typed from the schema node the
// rule sits on (types.ts). The checker reports undeclared references, undefined fields, calls
// with no matching overload and (through compile.ts) rules that cannot be bool or
// messageExpressions that cannot be string, in cel-go's "ERROR: <input>:L:C: ..." shape
// (ast.ts). It is permissive where a type is unknown (dyn). It types the optional syntax as
// cel-go does (`a.?b` and `a[?k]` are optional_type(T), selecting or indexing an optional value
// chains, an optional element or entry must be optional), and estimates each expression's cost
// in the same pass (cost.ts).
import { BIND_ITER_VAR, OPT_INDEX_FN, OPT_SELECT_FN, type Expr, type Issue } from './ast.ts';
import { FORMAT_VALIDATE_FACTOR, LIST_CREATE_COST, UNBOUNDED, constUint, sizeOf, strCost } from './cost.ts';
import { ALL_METHODS, DURATION_GETTERS, GLOBALS, IP_PREDICATES, LIST_METHODS, QUANTITY_METHODS, SEMVER_METHODS, SORTABLE, STRING_METHODS, TIMESTAMP_GETTERS, TYPE_IDENTS, URL_GETTERS } from './declarations.ts';
import { MaxRequestSizeBytes } from './limits.ts';
import { T, listOf, mapOf, optionalOf, typeName, type CT, type Kind } from './types.ts';

interface Checked {
  t: CT;
  cost: number;
}

const NUMERIC = new Set<Kind>(['int', 'uint', 'double']);
const isDyn = (t: CT) => t.k === 'dyn';

/** Whether values of a and b can meet in a comparison (dyn and null match anything). */
function compatible(a: CT, b: CT): boolean {
  if (isDyn(a) || isDyn(b) || a.k === 'null' || b.k === 'null') return true;
  if (a.k !== b.k) return false;
  if (a.k === 'list') return compatible(a.e ?? T.dyn, b.e ?? T.dyn);
  if (a.k === 'map') return compatible(a.e ?? T.dyn, b.e ?? T.dyn);
  return true;
}
/**
 * A literal's element (map key, map value) type joined with the ones before it, as cel-go joins
 * them under HomogeneousAggregateLiterals, an option of kube's base environment: undefined when
 * `t` does not fit `prev` (`[1, 'a']`, `{'a': 1, 'b': 2.0}` are type errors). A dyn element makes
 * the rest fit, as cel-go's most general type of the two.
 */
function joinLiteral(prev: CT | undefined, t: CT): CT | undefined {
  if (prev === undefined) return t;
  if (!compatible(prev, t) || (prev.k === 'map' && t.k === 'map' && !compatible(prev.key ?? T.dyn, t.key ?? T.dyn))) return undefined;
  return isDyn(t) ? t : prev;
}
function join(a: CT, b: CT): CT {
  if (isDyn(a) || a.k === 'null') return b;
  if (isDyn(b) || b.k === 'null') return a;
  if (a.k === 'list' && b.k === 'list') return listOf(join(a.e ?? T.dyn, b.e ?? T.dyn), Math.max(sizeOf(a), sizeOf(b)));
  return a.k === b.k ? { ...a, max: Math.max(sizeOf(a), sizeOf(b)) } : T.dyn;
}

/** The type names mutating admission policies construct: Object and its nested types (Object.spec.template...), and JSONPatch. */
export function isConstructedTypeName(name: string): boolean {
  return name === 'JSONPatch' || /^Object(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(name);
}

/** kube's JSONPatch library function: a map key escaped as a JSON pointer token. */
const JSON_PATCH_ESCAPE_KEY = 'jsonpatch.escapeKey';

/** kube's JSONPatch type: op, path, from, value. */
const JSON_PATCH_TYPE: CT = { k: 'object', fields: new Map<string, CT>([['op', T.string], ['path', T.string], ['from', T.string], ['value', T.dyn]]), min: 2 };

export class Checker {
  readonly issues: Issue[] = [];
  usesOldSelf = false;
  /** Regex constants to verify at compile time (cel-go precompiles them). */
  readonly regexes: { offset: number; pattern: string }[] = [];
  /** Selections and index calls on optional values (run as optional chains: see lowerForPlan). */
  readonly optChain = new Set<string>();

  constructor(
    private readonly positions: Record<string, number>,
    private readonly macroCalls: Record<string, any>,
    /** Object construction of mutating admission policies (kube's mutation.DynamicTypeResolver): `Object{...}`, `Object.spec{...}`, `JSONPatch{...}`. */
    private readonly objectConstruction = false,
  ) {}

  private err(e: Expr, message: string): void {
    this.issues.push({ offset: this.positions[String(e.id)] ?? 0, message });
  }

  private overload(e: Expr, fn: string, recv: CT | undefined, args: CT[]): Checked {
    this.err(e, `found no matching overload for '${fn}' applied to '${recv ? typeName(recv) + '.' : ''}(${args.map(typeName).join(', ')})'`);
    return { t: T.dyn, cost: 1 };
  }

  check(e: Expr, scope: Map<string, CT>): Checked {
    const kind = e.exprKind;
    switch (kind.case) {
      case 'constExpr': {
        const c = kind.value.constantKind;
        switch (c.case) {
          case 'int64Value':
            return { t: T.int, cost: 0 };
          case 'uint64Value':
            return { t: T.uint, cost: 0 };
          case 'doubleValue':
            return { t: T.double, cost: 0 };
          case 'stringValue':
            return { t: { ...T.string, max: [...String(c.value)].length }, cost: 0 };
          case 'bytesValue':
            return { t: { ...T.bytes, max: c.value?.length ?? 0 }, cost: 0 };
          case 'boolValue':
            return { t: T.bool, cost: 0 };
          case 'nullValue':
            return { t: T.null, cost: 0 };
          default:
            return { t: T.dyn, cost: 0 };
        }
      }
      case 'identExpr': {
        const name = kind.value.name as string;
        const t = scope.get(name);
        if (t) {
          if (name === 'oldSelf' && !scope.has('\u0000shadow:oldSelf')) this.usesOldSelf = true;
          return { t, cost: 1 };
        }
        if (TYPE_IDENTS.has(name)) return { t: T.type, cost: 0 };
        this.err(e, `undeclared reference to '${name}' (in container '')`);
        return { t: T.dyn, cost: 1 };
      }
      case 'selectExpr': {
        const sel = kind.value;
        const operand = this.check(sel.operand, scope);
        let ot = operand.t;
        const field = sel.field as string;
        // A selection on an optional value selects into its value (cel-go: the result is optional,
        // none when the value or the field is absent; has() is whether it has a value).
        const onOptional = ot.k === 'optional';
        if (onOptional) {
          this.optChain.add(String(e.id));
          ot = ot.e ?? T.dyn;
        }
        if (sel.testOnly) {
          if (ot.k === 'object' && !ot.fields!.has(field)) this.err(e, `undefined field '${field}'`);
          else if (!['object', 'map', 'dyn'].includes(ot.k)) this.err(e, `type '${typeName(ot)}' does not support field selection`);
          return { t: T.bool, cost: operand.cost + 1 };
        }
        const ft = this.fieldType(e, ot, field);
        // (cel-go charges nothing for selecting from an optional value)
        return onOptional ? { t: optionalOf(ft), cost: operand.cost } : { t: ft, cost: operand.cost + 1 };
      }
      case 'listExpr': {
        let et: CT | undefined;
        let cost = 10;
        const optional = new Set<number>(kind.value.optionalIndices ?? []);
        let literal: CT | undefined;
        kind.value.elements.forEach((el: Expr, i: number) => {
          const c = this.check(el, scope);
          cost += c.cost;
          const t = optional.has(i) ? this.optionalValue(el, c.t) : c.t;
          et = et ? join(et, t) : t;
          literal = this.homogeneous(el, literal, t);
        });
        return { t: listOf(et ?? T.dyn, kind.value.elements.length), cost };
      }
      case 'structExpr': {
        const st = kind.value;
        if (st.messageName) {
          if (this.objectConstruction && isConstructedTypeName(st.messageName)) {
            let cost = 40;
            for (const entry of st.entries) cost += this.check(entry.value, scope).cost;
            return { t: st.messageName === 'JSONPatch' ? JSON_PATCH_TYPE : T.dyn, cost };
          }
          this.err(e, `undeclared reference to '${st.messageName}' (in container '')`);
          return { t: T.dyn, cost: 40 };
        }
        let kt: CT | undefined;
        let vt: CT | undefined;
        let literalKey: CT | undefined;
        let literalValue: CT | undefined;
        let cost = 30;
        for (const entry of st.entries) {
          if (entry.keyKind?.case === 'mapKey') {
            const k = this.check(entry.keyKind.value, scope);
            kt = kt ? join(kt, k.t) : k.t;
            literalKey = this.homogeneous(entry.keyKind.value, literalKey, k.t);
            cost += k.cost;
          }
          const v = this.check(entry.value, scope);
          const t = entry.optionalEntry ? this.optionalValue(entry.value, v.t) : v.t;
          vt = vt ? join(vt, t) : t;
          literalValue = this.homogeneous(entry.value, literalValue, t);
          cost += v.cost;
        }
        return { t: mapOf(kt ?? T.dyn, vt ?? T.dyn, st.entries.length), cost };
      }
      case 'comprehensionExpr':
        return this.checkComprehension(e, scope);
      case 'callExpr':
        return this.checkCall(e, scope);
      default:
        return { t: T.dyn, cost: 1 };
    }
  }

  /** joinLiteral, reporting an element that does not fit as cel-go does (and starting over after it, as cel-go does). */
  private homogeneous(e: Expr, prev: CT | undefined, t: CT): CT | undefined {
    const joined = joinLiteral(prev, t);
    if (joined === undefined) this.err(e, `expected type '${typeName(prev!)}' but found '${typeName(t)}'`);
    return joined;
  }

  /** The type of selecting field from a value of type ot (not optional), reporting what cannot be selected. */
  private fieldType(e: Expr, ot: CT, field: string): CT {
    if (ot.k === 'object') {
      const ft = ot.fields!.get(field);
      if (!ft) this.err(e, `undefined field '${field}'`);
      return ft ?? T.dyn;
    }
    if (ot.k === 'map') return ot.e ?? T.dyn;
    // (cel-go declares `authorizer.requestResource` as a variable of its own)
    if (ot.k === 'authorizer' && field === 'requestResource') return T.resourcecheck;
    if (ot.k !== 'dyn') this.err(e, `type '${typeName(ot)}' does not support field selection`);
    return T.dyn;
  }

  /** The element type an optional list element or map entry contributes (cel-go: it must be optional). */
  private optionalValue(e: Expr, t: CT): CT {
    if (t.k === 'optional') return t.e ?? T.dyn;
    if (!isDyn(t)) this.err(e, `expected type '${typeName(optionalOf(t))}' but found '${typeName(t)}'`);
    return t;
  }

  private checkComprehension(e: Expr, scope: Map<string, CT>): Checked {
    const c = e.exprKind.value;
    const range = this.check(c.iterRange, scope);
    const rt = range.t;
    let iterT: CT = T.dyn;
    let iter2T: CT | undefined;
    if (rt.k === 'list') {
      iterT = rt.e ?? T.dyn;
      iter2T = iterT;
      if (c.iterVar2) iterT = T.int;
    } else if (rt.k === 'map') {
      iterT = rt.key ?? T.dyn;
      iter2T = rt.e ?? T.dyn;
    } else if (!isDyn(rt)) {
      this.err(c.iterRange, `expression of type '${typeName(rt)}' cannot be range of a comprehension (must be list, map, or dynamic)`);
    }
    const n = sizeOf(rt);
    const accuInit = this.check(c.accuInit, scope);
    const inner = new Map(scope);
    inner.set(c.iterVar, iterT);
    if (c.iterVar2) inner.set(c.iterVar2, iter2T ?? T.dyn);
    inner.set(c.accuVar, accuInit.t);
    if (c.iterVar === 'oldSelf' || c.iterVar2 === 'oldSelf' || c.accuVar === 'oldSelf') inner.set('\u0000shadow:oldSelf', T.dyn);
    const cond = this.check(c.loopCondition, inner);
    let step = this.check(c.loopStep, inner);
    // map(), transformList(), transformMap(): the accumulator starts as [] (list(dyn)) or {}
    // (map(dyn, dyn)); re-check with the element type learnt from the step.
    let accuT = accuInit.t;
    if (accuT.k === 'list' && step.t.k === 'list' && isDyn(accuT.e ?? T.dyn)) {
      accuT = listOf(step.t.e ?? T.dyn, n);
      inner.set(c.accuVar, accuT);
      step = this.check(c.loopStep, inner);
    } else if (accuT.k === 'map' && step.t.k === 'map' && isDyn(accuT.e ?? T.dyn) && isDyn(accuT.key ?? T.dyn)) {
      accuT = mapOf(step.t.key ?? T.dyn, step.t.e ?? T.dyn, n);
      inner.set(c.accuVar, accuT);
      step = this.check(c.loopStep, inner);
    }
    const result = this.check(c.result, inner);
    let rt2 = result.t;
    const macro = this.macroCalls[String(e.id)]?.exprKind?.value?.function as string | undefined;
    if (macro === 'all' || macro === 'exists' || macro === 'exists_one' || macro === 'existsOne') rt2 = T.bool;
    // (a binding — cel.bind's shape, which sortBy and optMap expand to — does not iterate)
    if ((rt2.k === 'list' || rt2.k === 'map') && c.iterVar !== BIND_ITER_VAR) rt2 = { ...rt2, max: n };
    return { t: rt2, cost: range.cost + accuInit.cost + n * (cond.cost + step.cost) + result.cost };
  }

  private checkCall(e: Expr, scope: Map<string, CT>): Checked {
    const call = e.exprKind.value;
    let fn = call.function as string;
    let target: Expr | undefined = call.target;
    // Namespaced functions parse as a call on an identifier: sets.contains(...), ip.isCanonical(...).
    if (target && target.exprKind.case === 'identExpr' && !scope.has(target.exprKind.value.name) && (GLOBALS.has(`${target.exprKind.value.name}.${fn}`) || (this.objectConstruction && `${target.exprKind.value.name}.${fn}` === JSON_PATCH_ESCAPE_KEY))) {
      fn = `${target.exprKind.value.name}.${fn}`;
      target = undefined;
    }
    // Optional field selection a.?b: _?._(a, "b"), typed as the selection of b, made optional.
    if (fn === OPT_SELECT_FN && !target && call.args.length === 2) {
      const operand = this.check(call.args[0], scope);
      const ot = operand.t.k === 'optional' ? (operand.t.e ?? T.dyn) : operand.t;
      const field = call.args[1].exprKind.value.constantKind.value as string;
      return { t: optionalOf(this.fieldType(e, ot, field)), cost: operand.cost + 1 };
    }
    // Short-circuit operators and conditionals.
    if (fn === '_&&_' || fn === '_||_') {
      const a = this.check(call.args[0], scope);
      const b = this.check(call.args[1], scope);
      for (const x of [a, b]) if (x.t.k !== 'bool' && !isDyn(x.t)) return this.overload(e, fn, undefined, [a.t, b.t]);
      return { t: T.bool, cost: a.cost + b.cost };
    }
    if (fn === '_?_:_') {
      const c = this.check(call.args[0], scope);
      const a = this.check(call.args[1], scope);
      const b = this.check(call.args[2], scope);
      if ((c.t.k !== 'bool' && !isDyn(c.t)) || !compatible(a.t, b.t)) return this.overload(e, fn, undefined, [c.t, a.t, b.t]);
      return { t: join(a.t, b.t), cost: c.cost + Math.max(a.cost, b.cost) };
    }
    const recv = target ? this.check(target, scope) : undefined;
    const args = (call.args as Expr[]).map((a) => this.check(a, scope));
    const at = args.map((a) => a.t);
    const argCost = args.reduce((s, a) => s + a.cost, recv?.cost ?? 0);
    const res = (t: CT, cost = 1): Checked => ({ t, cost: argCost + cost });

    if (!target) {
      switch (fn) {
        case '@not_strictly_false':
          return { t: T.bool, cost: argCost };
        case '!_':
          return at[0].k === 'bool' || isDyn(at[0]) ? res(T.bool) : this.overload(e, fn, undefined, at);
        case '-_':
          return NUMERIC.has(at[0].k) || isDyn(at[0]) ? res(at[0]) : this.overload(e, fn, undefined, at);
        case '_==_':
        case '_!=_': {
          if (!compatible(at[0], at[1])) return this.overload(e, fn, undefined, at);
          const traversal = ['string', 'bytes'].includes(at[0].k) ? strCost(Math.min(sizeOf(at[0]), sizeOf(at[1]))) : ['list', 'map'].includes(at[0].k) ? Math.min(sizeOf(at[0]), sizeOf(at[1])) : 0;
          return res(T.bool, 1 + traversal);
        }
        case '_<_':
        case '_<=_':
        case '_>_':
        case '_>=_': {
          const [a, b] = at;
          const ok = isDyn(a) || isDyn(b) || (NUMERIC.has(a.k) && NUMERIC.has(b.k)) || (a.k === b.k && ['string', 'bytes', 'bool', 'timestamp', 'duration'].includes(a.k));
          if (!ok) return this.overload(e, fn, undefined, at);
          return res(T.bool, 1 + (a.k === 'string' ? strCost(Math.min(sizeOf(a), sizeOf(b))) : 0));
        }
        case '_+_': {
          const [a, b] = at;
          if (isDyn(a) || isDyn(b)) return res(isDyn(a) ? b : a);
          if (a.k === b.k && NUMERIC.has(a.k)) return res(a);
          if (a.k === b.k && (a.k === 'string' || a.k === 'bytes')) return res({ ...a, max: sizeOf(a) + sizeOf(b) }, 1 + strCost(sizeOf(a) + sizeOf(b)));
          if (a.k === 'list' && b.k === 'list') return res(listOf(join(a.e ?? T.dyn, b.e ?? T.dyn), sizeOf(a) + sizeOf(b)), 1 + Math.ceil((sizeOf(a) + sizeOf(b)) * 0.1));
          if ((a.k === 'timestamp' && b.k === 'duration') || (a.k === 'duration' && b.k === 'timestamp')) return res(T.timestamp);
          if (a.k === 'duration' && b.k === 'duration') return res(T.duration);
          return this.overload(e, fn, undefined, at);
        }
        case '_-_': {
          const [a, b] = at;
          if (isDyn(a) || isDyn(b)) return res(isDyn(a) ? b : a);
          if (a.k === b.k && NUMERIC.has(a.k)) return res(a);
          if (a.k === 'timestamp' && b.k === 'timestamp') return res(T.duration);
          if (a.k === 'timestamp' && b.k === 'duration') return res(T.timestamp);
          if (a.k === 'duration' && b.k === 'duration') return res(T.duration);
          return this.overload(e, fn, undefined, at);
        }
        case '_*_':
        case '_/_':
        case '_%_': {
          const [a, b] = at;
          if (isDyn(a) || isDyn(b)) return res(isDyn(a) ? b : a);
          if (a.k === b.k && NUMERIC.has(a.k) && !(fn === '_%_' && a.k === 'double')) return res(a);
          return this.overload(e, fn, undefined, at);
        }
        case OPT_INDEX_FN: {
          // a[?k]: the element or value at k when there is one (list(V), int / map(K, V), K, or
          // an optional of either, as cel-go's overloads of _[?_])
          const [c0, i] = at;
          const c = c0.k === 'optional' ? (c0.e ?? T.dyn) : c0;
          if (isDyn(c)) return res(optionalOf(T.dyn));
          if (c.k === 'list' && (i.k === 'int' || isDyn(i))) return res(optionalOf(c.e ?? T.dyn));
          if (c.k === 'map' && compatible(c.key ?? T.dyn, i)) return res(optionalOf(c.e ?? T.dyn));
          return this.overload(e, fn, undefined, at);
        }
        case '_[_]': {
          const [c, i] = at;
          if (c.k === 'optional') {
            // indexing an optional list or map (cel-go's optional_list_index_int, optional_map_index_value)
            const inner = c.e ?? T.dyn;
            this.optChain.add(String(e.id));
            if (isDyn(inner)) return res(optionalOf(T.dyn));
            if (inner.k === 'list' && (i.k === 'int' || isDyn(i))) return res(optionalOf(inner.e ?? T.dyn));
            if (inner.k === 'map' && compatible(inner.key ?? T.dyn, i)) return res(optionalOf(inner.e ?? T.dyn));
            return this.overload(e, fn, undefined, at);
          }
          if (isDyn(c)) return res(T.dyn);
          if (c.k === 'list' && (i.k === 'int' || i.k === 'uint' || isDyn(i))) return res(c.e ?? T.dyn);
          if (c.k === 'map' && compatible(c.key ?? T.dyn, i)) return res(c.e ?? T.dyn);
          return this.overload(e, fn, undefined, at);
        }
        case '@in': {
          const [x, c] = at;
          if (isDyn(c)) return res(T.bool);
          if (c.k === 'list' && compatible(x, c.e ?? T.dyn)) return res(T.bool, 1 + sizeOf(c));
          if (c.k === 'map' && compatible(x, c.key ?? T.dyn)) return res(T.bool);
          return this.overload(e, fn, undefined, at);
        }
        case 'size':
          return at.length === 1 && ['string', 'bytes', 'list', 'map', 'dyn'].includes(at[0].k) ? res(T.int) : this.overload(e, fn, undefined, at);
        case 'matches':
          if (at.length === 2 && [0, 1].every((i) => at[i].k === 'string' || isDyn(at[i]))) {
            this.noteRegex(call.args[1]);
            return res(T.bool, 1 + strCost(sizeOf(at[0])) * strCost(sizeOf(at[1]), 0.25));
          }
          return this.overload(e, fn, undefined, at);
        case 'int':
          return at.length === 1 && ['int', 'uint', 'double', 'string', 'timestamp', 'dyn'].includes(at[0].k) ? res(T.int) : this.overload(e, fn, undefined, at);
        case 'uint':
          return at.length === 1 && ['int', 'uint', 'double', 'string', 'dyn'].includes(at[0].k) ? res(T.uint) : this.overload(e, fn, undefined, at);
        case 'double':
          return at.length === 1 && ['int', 'uint', 'double', 'string', 'dyn'].includes(at[0].k) ? res(T.double) : this.overload(e, fn, undefined, at);
        case 'string':
          return at.length === 1 && !['list', 'map', 'object', 'url', 'quantity', 'format', 'semver', 'optional', 'type'].includes(at[0].k) ? res({ ...T.string, max: sizeOf(at[0]) }, 1 + strCost(sizeOf(at[0]))) : this.overload(e, fn, undefined, at);
        case 'bytes':
          return at.length === 1 && ['string', 'bytes', 'dyn'].includes(at[0].k) ? res(T.bytes) : this.overload(e, fn, undefined, at);
        case 'bool':
          return at.length === 1 && ['string', 'bool', 'dyn'].includes(at[0].k) ? res(T.bool) : this.overload(e, fn, undefined, at);
        case 'dyn':
          return at.length === 1 ? res(T.dyn) : this.overload(e, fn, undefined, at);
        case 'type':
          return at.length === 1 ? res(T.type) : this.overload(e, fn, undefined, at);
        case 'duration':
          return at.length === 1 && ['string', 'duration', 'dyn'].includes(at[0].k) ? res(T.duration) : this.overload(e, fn, undefined, at);
        case 'timestamp':
          return at.length === 1 && ['string', 'int', 'timestamp', 'dyn'].includes(at[0].k) ? res(T.timestamp) : this.overload(e, fn, undefined, at);
        case 'url':
        case 'ip':
        case 'cidr':
        case 'quantity':
          return at.length === 1 && (at[0].k === 'string' || isDyn(at[0])) ? res(T[fn], 1 + strCost(sizeOf(at[0]))) : this.overload(e, fn, undefined, at);
        case 'isURL':
        case 'isIP':
        case 'isCIDR':
        case 'isQuantity':
        case 'ip.isCanonical':
          return at.length === 1 && (at[0].k === 'string' || isDyn(at[0])) ? res(T.bool, 1 + strCost(sizeOf(at[0]))) : this.overload(e, fn, undefined, at);
        case 'sets.contains':
        case 'sets.equivalent':
        case 'sets.intersects':
          return at.length === 2 && at.every((t) => t.k === 'list' || isDyn(t)) ? res(T.bool, 1 + sizeOf(at[0]) * sizeOf(at[1])) : this.overload(e, fn, undefined, at);
        case 'semver':
        case 'isSemver': {
          const ok = (at.length === 1 || (at.length === 2 && (at[1].k === 'bool' || isDyn(at[1])))) && (at[0].k === 'string' || isDyn(at[0]));
          return ok ? res(fn === 'semver' ? T.semver : T.bool, 1 + strCost(sizeOf(at[0]))) : this.overload(e, fn, undefined, at);
        }
        case JSON_PATCH_ESCAPE_KEY:
          // (kube's JSONPatch library, in the mutation environment only)
          if (!this.objectConstruction) break;
          return at.length === 1 && (at[0].k === 'string' || isDyn(at[0])) ? res({ ...T.string, max: sizeOf(at[0]) * 2 }, 1 + strCost(sizeOf(at[0]))) : this.overload(e, fn, undefined, at);
        case 'format.named':
          return at.length === 1 && (at[0].k === 'string' || isDyn(at[0])) ? res(optionalOf(T.format)) : this.overload(e, fn, undefined, at);
        case 'optional.of':
        case 'optional.ofNonZeroValue':
          return at.length === 1 ? res(optionalOf(at[0])) : this.overload(e, fn, undefined, at);
        case 'optional.none':
          return at.length === 0 ? res(optionalOf(T.dyn)) : this.overload(e, fn, undefined, at);
        case 'lists.range': {
          if (at.length !== 1 || !(at[0].k === 'int' || isDyn(at[0]))) return this.overload(e, fn, undefined, at);
          const n = constUint(call.args[0]) ?? UNBOUNDED;
          return res(listOf(T.int, n), 1 + LIST_CREATE_COST + n);
        }
        case 'cel.@mapInsert': {
          // (only in expanded transformMap/transformMapEntry: the accumulator and an entry, or a map of entries)
          const [m, k, v] = at;
          if (at.length === 3 && (m.k === 'map' || isDyn(m))) return res(mapOf(join(m.key ?? T.dyn, k), join(m.e ?? T.dyn, v), sizeOf(m)));
          if (at.length === 2 && (m.k === 'map' || isDyn(m)) && (k.k === 'map' || isDyn(k))) return res(mapOf(join(m.key ?? T.dyn, k.key ?? T.dyn), join(m.e ?? T.dyn, k.e ?? T.dyn), sizeOf(m)));
          return this.overload(e, fn, undefined, at);
        }
      }
      if (fn.startsWith('format.') && GLOBALS.has(fn)) return at.length === 0 ? res(T.format) : this.overload(e, fn, undefined, at);
      if (ALL_METHODS.has(fn)) return this.overload(e, fn, undefined, at);
      this.err(e, `undeclared reference to '${fn}' (in container '')`);
      return res(T.dyn);
    }

    // Receiver-style calls.
    const r = recv!.t;
    const mismatch = () => this.overload(e, fn, r, at);
    if (isDyn(r)) {
      if (!ALL_METHODS.has(fn)) {
        this.err(e, `undeclared reference to '${fn}' (in container '')`);
      }
      if (fn === 'matches' || fn === 'find' || fn === 'findAll') this.noteRegex(call.args[0]);
      const known = STRING_METHODS[fn];
      return res(known && !['size', 'indexOf', 'lastIndexOf', 'min', 'max', 'sum'].includes(fn) ? known.result(T.dyn) : T.dyn, 1 + strCost(MaxRequestSizeBytes));
    }
    switch (r.k) {
      case 'string': {
        const m = STRING_METHODS[fn];
        if (!m) break;
        const okArgs = m.args.some((sig) => sig.length === at.length && sig.every((k, i) => at[i].k === k || isDyn(at[i]) || (k === 'list' && at[i].k === 'list')));
        if (!okArgs && !(m.args.length === 0 && at.length === 0)) return mismatch();
        if (fn === 'matches' || fn === 'find' || fn === 'findAll') this.noteRegex(call.args[0]);
        return res(m.result(r), m.cost(r, at));
      }
      case 'bytes':
        if (fn === 'size' && at.length === 0) return res(T.int);
        break;
      case 'map':
        if (fn === 'size' && at.length === 0) return res(T.int);
        break;
      case 'list': {
        if (!LIST_METHODS.has(fn)) break;
        const e0 = r.e ?? T.dyn;
        const n = sizeOf(r);
        const per = e0.k === 'string' ? 1 + strCost(sizeOf(e0)) : 1;
        switch (fn) {
          case 'size':
            return at.length === 0 ? res(T.int) : mismatch();
          case 'join':
            if (!(e0.k === 'string' || isDyn(e0)) || at.length > 1 || (at.length === 1 && at[0].k !== 'string' && !isDyn(at[0]))) return mismatch();
            return res({ ...T.string, max: n * sizeOf(e0) }, 1 + Math.ceil(n * per));
          case 'isSorted':
            if (at.length !== 0 || !(isDyn(e0) || ['int', 'uint', 'double', 'string', 'bool', 'bytes', 'timestamp', 'duration'].includes(e0.k))) return mismatch();
            return res(T.bool, 1 + Math.ceil(n * per));
          case 'sum':
            if (at.length !== 0 || !(isDyn(e0) || ['int', 'uint', 'double', 'duration'].includes(e0.k))) return mismatch();
            return res(e0, 1 + n);
          case 'min':
          case 'max':
            if (at.length !== 0 || !(isDyn(e0) || ['int', 'uint', 'double', 'string', 'bool', 'bytes', 'timestamp', 'duration'].includes(e0.k))) return mismatch();
            return res(e0, 1 + Math.ceil(n * per));
          case 'indexOf':
          case 'lastIndexOf':
            if (at.length !== 1 || !compatible(at[0], e0)) return mismatch();
            return res(T.int, 1 + Math.ceil(n * per));
          // ext.Lists (version 3), with its cost estimators
          case 'slice': {
            if (at.length !== 2 || !at.every((t) => t.k === 'int' || isDyn(t))) return mismatch();
            const size = Math.max(0, (constUint(call.args[1]) ?? n) - (constUint(call.args[0]) ?? 0));
            return res(listOf(e0, size), 1 + LIST_CREATE_COST + size);
          }
          case 'flatten': {
            if (at.length === 0) {
              if (!(e0.k === 'list' || isDyn(e0))) return mismatch();
              return res(listOf(e0.e ?? T.dyn, n), 1 + LIST_CREATE_COST + n);
            }
            if (at.length !== 1 || !(at[0].k === 'int' || isDyn(at[0]))) return mismatch();
            return res(listOf(T.dyn, n), 1 + LIST_CREATE_COST + n * (constUint(call.args[0]) ?? UNBOUNDED));
          }
          case 'sort':
            if (at.length !== 0 || !SORTABLE.has(e0.k)) return mismatch();
            return res(listOf(e0, n), 1 + LIST_CREATE_COST + Math.ceil(n * n * (e0.k === 'string' || e0.k === 'bytes' ? 2.1 : 2)));
          case '@sortByAssociatedKeys': {
            // (sortBy's expansion: the list, sorted by the keys its map() computed)
            const keys = at[0];
            const k0 = keys?.k === 'list' ? (keys.e ?? T.dyn) : T.dyn;
            if (at.length !== 1 || !(keys.k === 'list' || isDyn(keys)) || !SORTABLE.has(k0.k)) return mismatch();
            const m = sizeOf(keys);
            return res(listOf(e0, n), 1 + LIST_CREATE_COST + Math.ceil(m * m * (k0.k === 'string' || k0.k === 'bytes' ? 2.1 : 2)));
          }
          case 'reverse':
            return at.length === 0 ? res(listOf(e0, n), 1 + LIST_CREATE_COST + n) : mismatch();
          case 'distinct':
            return at.length === 0 ? res(listOf(e0, n), 1 + LIST_CREATE_COST + 2 * n * n) : mismatch();
        }
        break;
      }
      case 'timestamp':
        if (TIMESTAMP_GETTERS.has(fn)) return at.length === 0 || (at.length === 1 && (at[0].k === 'string' || isDyn(at[0]))) ? res(T.int) : mismatch();
        break;
      case 'duration':
        if (DURATION_GETTERS.has(fn)) return at.length === 0 ? res(T.int) : mismatch();
        break;
      case 'url':
        if (URL_GETTERS.has(fn)) return at.length === 0 ? res(T.string) : mismatch();
        if (fn === 'getQuery') return at.length === 0 ? res(mapOf(T.string, listOf(T.string))) : mismatch();
        break;
      case 'ip':
        if (fn === 'family') return at.length === 0 ? res(T.int) : mismatch();
        if (IP_PREDICATES.has(fn)) return at.length === 0 ? res(T.bool) : mismatch();
        break;
      case 'cidr':
        if (fn === 'containsIP') return at.length === 1 && ['ip', 'string', 'dyn'].includes(at[0].k) ? res(T.bool) : mismatch();
        if (fn === 'containsCIDR') return at.length === 1 && ['cidr', 'string', 'dyn'].includes(at[0].k) ? res(T.bool) : mismatch();
        if (fn === 'ip') return at.length === 0 ? res(T.ip) : mismatch();
        if (fn === 'masked') return at.length === 0 ? res(T.cidr) : mismatch();
        if (fn === 'prefixLength') return at.length === 0 ? res(T.int) : mismatch();
        break;
      case 'quantity':
        if (!QUANTITY_METHODS.has(fn)) break;
        switch (fn) {
          case 'isInteger':
            return at.length === 0 ? res(T.bool) : mismatch();
          case 'asInteger':
          case 'sign':
            return at.length === 0 ? res(T.int) : mismatch();
          case 'asApproximateFloat':
            return at.length === 0 ? res(T.double) : mismatch();
          case 'add':
          case 'sub':
            return at.length === 1 && ['quantity', 'int', 'dyn'].includes(at[0].k) ? res(T.quantity) : mismatch();
          case 'isGreaterThan':
          case 'isLessThan':
            return at.length === 1 && ['quantity', 'dyn'].includes(at[0].k) ? res(T.bool) : mismatch();
          case 'compareTo':
            return at.length === 1 && ['quantity', 'dyn'].includes(at[0].k) ? res(T.int) : mismatch();
        }
        break;
      case 'semver':
        if (!SEMVER_METHODS.has(fn)) break;
        if (fn === 'major' || fn === 'minor' || fn === 'patch') return at.length === 0 ? res(T.int) : mismatch();
        return at.length === 1 && ['semver', 'dyn'].includes(at[0].k) ? res(fn === 'compareTo' ? T.int : T.bool) : mismatch();
      case 'format':
        if (fn !== 'validate') break;
        if (at.length !== 1 || !(at[0].k === 'string' || isDyn(at[0]))) return mismatch();
        // (the messages are a few short sentences; cel-go leaves their size unknown)
        return res(optionalOf(listOf({ ...T.string, max: 512 }, 4)), 1 + strCost(sizeOf(at[0])) * FORMAT_VALIDATE_FACTOR);
      case 'authorizer':
        if (fn === 'path' || fn === 'group') return at.length === 1 && (at[0].k === 'string' || isDyn(at[0])) ? res(fn === 'path' ? T.pathcheck : T.groupcheck) : mismatch();
        if (fn === 'serviceAccount') return at.length === 2 && at.every((t) => t.k === 'string' || isDyn(t)) ? res(T.authorizer) : mismatch();
        break;
      case 'pathcheck':
        if (fn === 'check') return at.length === 1 && (at[0].k === 'string' || isDyn(at[0])) ? res(T.decision) : mismatch();
        break;
      case 'groupcheck':
        if (fn === 'resource') return at.length === 1 && (at[0].k === 'string' || isDyn(at[0])) ? res(T.resourcecheck) : mismatch();
        break;
      case 'resourcecheck':
        if (fn === 'subresource' || fn === 'namespace' || fn === 'name') return at.length === 1 && (at[0].k === 'string' || isDyn(at[0])) ? res(T.resourcecheck) : mismatch();
        if (fn === 'check') return at.length === 1 && (at[0].k === 'string' || isDyn(at[0])) ? res(T.decision) : mismatch();
        break;
      case 'decision':
        if (fn === 'allowed' || fn === 'errored') return at.length === 0 ? res(T.bool) : mismatch();
        if (fn === 'reason' || fn === 'error') return at.length === 0 ? res(T.string) : mismatch();
        break;
      case 'optional':
        if (fn === 'hasValue') return at.length === 0 ? res(T.bool) : mismatch();
        if (fn === 'value') return at.length === 0 ? res(r.e ?? T.dyn) : mismatch();
        if (fn === 'orValue') return at.length === 1 && compatible(at[0], r.e ?? T.dyn) ? res(join(r.e ?? T.dyn, at[0])) : mismatch();
        if (fn === 'or') return at.length === 1 && (at[0].k === 'optional' || isDyn(at[0])) && compatible(at[0].e ?? T.dyn, r.e ?? T.dyn) ? res(optionalOf(join(r.e ?? T.dyn, at[0].e ?? T.dyn))) : mismatch();
        break;
    }
    if (ALL_METHODS.has(fn) || GLOBALS.has(fn)) return mismatch();
    this.err(e, `undeclared reference to '${fn}' (in container '')`);
    return res(T.dyn);
  }

  private noteRegex(arg: Expr | undefined): void {
    const c = arg?.exprKind?.case === 'constExpr' ? arg.exprKind.value.constantKind : undefined;
    if (c?.case === 'stringValue') this.regexes.push({ offset: this.positions[String(arg.id)] ?? 0, pattern: c.value });
  }
}
