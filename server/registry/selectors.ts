// Label and field selectors: parsing the query-string forms the way apimachinery's labels and
// fields packages do (same grammar, same error texts), compiling them once per request into
// matchers, and the per-kind field sets objects expose to field selectors.
import type { ResourceInfo } from '../schema/types.ts';
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

// --- Per-kind field sets ---------------------------------------------------------------------

const s = (v: unknown): string => (typeof v === 'string' ? v : '');
const n = (v: unknown): string => (typeof v === 'number' ? String(Math.trunc(v)) : '0');
const b = (v: unknown): string => (v === true ? 'true' : 'false');

function podFields(o: any): Record<string, string> {
  const spec = o?.spec ?? {};
  const status = o?.status ?? {};
  const podIPs = Array.isArray(status.podIPs) ? status.podIPs : [];
  const podIP = podIPs.length > 0 ? s(podIPs[0]?.ip) : s(status.podIP);
  return {
    'spec.nodeName': s(spec.nodeName),
    'spec.host': s(spec.nodeName), // old clients' name for spec.nodeName
    'spec.restartPolicy': s(spec.restartPolicy),
    'spec.schedulerName': s(spec.schedulerName),
    'spec.serviceAccountName': s(spec.serviceAccountName),
    'spec.hostNetwork': b(spec.hostNetwork),
    'status.phase': s(status.phase),
    'status.podIP': podIP,
    'status.nominatedNodeName': s(status.nominatedNodeName),
  };
}

/** Core events, read from either the core/v1 or the events.k8s.io/v1 shape. */
function coreEventParts(o: any) {
  const inv = o?.involvedObject ?? o?.regarding ?? {};
  const reporting = s(o?.reportingComponent) || s(o?.reportingController);
  const sourceComponent = s(o?.source?.component) || s(o?.deprecatedSource?.component);
  return {
    kind: s(inv.kind),
    namespace: s(inv.namespace),
    name: s(inv.name),
    uid: s(inv.uid),
    apiVersion: s(inv.apiVersion),
    resourceVersion: s(inv.resourceVersion),
    fieldPath: s(inv.fieldPath),
    reason: s(o?.reason),
    reporting,
    source: sourceComponent || reporting,
    type: s(o?.type),
  };
}

function eventFields(o: any): Record<string, string> {
  const e = coreEventParts(o);
  return {
    'involvedObject.kind': e.kind,
    'involvedObject.namespace': e.namespace,
    'involvedObject.name': e.name,
    'involvedObject.uid': e.uid,
    'involvedObject.apiVersion': e.apiVersion,
    'involvedObject.resourceVersion': e.resourceVersion,
    'involvedObject.fieldPath': e.fieldPath,
    reason: e.reason,
    reportingComponent: e.reporting,
    source: e.source,
    type: e.type,
  };
}

function eventsV1Fields(o: any): Record<string, string> {
  const e = coreEventParts(o);
  return {
    'regarding.kind': e.kind,
    'regarding.namespace': e.namespace,
    'regarding.name': e.name,
    'regarding.uid': e.uid,
    'regarding.apiVersion': e.apiVersion,
    'regarding.resourceVersion': e.resourceVersion,
    'regarding.fieldPath': e.fieldPath,
    reason: e.reason,
    reportingController: e.reporting,
    source: e.source,
    type: e.type,
  };
}

/** DefaultMetaV1FieldSelectorConversion's error, for kinds without a conversion of their own. */
function notKnownFieldSelector(label: string): string {
  return `${goQuote(label)} is not a known field selector: only "metadata.name", "metadata.namespace"`;
}

interface KindFields {
  /** Labels the kind's field-label conversion accepts (metadata.* included where kube accepts them). */
  accepted: readonly string[];
  /** The fields beyond metadata.name/namespace an object exposes. */
  fields?: (o: any) => Record<string, string>;
  /** The error for an unsupported label, when it is not "field label not supported: <label>". */
  message?: (label: string, version: string) => string;
}

const KINDS: Record<string, KindFields> = {
  pods: {
    accepted: [
      'metadata.name',
      'metadata.namespace',
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'spec.hostNetwork',
      'status.phase',
      'status.podIP',
      'status.podIPs', // accepted, but kube never sets it in the field set: it only ever equals ""
      'status.nominatedNodeName',
      'spec.host',
    ],
    fields: podFields,
  },
  nodes: { accepted: ['metadata.name', 'spec.unschedulable'], fields: (o) => ({ 'spec.unschedulable': b(o?.spec?.unschedulable) }) },
  replicationcontrollers: {
    accepted: ['metadata.name', 'metadata.namespace', 'status.replicas'],
    fields: (o) => ({ 'status.replicas': n(o?.status?.replicas) }),
  },
  events: {
    accepted: [
      'involvedObject.kind',
      'involvedObject.namespace',
      'involvedObject.name',
      'involvedObject.uid',
      'involvedObject.apiVersion',
      'involvedObject.resourceVersion',
      'involvedObject.fieldPath',
      'reason',
      'reportingComponent',
      'source',
      'type',
      'metadata.namespace',
      'metadata.name',
    ],
    fields: eventFields,
  },
  namespaces: { accepted: ['status.phase', 'metadata.name'], fields: (o) => ({ 'status.phase': s(o?.status?.phase) }) },
  secrets: { accepted: ['type', 'metadata.namespace', 'metadata.name'], fields: (o) => ({ type: s(o?.type) }) },
  services: {
    accepted: ['metadata.namespace', 'metadata.name', 'spec.clusterIP', 'spec.type'],
    fields: (o) => ({ 'spec.clusterIP': s(o?.spec?.clusterIP), 'spec.type': s(o?.spec?.type) }),
  },
  'events.events.k8s.io': {
    accepted: [
      'reason',
      'regarding.kind',
      'regarding.namespace',
      'regarding.name',
      'regarding.uid',
      'regarding.apiVersion',
      'regarding.resourceVersion',
      'regarding.fieldPath',
      'reportingController',
      'source',
      'type',
      'metadata.namespace',
      'metadata.name',
    ],
    fields: eventsV1Fields,
  },
  // apps/v1 registers no field-label conversions: ReplicaSets and StatefulSets take only
  // metadata.name/namespace there. The registry's set still carries status.replicas.
  'replicasets.apps': {
    accepted: ['metadata.name', 'metadata.namespace'],
    fields: (o) => ({ 'status.replicas': n(o?.status?.replicas) }),
    message: (label) => notKnownFieldSelector(label),
  },
  'jobs.batch': {
    accepted: ['metadata.name', 'metadata.namespace', 'status.successful'],
    fields: (o) => ({ 'status.successful': n(o?.status?.succeeded) }),
  },
  'certificatesigningrequests.certificates.k8s.io': {
    accepted: ['metadata.name', 'spec.signerName'],
    fields: (o) => ({ 'spec.signerName': s(o?.spec?.signerName) }),
  },
  'clustertrustbundles.certificates.k8s.io': {
    accepted: ['metadata.name', 'spec.signerName'],
    fields: (o) => ({ 'spec.signerName': s(o?.spec?.signerName) }),
  },
  'podcertificaterequests.certificates.k8s.io': {
    accepted: ['metadata.name', 'spec.signerName', 'spec.podName', 'spec.nodeName'],
    fields: (o) => ({ 'spec.signerName': s(o?.spec?.signerName), 'spec.podName': s(o?.spec?.podName), 'spec.nodeName': s(o?.spec?.nodeName) }),
  },
  'resourceslices.resource.k8s.io': {
    accepted: ['metadata.name', 'spec.nodeName', 'spec.driver'],
    fields: (o) => ({ 'spec.nodeName': s(o?.spec?.nodeName), 'spec.driver': s(o?.spec?.driver) }),
    message: (label, version) => `field label not supported for resource.k8s.io/${version}, Kind=ResourceSlice: ${label}`,
  },
};

const ACCEPTED = new Map(Object.entries(KINDS).map(([k, v]) => [k, new Set(v.accepted)]));

/** API groups served by kube-apiserver itself; any other group is CRD-backed. */
const BUILTIN_GROUPS = new Set([
  '',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'apiregistration.k8s.io',
  'apps',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'autoscaling',
  'batch',
  'certificates.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'events.k8s.io',
  'extensions',
  'flowcontrol.apiserver.k8s.io',
  'internal.apiserver.k8s.io',
  'networking.k8s.io',
  'node.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'resource.k8s.io',
  'scheduling.k8s.io',
  'storage.k8s.io',
  'storagemigration.k8s.io',
]);

const kindKey = (group: string, resource: string) => (group ? `${resource}.${group}` : resource);

/**
 * The field set an object exposes to field selectors (the registry's GetAttrs): metadata.name,
 * metadata.namespace for namespaced kinds, and the kind's own fields. CRD-backed kinds: see fieldsOf.
 */
export function selectableFields(group: string, resource: string, obj: any, namespaced: boolean): Record<string, string> {
  const kind = KINDS[kindKey(group, resource)];
  const out: Record<string, string> = kind?.fields ? kind.fields(obj) : {};
  const meta = obj?.metadata ?? {};
  out['metadata.name'] = s(meta.name);
  if (namespaced) out['metadata.namespace'] = s(meta.namespace);
  return out;
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
  const key = kindKey(group, resource);
  const kind = KINDS[key];
  const accepted = ACCEPTED.get(key);
  const builtin = BUILTIN_GROUPS.has(group);
  for (const { field } of sel.requirements) {
    if (kind && accepted) {
      if (accepted.has(field)) continue;
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

/**
 * Where in the stored object a selectable field is read from, for fields whose value is that
 * string as it is (else ""): storage can then look for objects holding a given non-empty value
 * without decoding them. Pods only, for the kubelet's list and watch by spec.nodeName.
 */
const STRING_FIELD_PATHS: Record<string, Record<string, string>> = {
  pods: {
    'spec.nodeName': '$.spec.nodeName',
    'spec.host': '$.spec.nodeName',
    'spec.restartPolicy': '$.spec.restartPolicy',
    'spec.schedulerName': '$.spec.schedulerName',
    'spec.serviceAccountName': '$.spec.serviceAccountName',
    'status.phase': '$.status.phase',
    'status.nominatedNodeName': '$.status.nominatedNodeName',
  },
};

/** The JSON path of a selectable field of a built-in kind whose value is a string read as it is (see STRING_FIELD_PATHS). */
export function stringFieldPath(info: ResourceInfo, field: string): string | undefined {
  return info.custom ? undefined : STRING_FIELD_PATHS[kindKey(info.group, info.resource)]?.[field];
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
