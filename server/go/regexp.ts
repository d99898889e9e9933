// Go's regexp (RE2 syntax and semantics), which kube-apiserver compiles a CRD schema's `pattern`
// with: through @bufbuild/cel's `matches`, which implements RE2, or a JS RegExp where the pattern
// means the same there.
import { parse, plan, celEnv, isCelError, CelScalar } from '@bufbuild/cel';

const re2Plan = plan(celEnv({ variables: { s: CelScalar.STRING, p: CelScalar.STRING } }), parse('s.matches(p)'));

/** The RE2 compile error for pattern ("error parsing regexp: ..."), or undefined when it compiles. */
export function re2Error(pattern: string): string | undefined {
  const r = re2Plan({ s: '', p: pattern });
  return isCelError(r) ? r.message : undefined;
}

/** Whether the RE2 pattern matches somewhere in s. */
export function re2Test(pattern: string, s: string): boolean {
  const r = re2Plan({ s, p: pattern });
  return r === true;
}

/** Go-only syntax that JS RegExp lacks or reads differently. */
const GO_ONLY_SYNTAX = /\(\?[^:]|\[\[:|\\[AzCQEpP]/;
interface Matcher {
  test(s: string): boolean;
  toString(): string;
}
const regexCache = new Map<string, Matcher>();

/** A matcher with RE2 semantics: a JS RegExp when the pattern means the same there, else RE2. */
export function re2Matcher(pattern: string): Matcher {
  const cached = regexCache.get(pattern);
  if (cached) return cached;
  let js: RegExp | undefined;
  if (!GO_ONLY_SYNTAX.test(pattern)) {
    try {
      js = new RegExp(pattern, 'u');
    } catch {
      js = undefined;
    }
  }
  // ajv keys compiled patterns by toString(): keep it distinct per pattern.
  const toString = () => `re2:${pattern}`;
  const m: Matcher = js ? { test: (s: string) => js!.test(s), toString } : { test: (s: string) => re2Test(pattern, s), toString };
  if (regexCache.size > 4096) regexCache.clear();
  regexCache.set(pattern, m);
  return m;
}
