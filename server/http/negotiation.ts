// Content negotiation: which representation a client asked for (Accept), how to read the
// body it sent (Content-Type), and the encoders for JSON, YAML and CBOR.
import type { IncomingMessage } from 'node:http';
import YAML from 'yaml';
import { PROTOBUF_MEDIA_TYPE, decodeProtobuf, encodeProtobuf, definitionForKind } from './protobuf.ts';
import { Encoder } from 'cbor-x';
import { storedJsonOf } from '../storage/rows/codec.ts';
import { goJsonText } from '../go/json.ts';
import { KUBE_YAML, kubeYaml } from '../go/yaml.ts';
import { ApiError, badRequest, notAcceptable, requestEntityTooLarge } from '../errors.ts';
import { MAX_BODY_DEPTH, jsonDepthExceededAt, valueDepthExceeds } from '../util/json-depth.ts';
import { goJsonSyntaxError, summarizeBody } from '../schema/go-decode.ts';
import { cborProblem, type CborStage } from './cbor-check.ts';

export type Encoding = 'json' | 'yaml' | 'cbor' | 'protobuf';
/** Alternate shapes kube-apiserver serves for the same objects. */
export type Shape = 'object' | 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';

export interface OutputFormat {
  encoding: Encoding;
  shape: Shape;
  /** meta.k8s.io version for Table / PartialObjectMetadata (v1 or v1beta1). */
  metaVersion: string;
  contentType: string;
}

export const MAX_BODY_BYTES = 3 * 1024 * 1024;

const MEDIA: Record<string, Encoding> = {
  'application/json': 'json',
  'application/yaml': 'yaml',
  'application/cbor': 'cbor',
  [PROTOBUF_MEDIA_TYPE]: 'protobuf',
};

export const SUPPORTED_MEDIA_TYPES = ['application/json', 'application/yaml', PROTOBUF_MEDIA_TYPE, 'application/cbor'];

/** One media range of an Accept header, as parseAccept reads it. */
export interface MediaRange {
  /** The range as sent, trimmed and lower-cased ("application/json", "application/*"). */
  mediaType: string;
  /** The text before its first "/" (all of it when there is none), as sent. */
  type: string;
  /** The text after its first "/", as sent; undefined when there is no "/". */
  subtype: string | undefined;
  /** Its parameters but q: names lower-cased, values trimmed and unquoted (the last of a name wins). */
  params: Map<string, string>;
  q: number;
  /** Its place among the ranges read. */
  index: number;
}

/**
 * How an endpoint reads an Accept header. Every endpoint reads it with parseAccept, each with the
 * reading below that keeps what it answered before they shared one parser; the differences are
 * named here rather than hidden in parsers of their own.
 */
export interface AcceptReading {
  /** A quoted parameter value may hold "," and ";"; else every "," ends a range (as goautoneg splits). */
  quotedStrings: boolean;
  /** A value's quotes: 'ends' drops a leading and a trailing one (even unpaired); 'pair' only both together; 'none' keeps them. */
  unquote: 'ends' | 'pair' | 'none';
  /**
   * q: 'number' as written (nonsense is NaN, more than 1 counts more); 'clamped' to [0, 1], nonsense
   * 1; 'keep' as written, nonsense leaving the q before it (1 at first).
   */
  quality: 'number' | 'clamped' | 'keep';
  /** Equal q ranks the more specific range first (goautoneg: a full type, then a subtype wildcard, then "*"); else header order. */
  bySpecificity: boolean;
}

/** The resource endpoints' reading (negotiateOutput; also the JSON check of the OpenAPI routes). */
export const API_ACCEPT: AcceptReading = { quotedStrings: false, unquote: 'ends', quality: 'number', bySpecificity: false };
/** Discovery's (/api, /apis: negotiateDiscovery). */
export const DISCOVERY_ACCEPT: AcceptReading = { quotedStrings: true, unquote: 'pair', quality: 'clamped', bySpecificity: false };
/** kube-openapi's for /openapi/v2 (goautoneg's order): openApiV2ProtobufContentType. */
export const OPENAPI_ACCEPT: AcceptReading = { quotedStrings: false, unquote: 'none', quality: 'keep', bySpecificity: true };

/** The ranges of an Accept header, highest q first (ties as `reading` orders them). */
export function parseAccept(header: string, reading: AcceptReading): MediaRange[] {
  const out: MediaRange[] = [];
  for (const part of splitAccept(header, ',', reading.quotedStrings)) {
    const pieces = splitAccept(part, ';', reading.quotedStrings);
    const mediaType = pieces[0].trim().toLowerCase();
    if (!mediaType) continue;
    const slash = mediaType.indexOf('/');
    const range: MediaRange = {
      mediaType,
      type: slash < 0 ? mediaType : mediaType.slice(0, slash),
      subtype: slash < 0 ? undefined : mediaType.slice(slash + 1),
      params: new Map(),
      q: 1,
      index: out.length,
    };
    for (let i = 1; i < pieces.length; i++) {
      const p = pieces[i].trim();
      const eq = p.indexOf('=');
      if (eq <= 0) continue;
      const name = p.slice(0, eq).trim().toLowerCase();
      const value = unquote(p.slice(eq + 1).trim(), reading.unquote);
      if (name === 'q') range.q = quality(value, range.q, reading.quality);
      else range.params.set(name, value);
    }
    out.push(range);
  }
  return out.sort(reading.bySpecificity ? bySpecificity : byQuality);
}

function splitAccept(s: string, sep: string, quotedStrings: boolean): string[] {
  if (!quotedStrings || !s.includes('"')) return s.split(sep);
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (const ch of s) {
    if (ch === '"') quoted = !quoted;
    if (ch === sep && !quoted) {
      out.push(cur);
      cur = '';
    } else {
      cur += ch;
    }
  }
  out.push(cur);
  return out;
}

function unquote(v: string, how: AcceptReading['unquote']): string {
  if (how === 'ends') return v.replace(/^"|"$/g, '');
  if (how === 'pair' && v.length >= 2 && v.startsWith('"') && v.endsWith('"')) return v.slice(1, -1);
  return v;
}

function quality(v: string, before: number, how: AcceptReading['quality']): number {
  const n = Number(v);
  if (how === 'number') return n;
  if (how === 'clamped') return Number.isFinite(n) ? Math.min(Math.max(n, 0), 1) : 1;
  return Number.isNaN(n) ? before : n;
}

function byQuality(a: MediaRange, b: MediaRange): number {
  return b.q - a.q || a.index - b.index;
}

function bySpecificity(a: MediaRange, b: MediaRange): number {
  return b.q - a.q || specificity(b) - specificity(a) || a.index - b.index;
}

/** goautoneg's: a range without a subtype counts as type/*. */
function specificity(r: MediaRange): number {
  return r.type === '*' ? 0 : (r.subtype ?? '*') === '*' ? 1 : 2;
}

/** What an Accept header that is absent or empty stands for. */
const ANY: MediaRange[] = [{ mediaType: '*/*', type: '*', subtype: '*', params: new Map(), q: 1, index: 0 }];

/**
 * Picks the output format. `allowed` lists the shapes this endpoint can produce (lists add
 * PartialObjectMetadataList; single objects PartialObjectMetadata; both Table). Custom
 * resources (`protobufObjects` false) have no protobuf form of their own: kube's request scope
 * for them leaves protobuf out of its standard serializers, so an Accept that offers nothing
 * else is a 406, while the meta.k8s.io shapes (PartialObjectMetadata) still come as protobuf.
 */
const negotiated = new Map<string, OutputFormat | null>();

export function negotiateOutput(header: string | undefined, allowed: Shape[], protobufObjects = true): OutputFormat {
  // Clients send the same few Accept headers over and over: decide once per (header, shapes).
  const key = `${header ?? ''}\u0000${allowed.join(',')}\u0000${protobufObjects}`;
  let fmt = negotiated.get(key);
  if (fmt === undefined) {
    fmt = pickOutput(header, allowed, protobufObjects);
    if (negotiated.size < 1000) negotiated.set(key, fmt);
  }
  if (!fmt) throw notAcceptable(`only the following media types are accepted: ${SUPPORTED_MEDIA_TYPES.join(', ')}`);
  return fmt;
}

function pickOutput(header: string | undefined, allowed: Shape[], protobufObjects: boolean): OutputFormat | null {
  for (const r of header ? parseAccept(header, API_ACCEPT) : ANY) {
    if (r.q <= 0) continue;
    let encoding: Encoding | undefined;
    if (r.mediaType === '*/*' || r.mediaType === 'application/*') encoding = 'json';
    else encoding = MEDIA[r.mediaType];
    if (!encoding) continue;
    const as = r.params.get('as');
    if (!as) {
      if (encoding === 'protobuf' && !protobufObjects) continue;
      return { encoding, shape: 'object', metaVersion: 'v1', contentType: contentTypeFor(encoding) };
    }
    const v = r.params.get('v');
    if (r.params.get('g') !== 'meta.k8s.io' || !(v === 'v1' || v === 'v1beta1')) continue;
    if (!allowed.includes(as as Shape)) continue;
    // Table has no protobuf form upstream either.
    if (encoding === 'protobuf' && as === 'Table') continue;
    const ct = `${contentTypeFor(encoding)};as=${as};g=meta.k8s.io;v=${v}`;
    return { encoding, shape: as as Shape, metaVersion: v, contentType: ct };
  }
  return null;
}

export function contentTypeFor(e: Encoding): string {
  switch (e) {
    case 'json': return 'application/json';
    case 'yaml': return 'application/yaml';
    case 'cbor': return 'application/cbor';
    case 'protobuf': return PROTOBUF_MEDIA_TYPE;
  }
}

export const JSON_FORMAT: OutputFormat = { encoding: 'json', shape: 'object', metaVersion: 'v1', contentType: 'application/json' };

// CBOR: RFC 8949 self-described (tag 55799) on output, as kube-apiserver does.
const cbor = new Encoder({ useRecords: false, mapsAsObjects: true, variableMapSize: true });
const SELF_DESCRIBED = Buffer.from([0xd9, 0xd9, 0xf7]);

/** Encodes a value; undefined when it has no form in that encoding (protobuf for custom resources, Table). */
export function encode(value: unknown, encoding: Encoding, pretty = false): Buffer | undefined {
  switch (encoding) {
    case 'protobuf': {
      const head = value as { apiVersion?: unknown; kind?: unknown } | null | undefined;
      const def = typeof head?.apiVersion === 'string' && typeof head.kind === 'string' ? definitionForKind(head.apiVersion, head.kind) : undefined;
      return def ? encodeProtobuf(value, def) : undefined;
    }
    case 'json': {
      if (pretty) return Buffer.from(goJsonText(JSON.stringify(value, null, 2)) + '\n');
      const stored = typeof value === 'object' && value !== null ? storedJsonOf(value) : undefined;
      if (stored) {
        const out = Buffer.allocUnsafe(stored.length + 1);
        stored.copy(out);
        out[stored.length] = 0x0a;
        return out;
      }
      return Buffer.from(goJsonText(JSON.stringify(value)) + '\n');
    }
    case 'yaml':
      return Buffer.from(kubeYaml(value));
    case 'cbor':
      return Buffer.concat([SELF_DESCRIBED, cbor.encode(value)]);
  }
}


export function bodyEncoding(mediaType: string): Encoding | undefined {
  switch (mediaType) {
    case 'application/json':
    case 'application/json-patch+json':
    case 'application/merge-patch+json':
    case 'application/strategic-merge-patch+json':
      return 'json';
    case 'application/yaml':
    case 'application/apply-patch+yaml':
      return 'yaml';
    case 'application/cbor':
    case 'application/apply-patch+cbor':
      return 'cbor';
    case PROTOBUF_MEDIA_TYPE:
      return 'protobuf';
  }
  return undefined;
}

/** A decoded body and, for JSON and YAML, the text it was decoded from (for the duplicate-field scan). */
export interface DecodedBody {
  value: unknown;
  /** The body's UTF-8 text; undefined for binary encodings. */
  text: string | undefined;
  /** A YAML body that was JSON text (parsed as JSON: its duplicates are found by the JSON scan). */
  jsonText: boolean;
}

/** Decodes a body; `definition` names the expected kind for protobuf bodies. */
export function decodeAs(body: Buffer, enc: Encoding, definition?: string): unknown {
  return decodeBody(body, enc, definition).value;
}

/**
 * What a body is decoded as, which decides how a refusal is worded (kube's handlers frame their
 * decoder's error each their own way): an object of the given kind (create, update: `version`
 * stands in for a body without apiVersion), an apply configuration, a patch of the given media
 * type under the request's fieldValidation. Without one, a plain "error decoding ... body".
 */
export type BodyUse = { object: string; version: string } | { apply: true } | { patch: string; fieldValidation: string };

/** A decoder's refusal in its own words; `stage` says whether kube meets it reading the kind (Interpret) or decoding the rest. */
class Refusal extends Error {
  constructor(message: string, readonly stage: CborStage = 'kind') {
    super(message);
  }
}

/**
 * decodeAs, keeping the text: the body is decoded from UTF-8 once for parsing and scanning both.
 * Every body is held to MAX_BODY_DEPTH (CBOR to kube's 64 levels) before anything walks it; a
 * CBOR body to the rest of kube's decode mode too (cbor-check.ts).
 */
export function decodeBody(body: Buffer, enc: Encoding, definition?: string, use?: BodyUse): DecodedBody {
  try {
    switch (enc) {
      case 'protobuf': {
        const value = decodeProtobuf(body, definition);
        if (valueDepthExceeds(value)) throw new Refusal(`proto: exceeded max depth of ${MAX_BODY_DEPTH}`);
        return { value, text: undefined, jsonText: false };
      }
      case 'json': {
        const text = body.toString('utf8');
        // Too deep: encoding/json's words, for whichever comes first, the depth or a syntax error.
        if (jsonDepthExceededAt(body) >= 0) throw new Refusal(goJsonSyntaxError(text) ?? 'exceeded max depth');
        return { value: JSON.parse(text), text, jsonText: true };
      }
      case 'yaml': {
        const text = body.toString('utf8');
        // JSON is YAML, and most programmatic clients send JSON: parse it as such (much faster).
        if (/^\s*\{/.test(text)) {
          const deep = jsonDepthExceededAt(body);
          if (deep >= 0) throw new Refusal(yamlDepthError(lineOf(body, deep)));
          try {
            return { value: JSON.parse(text), text, jsonText: true };
          } catch {
            // Not JSON after all (flow-style YAML): the YAML parser decides.
          }
        }
        return { value: parseYaml(text), text, jsonText: false };
      }
      case 'cbor': {
        const problem = cborProblem(body);
        if (problem) throw new Refusal(problem.message, problem.stage);
        let b = body;
        if (b.length >= 3 && b[0] === 0xd9 && b[1] === 0xd9 && b[2] === 0xf7) b = b.subarray(3);
        return { value: cbor.decode(b), text: undefined, jsonText: false };
      }
    }
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw refused(body, enc, use, e instanceof Refusal ? e : new Refusal(enc === 'json' ? (goJsonSyntaxError(body.toString('utf8')) ?? (e as Error).message) : (e as Error).message));
  }
}

/** A decoder's refusal as kube's handler for `use` answers it: always a 400. */
function refused(body: Buffer, enc: Encoding, use: BodyUse | undefined, why: Refusal): ApiError {
  if (use && 'object' in use) {
    if (why.stage === 'object') {
      // The kind was read; the rest failed: the serializer's error with the body's kind and version.
      const { kind, version } = typeOf(body, enc);
      return badRequest(`${kind || use.object} in version ${JSON.stringify(version || use.version)} cannot be handled as a ${use.object}: ${why.message}`);
    }
    const detail = enc === 'cbor' ? `unable to determine group/version/kind: ${why.message}` : enc === 'yaml' ? `error converting YAML to JSON: ${why.message}` : why.message;
    return badRequest(`the object provided is unrecognized (must be of type ${use.object}): ${detail} (${summarizeBody(body)})`);
  }
  if (use && 'apply' in use) {
    // sigs.k8s.io/yaml's Unmarshal wraps the conversion's error again; the handler says YAML either way.
    return badRequest(`error decoding YAML: ${enc === 'yaml' ? `error converting YAML to JSON: error converting YAML to JSON: ${why.message}` : why.message}`);
  }
  if (use && 'patch' in use) {
    const strict = use.fieldValidation === 'Strict' || use.fieldValidation === 'Warn';
    switch (use.patch) {
      case 'application/merge-patch+json':
        return badRequest(strict ? `error decoding patch: ${why.message}` : 'Invalid JSON Patch');
      case 'application/json-patch+json':
        return badRequest(strict ? `error decoding patch: ${why.message}` : why.message);
      default:
        return badRequest(why.message);
    }
  }
  return badRequest(`error decoding ${enc.toUpperCase()} body: ${why.message}`);
}

/** A body's apiVersion version and kind, as far as they can be read ("" when not). */
function typeOf(body: Buffer, enc: Encoding): { kind: string; version: string } {
  let v: { apiVersion?: unknown; kind?: unknown } | null | undefined;
  try {
    v = enc === 'cbor' ? cbor.decode(body[0] === 0xd9 ? body.subarray(3) : body) : undefined;
  } catch {
    v = undefined;
  }
  const apiVersion = typeof v?.apiVersion === 'string' ? v.apiVersion : '';
  return { kind: typeof v?.kind === 'string' ? v.kind : '', version: apiVersion.slice(apiVersion.indexOf('/') + 1) };
}

/** go-yaml's error for its depth limit (hearth's limit, its words); `line` is 1-based. */
function yamlDepthError(line: number): string {
  // go-yaml names the line of a scanner error only past the first.
  return `yaml: ${line > 1 ? `line ${line}: ` : ''}exceeded max depth of ${MAX_BODY_DEPTH}`;
}

/** The 1-based line of a byte offset. */
function lineOf(text: Uint8Array | string, offset: number): number {
  let line = 1;
  if (typeof text === 'string') {
    for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  } else {
    for (let i = 0; i < offset; i++) if (text[i] === 0x0a) line++;
  }
  return line;
}

/**
 * The most scalars and flow collections a YAML body may hold. The `yaml` library takes some
 * microseconds a node, on the one thread that serves every request: a 3 MiB body of `[1,1,...]`
 * (1.5 million nodes) took over a minute on a loaded machine. go-yaml has no such limit; a YAML
 * document of 100,000 nodes is 2-4 MB written the usual way (JSON text sent as YAML is read as
 * JSON, with no limit but the body's).
 */
export const MAX_YAML_NODES = 100_000;

/** The lexer's markers, which stand for no source text. */
const LEXER_MARKERS = new Set(['\u0002', '\u0018', '\u001f', '\ufeff']);

/**
 * The first YAML document as go-yaml reads it (KUBE_YAML), parsed by the `yaml` library's lexer
 * and parser one token at a time so that nesting past MAX_BODY_DEPTH stops it before it builds
 * the levels (the parser's stack holds the document and each open collection, and a block
 * scalar: a value nested d deep takes at most d + 2 places); the composed document is then
 * measured exactly, and so is the value its aliases make. Aliases may expand to at most 100
 * times their anchors (maxAliasCount), as the library counts.
 */
function parseYaml(text: string): unknown {
  const lineCounter = new YAML.LineCounter();
  lineCounter.addNewLine(0); // (Parser.parse does this; fed token by token, the first line is ours to add)
  const parser = new YAML.Parser(lineCounter.addNewLine);
  const composer = new YAML.Composer({ ...KUBE_YAML, uniqueKeys: false });
  function* tokens() {
    let offset = 0;
    let nodes = 0;
    for (const lexeme of new YAML.Lexer().lex(text)) {
      yield* parser.next(lexeme);
      if (parser.stack.length > MAX_BODY_DEPTH + 2) throw new Refusal(yamlDepthError(lineOf(text, offset)));
      // A scalar (plain ones and block ones' text come after the marker \x1f, quoted ones whole) or a flow collection.
      const c = lexeme[0];
      if ((c === '\u001f' || c === '[' || c === '{' || c === '"' || c === "'") && ++nodes > MAX_YAML_NODES) {
        throw new Refusal(`yaml: line ${lineOf(text, offset)}: the document has more than ${MAX_YAML_NODES} nodes`);
      }
      if (!LEXER_MARKERS.has(lexeme)) offset += lexeme.length;
    }
    yield* parser.end();
  }
  let doc: YAML.Document.Parsed | undefined;
  for (const d of composer.compose(tokens())) {
    doc = d;
    break; // go-yaml's Unmarshal reads the first document only
  }
  if (!doc) return null;
  const err = doc.errors[0];
  if (err) {
    const { line } = lineCounter.linePos(err.pos[0]);
    throw new Refusal(`yaml: line ${line}: ${err.message}`);
  }
  const tooDeep = deepYamlNode(doc.contents);
  if (tooDeep) throw new Refusal(yamlDepthError(lineCounter.linePos(tooDeep.range?.[0] ?? 0).line));
  const value = doc.toJS({ maxAliasCount: 100 });
  if (valueDepthExceeds(value)) throw new Refusal(yamlDepthError(1));
  return value;
}

/** The first collection nested deeper than MAX_BODY_DEPTH in a composed document (keys count too). */
function deepYamlNode(root: unknown): YAML.Node | undefined {
  const nodes: unknown[] = [root];
  const levels: number[] = [0];
  while (nodes.length > 0) {
    const node = nodes.pop();
    const level = levels.pop()!;
    if (!YAML.isMap(node) && !YAML.isSeq(node)) continue;
    if (level + 1 > MAX_BODY_DEPTH) return node;
    for (const item of node.items as unknown[]) {
      for (const child of YAML.isPair(item) ? [item.key, item.value] : [item]) {
        nodes.push(child);
        levels.push(level + 1);
      }
    }
  }
  return undefined;
}

export function mediaTypeOf(contentType: string | undefined): string {
  if (!contentType) return '';
  // Clients send the same few Content-Types over and over: parse each once.
  let media = mediaTypes.get(contentType);
  if (media === undefined) {
    media = contentType.split(';')[0].trim().toLowerCase();
    if (mediaTypes.size < 1000) mediaTypes.set(contentType, media);
  }
  return media;
}

const mediaTypes = new Map<string, string>();

/** Reads the whole request body, refusing more than MAX_BODY_BYTES with 413. */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  if (Number(req.headers['content-length']) > MAX_BODY_BYTES) return Promise.reject(bodyTooLarge());
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  // Listeners are inline anonymous functions: tsx (keepNames) names every function bound to a
  // local name with a defineProperty call, per request.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      // Past the limit the rest is read and dropped (the connection stays usable).
      if (refused) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        refused = true;
        chunks.length = 0;
        reject(bodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.once('end', () => {
      if (!refused) resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    });
    req.once('error', reject);
  });
}

/** kube's limitedReadBody: NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit)). */
function bodyTooLarge() {
  return requestEntityTooLarge(`Request entity too large: limit is ${MAX_BODY_BYTES}`);
}
