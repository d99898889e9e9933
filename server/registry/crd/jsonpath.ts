// JSONPath as kube evaluates it for CustomResourceDefinitions: printer columns
// (additionalPrinterColumns, wrapped as "{<jsonPath>}") and selectable fields, with the grammar,
// results and error messages of client-go's k8s.io/client-go/util/jsonpath, plus the dotted
// "simple" paths of the scale subresource (specReplicasPath, statusReplicasPath,
// labelSelectorPath) with unstructured.NestedInt64 / NestedString / SetNestedField semantics.
//
// Expressions compile once into a node tree; evaluation walks it per object without re-parsing.
// A path made only of field names (".status.replicas", by far the most common) takes a
// loop-only fast path.
//
// Deliberate deviations from client-go:
// - client-go keeps range/end bookkeeping on the JSONPath object and rewrites its node list while
//   ranging, so a "{range}" template behaves differently on its second use. Here every
//   evaluation starts from fresh state, i.e. always behaves like client-go's first call.
// - Map iteration (".*", "..") is in sorted key order; Go's is random.
// - Literal ints and the bytes a wildcard yields from a string come back as plain numbers.
//
// Quirks kept on purpose because kube has them: bracket names take single quotes only
// (['a'] works, ["a"] is "invalid array index"), and the text inside ['...'] is re-parsed as a
// dotted path, so ['a.b'] means .a.b (escape the dot, ['a\.b'], for a key containing one).

import type { SimpleJsonPath } from '../../schema/types.ts';
import { goAtoi, goRuneU, unquoteExtend } from '../../go/strconv.ts';
import { goJsonMarshal } from '../../go/json.ts';
import { compareStrings } from '../../go/strings.ts';
import { GoByte, GoFloat, goKind, goSprint, goTypeName, isInt64, unwrapGoValue as unwrap, type GoKind } from '../../go/fmt.ts';

/** A parse or evaluation error; `message` is client-go's wording. */
export class JsonPathError extends Error {
  /** What the failing step had produced (client-go returns it alongside the error). */
  partial: unknown[];
  constructor(message: string, partial: unknown[] = []) {
    super(message);
    this.name = 'JsonPathError';
    this.partial = partial;
  }
}

export interface JsonPath {
  /** The expression as compiled (without the braces added for a path). */
  readonly expr: string;
  /** client-go FindResults: one result set per top-level {...} action or text run. Throws JsonPathError. */
  findResults(obj: unknown): unknown[][];
  /** The first result set (all kube's CRD code looks at); [] when there is none. Throws JsonPathError. */
  find(obj: unknown): unknown[];
}

export interface CompileOptions {
  /** Missing map keys yield no result instead of "<key> is not found". Default true, as kube's CRD code sets it. */
  allowMissingKeys?: boolean;
  /** Parse `expr` as a template ("{.a} and {.b}") instead of wrapping it in braces. Default false. */
  template?: boolean;
}

/** Compiles a CRD JSONPath (".spec.replicas") as kube does: parsed as "{<expr>}". Throws JsonPathError. */
export function compileJsonPath(expr: string, opts: CompileOptions = {}): JsonPath {
  const root = new Parser(opts.template ? expr : `{${expr}}`).parse();
  return new CompiledPath(expr, root, opts.allowMissingKeys ?? true);
}

/** client-go's parse error for "{<expr>}" (e.g. "unterminated filter"), or undefined when it parses. */
export function jsonPathParseError(expr: string): string | undefined {
  try {
    new Parser(`{${expr}}`).parse();
    return undefined;
  } catch (e) {
    if (e instanceof JsonPathError) return e.message;
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// Syntax tree

interface Param {
  value: number;
  known: boolean;
  derived: boolean;
}

type ListNode = { t: 'list'; nodes: Node[] };
type Node =
  | ListNode
  | { t: 'text'; text: string }
  | { t: 'field'; name: string }
  | { t: 'array'; params: [Param, Param, Param] }
  | { t: 'filter'; left: ListNode; right: ListNode; op: string }
  | { t: 'int'; value: number }
  | { t: 'float'; value: number }
  | { t: 'bool'; value: boolean }
  | { t: 'wildcard' }
  | { t: 'recursive' }
  | { t: 'union'; lists: ListNode[] }
  | { t: 'ident'; name: string };

const newList = (): ListNode => ({ t: 'list', nodes: [] });

// ---------------------------------------------------------------------------------------------
// Parser: a port of client-go's parser.go (same grammar, same error texts). Go's parser recurses
// once per token; here each action is a loop so long paths cannot exhaust the stack.

const EOF = -1;
const CP_BACKSLASH = 0x5c;
const DICT_KEY = /^'([^']*)'$/;
const SLICE = /^(-?[0-9]*)(:-?[0-9]*)?(:-?[0-9]*)?$/;
// Go's "." excludes only \n; JS's also excludes \r, U+2028 and U+2029, hence [^\n].
const FILTER = /^([^!<>=]+)([!<>=]+)([^\n]+?)$/;
const LETTER = /\p{L}/u;
const DIGIT = /\p{Nd}/u;

const isDigit = (r: number): boolean => (r >= 0x30 && r <= 0x39) || (r > 0x7f && DIGIT.test(String.fromCodePoint(r)));
const isAlphaNumeric = (r: number): boolean =>
  r === 0x5f || (r >= 0x30 && r <= 0x39) || (r >= 0x41 && r <= 0x5a) || (r >= 0x61 && r <= 0x7a) || (r > 0x7f && (LETTER.test(String.fromCodePoint(r)) || DIGIT.test(String.fromCodePoint(r))));
const isEndOfLine = (r: number): boolean => r === 0x0d || r === 0x0a;
function isTerminator(r: number): boolean {
  switch (r) {
    case EOF: case 0x20: case 0x09: case 0x0d: case 0x0a:
    case 0x2e: case 0x2c: case 0x5b: case 0x5d: case 0x24: case 0x40: case 0x7b: case 0x7d:
      return true;
  }
  return false;
}

class Parser {
  private pos = 0;
  private start = 0;
  private width = 0;
  constructor(private readonly input: string) {}

  parse(): ListNode {
    const root = newList();
    this.parseText(root);
    return root;
  }

  private next(): number {
    if (this.pos >= this.input.length) {
      this.width = 0;
      return EOF;
    }
    const r = this.input.codePointAt(this.pos)!;
    this.width = r > 0xffff ? 2 : 1;
    this.pos += this.width;
    return r;
  }

  private peek(): number {
    const r = this.next();
    this.backup();
    return r;
  }

  private backup(): void {
    this.pos -= this.width;
  }

  private consumeText(): string {
    const v = this.input.slice(this.start, this.pos);
    this.start = this.pos;
    return v;
  }

  /** The code unit before the rune just read (client-go checks it for an escaping backslash). */
  private beforeLast(): number {
    return this.input.charCodeAt(this.pos - 2);
  }

  private parseText(root: ListNode): void {
    for (;;) {
      if (this.input.startsWith('{', this.pos)) {
        if (this.pos > this.start) root.nodes.push({ t: 'text', text: this.consumeText() });
        this.pos += 1;
        this.consumeText();
        const list = newList();
        root.nodes.push(list);
        this.parseAction(list);
        continue;
      }
      if (this.next() === EOF) break;
    }
    if (this.pos > this.start) root.nodes.push({ t: 'text', text: this.consumeText() });
  }

  /** parseInsideAction up to and including the closing "}". */
  private parseAction(cur: ListNode): void {
    for (;;) {
      if (this.input.startsWith('}', this.pos)) {
        this.pos += 1;
        this.consumeText();
        return;
      }
      if (this.input.startsWith('[?(', this.pos)) {
        this.parseFilter(cur);
        continue;
      }
      if (this.input.startsWith('..', this.pos)) {
        this.parseRecursive(cur);
        continue;
      }
      const r = this.next();
      if (r === EOF || isEndOfLine(r)) throw new JsonPathError('unclosed action');
      if (r === 0x20 || r === 0x40 || r === 0x24) {
        // a space, or @ / $ (the current object): skipped
        this.consumeText();
      } else if (r === 0x5b) {
        this.parseArray(cur);
      } else if (r === 0x22 || r === 0x27) {
        this.parseQuote(cur, r);
      } else if (r === 0x2e) {
        this.parseField(cur);
      } else if (r === 0x2b || r === 0x2d || isDigit(r)) {
        this.backup();
        this.parseNumber(cur);
      } else if (isAlphaNumeric(r)) {
        this.backup();
        this.parseIdentifier(cur);
      } else {
        throw new JsonPathError(`unrecognized character in action: ${goRuneU(r)}`);
      }
    }
  }

  private parseIdentifier(cur: ListNode): void {
    for (;;) {
      if (isTerminator(this.next())) {
        this.backup();
        break;
      }
    }
    const value = this.consumeText();
    if (value === 'true' || value === 'false') cur.nodes.push({ t: 'bool', value: value === 'true' });
    else cur.nodes.push({ t: 'ident', name: value });
  }

  private parseRecursive(cur: ListNode): void {
    if (cur.nodes.length > 0 && cur.nodes[cur.nodes.length - 1].t === 'recursive') throw new JsonPathError('invalid multiple recursive descent');
    this.pos += 2;
    this.consumeText();
    cur.nodes.push({ t: 'recursive' });
    if (isAlphaNumeric(this.peek())) this.parseField(cur);
  }

  private parseNumber(cur: ListNode): void {
    const r = this.peek();
    if (r === 0x2b || r === 0x2d) this.next();
    for (;;) {
      const c = this.next();
      if (c !== 0x2e && !isDigit(c)) {
        this.backup();
        break;
      }
    }
    const value = this.consumeText();
    const i = goAtoi(value);
    if (i !== undefined) {
      cur.nodes.push({ t: 'int', value: i });
      return;
    }
    const f = goParseFloat(value);
    if (f !== undefined) {
      cur.nodes.push({ t: 'float', value: f });
      return;
    }
    throw new JsonPathError(`cannot parse number ${value}`);
  }

  private parseArray(cur: ListNode): void {
    for (;;) {
      const r = this.next();
      if (r === EOF || r === 0x0a) throw new JsonPathError('unterminated array');
      if (r === 0x5d) break;
    }
    let text = this.consumeText().slice(1, -1);
    if (text === '*') text = ':';

    // union operator
    const parts = text.split(',');
    if (parts.length > 1) {
      const lists = parts.map((s) => parseSubAction(`[${trimSpaces(s)}]`));
      cur.nodes.push({ t: 'union', lists });
      return;
    }

    // dict key: its text is parsed as a field path
    const key = DICT_KEY.exec(text);
    if (key) {
      cur.nodes.push(...parseSubAction(`.${key[1]}`).nodes);
      return;
    }

    // slice operator
    const m = SLICE.exec(text);
    if (!m) throw new JsonPathError(`invalid array index ${text}`);
    const groups = [m[1] ?? '', m[2] ?? '', m[3] ?? ''];
    const params: [Param, Param, Param] = [
      { value: 0, known: false, derived: false },
      { value: 0, known: false, derived: false },
      { value: 0, known: false, derived: false },
    ];
    for (let i = 0; i < 3; i++) {
      let g = groups[i];
      if (g !== '') {
        if (i > 0) g = g.slice(1);
        if (i > 0 && g === '') {
          params[i].known = false;
        } else {
          const n = goAtoi(g);
          if (n === undefined) throw new JsonPathError(`array index ${g} is not a number`);
          params[i].known = true;
          params[i].value = n;
        }
      } else if (i === 1) {
        // "[n]" selects [n:n+1]
        params[i] = { value: params[0].value + 1, known: true, derived: true };
      }
    }
    cur.nodes.push({ t: 'array', params });
  }

  private parseFilter(cur: ListNode): void {
    this.pos += 3;
    this.consumeText();
    let begin = false;
    let end = false;
    let pair = 0;
    loop: for (;;) {
      const r = this.next();
      switch (r) {
        case EOF:
        case 0x0a:
          throw new JsonPathError('unterminated filter');
        case 0x22:
        case 0x27:
          if (!begin) {
            begin = true;
            pair = r;
            continue;
          }
          if (this.beforeLast() !== CP_BACKSLASH && r === pair) end = true;
          break;
        case 0x29:
          // quotes may appear once, paired, on the right-hand side
          if (begin === end) break loop;
          break;
      }
    }
    if (this.next() !== 0x5d) throw new JsonPathError('unclosed array expect ]');
    const text = this.consumeText().slice(0, -2);
    const m = FILTER.exec(text);
    if (!m) {
      cur.nodes.push({ t: 'filter', left: parseSubAction(text), right: newList(), op: 'exists' });
    } else {
      const left = parseSubAction(m[1]);
      const right = parseSubAction(m[3]);
      cur.nodes.push({ t: 'filter', left, right, op: m[2] });
    }
  }

  private parseQuote(cur: ListNode, end: number): void {
    for (;;) {
      const r = this.next();
      if (r === EOF || r === 0x0a) throw new JsonPathError('unterminated quoted string');
      if (r === end && this.beforeLast() !== CP_BACKSLASH) break;
    }
    const value = this.consumeText();
    const s = unquoteExtend(value);
    if (s === undefined) throw new JsonPathError(`unquote string ${value} error invalid syntax`);
    cur.nodes.push({ t: 'text', text: s });
  }

  private parseField(cur: ListNode): void {
    this.consumeText();
    for (;;) {
      const r = this.next();
      if (r === CP_BACKSLASH) {
        this.next();
      } else if (isTerminator(r)) {
        this.backup();
        break;
      }
    }
    const value = this.consumeText();
    if (value === '*') cur.nodes.push({ t: 'wildcard' });
    else cur.nodes.push({ t: 'field', name: value.replaceAll('\\', '') });
  }
}

/** client-go parseAction: parses "{text}" and returns its first action. */
function parseSubAction(text: string): ListNode {
  return new Parser(`{${text}}`).parse().nodes[0] as ListNode;
}

const trimSpaces = (s: string): string => s.replace(/^ +| +$/g, '');

/** strconv.ParseFloat for the digits-and-dots text parseNumber collects. */
function goParseFloat(s: string): number | undefined {
  if (!/^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)$/.test(s)) return undefined;
  const f = Number(s);
  return Number.isFinite(f) ? f : undefined;
}

// ---------------------------------------------------------------------------------------------
// Values. Objects are JSON as stored: integral numbers stand for Go's int64 (as kube decodes
// unstructured JSON), others for float64. Two wrappers from go/fmt.ts keep Go kinds the walk
// needs: a float literal ("2.0" is a float64 even though it is integral) and a byte from ranging
// over a string.

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof GoFloat) && !(v instanceof GoByte);
const hasOwn = Object.prototype.hasOwnProperty;

const sortedKeys = (m: Record<string, unknown>): string[] => Object.keys(m).sort(compareStrings);

// ---------------------------------------------------------------------------------------------
// Go formatting of values

/** How client-go's PrintResults writes one value: maps and slices as JSON, scalars with %v, null as "null". */
export function jsonPathText(v: unknown): string {
  const k = goKind(v);
  if (k === 'map' || k === 'slice') return goJsonMarshal(v);
  if (k === 'nil') return 'null';
  return goSprint(v);
}

/** client-go PrintResults: each value's text, space separated. */
export function printResults(values: readonly unknown[]): string {
  return values.map(jsonPathText).join(' ');
}

// ---------------------------------------------------------------------------------------------
// Comparisons in filters: text/template's eq/lt on Go basic kinds, as client-go forks them.

const ERR_BAD_TYPE = 'invalid type for comparison';
const ERR_BAD_COMPARISON = 'incompatible types for comparison';

function basicKind(v: unknown, partial: unknown[]): Exclude<GoKind, 'nil' | 'slice' | 'map'> {
  const k = goKind(v);
  if (k === 'nil' || k === 'slice' || k === 'map') throw new JsonPathError(ERR_BAD_TYPE, partial);
  return k;
}

function goEqual(a: unknown, b: unknown, partial: unknown[]): boolean {
  const k1 = basicKind(a, partial);
  const k2 = basicKind(b, partial);
  const x = unwrap(a);
  const y = unwrap(b);
  if (k1 !== k2) {
    // ints compare with unsigned ints regardless of sign
    if ((k1 === 'int' && k2 === 'uint') || (k1 === 'uint' && k2 === 'int')) return x === y;
    throw new JsonPathError(ERR_BAD_COMPARISON, partial);
  }
  return x === y;
}

function goLess(a: unknown, b: unknown, partial: unknown[]): boolean {
  const k1 = basicKind(a, partial);
  const k2 = basicKind(b, partial);
  const x = unwrap(a);
  const y = unwrap(b);
  if (k1 !== k2) {
    if ((k1 === 'int' && k2 === 'uint') || (k1 === 'uint' && k2 === 'int')) return (x as number) < (y as number);
    throw new JsonPathError(ERR_BAD_COMPARISON, partial);
  }
  if (k1 === 'bool') throw new JsonPathError(ERR_BAD_TYPE, partial);
  if (k1 === 'string') return compareStrings(x as string, y as string) < 0;
  return (x as number) < (y as number);
}

function compare(op: string, a: unknown, b: unknown, partial: unknown[]): boolean {
  switch (op) {
    case '<': return goLess(a, b, partial);
    case '>': return !(goLess(a, b, partial) || goEqual(a, b, partial));
    case '==': return goEqual(a, b, partial);
    case '!=': return !goEqual(a, b, partial);
    case '<=': return goLess(a, b, partial) || goEqual(a, b, partial);
    case '>=': return !goLess(a, b, partial);
  }
  throw new JsonPathError(`unrecognized filter operator ${op}`, partial);
}

// ---------------------------------------------------------------------------------------------
// Evaluation: a port of client-go's jsonpath.go walk.

interface State {
  cur: unknown[];
  stack: unknown[][];
  beginRange: number;
  inRange: number;
  endRange: number;
}

/** The children ".*" and ".." visit: map values, slice items, the bytes of a string. */
function children(v: unknown): unknown[] | undefined {
  if (typeof v === 'string') {
    if (v.length === 0) return undefined;
    return [...Buffer.from(v, 'utf8')].map((b) => new GoByte(b));
  }
  if (Array.isArray(v)) return v;
  if (isMap(v)) {
    const keys = sortedKeys(v);
    return keys.map((k) => v[k]);
  }
  return undefined;
}

class CompiledPath implements JsonPath {
  /** Field names when the whole expression is one action of plain ".a.b" fields. */
  private readonly fieldsOnly: string[] | undefined;

  constructor(
    readonly expr: string,
    private readonly root: ListNode,
    private readonly allowMissingKeys: boolean,
  ) {
    const only = root.nodes.length === 1 && root.nodes[0].t === 'list' ? root.nodes[0].nodes : undefined;
    this.fieldsOnly = only && only.every((n) => n.t === 'field') ? only.map((n) => (n as { name: string }).name) : undefined;
  }

  find(obj: unknown): unknown[] {
    return this.findResults(obj)[0] ?? [];
  }

  findResults(obj: unknown): unknown[][] {
    if (this.fieldsOnly) return [this.walkFields(obj, this.fieldsOnly)];
    const st: State = { cur: [], stack: [], beginRange: 0, inRange: 0, endRange: 0 };
    const sets = this.findFrom(st, this.root.nodes, obj);
    for (const set of sets) for (let i = 0; i < set.length; i++) set[i] = unwrap(set[i]);
    return sets;
  }

  private walkFields(obj: unknown, fields: string[]): unknown[] {
    let v = obj;
    for (const name of fields) {
      // stored objects hold no GoFloat/GoByte wrappers, so a plain object test suffices
      if (typeof v === 'object' && v !== null && !Array.isArray(v) && hasOwn.call(v, name)) {
        v = (v as Record<string, unknown>)[name];
        continue;
      }
      if (this.allowMissingKeys) return [];
      throw new JsonPathError(`${name} is not found`);
    }
    return [v];
  }

  /** FindResults over `nodes` with `data` as the current object. */
  private findFrom(st: State, nodes: Node[], data: unknown): unknown[][] {
    st.cur = [data];
    const full: unknown[][] = [];
    for (let i = 0; i < nodes.length; i++) {
      const results = this.walk(st, st.cur, nodes[i]);
      // an end node closes the current range iteration
      if (st.endRange > 0 && st.endRange <= st.inRange) {
        st.endRange--;
        break;
      }
      // a range node: the rest of the template runs once per result
      if (st.beginRange > 0) {
        st.beginRange--;
        st.inRange++;
        const rest = nodes.slice(i + 1);
        for (let k = 0; k < results.length; k++) {
          if (k === results.length - 1) st.inRange--;
          full.push(...this.findFrom(st, rest, unwrap(results[k])));
        }
        break;
      }
      full.push(results);
    }
    return full;
  }

  private walk(st: State, input: unknown[], node: Node): unknown[] {
    switch (node.t) {
      case 'list': return this.evalList(st, input, node);
      case 'text': return [node.text];
      case 'field': return this.evalField(input, node.name);
      case 'array': return evalArray(input, node.params);
      case 'filter': return this.evalFilter(st, input, node);
      case 'int': return input.map(() => node.value);
      case 'float': return input.map(() => new GoFloat(node.value));
      case 'bool': return input.map(() => node.value);
      case 'wildcard': return evalWildcard(input);
      case 'recursive': return evalRecursive(input);
      case 'union': return this.evalUnion(st, input, node.lists);
      case 'ident': return evalIdentifier(st, input, node.name);
    }
  }

  private evalList(st: State, input: unknown[], list: ListNode): unknown[] {
    let cur = input;
    for (const n of list.nodes) cur = this.walk(st, cur, n);
    return cur;
  }

  private evalField(input: unknown[], name: string): unknown[] {
    const results: unknown[] = [];
    if (input.length === 0) return results;
    for (const v of input) {
      // nil values are skipped; only maps have fields
      if (isMap(v) && hasOwn.call(v, name)) results.push(v[name]);
    }
    if (results.length === 0 && !this.allowMissingKeys) throw new JsonPathError(`${name} is not found`, results);
    return results;
  }

  private evalUnion(st: State, input: unknown[], lists: ListNode[]): unknown[] {
    const result: unknown[] = [];
    for (const l of lists) {
      try {
        result.push(...this.evalList(st, input, l));
      } catch (e) {
        if (e instanceof JsonPathError) e.partial = input;
        throw e;
      }
    }
    return result;
  }

  private evalFilter(st: State, input: unknown[], node: { left: ListNode; right: ListNode; op: string }): unknown[] {
    const results: unknown[] = [];
    for (const v of input) {
      if (!Array.isArray(v)) throw new JsonPathError(`${goSprint(v)} is not array or slice and cannot be filtered`, input);
      for (const item of v) {
        const temp = [item];
        let lefts: unknown[];
        let leftErr: JsonPathError | undefined;
        try {
          lefts = this.evalList(st, temp, node.left);
        } catch (e) {
          if (!(e instanceof JsonPathError)) throw e;
          leftErr = e;
          lefts = e.partial;
        }
        if (node.op === 'exists') {
          if (lefts.length > 0) results.push(item);
          continue;
        }
        if (leftErr) {
          leftErr.partial = input;
          throw leftErr;
        }
        if (lefts.length === 0) continue;
        if (lefts.length > 1) throw new JsonPathError('can only compare one element at a time', input);
        let rights: unknown[];
        try {
          rights = this.evalList(st, temp, node.right);
        } catch (e) {
          if (e instanceof JsonPathError) e.partial = input;
          throw e;
        }
        if (rights.length === 0) continue;
        if (rights.length > 1) throw new JsonPathError('can only compare one element at a time', input);
        if (compare(node.op, lefts[0], rights[0], results)) results.push(item);
      }
    }
    return results;
  }
}

function evalArray(input: unknown[], params: readonly [Param, Param, Param]): unknown[] {
  const result: unknown[] = [];
  for (const v of input) {
    if (v === null || v === undefined) continue;
    if (!Array.isArray(v)) throw new JsonPathError(`${goTypeName(v)} is not array or slice`, input);
    const len = v.length;
    let start = params[0].known ? params[0].value : 0;
    if (start < 0) start += len;
    let end = params[1].known ? params[1].value : len;
    if (end < 0 || (end === 0 && params[1].derived)) end += len;
    // an empty selection is fine (and, as in client-go, ends the walk over the inputs)
    if (end === start) return result;
    if (start >= len || start < 0) throw new JsonPathError(`array index out of bounds: index ${start}, length ${len}`, input);
    if (end > len || end < 0) throw new JsonPathError(`array index out of bounds: index ${end - 1}, length ${len}`, input);
    if (start > end) throw new JsonPathError(`starting index ${start} is greater than ending index ${end}`, input);
    let step = 1;
    if (params[2].known) {
      if (params[2].value <= 0) throw new JsonPathError('step must be > 0', input);
      step = params[2].value;
    }
    for (let i = start; i < end; i += step) result.push(v[i]);
  }
  return result;
}

function evalWildcard(input: unknown[]): unknown[] {
  const results: unknown[] = [];
  for (const v of input) {
    const c = children(v);
    if (c) results.push(...c);
  }
  return results;
}

function evalRecursive(input: unknown[]): unknown[] {
  const result: unknown[] = [];
  for (const v of input) {
    const c = children(v);
    if (!c || c.length === 0) continue;
    result.push(v);
    result.push(...evalRecursive(c));
  }
  return result;
}

function evalIdentifier(st: State, input: unknown[], name: string): unknown[] {
  switch (name) {
    case 'range':
      st.stack.push(st.cur);
      st.beginRange++;
      return input;
    case 'end':
      if (st.endRange < st.inRange) {
        // inside a loop: ends this iteration
        st.endRange++;
        return [];
      }
      if (st.stack.length === 0) throw new JsonPathError('not in range, nothing to end');
      st.cur = st.stack.pop()!;
      return [];
  }
  throw new JsonPathError(`unrecognized identifier ${name}`, input);
}

// ---------------------------------------------------------------------------------------------
// Selectable fields (spec.versions[].selectableFields), as kube's customResourceStrategy builds
// the field set: each path evaluated with missing keys allowed; a value is fmt.Sprint'ed, a
// missing one is "".

/**
 * Compiles selectable fields once; the returned function gives the custom resource's field set
 * for them, keyed by the path without its leading dot ("spec.color"). Metadata fields are the
 * caller's. Throws JsonPathError with kube's message when a path fails to parse or evaluate.
 */
export function compileSelectableFields(jsonPaths: readonly string[]): (obj: unknown) => Record<string, string> {
  const fields = jsonPaths.map((p) => {
    const name = p.startsWith('.') ? p.slice(1) : p;
    try {
      return { name, path: compileJsonPath(p), err: undefined as string | undefined };
    } catch (e) {
      if (!(e instanceof JsonPathError)) throw e;
      return { name, path: undefined, err: e.message };
    }
  });
  return (obj) => {
    const out: Record<string, string> = {};
    for (const f of fields) {
      if (!f.path) throw new JsonPathError(`unexpected error parsing jsonPath: ${f.err}`);
      let sets: unknown[][];
      try {
        sets = f.path.findResults(obj);
      } catch (e) {
        if (e instanceof JsonPathError) throw new JsonPathError(`unexpected error finding value with jsonPath: ${e.message}`);
        throw e;
      }
      let value: unknown = null;
      if (sets.length > 0 && sets[0].length > 0) {
        if (sets.length > 1 || sets[0].length > 1) throw new JsonPathError('unexpectedly received more than one JSON path result');
        value = sets[0][0];
      }
      out[f.name] = value === null || value === undefined ? '' : goSprint(value);
    }
    return out;
  };
}

// ---------------------------------------------------------------------------------------------
// Simple paths: the scale subresource's specReplicasPath / statusReplicasPath / labelSelectorPath.
// kube checks their form when the CRD is validated (validateSimpleJSONPath in crd-validation.ts:
// non-empty, starting with "."), then splits them on "." after dropping the leading dot.
// The accessors' interface, SimpleJsonPath, is part of the CRD contract (schema/types.ts).

const dotted = (fields: readonly string[]): string => `.${fields.join('.')}`;

/** Compiles a scale path (already validated by the CRD's validation). */
export function compileSimpleJsonPath(path: string): SimpleJsonPath {
  const fields = (path.startsWith('.') ? path.slice(1) : path).split('.');
  const get = (obj: unknown): { value: unknown; found: boolean } => {
    let v: unknown = obj;
    for (let i = 0; i < fields.length; i++) {
      if (v === null || v === undefined) return { value: undefined, found: false };
      if (!isMap(v)) {
        throw new JsonPathError(`${dotted(fields.slice(0, i + 1))} accessor error: ${goSprint(v)} is of the type ${goTypeName(v)}, expected map[string]interface{}`);
      }
      if (!hasOwn.call(v, fields[i])) return { value: undefined, found: false };
      v = v[fields[i]];
    }
    return { value: v, found: true };
  };
  return {
    path,
    fields,
    get,
    getInt64(obj) {
      const { value, found } = get(obj);
      if (!found) return { value: 0, found: false };
      if (typeof value !== 'number' || !isInt64(value)) {
        throw new JsonPathError(`${dotted(fields)} accessor error: ${goSprint(value)} is of the type ${goTypeName(value)}, expected int64`);
      }
      return { value, found: true };
    },
    getString(obj) {
      const { value, found } = get(obj);
      if (!found) return { value: '', found: false };
      if (typeof value !== 'string') {
        throw new JsonPathError(`${dotted(fields)} accessor error: ${goSprint(value)} is of the type ${goTypeName(value)}, expected string`);
      }
      return { value, found: true };
    },
    set(obj, value) {
      let m: Record<string, unknown> = obj;
      for (let i = 0; i < fields.length - 1; i++) {
        const next = hasOwn.call(m, fields[i]) ? m[fields[i]] : undefined;
        if (next !== null && next !== undefined) {
          if (!isMap(next)) throw new JsonPathError(`value cannot be set because ${dotted(fields.slice(0, i + 1))} is not a map[string]interface{}`);
          m = next;
        } else {
          const created: Record<string, unknown> = {};
          m[fields[i]] = created;
          m = created;
        }
      }
      m[fields[fields.length - 1]] = value;
    },
  };
}
