// The grammar of label and field selectors, as apimachinery's labels.Parse and
// fields.ParseSelector read the query-string forms (same lexer, same error texts), and
// labels.NewRequirement's checks: pure, on the ground floor, so that the registry (list and
// watch filtering, registry/selectors.ts) and authorization (the selectors a request is
// authorized with, kube's AuthorizeWithSelectors) parse a selector the same way. A selector that
// does not parse throws SelectorParseError with kube's message; callers turn it into their error.
import { isQualifiedName, isValidLabelValue } from './names.ts';
import { goStringSlice } from '../go/fmt.ts';
import { goQuote, parseInt64 } from '../go/strconv.ts';

// =============================================================================================
// Label selectors

export type LabelOp = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  op: LabelOp;
  values: string[];
}

const hasOwn = Object.prototype.hasOwnProperty;

/** A field.Error's text; a nil path prints as "<nil>" in kube. */
function fieldErr(path: string | null, body: string): string {
  return `${path ?? '<nil>'}: ${body}`;
}

/** utilerrors aggregate of field errors: duplicates dropped, one error bare, several in brackets. */
function aggregate(errs: string[]): string | null {
  const uniq = [...new Set(errs)];
  if (uniq.length === 0) return null;
  return uniq.length === 1 ? uniq[0] : `[${uniq.join(', ')}]`;
}

function validateLabelKey(key: string, path: string | null): string | null {
  const errs = isQualifiedName(key);
  return errs.length ? fieldErr(path, `Invalid value: ${goQuote(key)}: ${errs.join('; ')}`) : null;
}

const VALID_OPERATORS = ['in', 'notin', '=', '==', '!=', 'gt', 'lt', 'exists', '!'];

/**
 * labels.NewRequirement with kube's error texts. `path` is the field.Path the caller passes:
 * the parser passes none (so key errors read "<nil>: ..."), children of a nil path are
 * "key" and "values".
 */
export function newLabelRequirement(key: string, op: LabelOp, vals: string[] | null, path: string | null): { req: LabelRequirement; err: string | null } {
  const errs: string[] = [];
  const child = (name: string) => (path ? `${path}.${name}` : name);
  const keyErr = validateLabelKey(key, child('key'));
  if (keyErr) errs.push(keyErr);
  const valuePath = child('values');
  const list = vals ?? [];
  switch (op) {
    case 'in':
    case 'notin':
      if (list.length === 0) errs.push(fieldErr(valuePath, `Invalid value: ${goStringSlice(vals)}: for 'in', 'notin' operators, values set can't be empty`));
      break;
    case '=':
    case '==':
    case '!=':
      if (list.length !== 1) errs.push(fieldErr(valuePath, `Invalid value: ${goStringSlice(vals)}: exact-match compatibility requires one single value`));
      break;
    case 'exists':
    case '!':
      if (list.length !== 0) errs.push(fieldErr(valuePath, `Invalid value: ${goStringSlice(vals)}: values set must be empty for exists and does not exist`));
      break;
    case 'gt':
    case 'lt':
      if (list.length !== 1) errs.push(fieldErr(valuePath, `Invalid value: ${goStringSlice(vals)}: for 'Gt', 'Lt' operators, exactly one value is required`));
      list.forEach((v, i) => {
        if (typeof parseInt64(v) !== 'bigint') errs.push(fieldErr(`${valuePath}[${i}]`, `Invalid value: ${goQuote(v)}: for 'Gt', 'Lt' operators, the value must be an integer`));
      });
      break;
    default:
      errs.push(
        fieldErr(child('operator'), `Unsupported value: ${goQuote(String(op))}: supported values: ${VALID_OPERATORS.map((o) => goQuote(o)).join(', ')}`),
      );
  }
  list.forEach((v, i) => {
    const msgs = isValidLabelValue(v);
    if (msgs.length) errs.push(fieldErr(`${valuePath}[${i}][${key}]`, `Invalid value: ${goQuote(v)}: ${msgs.join('; ')}`));
  });
  return { req: { key, op, values: list }, err: aggregate(errs) };
}

// --- Lexer and parser (labels.Parse) ---------------------------------------------------------

const enum Tok {
  Error,
  EndOfString,
  ClosedPar,
  Comma,
  DoesNotExist,
  DoubleEquals,
  Equals,
  GreaterThan,
  Identifier,
  In,
  LessThan,
  NotEquals,
  NotIn,
  OpenPar,
}

const STRING_TO_TOKEN: Record<string, Tok> = {
  ')': Tok.ClosedPar,
  ',': Tok.Comma,
  '!': Tok.DoesNotExist,
  '==': Tok.DoubleEquals,
  '=': Tok.Equals,
  '>': Tok.GreaterThan,
  in: Tok.In,
  '<': Tok.LessThan,
  '!=': Tok.NotEquals,
  notin: Tok.NotIn,
  '(': Tok.OpenPar,
};
const tokenOf = (s: string): Tok | undefined => (hasOwn.call(STRING_TO_TOKEN, s) ? STRING_TO_TOKEN[s] : undefined);

const isWhitespace = (c: string) => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isSpecial = (c: string) => c === '=' || c === '!' || c === '(' || c === ')' || c === ',' || c === '>' || c === '<';

interface Item {
  tok: Tok;
  lit: string;
}

function lex(s: string): Item[] {
  const items: Item[] = [];
  let pos = 0;
  // Go's lexer reads byte 0 as the end of input; a NUL in the string ends it the same way.
  const read = (): string => (pos < s.length ? s[pos++] : '\0');
  for (;;) {
    let ch = read();
    while (isWhitespace(ch)) ch = read();
    if (ch === '\0') {
      items.push({ tok: Tok.EndOfString, lit: '' });
      return items;
    }
    pos--;
    if (isSpecial(ch)) {
      let buf = '';
      let last: Item | null = null;
      for (;;) {
        const c = read();
        if (c === '\0') break;
        if (isSpecial(c)) {
          buf += c;
          const t = tokenOf(buf);
          if (t !== undefined) last = { tok: t, lit: buf };
          else if (last) {
            pos--;
            break;
          }
        } else {
          pos--;
          break;
        }
      }
      items.push(last ?? { tok: Tok.Error, lit: `error expected: keyword found '${buf}'` });
    } else {
      let buf = '';
      for (;;) {
        const c = read();
        if (c === '\0') break;
        if (isSpecial(c) || isWhitespace(c)) {
          pos--;
          break;
        }
        buf += c;
      }
      const t = tokenOf(buf);
      items.push({ tok: t ?? Tok.Identifier, lit: buf });
    }
  }
}

/** A selector that does not parse; its message is kube's. */
export class SelectorParseError extends Error {}

const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

class Parser {
  private pos = 0;
  constructor(private readonly items: Item[]) {}

  /** In the Values context the keywords "in"/"notin" are plain identifiers. */
  private lookahead(values: boolean): Item {
    const it = this.items[this.pos];
    return values && (it.tok === Tok.In || it.tok === Tok.NotIn) ? { tok: Tok.Identifier, lit: it.lit } : it;
  }
  private consume(values: boolean): Item {
    const it = this.lookahead(values);
    this.pos++;
    return it;
  }

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead(true);
      switch (tok) {
        case Tok.Identifier:
        case Tok.DoesNotExist: {
          let r: LabelRequirement;
          try {
            r = this.parseRequirement();
          } catch (e) {
            if (e instanceof SelectorParseError) throw new SelectorParseError(`unable to parse requirement: ${e.message}`);
            throw e;
          }
          reqs.push(r);
          const t = this.consume(true);
          if (t.tok === Tok.EndOfString) return reqs;
          if (t.tok === Tok.Comma) {
            const t2 = this.lookahead(true);
            if (t2.tok !== Tok.Identifier && t2.tok !== Tok.DoesNotExist) throw new SelectorParseError(`found '${t2.lit}', expected: identifier after ','`);
          } else {
            throw new SelectorParseError(`found '${t.lit}', expected: ',' or 'end of string'`);
          }
          break;
        }
        case Tok.EndOfString:
          return reqs;
        default:
          throw new SelectorParseError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      }
    }
  }

  private parseRequirement(): LabelRequirement {
    const { key, op: inferred } = this.parseKeyAndInferOperator();
    if (inferred === 'exists' || inferred === '!') return this.build(key, inferred, []);
    const op = this.parseOperator();
    const values = op === 'in' || op === 'notin' ? this.parseValues() : this.parseExactValue();
    return this.build(key, op, [...values].sort());
  }

  private build(key: string, op: LabelOp, values: string[]): LabelRequirement {
    const { req, err } = newLabelRequirement(key, op, values, null);
    if (err) throw new SelectorParseError(err);
    return req;
  }

  private parseKeyAndInferOperator(): { key: string; op: LabelOp | null } {
    let op: LabelOp | null = null;
    let it = this.consume(true);
    if (it.tok === Tok.DoesNotExist) {
      op = '!';
      it = this.consume(true);
    }
    if (it.tok !== Tok.Identifier) throw new SelectorParseError(`found '${it.lit}', expected: identifier`);
    const keyErr = validateLabelKey(it.lit, null);
    if (keyErr) throw new SelectorParseError(keyErr);
    const next = this.lookahead(true).tok;
    if ((next === Tok.EndOfString || next === Tok.Comma) && op !== '!') op = 'exists';
    return { key: it.lit, op };
  }

  private parseOperator(): LabelOp {
    const { tok, lit } = this.consume(false);
    switch (tok) {
      case Tok.In:
        return 'in';
      case Tok.Equals:
        return '=';
      case Tok.DoubleEquals:
        return '==';
      case Tok.GreaterThan:
        return 'gt';
      case Tok.LessThan:
        return 'lt';
      case Tok.NotIn:
        return 'notin';
      case Tok.NotEquals:
        return '!=';
      default:
        throw new SelectorParseError(`found '${lit}', expected: ${BINARY_OPERATORS}`);
    }
  }

  private parseValues(): Set<string> {
    let it = this.consume(true);
    if (it.tok !== Tok.OpenPar) throw new SelectorParseError(`found '${it.lit}' expected: '('`);
    it = this.lookahead(true);
    switch (it.tok) {
      case Tok.Identifier:
      case Tok.Comma: {
        const s = this.parseIdentifiersList();
        if (this.consume(true).tok !== Tok.ClosedPar) throw new SelectorParseError(`found '${it.lit}', expected: ')'`);
        return s;
      }
      case Tok.ClosedPar:
        this.consume(true);
        return new Set(['']);
      default:
        throw new SelectorParseError(`found '${it.lit}', expected: ',', ')' or identifier`);
    }
  }

  private parseIdentifiersList(): Set<string> {
    const s = new Set<string>();
    for (;;) {
      const it = this.consume(true);
      switch (it.tok) {
        case Tok.Identifier: {
          s.add(it.lit);
          const next = this.lookahead(true);
          if (next.tok === Tok.Comma) continue;
          if (next.tok === Tok.ClosedPar) return s;
          throw new SelectorParseError(`found '${next.lit}', expected: ',' or ')'`);
        }
        case Tok.Comma: {
          if (s.size === 0) s.add(''); // "(,"
          const next = this.lookahead(true).tok;
          if (next === Tok.ClosedPar) {
            s.add(''); // ",)"
            return s;
          }
          if (next === Tok.Comma) {
            this.consume(true);
            s.add(''); // ",,"
          }
          break;
        }
        default:
          throw new SelectorParseError(`found '${it.lit}', expected: ',', or identifier`);
      }
    }
  }

  private parseExactValue(): Set<string> {
    const next = this.lookahead(true).tok;
    if (next === Tok.EndOfString || next === Tok.Comma) return new Set(['']);
    const it = this.consume(true);
    if (it.tok === Tok.Identifier) return new Set([it.lit]);
    throw new SelectorParseError(`found '${it.lit}', expected: identifier`);
  }
}

/**
 * labels.Parse's requirements: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`,
 * `a>1`, `a<1`, comma-separated (AND). "" is no requirement. Throws SelectorParseError.
 */
export function parseLabelRequirements(s: string): LabelRequirement[] {
  if (s === '') return [];
  return new Parser(lex(s)).parse();
}

// =============================================================================================
// Field selectors

/** fields.Requirement: `==` parses as `=` (selection.Equals), as kube's hasTerm reports it. */
export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

/** Split on commas that are not backslash-escaped; escapes stay in the terms. */
function splitTerms(s: string): string[] {
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

/** The first operator occurrence splits the term; "!=" and "==" win over "=" at the same spot. */
function splitTerm(term: string): { lhs: string; op: string; rhs: string } | null {
  for (let i = 0; i < term.length; i++) {
    for (const op of ['!=', '==', '=']) {
      if (term.startsWith(op, i)) return { lhs: term.slice(0, i), op, rhs: term.slice(i + op.length) };
    }
  }
  return null;
}

/** fields.UnescapeValue: `\\`, `\,` and `\=` are the only escapes; bare `,` and `=` are errors. */
function unescapeValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c === '\\' || c === ',' || c === '=') out += c;
      else throw new SelectorParseError(`invalid field selector: invalid escape sequence: \\${c}`);
      inSlash = false;
      continue;
    }
    if (c === '\\') inSlash = true;
    else if (c === ',' || c === '=') throw new SelectorParseError(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    else out += c;
  }
  if (inSlash) throw new SelectorParseError('invalid field selector: invalid escape sequence: \\');
  return out;
}

/** fields.ParseSelector's requirements, terms sorted as kube sorts them; throws SelectorParseError. */
export function parseFieldRequirements(s: string): FieldRequirement[] {
  const requirements: FieldRequirement[] = [];
  if (!s) return requirements;
  for (const part of splitTerms(s).sort()) {
    if (part === '') continue;
    const t = splitTerm(part);
    if (!t) throw new SelectorParseError(`invalid selector: '${s}'; can't understand '${part}'`);
    requirements.push({ field: t.lhs, op: t.op === '!=' ? '!=' : '=', value: unescapeValue(t.rhs) });
  }
  return requirements;
}
