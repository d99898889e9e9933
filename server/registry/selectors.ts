// Label and field selectors: parsing the query-string forms the way apimachinery's labels and
// fields packages do (same grammar, same error texts), compiling them once per request into
// matchers, and matching them against the field set each kind exposes (looked up in the kinds'
// registry, kinds/fields.ts).
import type { ResourceInfo } from '../schema/types.ts';
import { kindFieldsOf, isBuiltinGroup } from './kinds/fields.ts';
import { notKnownFieldSelector, stringField, type KindFields } from './strategy.ts';
import { badRequest } from '../errors.ts';
import { isQualifiedName, isValidLabelValue } from '../validation/names.ts';
import { goStringSlice } from '../go/fmt.ts';
import { goQuote, parseInt64 } from '../go/strconv.ts';

// =============================================================================================
// Label selectors

export interface LabelSelector {
  matches(labels: Record<string, string> | undefined): boolean;
  /** True when the selector does not restrict anything (matches every object). */
  readonly empty: boolean;
  /**
   * Labels a matching object must carry, each with the values it may have (undefined: any):
   * what `=`, `==`, `in`, `exists`, `gt` and `lt` require. Storage reads by them before
   * matches() decides; the other requirements restrict nothing here.
   */
  readonly required: readonly RequiredLabel[];
}

export interface RequiredLabel {
  key: string;
  values?: readonly string[];
}

type LabelOp = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

interface LabelRequirement {
  key: string;
  op: LabelOp;
  values: string[];
}

const hasOwn = Object.prototype.hasOwnProperty;
type Labels = Record<string, string> | undefined;
type LabelTest = (labels: Labels) => boolean;

function compileRequirement(r: LabelRequirement): LabelTest {
  const key = r.key;
  const lookup = (l: Labels): string | undefined => (l && hasOwn.call(l, key) ? l[key] : undefined);
  switch (r.op) {
    case 'in':
    case '=':
    case '==': {
      if (r.values.length === 1) {
        const want = r.values[0];
        return (l) => lookup(l) === want;
      }
      const set = new Set(r.values);
      return (l) => {
        const v = lookup(l);
        return v !== undefined && set.has(v);
      };
    }
    case 'notin':
    case '!=': {
      if (r.values.length === 1) {
        const not = r.values[0];
        return (l) => lookup(l) !== not;
      }
      const set = new Set(r.values);
      return (l) => {
        const v = lookup(l);
        return v === undefined || !set.has(v);
      };
    }
    case 'exists':
      return (l) => lookup(l) !== undefined;
    case '!':
      return (l) => lookup(l) === undefined;
    case 'gt':
    case 'lt': {
      const bound = r.values.length === 1 ? parseInt64(r.values[0]) : undefined;
      if (typeof bound !== 'bigint') return () => false;
      const gt = r.op === 'gt';
      return (l) => {
        const v = lookup(l);
        if (v === undefined) return false;
        const n = parseInt64(v);
        if (typeof n !== 'bigint') return false;
        return gt ? n > bound : n < bound;
      };
    }
  }
}

function makeLabelSelector(reqs: LabelRequirement[] | null): LabelSelector {
  if (reqs === null) return { empty: false, required: [], matches: () => false }; // labels.Nothing()
  if (reqs.length === 0) return { empty: true, required: [], matches: () => true };
  const tests = reqs.map(compileRequirement);
  const required = requiredLabels(reqs);
  if (tests.length === 1) {
    const t = tests[0];
    return { empty: false, required, matches: (l) => t(l) };
  }
  return {
    empty: false,
    required,
    matches(l) {
      for (let i = 0; i < tests.length; i++) if (!tests[i](l)) return false;
      return true;
    },
  };
}

function requiredLabels(reqs: LabelRequirement[]): RequiredLabel[] {
  const out: RequiredLabel[] = [];
  for (const r of reqs) {
    if (r.op === '=' || r.op === '==' || r.op === 'in') out.push({ key: r.key, values: r.values });
    else if (r.op === 'exists' || r.op === 'gt' || r.op === 'lt') out.push({ key: r.key });
  }
  return out;
}

// --- NewRequirement: validation shared by the string parser and metav1.LabelSelector ---------

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
function newRequirement(key: string, op: LabelOp, vals: string[] | null, path: string | null): { req: LabelRequirement; err: string | null } {
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

class ParseError extends Error {}

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
            if (e instanceof ParseError) throw new ParseError(`unable to parse requirement: ${e.message}`);
            throw e;
          }
          reqs.push(r);
          const t = this.consume(true);
          if (t.tok === Tok.EndOfString) return reqs;
          if (t.tok === Tok.Comma) {
            const t2 = this.lookahead(true);
            if (t2.tok !== Tok.Identifier && t2.tok !== Tok.DoesNotExist) throw new ParseError(`found '${t2.lit}', expected: identifier after ','`);
          } else {
            throw new ParseError(`found '${t.lit}', expected: ',' or 'end of string'`);
          }
          break;
        }
        case Tok.EndOfString:
          return reqs;
        default:
          throw new ParseError(`found '${lit}', expected: !, identifier, or 'end of string'`);
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
    const { req, err } = newRequirement(key, op, values, null);
    if (err) throw new ParseError(err);
    return req;
  }

  private parseKeyAndInferOperator(): { key: string; op: LabelOp | null } {
    let op: LabelOp | null = null;
    let it = this.consume(true);
    if (it.tok === Tok.DoesNotExist) {
      op = '!';
      it = this.consume(true);
    }
    if (it.tok !== Tok.Identifier) throw new ParseError(`found '${it.lit}', expected: identifier`);
    const keyErr = validateLabelKey(it.lit, null);
    if (keyErr) throw new ParseError(keyErr);
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
        throw new ParseError(`found '${lit}', expected: ${BINARY_OPERATORS}`);
    }
  }

  private parseValues(): Set<string> {
    let it = this.consume(true);
    if (it.tok !== Tok.OpenPar) throw new ParseError(`found '${it.lit}' expected: '('`);
    it = this.lookahead(true);
    switch (it.tok) {
      case Tok.Identifier:
      case Tok.Comma: {
        const s = this.parseIdentifiersList();
        if (this.consume(true).tok !== Tok.ClosedPar) throw new ParseError(`found '${it.lit}', expected: ')'`);
        return s;
      }
      case Tok.ClosedPar:
        this.consume(true);
        return new Set(['']);
      default:
        throw new ParseError(`found '${it.lit}', expected: ',', ')' or identifier`);
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
          throw new ParseError(`found '${next.lit}', expected: ',' or ')'`);
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
          throw new ParseError(`found '${it.lit}', expected: ',', or identifier`);
      }
    }
  }

  private parseExactValue(): Set<string> {
    const next = this.lookahead(true).tok;
    if (next === Tok.EndOfString || next === Tok.Comma) return new Set(['']);
    const it = this.consume(true);
    if (it.tok === Tok.Identifier) return new Set([it.lit]);
    throw new ParseError(`found '${it.lit}', expected: identifier`);
  }
}

/**
 * Parse the `labelSelector` query parameter (labels.Parse): `a=b`, `a==b`, `a!=b`, `a in (x,y)`,
 * `a notin (x)`, `a`, `!a`, `a>1`, `a<1`, comma-separated (AND). Errors are ApiError 400
 * BadRequest with kube's message.
 */
export function parseLabelSelector(s: string | undefined): LabelSelector {
  if (s === undefined || s === '') return makeLabelSelector([]);
  try {
    return makeLabelSelector(new Parser(lex(s)).parse());
  } catch (e) {
    if (e instanceof ParseError) throw badRequest(e.message);
    throw e;
  }
}

const SELECTOR_OPS: Record<string, LabelOp> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/**
 * A metav1.LabelSelector object (matchLabels, matchExpressions with In/NotIn/Exists/DoesNotExist)
 * as metav1.LabelSelectorAsSelector reads it: null/undefined selects nothing, {} selects
 * everything. Invalid selectors throw ApiError 400 with kube's message.
 */
export function labelSelectorFromObject(sel: unknown): LabelSelector {
  if (sel === null || sel === undefined) return makeLabelSelector(null);
  if (typeof sel !== 'object' || Array.isArray(sel)) throw badRequest('invalid label selector: not an object');
  const { matchLabels, matchExpressions } = sel as { matchLabels?: unknown; matchExpressions?: unknown };
  const ml = matchLabels && typeof matchLabels === 'object' && !Array.isArray(matchLabels) ? (matchLabels as Record<string, unknown>) : {};
  const me = Array.isArray(matchExpressions) ? matchExpressions : [];
  const reqs: LabelRequirement[] = [];
  for (const k of Object.keys(ml)) {
    const { req, err } = newRequirement(k, '=', [String(ml[k] ?? '')], null);
    if (err) throw badRequest(err);
    reqs.push(req);
  }
  for (const raw of me) {
    const e = (raw && typeof raw === 'object' ? raw : {}) as { key?: unknown; operator?: unknown; values?: unknown };
    const operator = typeof e.operator === 'string' ? e.operator : '';
    const op = hasOwn.call(SELECTOR_OPS, operator) ? SELECTOR_OPS[operator] : undefined;
    if (!op) throw badRequest(`${goQuote(operator)} is not a valid label selector operator`);
    const values = Array.isArray(e.values) && e.values.length ? e.values.map((v) => String(v)) : null;
    const { req, err } = newRequirement(typeof e.key === 'string' ? e.key : '', op, values, null);
    if (err) throw badRequest(err);
    reqs.push(req);
  }
  return makeLabelSelector(reqs);
}

// =============================================================================================
// Field selectors

export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

export interface FieldSelector {
  matches(fields: Record<string, string>): boolean;
  readonly requirements: FieldRequirement[];
  readonly empty: boolean;
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
      else throw new ParseError(`invalid field selector: invalid escape sequence: \\${c}`);
      inSlash = false;
      continue;
    }
    if (c === '\\') inSlash = true;
    else if (c === ',' || c === '=') throw new ParseError(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    else out += c;
  }
  if (inSlash) throw new ParseError('invalid field selector: invalid escape sequence: \\');
  return out;
}

/** Parse the `fieldSelector` query parameter (fields.ParseSelector); errors are ApiError 400. */
export function parseFieldSelector(s: string | undefined): FieldSelector {
  const requirements: FieldRequirement[] = [];
  if (s) {
    const parts = splitTerms(s).sort();
    for (const part of parts) {
      if (part === '') continue;
      const t = splitTerm(part);
      if (!t) throw badRequest(`invalid selector: '${s}'; can't understand '${part}'`);
      let value: string;
      try {
        value = unescapeValue(t.rhs);
      } catch (e) {
        if (e instanceof ParseError) throw badRequest(e.message);
        throw e;
      }
      requirements.push({ field: t.lhs, op: t.op === '!=' ? '!=' : '=', value });
    }
  }
  const n = requirements.length;
  const fieldsOf = requirements.map((r) => r.field);
  const valuesOf = requirements.map((r) => r.value);
  const negOf = requirements.map((r) => r.op === '!=');
  return {
    requirements,
    empty: n === 0,
    matches(fields) {
      for (let i = 0; i < n; i++) {
        const f = fieldsOf[i];
        const v = hasOwn.call(fields, f) ? fields[f] : '';
        if ((v === valuesOf[i]) === negOf[i]) return false;
      }
      return true;
    },
  };
}

// --- Field sets: each kind's from the kinds' registry (kinds/fields.ts) -----------------------

/**
 * The field set an object exposes to field selectors (the registry's GetAttrs): metadata.name,
 * metadata.namespace for namespaced kinds, and the kind's own fields. CRD-backed kinds: see fieldsOf.
 */
export function selectableFields(group: string, resource: string, obj: any, namespaced: boolean): Record<string, string> {
  const kind = kindFieldsOf(group, resource);
  const out: Record<string, string> = kind?.fields ? kind.fields(obj) : {};
  const meta = obj?.metadata ?? {};
  out['metadata.name'] = stringField(meta.name);
  if (namespaced) out['metadata.namespace'] = stringField(meta.namespace);
  return out;
}

/** The labels each kind's field-label conversion accepts, as sets. */
const accepted = new WeakMap<KindFields, ReadonlySet<string>>();
function acceptedBy(kind: KindFields): ReadonlySet<string> {
  let set = accepted.get(kind);
  if (!set) accepted.set(kind, (set = new Set(kind.accepted)));
  return set;
}

export interface FieldSupportOptions {
  /** Served version, for messages that name it (ResourceSlice). Default "v1". */
  version?: string;
  /** Scope, for CRD-backed kinds (metadata.namespace is refused on cluster-scoped ones). */
  namespaced?: boolean;
  /** A CRD's spec.versions[].selectableFields[].jsonPath values. */
  selectableFields?: readonly string[];
}

/**
 * Throws ApiError 400 for the first field (in sorted order, as kube transforms them) the
 * resource does not support. Kinds with their own conversion say `field label not supported:
 * <label>`; kinds without one say `"<label>" is not a known field selector: only
 * "metadata.name", "metadata.namespace"`; CRD-backed kinds accept metadata.name,
 * metadata.namespace when namespaced, and their selectableFields.
 */
export function checkFieldSelectorSupported(group: string, resource: string, sel: FieldSelector, opts: FieldSupportOptions = {}): void {
  if (sel.empty) return;
  const kind = kindFieldsOf(group, resource);
  const builtin = isBuiltinGroup(group);
  for (const { field } of sel.requirements) {
    if (kind) {
      if (acceptedBy(kind).has(field)) continue;
      throw badRequest(kind.message ? kind.message(field, opts.version ?? 'v1') : `field label not supported: ${field}`);
    }
    if (builtin) {
      if (field === 'metadata.name' || field === 'metadata.namespace') continue;
      throw badRequest(notKnownFieldSelector(field));
    }
    if (field === 'metadata.name') continue;
    if (field === 'metadata.namespace' && opts.namespaced !== false) continue;
    const custom = opts.selectableFields?.some((p) => (p.startsWith('.') ? p.slice(1) : p) === field);
    if (custom) continue;
    throw badRequest(`field label not supported: ${field}`);
  }
}

/** The JSON path of a selectable field of a built-in kind whose value is a string read as it is (KindFields.stringFieldPaths). */
export function stringFieldPath(info: ResourceInfo, field: string): string | undefined {
  return info.custom ? undefined : kindFieldsOf(info.group, info.resource)?.stringFieldPaths?.[field];
}

/** The field set of an object of any resource, built-in or custom. */
export function fieldsOf(info: ResourceInfo, obj: any): Record<string, string> {
  return info.custom ? info.custom.fields(obj) : selectableFields(info.group, info.resource, obj, info.namespaced);
}

/** 400 for a field selector the resource cannot serve. */
export function checkFieldSelectorFor(info: ResourceInfo, sel: FieldSelector): void {
  if (info.custom) checkFieldSelectorSupported(info.group, info.resource, sel, { namespaced: info.namespaced, selectableFields: info.custom.selectableFields, version: info.version });
  else checkFieldSelectorSupported(info.group, info.resource, sel);
}
