// Gap: the optional syntax, which @bufbuild/cel's parser does not accept.
//
// cel-go parses `a.?b` as the call _?._(a, "b"), `a[?k]` as _[?_](a, k), and marks optional list
// elements (`[a, ?b]`: the list's optionalIndices) and map entries (`{?k: v}`: the entry's
// optionalEntry). Before parsing, the `?` of each is replaced by a space — which keeps every
// offset, so positions and error carets stay those of the rule text — and its place recorded:
// the offset of the `.` or `[` (the select node's or index call's position) and, for literals,
// the offset of the `[` or `{` (the literal's position) with the indices of the optional
// elements. After parsing, the recorded nodes are turned into cel-go's forms. A tokenizer skips
// string and bytes literals (quoted, triple-quoted, raw) and comments, so a `?` in them is kept.

import { OPT_INDEX_FN, OPT_SELECT_FN, type Expr, type Issue, type SourceInfo } from '../ast.ts';
import { AstBuilder, mapChildren } from './ast-builder.ts';

interface OptionalSyntax {
  /** the rule text with the optional markers blanked */
  text: string;
  /** offsets of the `.` of each `.?` */
  selects: Set<number>;
  /** offsets of the `[` of each `[?` that indexes */
  indexes: Set<number>;
  /** offset of the `[` of a list literal → indices of its optional elements */
  lists: Map<number, Set<number>>;
  /** offset of the `{` of a map literal → indices of its optional entries */
  maps: Map<number, Set<number>>;
}

const IDENT_START = /[_a-zA-Z]/;
const IDENT_PART = /[_a-zA-Z0-9]/;
const NUMBER = /0[xX][0-9a-fA-F]+[uU]?|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?[uU]?|\.[0-9]+(?:[eE][+-]?[0-9]+)?/y;

/** Finds the optional syntax in src (see above); returns undefined when there is none. */
export function scanOptionalSyntax(src: string): OptionalSyntax | undefined {
  if (!src.includes('?')) return undefined;
  // (offsets are UTF-16 code units, as the parser's are; split('') keeps them)
  const text = src.split('');
  const out: OptionalSyntax = { text: '', selects: new Set(), indexes: new Set(), lists: new Map(), maps: new Map() };
  const stack: { kind: '(' | 'index' | 'list' | 'map'; open: number; count: number }[] = [];
  /** whether the last token ends an operand (so `[` indexes it and `.` selects from it) */
  let operand = false;
  const skip = (i: number): number => {
    for (;;) {
      while (i < src.length && /[ \t\n\r\f]/.test(src[i])) i++;
      if (src.startsWith('//', i)) {
        while (i < src.length && src[i] !== '\n') i++;
        continue;
      }
      return i;
    }
  };
  /** Blanks a `?` that starts at or after i (whitespace and comments between); returns whether it did. */
  const marker = (i: number): boolean => {
    const j = skip(i);
    if (src[j] !== '?') return false;
    text[j] = ' ';
    return true;
  };
  let found = false;
  /** Records the element of literal `top` being read as optional when a `?` starts at or after i. */
  const optionalElement = (top: { kind: string; open: number; count: number }, i: number): void => {
    if (!marker(i)) return;
    const m = top.kind === 'list' ? out.lists : out.maps;
    let set = m.get(top.open);
    if (!set) m.set(top.open, (set = new Set()));
    set.add(top.count);
    found = true;
  };
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/[ \t\n\r\f]/.test(c)) {
      i++;
      continue;
    }
    if (src.startsWith('//', i)) {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    // string and bytes literals, with their r/b prefixes
    const lit = /^(?:[rR][bB]?|[bB][rR]?)?("""|'''|"|')/.exec(src.slice(i, i + 5));
    if (lit) {
      const raw = /[rR]/.test(lit[0].slice(0, lit[0].length - lit[1].length));
      const q = lit[1];
      let j = i + lit[0].length;
      while (j < src.length && !src.startsWith(q, j)) j += !raw && src[j] === '\\' ? 2 : 1;
      i = j + q.length;
      operand = true;
      continue;
    }
    if (IDENT_START.test(c)) {
      let j = i + 1;
      while (j < src.length && IDENT_PART.test(src[j])) j++;
      operand = src.slice(i, j) !== 'in';
      i = j;
      continue;
    }
    NUMBER.lastIndex = i;
    if (/[0-9]/.test(c) || (c === '.' && !operand && /[0-9]/.test(src[i + 1] ?? ''))) {
      const m = NUMBER.exec(src);
      i += m ? m[0].length : 1;
      operand = true;
      continue;
    }
    switch (c) {
      case '.':
        if (marker(i + 1)) {
          out.selects.add(i);
          found = true;
        }
        operand = false;
        break;
      case '[':
        if (operand) {
          if (marker(i + 1)) {
            out.indexes.add(i);
            found = true;
          }
          stack.push({ kind: 'index', open: i, count: 0 });
        } else {
          const top = { kind: 'list' as const, open: i, count: 0 };
          stack.push(top);
          optionalElement(top, i + 1);
        }
        operand = false;
        break;
      case '{': {
        const top = { kind: 'map' as const, open: i, count: 0 };
        stack.push(top);
        optionalElement(top, i + 1);
        operand = false;
        break;
      }
      case '(':
        stack.push({ kind: '(', open: i, count: 0 });
        operand = false;
        break;
      case ')':
      case ']':
      case '}':
        stack.pop();
        operand = true;
        break;
      case ',': {
        const top = stack[stack.length - 1];
        if (top && (top.kind === 'list' || top.kind === 'map')) {
          top.count++;
          optionalElement(top, i + 1);
        }
        operand = false;
        break;
      }
      default:
        operand = false;
    }
    i++;
  }
  if (!found) return undefined;
  out.text = text.join('');
  return out;
}

/**
 * Turns the nodes scanOptionalSyntax recorded into cel-go's forms; returns an issue for each
 * marker no node took (`.?` before a call, or as the argument of has()).
 */
export function applyOptionalSyntax(parsed: { expr: Expr; sourceInfo: SourceInfo }, syn: OptionalSyntax, src: string): Issue[] {
  const info = parsed.sourceInfo;
  const b = new AstBuilder(info);
  const selects = new Set(syn.selects);
  const indexes = new Set(syn.indexes);
  const lists = new Map(syn.lists);
  const maps = new Map(syn.maps);
  const visit = (e: Expr): Expr => {
    mapChildren(e, visit);
    const pos = info.positions[String(e.id)];
    const v = e.exprKind.value;
    switch (e.exprKind.case) {
      case 'selectExpr':
        if (!v.testOnly && selects.delete(pos)) {
          e.exprKind = { case: 'callExpr', value: { $typeName: 'cel.expr.Expr.Call', function: OPT_SELECT_FN, args: [v.operand, b.str(pos, v.field)] } };
        }
        break;
      case 'callExpr':
        if (v.function === '_[_]' && !v.target && indexes.delete(pos)) v.function = OPT_INDEX_FN;
        break;
      case 'listExpr': {
        const opt = lists.get(pos);
        if (opt) {
          lists.delete(pos);
          v.optionalIndices = [...opt].filter((i) => i < v.elements.length).sort((x, y) => x - y);
        }
        break;
      }
      case 'structExpr': {
        const opt = maps.get(pos);
        if (opt) {
          maps.delete(pos);
          v.entries.forEach((en: any, i: number) => {
            if (opt.has(i)) en.optionalEntry = true;
          });
        }
        break;
      }
    }
    return e;
  };
  parsed.expr = visit(parsed.expr);
  const issues: Issue[] = [];
  for (const at of selects) {
    // `a.?b(...)`, or has(a.?b) (the has() macro replaced the selection)
    const rest = /^\.\s*\??\s*[_a-zA-Z][_a-zA-Z0-9]*\s*(\()?/.exec(src.slice(at));
    issues.push({ offset: at, message: rest?.[1] ? "unsupported syntax '.?'" : 'invalid argument to has() macro' });
  }
  for (const at of [...indexes, ...lists.keys(), ...maps.keys()]) issues.push({ offset: at, message: "unsupported syntax '?'" });
  return issues;
}
