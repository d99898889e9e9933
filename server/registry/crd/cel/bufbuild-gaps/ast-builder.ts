// The AST surgery the gap-filling passes share (macros.ts, optional-syntax.ts, lowering.ts): a
// builder of nodes with fresh ids, positioned at the call they expand, and in-place rewriting of a
// node's children.
import { BIND_ITER_VAR, type Expr, type SourceInfo } from '../ast.ts';

/** Builds AST nodes with fresh ids, their positions those of the call they expand. */
export class AstBuilder {
  private nextId: bigint;

  constructor(private readonly info: SourceInfo) {
    let max = 0n;
    for (const k of Object.keys(info.positions)) if (BigInt(k) > max) max = BigInt(k);
    this.nextId = max;
  }

  private node(offset: number, kind: string, value: object): Expr {
    const id = ++this.nextId;
    this.info.positions[String(id)] = offset;
    return { $typeName: 'cel.expr.Expr', id, exprKind: { case: kind, value } };
  }
  ident(offset: number, name: string): Expr {
    return this.node(offset, 'identExpr', { $typeName: 'cel.expr.Expr.Ident', name });
  }
  call(offset: number, fn: string, args: Expr[], target?: Expr): Expr {
    return this.node(offset, 'callExpr', { $typeName: 'cel.expr.Expr.Call', function: fn, args, ...(target ? { target } : {}) });
  }
  bool(offset: number, value: boolean): Expr {
    return this.node(offset, 'constExpr', { $typeName: 'cel.expr.Constant', constantKind: { case: 'boolValue', value } });
  }
  int(offset: number, value: bigint): Expr {
    return this.node(offset, 'constExpr', { $typeName: 'cel.expr.Constant', constantKind: { case: 'int64Value', value } });
  }
  str(offset: number, value: string): Expr {
    return this.node(offset, 'constExpr', { $typeName: 'cel.expr.Constant', constantKind: { case: 'stringValue', value } });
  }
  list(offset: number, elements: Expr[]): Expr {
    return this.node(offset, 'listExpr', { $typeName: 'cel.expr.Expr.CreateList', elements, optionalIndices: [] });
  }
  emptyMap(offset: number): Expr {
    return this.node(offset, 'structExpr', { $typeName: 'cel.expr.Expr.CreateStruct', messageName: '', entries: [] });
  }
  comprehension(offset: number, c: { iterRange: Expr; iterVar: string; iterVar2?: string; accuVar: string; accuInit: Expr; loopCondition: Expr; loopStep: Expr; result: Expr }): Expr {
    return this.node(offset, 'comprehensionExpr', { $typeName: 'cel.expr.Expr.Comprehension', iterVar2: '', ...c });
  }
  /** cel.bind(name, init, body) as cel-go expands it. */
  bind(offset: number, name: string, init: Expr, body: Expr): Expr {
    return this.comprehension(offset, { iterRange: this.list(offset, []), iterVar: BIND_ITER_VAR, accuVar: name, accuInit: init, loopCondition: this.bool(offset, false), loopStep: this.ident(offset, name), result: body });
  }
  /** Records what an expansion came from (the checker reads the macro's name). */
  macro(e: Expr, fn: string): Expr {
    this.info.macroCalls[String(e.id)] = { $typeName: 'cel.expr.Expr', id: 0n, exprKind: { case: 'callExpr', value: { $typeName: 'cel.expr.Expr.Call', function: fn, args: [] } } };
    return e;
  }
}

/** Replaces each child of e by f(child), in place. */
export function mapChildren(e: Expr, f: (c: Expr) => Expr): void {
  const v = e.exprKind.value;
  switch (e.exprKind.case) {
    case 'selectExpr':
      v.operand = f(v.operand);
      break;
    case 'callExpr':
      if (v.target) v.target = f(v.target);
      v.args = v.args.map(f);
      break;
    case 'listExpr':
      v.elements = v.elements.map(f);
      break;
    case 'structExpr':
      for (const entry of v.entries) {
        if (entry.keyKind?.case === 'mapKey') entry.keyKind.value = f(entry.keyKind.value);
        entry.value = f(entry.value);
      }
      break;
    case 'comprehensionExpr':
      for (const k of ['iterRange', 'accuInit', 'loopCondition', 'loopStep', 'result']) v[k] = f(v[k]);
      break;
  }
}

export const identName = (e: Expr | undefined): string | undefined => (e?.exprKind?.case === 'identExpr' ? (e.exprKind.value.name as string) : undefined);
