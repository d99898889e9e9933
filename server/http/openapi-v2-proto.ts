// The protobuf form of /openapi/v2: the Swagger 2.0 document encoded as gnostic's openapi.v2.Document
// (package openapi.v2, openapiv2/OpenAPIv2.proto). client-go's DiscoveryClient.OpenAPISchema() asks for
// it with Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf and proto.Unmarshals it;
// kubectl reads GVKs, patch strategies, list types and query parameters (fieldValidation) out of it.
//
// kube-apiserver produces these bytes by parsing its JSON with gnostic and marshalling the result, so
// this encoder follows gnostic's mapping: objects become repeated Named* pairs in document order, `x-`
// keys become NamedAny vendor extensions whose Any.yaml is the value re-serialized as block YAML the way
// gopkg.in/yaml.v3 writes it, oneofs are chosen the way gnostic's parser chooses them, and proto3 rules
// apply (zero scalars are omitted, present messages are written even when empty).
//
// The bytes are written with @bufbuild/protobuf's BinaryWriter (Writer below adds proto3's omissions).
import { BinaryWriter, UINT32_MAX, WireType } from '@bufbuild/protobuf/wire';
import { isPlainObject } from '../util/json.ts';
import { parseAccept, OPENAPI_ACCEPT } from './negotiation.ts';

/** What client-go puts in Accept (kube-openapi calls this spelling deprecated). */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
/**
 * The other accepted spelling, and the Content-Type kube answers with for both: "@" is not a token
 * character, so client-go's mime.ParseMediaType rejects a response labelled with the first spelling
 * ("mime: unexpected content after media subtype").
 */
export const OPENAPI_V2_PROTOBUF_ALT = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
export const OPENAPI_V2_PROTOBUF_CONTENT_TYPE = OPENAPI_V2_PROTOBUF_ALT;

// ---------------------------------------------------------------------------------------------
// Content negotiation

/** What kube-openapi's /openapi/v2 handler offers, in its order of preference. */
const OFFERS: { type: string; subtype: string; contentType: string | undefined }[] = [
  { type: 'application', subtype: 'json', contentType: undefined },
  { type: 'application', subtype: OPENAPI_V2_PROTOBUF.slice('application/'.length), contentType: OPENAPI_V2_PROTOBUF_CONTENT_TYPE },
  { type: 'application', subtype: OPENAPI_V2_PROTOBUF_ALT.slice('application/'.length), contentType: OPENAPI_V2_PROTOBUF_CONTENT_TYPE },
];

/**
 * The Content-Type to answer with (always OPENAPI_V2_PROTOBUF_CONTENT_TYPE) when the Accept header's best
 * match is one of the protobuf spellings, or undefined when JSON (or nothing) wins. Like kube, answer
 * with `Vary: Accept` either way.
 */
export function openApiV2ProtobufContentType(accept: string | undefined): string | undefined {
  if (!accept) return undefined;
  for (const c of parseAccept(accept, OPENAPI_ACCEPT)) {
    if (c.q <= 0) continue;
    // (a range without a subtype counts as type/*)
    const subtype = c.subtype ?? '*';
    for (const o of OFFERS) {
      if (c.type !== o.type && c.type !== '*') continue;
      if (subtype !== o.subtype && subtype !== '*') continue;
      return o.contentType;
    }
  }
  return undefined;
}

/** Whether an Accept header asks for the protobuf form (kube also accepts the `application/com.github.proto-openapi.spec.v2.v1.0+protobuf` spelling). */
export function wantsOpenApiV2Protobuf(accept: string | undefined): boolean {
  return openApiV2ProtobufContentType(accept) !== undefined;
}

// ---------------------------------------------------------------------------------------------
// Wire writer

/**
 * gnostic's messages are proto3: a zero scalar is left out (but a oneof member), a present message
 * is written even when empty. Written with @bufbuild/protobuf's BinaryWriter, nested messages
 * forked and joined in one buffer.
 */
class Writer {
  private readonly w = new BinaryWriter();

  run(walk: (w: Writer) => void): Buffer {
    walk(this);
    const bytes = this.w.finish();
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** A string field; proto3 omits the empty string. */
  string(field: number, s: string | undefined): void {
    if (!s) return;
    this.w.tag(field, WireType.LengthDelimited).string(s);
  }

  /** A bool field; proto3 omits false unless it is a oneof member (always = true). */
  bool(field: number, b: boolean, always = false): void {
    if (!b && !always) return;
    this.w.tag(field, WireType.Varint).bool(b);
  }

  /** An int64 field (truncated to an integer; negatives in two's complement); proto3 omits zero. */
  int64(field: number, n: number): void {
    if (n === 0 || !Number.isFinite(n)) return;
    n = Math.trunc(n);
    this.w.tag(field, WireType.Varint);
    if (n >= 0 && n <= UINT32_MAX) this.w.uint32(n);
    else this.w.int64(BigInt.asIntN(64, BigInt(n)));
  }

  /** A double field (fixed64, little endian); proto3 omits zero. */
  double(field: number, n: number): void {
    if (n === 0 || Number.isNaN(n)) return;
    this.w.tag(field, WireType.Bit64).double(n);
  }

  /** A message field: always written (an empty message is still present). */
  message(field: number, body: () => void): void {
    this.w.tag(field, WireType.LengthDelimited).fork();
    body();
    this.w.join();
  }
}

// ---------------------------------------------------------------------------------------------
// JSON helpers (gnostic reads the document as YAML nodes; these mirror its scalar coercions)

type Obj = Record<string, unknown>;

/** gnostic's StringForScalarNode: strings, integers (as text), null as "". */
function str(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return String(v);
  return undefined;
}

function strings(v: unknown): string[] {
  if (!Array.isArray(v)) return [];
  const out: string[] = [];
  for (const x of v) {
    const s = str(x);
    if (s !== undefined) out.push(s);
  }
  return out;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const bool = (v: unknown): boolean => v === true;

// ---------------------------------------------------------------------------------------------
// YAML for Any.yaml: what gnostic's compiler.Marshal (yaml.v3 Marshal, styles cleared, indent 4) writes

const BEST_INDENT = 4;

/** Plain scalars that yaml.v3 resolves to something other than a string. */
const NON_STRING_PLAIN = new Set([
  '',
  '~',
  'null',
  'Null',
  'NULL',
  'true',
  'True',
  'TRUE',
  'false',
  'False',
  'FALSE',
  '.nan',
  '.NaN',
  '.NAN',
  '.inf',
  '.Inf',
  '.INF',
  '+.inf',
  '+.Inf',
  '+.INF',
  '-.inf',
  '-.Inf',
  '-.INF',
  '<<',
]);
const YAML_INT = /^[-+]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|[0-9]+)$/;
const YAML_FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;
const YAML_TIMESTAMP = /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?(?:Z|[-+][0-9]{2}:[0-9]{2}))|(?: [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?))?$/;

/** Whether a string written plain would read back as null, bool, number or timestamp. */
function resolvesToNonString(s: string): boolean {
  if (NON_STRING_PLAIN.has(s)) return true;
  const c = s.charCodeAt(0);
  if (c === 0x2e /* . */) return YAML_FLOAT.test(s);
  const digit = c >= 0x30 && c <= 0x39;
  if (!digit && c !== 0x2b && c !== 0x2d) return false;
  if (digit && YAML_TIMESTAMP.test(s)) return true;
  const plain = s.includes('_') ? s.replace(/_/g, '') : s;
  return YAML_INT.test(plain) || YAML_FLOAT.test(plain);
}

const isBreak = (c: number): boolean => c === 0x0a || c === 0x0d || c === 0x85 || c === 0x2028 || c === 0x2029;
const isBlankOrEnd = (c: number | undefined): boolean => c === undefined || c === 0x20 || c === 0x09 || isBreak(c);
/** libyaml's is_printable (by code point); it leaves out tabs, C1 controls and astral characters. */
function isPrintable(c: number): boolean {
  return c === 0x0a || (c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd && c !== 0xfeff);
}

interface ScalarAnalysis {
  plain: boolean;
  single: boolean;
  literal: boolean;
}

/** libyaml's yaml_emitter_analyze_scalar, reduced to the block-context decisions. */
function analyze(s: string): ScalarAnalysis {
  if (s === '') return { plain: false, single: true, literal: false };
  const cps: number[] = [];
  for (const ch of s) cps.push(ch.codePointAt(0)!);
  let blockIndicators = false;
  let special = false;
  let lineBreaks = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  let previousSpace = false;
  let previousBreak = false;
  if (s.startsWith('---') || s.startsWith('...')) blockIndicators = true;
  let precededByWhitespace = true;
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i]!;
    const followedByWhitespace = isBlankOrEnd(cps[i + 1]);
    const ch = String.fromCodePoint(c);
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(ch)) blockIndicators = true;
      else if ((ch === '?' || ch === ':') && followedByWhitespace) blockIndicators = true;
      else if (ch === '-' && followedByWhitespace) blockIndicators = true;
    } else if (ch === ':' && followedByWhitespace) blockIndicators = true;
    else if (ch === '#' && precededByWhitespace) blockIndicators = true;
    if (!isPrintable(c)) special = true;
    if (isBreak(c)) lineBreaks = true;
    if (c === 0x20) {
      if (i === 0) leadingSpace = true;
      if (i === cps.length - 1) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (isBreak(c)) {
      if (i === 0) leadingBreak = true;
      if (i === cps.length - 1) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousBreak = true;
      previousSpace = false;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = isBlankOrEnd(c);
  }
  let plain = true;
  let single = true;
  let literal = true;
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) plain = false;
  if (trailingSpace) literal = false;
  if (breakSpace) plain = single = false;
  if (spaceBreak || special) plain = single = literal = false;
  if (lineBreaks) plain = false;
  if (blockIndicators) plain = false;
  return { plain, single, literal };
}

function doubleQuoted(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (isPrintable(c) && !isBreak(c) && c !== 0x22 && c !== 0x5c) {
      out += ch;
      continue;
    }
    switch (c) {
      case 0x00: out += '\\0'; break;
      case 0x07: out += '\\a'; break;
      case 0x08: out += '\\b'; break;
      case 0x09: out += '\\t'; break;
      case 0x0a: out += '\\n'; break;
      case 0x0b: out += '\\v'; break;
      case 0x0c: out += '\\f'; break;
      case 0x0d: out += '\\r'; break;
      case 0x1b: out += '\\e'; break;
      case 0x22: out += '\\"'; break;
      case 0x5c: out += '\\\\'; break;
      case 0x85: out += '\\N'; break;
      case 0xa0: out += '\\_'; break;
      case 0x2028: out += '\\L'; break;
      case 0x2029: out += '\\P'; break;
      default: {
        const hex = c.toString(16).toUpperCase();
        if (c <= 0xff) out += '\\x' + hex.padStart(2, '0');
        else if (c <= 0xffff) out += '\\u' + hex.padStart(4, '0');
        else out += '\\U' + hex.padStart(8, '0');
      }
    }
  }
  return out + '"';
}

/** A literal block scalar ("|", "|-" or "|+") whose lines sit at column `indent`. */
function literalBlock(s: string, indent: number): string {
  let chomp = '';
  let body = s;
  if (!s.endsWith('\n')) chomp = '-';
  else {
    if (s.length === 1 || s.endsWith('\n\n')) chomp = '+';
    body = s.slice(0, -1);
  }
  const pad = ' '.repeat(indent);
  let out = '|' + chomp;
  for (const line of body.split('\n')) out += line === '' ? '\n' : '\n' + pad + line;
  return out;
}

/** A string scalar; `literalIndent` is where a literal block's lines would go, undefined for keys. */
function yamlString(s: string, literalIndent: number | undefined): string {
  const a = analyze(s);
  if (s.includes('\n') && literalIndent !== undefined) {
    // Leading spaces or breaks would need an indentation indicator; a double-quoted scalar reads the same.
    if (a.literal && !/^[ \n]/.test(s)) return literalBlock(s, literalIndent);
    return doubleQuoted(s);
  }
  if (resolvesToNonString(s)) return doubleQuoted(s);
  if (a.plain) return s;
  if (a.single && !s.includes('\n')) return "'" + s.replace(/'/g, "''") + "'";
  return doubleQuoted(s);
}

function yamlNumber(n: number): string {
  if (Number.isNaN(n)) return '.nan';
  if (n === Infinity) return '.inf';
  if (n === -Infinity) return '-.inf';
  return String(n);
}

function yamlScalar(v: unknown, literalIndent: number): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return yamlNumber(v);
  if (typeof v === 'string') return yamlString(v, literalIndent);
  if (Array.isArray(v)) return '[]';
  if (isPlainObject(v)) return '{}';
  return yamlString(String(v), literalIndent);
}

const isBlockCollection = (v: unknown): boolean => (Array.isArray(v) ? v.length > 0 : isPlainObject(v) && Object.keys(v).length > 0);

/** yaml.v3's indentation step for anything not directly inside a sequence item: the next multiple of 4. */
const alignIndent = (indent: number): number => BEST_INDENT * Math.floor((indent + BEST_INDENT) / BEST_INDENT);

class YamlOut {
  text = '';
  newline(indent: number): void {
    this.text += '\n' + ' '.repeat(indent);
  }
}

/** A block mapping whose keys sit at `indent`; the first key continues the current line when `inline`. */
function yamlMapping(o: YamlOut, m: Obj, indent: number, inline: boolean): void {
  let first = true;
  for (const [k, v] of Object.entries(m)) {
    if (!(first && inline)) o.newline(indent);
    first = false;
    o.text += yamlString(k, undefined) + ':';
    if (isBlockCollection(v)) {
      if (Array.isArray(v)) {
        o.newline(alignIndent(indent) - 2);
        yamlSequence(o, v, alignIndent(indent) - 2, true);
      } else {
        o.newline(alignIndent(indent));
        yamlMapping(o, v as Obj, alignIndent(indent), true);
      }
    } else {
      o.text += ' ' + yamlScalar(v, alignIndent(indent));
    }
  }
}

/** A block sequence whose dashes sit at `indent`; the first dash continues the current line when `inline`. */
function yamlSequence(o: YamlOut, items: unknown[], indent: number, inline: boolean): void {
  let first = true;
  for (const v of items) {
    if (!(first && inline)) o.newline(indent);
    first = false;
    o.text += '- ';
    if (isBlockCollection(v)) {
      if (Array.isArray(v)) yamlSequence(o, v, indent + 2, true);
      else yamlMapping(o, v as Obj, indent + 2, true);
    } else {
      o.text += yamlScalar(v, indent + 2);
    }
  }
}

/** A JSON value as the YAML document text yaml.v3 would marshal for it (always newline-terminated). */
export function toYaml(v: unknown): string {
  const o = new YamlOut();
  if (Array.isArray(v) && v.length > 0) yamlSequence(o, v, 0, true);
  else if (isPlainObject(v) && Object.keys(v).length > 0) yamlMapping(o, v, 0, true);
  else o.text = yamlScalar(v, BEST_INDENT);
  return o.text + '\n';
}

// ---------------------------------------------------------------------------------------------
// openapi.v2 messages

/** Any { yaml = 2 } */
function writeAny(w: Writer, field: number, v: unknown): void {
  w.message(field, () => w.string(2, toYaml(v)));
}

/** repeated NamedAny vendor_extension: every `x-` key, in document order. NamedAny { name = 1; value = 2 } */
function writeExtensions(w: Writer, field: number, o: Obj): void {
  for (const k in o) {
    if (!k.startsWith('x-')) continue;
    const v = o[k];
    w.message(field, () => {
      w.string(1, k);
      writeAny(w, 2, v);
    });
  }
}

function writeStrings(w: Writer, field: number, v: unknown): void {
  for (const s of strings(v)) {
    // Repeated strings keep empty elements.
    if (s === '') w.message(field, () => {});
    else w.string(field, s);
  }
}

/** ExternalDocs { description = 1; url = 2; vendor_extension = 3 } */
function writeExternalDocs(w: Writer, field: number, v: unknown): void {
  if (!isPlainObject(v)) return;
  w.message(field, () => {
    w.string(1, str(v.description));
    w.string(2, str(v.url));
    writeExtensions(w, 3, v);
  });
}

/** Info { title = 1; version = 2; description = 3; terms_of_service = 4; contact = 5; license = 6; vendor_extension = 7 } */
function writeInfo(w: Writer, v: Obj): void {
  w.string(1, str(v.title));
  w.string(2, str(v.version));
  w.string(3, str(v.description));
  w.string(4, str(v.termsOfService));
  const contact = v.contact;
  if (isPlainObject(contact)) {
    w.message(5, () => {
      w.string(1, str(contact.name));
      w.string(2, str(contact.url));
      w.string(3, str(contact.email));
      writeExtensions(w, 4, contact);
    });
  }
  const license = v.license;
  if (isPlainObject(license)) {
    w.message(6, () => {
      w.string(1, str(license.name));
      w.string(2, str(license.url));
      writeExtensions(w, 3, license);
    });
  }
  writeExtensions(w, 7, v);
}

/**
 * The validation keywords shared by PrimitivesItems, Header and the non-body parameter sub-schemas;
 * they are numbered consecutively from `base + 1` (type) to `base + 17` (multipleOf).
 */
function writePrimitiveFields(w: Writer, v: Obj, base: number): void {
  w.string(base + 1, str(v.type));
  w.string(base + 2, str(v.format));
  if (isPlainObject(v.items)) {
    const items = v.items;
    w.message(base + 3, () => writePrimitivesItems(w, items));
  }
  w.string(base + 4, str(v.collectionFormat));
  if ('default' in v) writeAny(w, base + 5, v.default);
  w.double(base + 6, num(v.maximum));
  w.bool(base + 7, bool(v.exclusiveMaximum));
  w.double(base + 8, num(v.minimum));
  w.bool(base + 9, bool(v.exclusiveMinimum));
  w.int64(base + 10, num(v.maxLength));
  w.int64(base + 11, num(v.minLength));
  w.string(base + 12, str(v.pattern));
  w.int64(base + 13, num(v.maxItems));
  w.int64(base + 14, num(v.minItems));
  w.bool(base + 15, bool(v.uniqueItems));
  if (Array.isArray(v.enum)) for (const e of v.enum) writeAny(w, base + 16, e);
  w.double(base + 17, num(v.multipleOf));
}

/** PrimitivesItems: type = 1 … multiple_of = 17; vendor_extension = 18 */
function writePrimitivesItems(w: Writer, v: Obj): void {
  writePrimitiveFields(w, v, 0);
  writeExtensions(w, 18, v);
}

/** Header: type = 1 … multiple_of = 17; description = 18; vendor_extension = 19 */
function writeHeader(w: Writer, v: Obj): void {
  writePrimitiveFields(w, v, 0);
  w.string(18, str(v.description));
  writeExtensions(w, 19, v);
}

/** Schema (JSON Schema subset used by Swagger 2.0). */
function writeSchema(w: Writer, s: Obj): void {
  w.string(1, str(s.$ref));
  w.string(2, str(s.format));
  w.string(3, str(s.title));
  w.string(4, str(s.description));
  if ('default' in s) writeAny(w, 5, s.default);
  w.double(6, num(s.multipleOf));
  w.double(7, num(s.maximum));
  w.bool(8, bool(s.exclusiveMaximum));
  w.double(9, num(s.minimum));
  w.bool(10, bool(s.exclusiveMinimum));
  w.int64(11, num(s.maxLength));
  w.int64(12, num(s.minLength));
  w.string(13, str(s.pattern));
  w.int64(14, num(s.maxItems));
  w.int64(15, num(s.minItems));
  w.bool(16, bool(s.uniqueItems));
  w.int64(17, num(s.maxProperties));
  w.int64(18, num(s.minProperties));
  writeStrings(w, 19, s.required);
  if (Array.isArray(s.enum)) for (const e of s.enum) writeAny(w, 20, e);
  // AdditionalPropertiesItem { oneof { Schema schema = 1; bool boolean = 2; } }
  const ap = s.additionalProperties;
  if (typeof ap === 'boolean') w.message(21, () => w.bool(2, ap, true));
  else if (isPlainObject(ap)) w.message(21, () => w.message(1, () => writeSchema(w, ap)));
  // TypeItem { repeated string value = 1 }
  const type = s.type;
  if (typeof type === 'string') w.message(22, () => w.string(1, type));
  else if (Array.isArray(type)) w.message(22, () => writeStrings(w, 1, type));
  // ItemsItem { repeated Schema schema = 1 }: one schema for an object, several for a tuple.
  const items = s.items;
  if (isPlainObject(items)) w.message(23, () => w.message(1, () => writeSchema(w, items)));
  else if (Array.isArray(items)) {
    w.message(23, () => {
      for (const it of items) if (isPlainObject(it)) w.message(1, () => writeSchema(w, it));
    });
  }
  if (Array.isArray(s.allOf)) for (const sub of s.allOf) if (isPlainObject(sub)) w.message(24, () => writeSchema(w, sub));
  // Properties { repeated NamedSchema additional_properties = 1 }
  const props = s.properties;
  if (isPlainObject(props)) w.message(25, () => writeNamedSchemas(w, 1, props));
  w.string(26, str(s.discriminator));
  w.bool(27, bool(s.readOnly));
  const xml = s.xml;
  if (isPlainObject(xml)) {
    w.message(28, () => {
      w.string(1, str(xml.name));
      w.string(2, str(xml.namespace));
      w.string(3, str(xml.prefix));
      w.bool(4, bool(xml.attribute));
      w.bool(5, bool(xml.wrapped));
      writeExtensions(w, 6, xml);
    });
  }
  writeExternalDocs(w, 29, s.externalDocs);
  if ('example' in s) writeAny(w, 30, s.example);
  writeExtensions(w, 31, s);
}

/** repeated NamedSchema { name = 1; value = 2 } */
function writeNamedSchemas(w: Writer, field: number, m: Obj): void {
  for (const name in m) {
    const v = m[name];
    w.message(field, () => {
      w.string(1, name);
      w.message(2, () => writeSchema(w, isPlainObject(v) ? v : {}));
    });
  }
}

/** FileSchema { format = 1; title = 2; description = 3; default = 4; required = 5; type = 6; read_only = 7; external_docs = 8; example = 9; vendor_extension = 10 } */
function writeFileSchema(w: Writer, s: Obj): void {
  w.string(1, str(s.format));
  w.string(2, str(s.title));
  w.string(3, str(s.description));
  if ('default' in s) writeAny(w, 4, s.default);
  writeStrings(w, 5, s.required);
  w.string(6, str(s.type));
  w.bool(7, bool(s.readOnly));
  writeExternalDocs(w, 8, s.externalDocs);
  if ('example' in s) writeAny(w, 9, s.example);
  writeExtensions(w, 10, s);
}

/** JsonReference { _ref = 1; description = 2 } */
function writeJsonReference(w: Writer, v: Obj): void {
  w.string(1, str(v.$ref));
  w.string(2, str(v.description));
}

/** Parameter { oneof { BodyParameter body_parameter = 1; NonBodyParameter non_body_parameter = 2; } } */
function writeParameter(w: Writer, p: Obj): void {
  const where = str(p.in);
  if (where === 'body') {
    // BodyParameter { description = 1; name = 2; in = 3; required = 4; schema = 5; vendor_extension = 6 }
    w.message(1, () => {
      w.string(1, str(p.description));
      w.string(2, str(p.name));
      w.string(3, where);
      w.bool(4, bool(p.required));
      const schema = p.schema;
      if (isPlainObject(schema)) w.message(5, () => writeSchema(w, schema));
      writeExtensions(w, 6, p);
    });
    return;
  }
  // NonBodyParameter { oneof { header = 1; form_data = 2; query = 3; path = 4 } }
  const which = where === 'header' ? 1 : where === 'formData' ? 2 : where === 'path' ? 4 : 3;
  w.message(2, () =>
    w.message(which, () => {
      // required = 1; in = 2; description = 3; name = 4; then (query/formData only) allow_empty_value = 5.
      w.bool(1, bool(p.required));
      w.string(2, where);
      w.string(3, str(p.description));
      w.string(4, str(p.name));
      if (which === 2 || which === 3) {
        w.bool(5, bool(p.allowEmptyValue));
        writePrimitiveFields(w, p, 5);
        writeExtensions(w, 23, p);
      } else {
        writePrimitiveFields(w, p, 4);
        writeExtensions(w, 22, p);
      }
    }),
  );
}

/** repeated ParametersItem { oneof { Parameter parameter = 1; JsonReference json_reference = 2; } } */
function writeParametersItems(w: Writer, field: number, v: unknown): void {
  if (!Array.isArray(v)) return;
  for (const p of v) {
    if (!isPlainObject(p)) continue;
    w.message(field, () => {
      if (typeof p.$ref === 'string') w.message(2, () => writeJsonReference(w, p));
      else w.message(1, () => writeParameter(w, p));
    });
  }
}

/** Response { description = 1; schema = 2 (SchemaItem); headers = 3; examples = 4; vendor_extension = 5 } */
function writeResponse(w: Writer, r: Obj): void {
  w.string(1, str(r.description));
  const schema = r.schema;
  if (isPlainObject(schema)) {
    // SchemaItem { oneof { Schema schema = 1; FileSchema file_schema = 2; } }
    w.message(2, () => {
      if (schema.type === 'file') w.message(2, () => writeFileSchema(w, schema));
      else w.message(1, () => writeSchema(w, schema));
    });
  }
  const headers = r.headers;
  if (isPlainObject(headers)) {
    // Headers { repeated NamedHeader additional_properties = 1 }
    w.message(3, () => {
      for (const name in headers) {
        const h = headers[name];
        w.message(1, () => {
          w.string(1, name);
          w.message(2, () => writeHeader(w, isPlainObject(h) ? h : {}));
        });
      }
    });
  }
  const examples = r.examples;
  if (isPlainObject(examples)) {
    // Examples { repeated NamedAny additional_properties = 1 }
    w.message(4, () => {
      for (const name in examples) {
        const ex = examples[name];
        w.message(1, () => {
          w.string(1, name);
          writeAny(w, 2, ex);
        });
      }
    });
  }
  writeExtensions(w, 5, r);
}

/** ResponseValue { oneof { Response response = 1; JsonReference json_reference = 2; } } */
function writeResponseValue(w: Writer, r: Obj): void {
  if (typeof r.$ref === 'string') w.message(2, () => writeJsonReference(w, r));
  else w.message(1, () => writeResponse(w, r));
}

const RESPONSE_CODE = /^([0-9]{3})$|^(default)$/;

/** Responses { repeated NamedResponseValue response_code = 1; vendor_extension = 2 } */
function writeResponses(w: Writer, r: Obj): void {
  for (const code in r) {
    if (!RESPONSE_CODE.test(code)) continue;
    const v = r[code];
    w.message(1, () => {
      w.string(1, code);
      w.message(2, () => writeResponseValue(w, isPlainObject(v) ? v : {}));
    });
  }
  writeExtensions(w, 2, r);
}

/** repeated SecurityRequirement { repeated NamedStringArray additional_properties = 1 } */
function writeSecurity(w: Writer, field: number, v: unknown): void {
  if (!Array.isArray(v)) return;
  for (const req of v) {
    if (!isPlainObject(req)) continue;
    w.message(field, () => {
      for (const name in req) {
        const scopes = req[name];
        w.message(1, () => {
          w.string(1, name);
          // StringArray { repeated string value = 1 }
          w.message(2, () => writeStrings(w, 1, scopes));
        });
      }
    });
  }
}

/** Operation { tags = 1; summary = 2; description = 3; external_docs = 4; operation_id = 5; produces = 6; consumes = 7; parameters = 8; responses = 9; schemes = 10; deprecated = 11; security = 12; vendor_extension = 13 } */
function writeOperation(w: Writer, op: Obj): void {
  writeStrings(w, 1, op.tags);
  w.string(2, str(op.summary));
  w.string(3, str(op.description));
  writeExternalDocs(w, 4, op.externalDocs);
  w.string(5, str(op.operationId));
  writeStrings(w, 6, op.produces);
  writeStrings(w, 7, op.consumes);
  writeParametersItems(w, 8, op.parameters);
  const responses = op.responses;
  if (isPlainObject(responses)) w.message(9, () => writeResponses(w, responses));
  writeStrings(w, 10, op.schemes);
  w.bool(11, bool(op.deprecated));
  writeSecurity(w, 12, op.security);
  writeExtensions(w, 13, op);
}

const OPERATION_FIELDS: [string, number][] = [
  ['get', 2],
  ['put', 3],
  ['post', 4],
  ['delete', 5],
  ['options', 6],
  ['head', 7],
  ['patch', 8],
];

/** PathItem { _ref = 1; get = 2; put = 3; post = 4; delete = 5; options = 6; head = 7; patch = 8; parameters = 9; vendor_extension = 10 } */
function writePathItem(w: Writer, p: Obj): void {
  w.string(1, str(p.$ref));
  for (const [method, field] of OPERATION_FIELDS) {
    const op = p[method];
    if (isPlainObject(op)) w.message(field, () => writeOperation(w, op));
  }
  writeParametersItems(w, 9, p.parameters);
  writeExtensions(w, 10, p);
}

/** Paths { vendor_extension = 1; repeated NamedPathItem path = 2 } */
function writePaths(w: Writer, paths: Obj): void {
  writeExtensions(w, 1, paths);
  for (const name in paths) {
    if (!name.startsWith('/')) continue;
    const item = paths[name];
    w.message(2, () => {
      w.string(1, name);
      w.message(2, () => writePathItem(w, isPlainObject(item) ? item : {}));
    });
  }
}

/** Oauth2Scopes { repeated NamedString additional_properties = 1 } */
function writeScopes(w: Writer, field: number, v: unknown): void {
  if (!isPlainObject(v)) return;
  w.message(field, () => {
    for (const name in v) {
      const value = str(v[name]);
      w.message(1, () => {
        w.string(1, name);
        w.string(2, value);
      });
    }
  });
}

/** SecurityDefinitionsItem { oneof { basic = 1; api_key = 2; oauth2 implicit = 3; password = 4; application = 5; access_code = 6 } } */
function writeSecurityScheme(w: Writer, s: Obj): void {
  const type = str(s.type);
  if (type === 'basic') {
    w.message(1, () => {
      w.string(1, type);
      w.string(2, str(s.description));
      writeExtensions(w, 3, s);
    });
  } else if (type === 'apiKey') {
    w.message(2, () => {
      w.string(1, type);
      w.string(2, str(s.name));
      w.string(3, str(s.in));
      w.string(4, str(s.description));
      writeExtensions(w, 5, s);
    });
  } else if (type === 'oauth2') {
    const flow = str(s.flow);
    if (flow === 'implicit') {
      w.message(3, () => {
        w.string(1, type);
        w.string(2, flow);
        writeScopes(w, 3, s.scopes);
        w.string(4, str(s.authorizationUrl));
        w.string(5, str(s.description));
        writeExtensions(w, 6, s);
      });
    } else if (flow === 'password' || flow === 'application') {
      w.message(flow === 'password' ? 4 : 5, () => {
        w.string(1, type);
        w.string(2, flow);
        writeScopes(w, 3, s.scopes);
        w.string(4, str(s.tokenUrl));
        w.string(5, str(s.description));
        writeExtensions(w, 6, s);
      });
    } else if (flow === 'accessCode') {
      w.message(6, () => {
        w.string(1, type);
        w.string(2, flow);
        writeScopes(w, 3, s.scopes);
        w.string(4, str(s.authorizationUrl));
        w.string(5, str(s.tokenUrl));
        w.string(6, str(s.description));
        writeExtensions(w, 7, s);
      });
    }
  }
}

/** Document: swagger = 1; info = 2; host = 3; base_path = 4; schemes = 5; consumes = 6; produces = 7; paths = 8; definitions = 9; parameters = 10; responses = 11; security = 12; security_definitions = 13; tags = 14; external_docs = 15; vendor_extension = 16 */
function writeDocument(w: Writer, doc: Obj): void {
  w.string(1, str(doc.swagger));
  const info = doc.info;
  if (isPlainObject(info)) w.message(2, () => writeInfo(w, info));
  w.string(3, str(doc.host));
  w.string(4, str(doc.basePath));
  writeStrings(w, 5, doc.schemes);
  writeStrings(w, 6, doc.consumes);
  writeStrings(w, 7, doc.produces);
  const paths = doc.paths;
  if (isPlainObject(paths)) w.message(8, () => writePaths(w, paths));
  // Definitions { repeated NamedSchema additional_properties = 1 }
  const defs = doc.definitions;
  if (isPlainObject(defs)) w.message(9, () => writeNamedSchemas(w, 1, defs));
  // ParameterDefinitions { repeated NamedParameter additional_properties = 1 }
  const params = doc.parameters;
  if (isPlainObject(params)) {
    w.message(10, () => {
      for (const name in params) {
        const p = params[name];
        w.message(1, () => {
          w.string(1, name);
          w.message(2, () => writeParameter(w, isPlainObject(p) ? p : {}));
        });
      }
    });
  }
  // ResponseDefinitions { repeated NamedResponse additional_properties = 1 }
  const responses = doc.responses;
  if (isPlainObject(responses)) {
    w.message(11, () => {
      for (const name in responses) {
        const r = responses[name];
        w.message(1, () => {
          w.string(1, name);
          w.message(2, () => writeResponse(w, isPlainObject(r) ? r : {}));
        });
      }
    });
  }
  writeSecurity(w, 12, doc.security);
  // SecurityDefinitions { repeated NamedSecurityDefinitionsItem additional_properties = 1 }
  const secDefs = doc.securityDefinitions;
  if (isPlainObject(secDefs)) {
    w.message(13, () => {
      for (const name in secDefs) {
        const s = secDefs[name];
        w.message(1, () => {
          w.string(1, name);
          w.message(2, () => writeSecurityScheme(w, isPlainObject(s) ? s : {}));
        });
      }
    });
  }
  if (Array.isArray(doc.tags)) {
    for (const t of doc.tags) {
      if (!isPlainObject(t)) continue;
      // Tag { name = 1; description = 2; external_docs = 3; vendor_extension = 4 }
      w.message(14, () => {
        w.string(1, str(t.name));
        w.string(2, str(t.description));
        writeExternalDocs(w, 3, t.externalDocs);
        writeExtensions(w, 4, t);
      });
    }
  }
  writeExternalDocs(w, 15, doc.externalDocs);
  writeExtensions(w, 16, doc);
}

/** Encode a Swagger 2.0 JSON document (as a parsed object) into gnostic openapi.v2.Document protobuf bytes. */
export function encodeOpenApiV2Document(doc: unknown): Buffer {
  if (!isPlainObject(doc)) throw new TypeError('encodeOpenApiV2Document: expected a Swagger 2.0 document object');
  return new Writer().run((w) => writeDocument(w, doc));
}
