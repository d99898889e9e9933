// The parsed AST as this folder reads it (the cel.expr protobuf shapes @bufbuild/cel's parser
// returns, untyped), the names cel-go gives the calls of the optional syntax and the iteration
// variable of bindings, and cel-go's rendering of issues at their positions in the rule text.

export type Expr = any;

export interface Issue {
  offset: number;
  message: string;
}

export interface SourceInfo {
  positions: Record<string, number>;
  macroCalls: Record<string, any>;
}

/** cel-go's functions for `a.?b` and `a[?k]` (the parser workaround produces them: bufbuild-gaps/optional-syntax.ts). */
export const OPT_SELECT_FN = '_?._';
export const OPT_INDEX_FN = '_[?_]';

/** The iteration variable of a binding (cel-go's unusedIterVar). */
export const BIND_ITER_VAR = '#unused';

/** cel-go's issue rendering: "ERROR: <input>:L:C: msg\n | source line\n | ....^". */
export function renderIssues(src: string, issues: Issue[]): string {
  const lines = src.split('\n');
  const seen = new Set<string>();
  const out: string[] = [];
  for (const is of [...issues].sort((a, b) => a.offset - b.offset)) {
    let line = 0;
    let col = is.offset;
    while (line < lines.length - 1 && col > lines[line].length) {
      col -= lines[line].length + 1;
      line++;
    }
    const text = `ERROR: <input>:${line + 1}:${col + 1}: ${is.message}\n | ${lines[line]}\n | ${'.'.repeat(col)}^`;
    if (seen.has(text)) continue;
    seen.add(text);
    out.push(text);
  }
  return out.join('\n');
}
