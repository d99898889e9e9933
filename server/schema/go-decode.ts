// What kube-apiserver's decoder says of a built-in object whose JSON does not fit its Go types.
// A built-in body is decoded into Go structs before anything else runs, so a value of the wrong
// JSON type (`replicas: "3"`, `resources: "x"`) is a 400 BadRequest naming the Go field, not a 422:
//
//   Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string
//   into Go struct field DeploymentSpec.spec.replicas of type int32
//
// encoding/json keeps the first such error (or bad base64 in a []byte field, Secret data) and
// decodes on; the custom decoders of Quantity, IntOrString and Time stop the decoding with theirs. Go type names come from the definitions; named
// string, slice and map types (v1.PullPolicy, v1.ResourceList) are not in them and read as their
// underlying types. null decodes into anything. YAML bodies are decoded the same way (kube
// converts them to JSON first).
import type { TypeNode } from './types.ts';
import { isPlainObject } from '../util/json.ts';
import { parseQuantity } from '../util/quantity.ts';
import { MAX_BODY_DEPTH } from '../util/json-depth.ts';
import { goReflectKind } from '../go/fmt.ts';
import { jsonKind } from '../go/json.ts';

const META_V1 = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/** Stops the walk: a custom decoder's error, which encoding/json returns as it is. */
class Abort {
  constructor(readonly message: string) {}
}

/**
 * The decoding error of a built-in object of this definition, worded as kube-apiserver answers it,
 * or undefined when its JSON types fit.
 */
export function goDecodeError(root: TypeNode, value: Record<string, unknown>): string | undefined {
  const err = goJsonTypeError(root, value);
  if (err === undefined) return undefined;
  // transformDecodeError: the kind and version the body was decoded as.
  const parts = (root.definition ?? '').split('.');
  const kind = parts[parts.length - 1];
  return `${kind} in version ${JSON.stringify(parts[parts.length - 2])} cannot be handled as a ${kind}: ${err}`;
}

/** encoding/json's own error for a built-in object of this definition (what goDecodeError wraps), or undefined. */
export function goJsonTypeError(root: TypeNode, value: Record<string, unknown>): string | undefined {
  const walk = new DecodeWalk();
  try {
    walk.struct(root, value);
    return walk.first;
  } catch (e) {
    if (!(e instanceof Abort)) throw e;
    return e.message;
  }
}

/**
 * What runtime.DefaultUnstructuredConverter.FromUnstructured says of a built-in object whose
 * values do not fit its Go types, or undefined. A strategic merge patch's result goes from a map
 * to the Go struct this way, without JSON, so its errors are the converter's own: the first one
 * ends it. Integral numbers are int64 there (the patch is decoded keeping integers), others float64.
 */
export function goUnstructuredError(root: TypeNode, value: Record<string, unknown>): string | undefined {
  try {
    return fromUnstructured(root, value);
  } catch (e) {
    if (!(e instanceof Abort)) throw e;
    return e.message;
  }
}

function fromUnstructured(node: TypeNode, v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  switch (node.type) {
    case 'any':
      return undefined;
    case 'object': {
      if (!isPlainObject(v)) return `cannot restore struct from: ${goReflectKind(v, 'integral')}`;
      const props = node.properties ?? {};
      for (const k of Object.keys(v)) {
        const child = props[k];
        const err = child && fromUnstructured(child, v[k]);
        if (err) return err;
      }
      return undefined;
    }
    case 'map': {
      if (!isPlainObject(v)) return `cannot restore map from ${goReflectKind(v, 'integral')}`;
      if (!node.values) return undefined;
      for (const k of Object.keys(v)) {
        const err = fromUnstructured(node.values, v[k]);
        if (err) return err;
      }
      return undefined;
    }
    case 'array': {
      if (!Array.isArray(v)) return `cannot restore slice from ${goReflectKind(v, 'integral')}`;
      if (!node.items) return undefined;
      for (const item of v) {
        const err = fromUnstructured(node.items, item);
        if (err) return err;
      }
      return undefined;
    }
    case 'int-or-string':
      // Quantity and IntOrString convert through their UnmarshalJSON: its errors, as when decoding.
      new DecodeWalk().value(node, v);
      return undefined;
    case 'string':
      if (node.format === 'byte') {
        // []byte takes a base64 string (through JSON) or a list of bytes.
        if (Array.isArray(v)) return undefined;
        if (typeof v !== 'string') return `cannot restore slice from ${goReflectKind(v, 'integral')}`;
        const at = base64ErrorOffset(v);
        return at === undefined ? undefined : `error decoding from json: illegal base64 data at input byte ${at}`;
      }
      if (node.definition?.startsWith(META_V1) && node.definition.endsWith('Time')) {
        return typeof v === 'string' ? undefined : `json: cannot unmarshal ${jsonKind(v)} into Go value of type string`;
      }
      if (typeof v === 'string') return undefined;
      // Go converts an integer to a string (as a rune), which the converter refuses by name.
      return goReflectKind(v, 'integral') === 'int64' ? `cannot convert int64 to ${goTypeName(node)}` : `unrecognized type: ${goTypeName(node)}`;
    case 'integer':
      if (typeof v !== 'number') return `unrecognized type: ${goTypeName(node)}`;
      return Number.isInteger(v) ? undefined : `cannot convert float64 to ${goTypeName(node)}`;
    case 'number':
      return typeof v === 'number' ? undefined : `unrecognized type: ${goTypeName(node)}`;
    case 'boolean':
      return typeof v === 'boolean' ? undefined : `unrecognized type: ${goTypeName(node)}`;
  }
  return undefined;
}

class DecodeWalk {
  /** The first type error (encoding/json's savedError). */
  first: string | undefined;
  /** The innermost struct around the value being decoded, and the JSON field names from the root (built into messages only on error). */
  private structNode: TypeNode | undefined;
  private readonly fields: string[] = [];

  struct(node: TypeNode, obj: Record<string, unknown>): void {
    const props = node.properties ?? {};
    const outer = this.structNode;
    for (const k of Object.keys(obj)) {
      const child = props[k];
      if (child === undefined) continue; // unknown fields: strict decoding's concern
      this.structNode = node;
      this.fields.push(k);
      this.value(child, obj[k]);
      this.fields.pop();
    }
    this.structNode = outer;
  }

  value(node: TypeNode, v: unknown): void {
    if (v === null) return;
    switch (node.type) {
      case 'any':
        return;
      case 'object':
        if (!isPlainObject(v)) return this.mismatch(v, node);
        return this.struct(node, v);
      case 'map':
        if (!isPlainObject(v)) return this.mismatch(v, node);
        // Map keys are not fields: errors below name the map's field.
        if (node.values) for (const k of Object.keys(v)) this.value(node.values, v[k]);
        return;
      case 'array':
        if (!Array.isArray(v)) return this.mismatch(v, node);
        if (node.items) for (let i = 0; i < v.length; i++) this.value(node.items, v[i]);
        return;
      case 'string':
        if (typeof v === 'string') {
          // []byte fields take base64 (Secret data): a bad one is saved as it is, no field named.
          if (node.format === 'byte') {
            const at = base64ErrorOffset(v);
            if (at !== undefined) this.first ??= `illegal base64 data at input byte ${at}`;
          }
          return;
        }
        // metav1.Time and MicroTime decode a string themselves: anything else ends the decoding.
        if (node.definition?.startsWith(META_V1) && node.definition.endsWith('Time')) throw new Abort(`json: cannot unmarshal ${jsonKind(v)} into Go value of type string`);
        return this.mismatch(v, node);
      case 'boolean':
        if (typeof v !== 'boolean') this.mismatch(v, node);
        return;
      case 'number':
        if (typeof v !== 'number') this.mismatch(v, node);
        return;
      case 'integer':
        if (typeof v !== 'number') return this.mismatch(v, node);
        if (!Number.isInteger(v) || !fitsInteger(v, node.format)) this.save(`number ${goNumberText(v)}`, goTypeName(node));
        return;
      case 'int-or-string':
        return this.intOrString(node, v);
    }
  }

  /** The custom UnmarshalJSON of Quantity and IntOrString: their errors end the decoding. */
  private intOrString(node: TypeNode, v: unknown): void {
    if (node.format === 'quantity') {
      if ((typeof v === 'string' || typeof v === 'number') && isQuantity(String(v).trim())) return;
      throw new Abort(QUANTITY_FORMAT_ERROR);
    }
    if (typeof v === 'string') return;
    if (typeof v !== 'number') throw new Abort(`json: cannot unmarshal ${jsonKind(v)} into Go value of type int32`);
    if (!Number.isInteger(v) || !fitsInteger(v, 'int32')) throw new Abort(`json: cannot unmarshal number ${goNumberText(v)} into Go value of type int32`);
  }

  private mismatch(v: unknown, node: TypeNode): void {
    this.save(jsonKind(v), goTypeName(node));
  }

  private save(value: string, type: string): void {
    const struct = this.structNode ? goStructName(this.structNode) : '';
    this.first ??= `json: cannot unmarshal ${value} into Go struct field ${struct}.${this.fields.join('.')} of type ${type}`;
  }
}

const BASE64_ALPHABET = new Uint8Array(256).fill(0);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') BASE64_ALPHABET[c.charCodeAt(0)] = 1;
const CR = 0x0d;
const LF = 0x0a;
const PAD = 0x3d;

/**
 * Where base64.StdEncoding.Decode finds the string corrupt (its CorruptInputError), or undefined
 * when it decodes: quanta of four characters, CR and LF skipped, `=` padding required.
 */
function base64ErrorOffset(s: string): number | undefined {
  // Plain base64 is ASCII: offsets are byte offsets of the UTF-8 text Go reads.
  // eslint-disable-next-line no-control-regex -- an ASCII test: U+0000 belongs to it
  const src = /^[\x00-\x7f]*$/.test(s) ? s : Buffer.from(s, 'utf8').toString('latin1');
  const n = src.length;
  let si = 0;
  while (si < n) {
    for (let j = 0; j < 4; j++) {
      if (si === n) {
        if (j === 0) return undefined;
        return si - j; // a quantum cut short (padding is required)
      }
      const c = src.charCodeAt(si++);
      if (c < 256 && BASE64_ALPHABET[c]) continue;
      if (c === LF || c === CR) {
        j--;
        continue;
      }
      if (c !== PAD || j < 2) return si - 1;
      if (j === 2) {
        // "==" is expected: the second "=" after any newlines.
        while (si < n && (src.charCodeAt(si) === LF || src.charCodeAt(si) === CR)) si++;
        if (si === n) return n;
        if (src.charCodeAt(si) !== PAD) return si - 1;
        si++;
      }
      while (si < n && (src.charCodeAt(si) === LF || src.charCodeAt(si) === CR)) si++;
      return si < n ? si : undefined; // trailing garbage after the padding
    }
  }
  return undefined;
}

/** Quantities that parsed lately: the same few ("100m", "128Mi") come in every pod template. */
const PARSED_QUANTITIES = new Set<string>();

function isQuantity(text: string): boolean {
  if (PARSED_QUANTITIES.has(text)) return true;
  if (parseQuantity(text) === undefined) return false;
  if (PARSED_QUANTITIES.size >= 1024) PARSED_QUANTITIES.clear();
  PARSED_QUANTITIES.add(text);
  return true;
}

function fitsInteger(v: number, format: string | undefined): boolean {
  if (format === 'int32') return v >= -2147483648 && v <= 2147483647;
  // math.MaxInt64 (2^63 - 1) as a float64 rounds up to 2^63.
  return Number.isSafeInteger(v) || Math.abs(v) <= 2 ** 63;
}

/** The number's text as it would have been sent (JSON.parse keeps only its value). */
function goNumberText(v: number): string {
  return String(v);
}

/** "io.k8s.api.apps.v1.DeploymentSpec" → "DeploymentSpec". */
function goStructName(node: TypeNode): string {
  const def = node.definition;
  return def ? def.slice(def.lastIndexOf('.') + 1) : '';
}

/** The Go type encoding/json names: a definition as package.Name, else the type its schema describes. */
function goTypeName(node: TypeNode): string {
  if (node.definition) {
    const parts = node.definition.split('.');
    return `${parts[parts.length - 2]}.${parts[parts.length - 1]}`;
  }
  switch (node.type) {
    case 'string':
      return node.format === 'byte' ? '[]uint8' : 'string';
    case 'boolean':
      return 'bool';
    case 'integer':
      return node.format === 'int32' ? 'int32' : 'int64';
    case 'number':
      return 'float64';
    case 'array':
      return `[]${node.items ? goTypeName(node.items) : 'interface {}'}`;
    case 'map':
      return `map[string]${node.values ? goTypeName(node.values) : 'interface {}'}`;
    case 'int-or-string':
      return node.format === 'quantity' ? 'resource.Quantity' : 'intstr.IntOrString';
    default:
      return 'interface {}';
  }
}

// ---------------------------------------------------------------------------------------------
// Bodies kube cannot even read the kind of. Its JSON serializer first unmarshals the body into
// struct { APIVersion, Kind } (meta.Interpret); when that fails the create/update handler answers
// `the object provided is unrecognized (must be of type <Kind>): <why> (<the body's start>)`.

const FIND_KIND_TYPE = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

/**
 * Why kube could not read a JSON body's apiVersion and kind, or undefined when it can: Go's
 * syntax error for text that is not JSON (parsed, when given, is JSON.parse's result for text
 * that is), a type error for a body that is not an object, or for a kind or apiVersion that is
 * not a string.
 */
export function unreadableKindError(text: string, parsed?: { value: unknown }): string | undefined {
  if (parsed === undefined) return `couldn't get version/kind; json parse error: ${goJsonSyntaxError(text) ?? 'unexpected end of JSON input'}`;
  const v = parsed.value;
  if (v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) return `couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonKind(v)} into Go value of type ${FIND_KIND_TYPE}`;
  // encoding/json reports the first of them in the document, which JSON.parse keeps in key order.
  const fields = v as Record<string, unknown>;
  for (const k of Object.keys(fields)) {
    if ((k === 'kind' || k === 'apiVersion') && typeof fields[k] !== 'string' && fields[k] !== null) {
      return `couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonKind(fields[k])} into Go struct field .${k} of type string`;
    }
  }
  return undefined;
}

/** kube's summary of a body in that message: "<empty>", JSON text, or hex, cut at 30 bytes. */
export function summarizeBody(body: Buffer): string {
  if (body.length === 0) return '<empty>';
  const cut = body.length > 30;
  const head = cut ? body.subarray(0, 30) : body;
  return (body[0] === 0x7b ? head.toString('utf8') : head.toString('hex')) + (cut ? ' ...' : '');
}

/** Go's strconv.Quote of one byte, between single quotes, as encoding/json's quoteChar writes it. */
function quoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return `'"'`;
  const short: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r', 0x5c: '\\\\' };
  if (short[c]) return `'${short[c]}'`;
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, '0')}'`;
  if (c < 0x7f) return `'${String.fromCharCode(c)}'`;
  // A byte past ASCII is quoted as the rune of that value (U+0080–U+00FF).
  return c < 0xa0 || c === 0xad ? `'\\u00${c.toString(16)}'` : `'${String.fromCharCode(c)}'`;
}

/**
 * The error encoding/json's scanner reports for text that is not JSON (its wording: `invalid
 * character 'x' looking for beginning of value`, `unexpected end of JSON input`, ...), or
 * undefined for valid JSON. Run only on bodies JSON.parse refused, or nested deeper than
 * maxDepth: their error is the scanner's for its own depth limit, `invalid character '{' exceeded
 * max depth` (hearth's limit is lower than encoding/json's 10,000, its words the same).
 */
export function goJsonSyntaxError(text: string, maxDepth = MAX_BODY_DEPTH): string | undefined {
  const b = Buffer.from(text, 'utf8');
  let i = 0;
  const bad = (what: string) => `invalid character ${quoteChar(b[i])} ${what}`;
  const space = () => {
    while (i < b.length && (b[i] === 0x20 || b[i] === 0x09 || b[i] === 0x0a || b[i] === 0x0d)) i++;
  };
  const EOF = 'unexpected end of JSON input';
  const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
  const literal = (word: string): string | undefined => {
    for (let k = 1; k < word.length; k++) {
      i++;
      if (i >= b.length) return EOF;
      if (b[i] !== word.charCodeAt(k)) return bad(`in literal ${word} (expecting '${word[k]}')`);
    }
    i++;
    return undefined;
  };
  const string = (): string | undefined => {
    i++; // the opening quote
    for (;;) {
      if (i >= b.length) return EOF;
      const c = b[i];
      if (c === 0x22) {
        i++;
        return undefined;
      }
      if (c === 0x5c) {
        i++;
        if (i >= b.length) return EOF;
        const e = b[i];
        if (e === 0x75) {
          for (let k = 0; k < 4; k++) {
            i++;
            if (i >= b.length) return EOF;
            const h = b[i];
            if (!(isDigit(h) || (h >= 0x61 && h <= 0x66) || (h >= 0x41 && h <= 0x46))) return bad('in \\u hexadecimal character escape');
          }
        } else if (!'bfnrt\\/"'.includes(String.fromCharCode(e))) return bad('in string escape code');
        i++;
        continue;
      }
      if (c < 0x20) return bad('in string literal');
      i++;
    }
  };
  const number = (): string | undefined => {
    if (b[i] === 0x2d) {
      i++;
      if (i >= b.length) return EOF;
      if (!isDigit(b[i])) return bad('in numeric literal');
    }
    if (b[i] === 0x30) i++;
    else while (i < b.length && isDigit(b[i])) i++;
    if (i < b.length && b[i] === 0x2e) {
      i++;
      if (i >= b.length) return EOF;
      if (!isDigit(b[i])) return bad('after decimal point in numeric literal');
      while (i < b.length && isDigit(b[i])) i++;
    }
    if (i < b.length && (b[i] === 0x65 || b[i] === 0x45)) {
      i++;
      if (i < b.length && (b[i] === 0x2b || b[i] === 0x2d)) i++;
      if (i >= b.length) return EOF;
      if (!isDigit(b[i])) return bad('in exponent of numeric literal');
      while (i < b.length && isDigit(b[i])) i++;
    }
    return undefined;
  };
  // The objects (true) and arrays (false) open around the value being read: a loop with its own
  // stack, as the scanner's parseState, so no body is too deep to report on.
  const open: boolean[] = [];
  /** After an object's key: its colon, then on to the value. */
  const member = (): string | undefined => {
    if (b[i] !== 0x22) return bad('looking for beginning of object key string');
    const e = string();
    if (e) return e;
    space();
    if (i >= b.length) return EOF;
    if (b[i] !== 0x3a) return bad('after object key');
    i++;
    return undefined;
  };
  for (;;) {
    // A value starts here.
    space();
    if (i >= b.length) return EOF;
    const c = b[i];
    if (c === 0x7b || c === 0x5b) {
      // encoding/json's maxNestingDepth check, at the bracket that opens one level too many.
      if (open.length >= maxDepth) return bad('exceeded max depth');
      i++;
      space();
      if (i >= b.length) return EOF;
      if (b[i] !== (c === 0x7b ? 0x7d : 0x5d)) {
        open.push(c === 0x7b);
        if (c === 0x7b) {
          const e = member();
          if (e) return e;
        }
        continue;
      }
      i++; // {} or []
    } else {
      let e: string | undefined;
      if (c === 0x22) e = string();
      else if (c === 0x2d || isDigit(c)) e = number();
      else if (c === 0x74) e = literal('true');
      else if (c === 0x66) e = literal('false');
      else if (c === 0x6e) e = literal('null');
      else e = bad('looking for beginning of value');
      if (e) return e;
    }
    // The value is complete: close the containers it completes, up to one that goes on.
    for (;;) {
      space();
      if (open.length === 0) return i < b.length ? bad('after top-level value') : undefined;
      if (i >= b.length) return EOF;
      const inObject = open[open.length - 1];
      if (b[i] === (inObject ? 0x7d : 0x5d)) {
        i++;
        open.pop();
        continue;
      }
      if (b[i] !== 0x2c) return bad(inObject ? 'after object key:value pair' : 'after array element');
      i++;
      if (inObject) {
        space();
        if (i >= b.length) return EOF;
        const e = member();
        if (e) return e;
      }
      break;
    }
  }
}
