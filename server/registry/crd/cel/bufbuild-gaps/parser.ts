// Gap: two differences of @bufbuild/cel's parser from cel-go's that show in what kube-apiserver
// answers: it ends a // comment only at a newline (cel-go also at the end of the text), and its
// syntax errors start with "<input>:L:C:" where cel-go's issues carry the position apart.
import { parse } from '@bufbuild/cel';
import type { Issue } from '../ast.ts';

/** Parses rule text as cel-go does (a // comment may end the text). */
export function parseRule(text: string): ReturnType<typeof parse> {
  return parse(text.includes('//') ? `${text}\n` : text);
}

/** A parse failure as cel-go's syntax error issue. */
export function syntaxIssue(e: any): Issue {
  const loc = e?.location?.start;
  const offset = typeof loc?.offset === 'number' ? loc.offset : 0;
  const raw = String(e?.message ?? e).replace(/^<input>:\d+:\d+:\s*/, '');
  return { offset, message: `Syntax error: ${raw}` };
}
