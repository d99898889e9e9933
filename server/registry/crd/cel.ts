// x-kubernetes-validations: CEL rules compiled when a CRD is written and evaluated on custom objects.
//
// Parsing and evaluation use @bufbuild/cel. That library exports no type checker, so the static
// checks kube-apiserver gets from cel-go's checker are done here over the parsed AST: `self`
// (and `oldSelf`) are typed from the schema node the rule sits on (objects expose their declared
// properties with kube's name escaping, maps their values, int-or-string is dyn, date/date-time
// are timestamps, byte is bytes, duration is a duration). The checker reports undeclared
// references, undefined fields, calls with no matching overload and rules that cannot be bool (or
// messageExpressions that cannot be string), in cel-go's "ERROR: <input>:L:C: ..." shape. It is
// permissive where a type is unknown (dyn).
//
// Kubernetes library functions added on top of the standard library and string extensions:
// lists (isSorted, sum, min, max, indexOf, lastIndexOf), regex (find, findAll), url(), isURL()
// and URL getters, ip(), isIP(), ip.isCanonical(), cidr(), isCIDR() and their methods,
// quantity(), isQuantity() and Quantity methods, sets.contains/equivalent/intersects, the format
// library (format.dns1123Label() ... format.datetime(), format.named(), <format>.validate() with
// apimachinery's messages), semver()/isSemver() (with the normalize argument) and Semver methods,
// cel-go's ext.Lists at version 3 (slice, flatten, sort, sortBy, reverse, distinct, lists.range),
// the two-variable comprehensions (all/exists/existsOne(i, v, p), transformList, transformMap,
// transformMapEntry; see expandMacros), and the optional library's functions (optional.of/none/
// ofNonZeroValue, hasValue, value, or, orValue, optMap, optFlatMap) — oldSelf is optional when
// optionalOldSelf is set — and the optional syntax, which @bufbuild/cel's parser rejects: `a.?b`,
// `a[?k]`, optional list elements `[a, ?b]` and map entries `{?k: v}` are found by a tokenizer
// before parsing, blanked (offsets kept, so errors point at the rule text) and turned back into
// cel-go's forms after parsing (see scanOptionalSyntax); the checker types them as cel-go does
// (`a.?b` and `a[?k]` are optional_type(T), selecting or indexing an optional value chains, an
// optional element or entry must be optional), and they run as internal functions (see
// lowerForPlan).
//
// Cost: a static estimate in the spirit of cel-go's estimator, computed over the same AST with
// sizes taken from the schema the way kube derives them (maxLength×4, maxItems, maxProperties;
// unbounded values sized from the 3 MiB request limit and the minimum serialized size of their
// elements). Per expression: base costs of 1 per identifier/select/call, 10 per list literal and
// 30 per map literal; string traversals cost 0.1 per character (equality and comparisons on the
// shorter operand; contains: the product of both traversal costs; matches: input traversal ×
// 0.25 per pattern character, as cel-go's RegexStringLengthCostFactor); list functions and
// `in` cost the list size; comprehensions cost range size × (condition + step). The estimate is
// multiplied by the number of times the rule can run (product of maxItems/maxProperties above
// it, or the request-size bound when unbounded) and compared with kube's limits: 10,000,000 per
// expression and 100,000,000 for the whole schema. Runtime cost budgets are not enforced.
import { parse, plan, celEnv, isCelError, isCelUint, CelScalar, celFunc, celMethod, listType, mapType, isCelMap, isCelList, celMap, celList } from '@bufbuild/cel';
import type { CelEnv } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { isIPv4 } from 'node:net';
import { ipv6Groups } from '../../util/net.ts';
import { deepEqual, isPlainObject } from '../../util/json.ts';
import { isQualifiedName, isValidLabelValue, validateName } from '../../validation/names.ts';
import { goQuote, parseUint64 } from '../../go/strconv.ts';
import { splitN } from '../../go/strings.ts';
import { parseRequestURIError } from '../../go/url.ts';
import { parseQuantity, addRationals, subtractRationals, compareRationals, type Rational } from '../../util/quantity.ts';
import { re2Error } from '../../go/regexp.ts';
import { FORMAT_CHECKS } from '../../validation/formats.ts';
import { childPath, duplicateError, forbiddenError, goValue, indexPath, invalidError, requiredError, type FieldError } from '../../validation/field.ts';

type Obj = Record<string, any>;

export const StaticEstimatedCostLimit = 10_000_000;
export const StaticEstimatedCRDCostLimit = 100_000_000;
export const MaxRequestSizeBytes = 3 * 1024 * 1024;

export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Types ("DeclTypes") derived from schema nodes.

type Kind =
  | 'dyn'
  | 'int'
  | 'uint'
  | 'double'
  | 'string'
  | 'bool'
  | 'bytes'
  | 'null'
  | 'timestamp'
  | 'duration'
  | 'type'
  | 'list'
  | 'map'
  | 'object'
  | 'url'
  | 'ip'
  | 'cidr'
  | 'quantity'
  | 'format'
  | 'semver'
  | 'optional';

interface CT {
  k: Kind;
  /** list element / map value / optional value */
  e?: CT;
  /** map key */
  key?: CT;
  /** object fields by escaped name */
  fields?: Map<string, CT>;
  /** max elements (chars for strings, items for lists/maps) */
  max?: number;
  /** minimum serialized size in bytes */
  min: number;
}

const T = {
  dyn: { k: 'dyn', min: 1 } as CT,
  int: { k: 'int', min: 1 } as CT,
  uint: { k: 'uint', min: 1 } as CT,
  double: { k: 'double', min: 1 } as CT,
  string: { k: 'string', min: 2 } as CT,
  bool: { k: 'bool', min: 4 } as CT,
  bytes: { k: 'bytes', min: 2 } as CT,
  null: { k: 'null', min: 4 } as CT,
  timestamp: { k: 'timestamp', min: 21 } as CT,
  duration: { k: 'duration', min: 4 } as CT,
  type: { k: 'type', min: 1 } as CT,
  url: { k: 'url', min: 2 } as CT,
  ip: { k: 'ip', min: 2 } as CT,
  cidr: { k: 'cidr', min: 2 } as CT,
  quantity: { k: 'quantity', min: 2 } as CT,
  format: { k: 'format', min: 2 } as CT,
  semver: { k: 'semver', min: 2 } as CT,
};
const listOf = (e: CT, max?: number): CT => ({ k: 'list', e, max, min: 2 });
const mapOf = (key: CT, e: CT, max?: number): CT => ({ k: 'map', key, e, max, min: 2 });
const optionalOf = (e: CT): CT => ({ k: 'optional', e, min: e.min });

function typeName(t: CT): string {
  switch (t.k) {
    case 'list':
      return `list(${typeName(t.e ?? T.dyn)})`;
    case 'map':
      return `map(${typeName(t.key ?? T.dyn)}, ${typeName(t.e ?? T.dyn)})`;
    case 'null':
      return 'null_type';
    case 'timestamp':
      return 'google.protobuf.Timestamp';
    case 'duration':
      return 'google.protobuf.Duration';
    case 'url':
      return 'kubernetes.URL';
    case 'ip':
      return 'net.IP';
    case 'cidr':
      return 'net.CIDR';
    case 'quantity':
      return 'kubernetes.Quantity';
    case 'format':
      return 'kubernetes.NamedFormat';
    case 'semver':
      return 'kubernetes.Semver';
    case 'optional':
      return `optional_type(${typeName(t.e ?? T.dyn)})`;
    default:
      return t.k;
  }
}

const CEL_RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);

const escapedNames = new Map<string, string | undefined>();

/** kube's escaping of property names for CEL; undefined when the name cannot be expressed. */
export function escapeCelName(name: string): string | undefined {
  if (escapedNames.has(name)) return escapedNames.get(name);
  const esc = escapeName(name);
  // Property names come from schemas and objects: bound the cache, objects may carry any key.
  if (escapedNames.size < 10_000) escapedNames.set(name, esc);
  return esc;
}

function escapeName(name: string): string | undefined {
  if (name.length === 0 || /^[0-9]/.test(name)) return undefined;
  if (CEL_RESERVED.has(name)) return `__${name}__`;
  if (!/^[a-zA-Z0-9_./-]+$/.test(name)) return undefined;
  if (/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name) && !name.includes('__')) return name;
  return name.replace(/__|[./-]/g, (m) => (m === '__' ? '__underscores__' : m === '.' ? '__dot__' : m === '-' ? '__dash__' : '__slash__'));
}

function withTypeAndObjectMeta(s: Obj): Obj {
  const props = isPlainObject(s.properties) ? s.properties : {};
  const meta = isPlainObject(props.metadata) ? props.metadata : undefined;
  if (props.kind?.type === 'string' && props.apiVersion?.type === 'string' && meta?.type === 'object' && meta.properties?.name?.type === 'string' && meta.properties?.generateName?.type === 'string') return s;
  return {
    ...s,
    properties: {
      ...props,
      kind: { type: 'string' },
      apiVersion: { type: 'string' },
      metadata: { type: 'object', properties: { name: { type: 'string' }, generateName: { type: 'string' } } },
    },
  };
}

/** The CEL type of a schema node, or undefined when rules cannot see it (kube's SchemaDeclType). */
export function schemaDeclType(s: unknown, isResourceRoot: boolean): CT | undefined {
  if (!isPlainObject(s)) return undefined;
  if (s['x-kubernetes-int-or-string'] === true) {
    return { k: 'dyn', min: 1, max: typeof s.maxLength === 'number' ? Math.max(0, s.maxLength) * 4 : MaxRequestSizeBytes - 2 };
  }
  if (isResourceRoot) s = withTypeAndObjectMeta(s);
  const sch = s as Obj;
  switch (sch.type) {
    case 'array': {
      if (!isPlainObject(sch.items)) return undefined;
      const e = schemaDeclType(sch.items, sch.items['x-kubernetes-embedded-resource'] === true);
      if (!e) return undefined;
      const max = typeof sch.maxItems === 'number' ? Math.max(0, sch.maxItems) : Math.floor((MaxRequestSizeBytes - 2) / (e.min + 1));
      return listOf(e, max);
    }
    case 'object': {
      if (isPlainObject(sch.additionalProperties)) {
        const v = schemaDeclType(sch.additionalProperties, sch.additionalProperties['x-kubernetes-embedded-resource'] === true);
        if (!v) return undefined;
        const max = typeof sch.maxProperties === 'number' ? Math.max(0, sch.maxProperties) : Math.floor((MaxRequestSizeBytes - 2) / (v.min + 6));
        return mapOf({ ...T.string }, v, max);
      }
      const fields = new Map<string, CT>();
      const required = new Set(Array.isArray(sch.required) ? sch.required : []);
      let min = 2;
      for (const [name, prop] of Object.entries(isPlainObject(sch.properties) ? sch.properties : {})) {
        const ft = schemaDeclType(prop, isPlainObject(prop) && prop['x-kubernetes-embedded-resource'] === true);
        if (!ft) continue;
        const esc = escapeCelName(name);
        if (esc !== undefined) fields.set(esc, ft);
        if (required.has(name) && isPlainObject(prop) && prop.default === undefined) min += name.length + ft.min + 4;
      }
      return { k: 'object', fields, min };
    }
    case 'string': {
      switch (sch.format) {
        case 'byte':
          return { k: 'bytes', min: 2, max: typeof sch.maxLength === 'number' ? Math.max(0, sch.maxLength) : MaxRequestSizeBytes - 2 };
        case 'duration':
          return { k: 'duration', min: 4, max: 32 };
        case 'date':
          return { k: 'timestamp', min: 12, max: 12 };
        case 'date-time':
          return { k: 'timestamp', min: 21, max: 32 };
      }
      let max = MaxRequestSizeBytes - 2;
      if (typeof sch.maxLength === 'number') max = Math.max(0, sch.maxLength) * 4;
      else if (Array.isArray(sch.enum) && sch.enum.length) max = Math.max(0, ...sch.enum.map((v: unknown) => (typeof v === 'string' ? v.length : 0)));
      return { k: 'string', min: 2, max };
    }
    case 'boolean':
      return T.bool;
    case 'number':
      return T.double;
    case 'integer':
      return T.int;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Runtime library (Kubernetes CEL extensions) on top of @bufbuild/cel.

const DYN = CelScalar.DYN;
const STRING = CelScalar.STRING;
const BOOL = CelScalar.BOOL;
const INT = CelScalar.INT;
const DOUBLE = CelScalar.DOUBLE;
const LIST = listType(DYN);
const MAP = mapType(DYN, DYN);
/** Marker key of the opaque values (URL, IP, CIDR, Quantity, optional) carried as CEL maps. */
const TAG = '\u0000k8s';

function tagged(kind: string, fields: Record<string, unknown>): Map<string, any> {
  const m = new Map<string, any>([[TAG, kind]]);
  for (const [k, v] of Object.entries(fields)) m.set(k, v);
  return m;
}
function tagOf(v: unknown): string | undefined {
  return isCelMap(v) ? (v.get(TAG) as string | undefined) : undefined;
}
function expectTag(v: unknown, kind: string, fn: string): any {
  if (tagOf(v) !== kind) throw new Error(`no such overload: ${fn}`);
  return v;
}

function compareCel(a: any, b: any): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) {
    const x = Number(a);
    const y = Number(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (typeof a === 'object' && a?.value !== undefined && typeof b === 'object' && b?.value !== undefined) return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
  throw new Error('no such overload: comparison');
}

function celEquals(a: any, b: any): boolean {
  if (a === b) return true;
  if (typeof a === 'bigint' || typeof b === 'bigint' || typeof a === 'number' || typeof b === 'number') {
    return (typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number') && Number(a) === Number(b);
  }
  if (isCelList(a) && isCelList(b)) {
    if (a.size !== b.size) return false;
    for (let i = 0; i < a.size; i++) if (!celEquals(a.get(i), b.get(i))) return false;
    return true;
  }
  if (isCelMap(a) && isCelMap(b)) {
    if (a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !celEquals(v, b.get(k))) return false;
    return true;
  }
  return false;
}

// --- quantity: exact rational values (k8s resource.Quantity) ---

const quantityValue = (r: Rational) => tagged('quantity', { num: r.num, den: r.den });
const ratOf = (v: any): Rational => {
  if (typeof v === 'bigint') return { num: v, den: 1n };
  const q = expectTag(v, 'quantity', 'quantity');
  return { num: q.get('num'), den: q.get('den') };
};
const cmpRat = compareRationals;

// --- ip / cidr ---

function ipBytes(s: string): { fam: 4 | 6; bytes: number[] } | undefined {
  if (s.includes('%')) return undefined;
  if (isIPv4(s)) return { fam: 4, bytes: s.split('.').map(Number) };
  const g = ipv6Groups(s);
  if (!g) return undefined;
  const bytes: number[] = [];
  for (const x of g) bytes.push(x >> 8, x & 255);
  // IPv4-mapped IPv6 addresses are not accepted by the Kubernetes ip library.
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 255 && bytes[11] === 255) return undefined;
  return { fam: 6, bytes };
}
function ipString(fam: 4 | 6, bytes: number[]): string {
  if (fam === 4) return bytes.join('.');
  const g: number[] = [];
  for (let i = 0; i < 16; i += 2) g.push((bytes[i] << 8) | bytes[i + 1]);
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen && j - i > 1) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = g.map((x) => x.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}
const ipValue = (fam: 4 | 6, bytes: number[]) => tagged('ip', { family: BigInt(fam), addr: ipString(fam, bytes) });
function parseIPValue(s: string): Map<string, any> {
  const b = ipBytes(s);
  if (!b) throw new Error(`IP Address ${goQuote(s)} parse error during conversion from string`);
  return ipValue(b.fam, b.bytes);
}
function cidrParts(s: string): { fam: 4 | 6; bytes: number[]; bits: number } | undefined {
  const slash = s.indexOf('/');
  if (slash < 0) return undefined;
  const b = ipBytes(s.slice(0, slash));
  const bitsStr = s.slice(slash + 1);
  if (!b || !/^\d{1,3}$/.test(bitsStr)) return undefined;
  const bits = Number(bitsStr);
  if (bits > (b.fam === 4 ? 32 : 128)) return undefined;
  return { ...b, bits };
}
function maskBytes(bytes: number[], bits: number): number[] {
  return bytes.map((x, i) => {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    return x & ((0xff << (8 - keep)) & 0xff);
  });
}
const cidrValue = (fam: 4 | 6, bytes: number[], bits: number) => tagged('cidr', { family: BigInt(fam), addr: ipString(fam, bytes), bits: BigInt(bits) });
function parseCIDRValue(s: string): Map<string, any> {
  const c = cidrParts(s);
  if (!c) throw new Error(`network address ${goQuote(s)} parse error during conversion from string`);
  return cidrValue(c.fam, c.bytes, c.bits);
}
function cidrContains(c: any, ipStr: string, bits?: number): boolean {
  const cp = cidrParts(`${c.get('addr')}/${c.get('bits')}`)!;
  const b = ipBytes(ipStr);
  if (!b || b.fam !== cp.fam) return false;
  if (bits !== undefined && bits < cp.bits) return false;
  const want = maskBytes(cp.bytes, cp.bits);
  const got = maskBytes(b.bytes, cp.bits);
  return want.every((x, i) => x === got[i]);
}

// --- url ---

function parseURLValue(s: string): Map<string, any> {
  if (s.startsWith('/')) {
    const q = s.indexOf('?');
    return tagged('url', { scheme: '', host: '', hostname: '', port: '', path: q < 0 ? s : s.slice(0, q), query: q < 0 ? '' : s.slice(q + 1) });
  }
  let u: URL;
  try {
    if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s) || /\s/.test(s)) throw new Error();
    u = new URL(s);
  } catch {
    throw new Error(`URL parse error during conversion from string: parse ${goQuote(s)}: invalid URI for request`);
  }
  const hostname = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  return tagged('url', { scheme: u.protocol.slice(0, -1), host: u.host, hostname, port: u.port, path: u.pathname, query: u.search.replace(/^\?/, '') });
}
function isURLString(s: string): boolean {
  try {
    parseURLValue(s);
    return true;
  } catch {
    return false;
  }
}

// --- optional values (cel.OptionalTypes: optional.of/none/ofNonZeroValue, or, orValue, ...) ---

const optNone = (): Map<string, any> => tagged('optional', { has: false });
const optOf = (v: unknown): Map<string, any> => tagged('optional', { has: true, v });

/** cel-go's IsZeroValue, for optional.ofNonZeroValue. */
function isZeroValue(v: any): boolean {
  if (v === null || v === false || v === 0n || v === 0 || v === '') return true;
  if (isCelUint(v)) return v.value === 0n;
  if (v instanceof Uint8Array) return v.length === 0;
  if (isCelList(v)) return v.size === 0;
  if (isCelMap(v)) {
    const t = tagOf(v);
    if (t === 'optional') return v.get('has') !== true;
    return t === undefined && v.size === 0;
  }
  const m = v?.message;
  if (m && (m.$typeName === 'google.protobuf.Timestamp' || m.$typeName === 'google.protobuf.Duration')) return BigInt(m.seconds ?? 0) === 0n && Number(m.nanos ?? 0) === 0;
  return false;
}

// --- CEL equality and ordering, as CEL itself has them ---

let eqPlan: ((ctx: any) => any) | undefined;
let ltPlan: ((ctx: any) => any) | undefined;
function celEq(a: unknown, b: unknown): boolean {
  eqPlan ??= plan(celEnv({ variables: { a: DYN, b: DYN } }), parse('a == b')) as (ctx: any) => any;
  return eqPlan({ a, b }) === true;
}
function celLess(a: unknown, b: unknown): boolean {
  ltPlan ??= plan(celEnv({ variables: { a: DYN, b: DYN } }), parse('a < b')) as (ctx: any) => any;
  const r = ltPlan({ a, b });
  if (typeof r !== 'boolean') throw new Error('list elements must be comparable');
  return r;
}
/** The CEL type name of a comparable value (traits.Comparer in cel-go), else undefined. */
function comparableType(v: any): string | undefined {
  switch (typeof v) {
    case 'bigint':
      return 'int';
    case 'number':
      return 'double';
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
  }
  if (isCelUint(v)) return 'uint';
  if (v instanceof Uint8Array) return 'bytes';
  const t = v?.message?.$typeName;
  return t === 'google.protobuf.Timestamp' || t === 'google.protobuf.Duration' ? t : undefined;
}
/** cel-go's sortListByAssociatedKeys: the items of list in the order of their keys. */
function sortByKeys(items: any[], keys: any[]): any[] {
  if (items.length !== keys.length) {
    throw new Error(`@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got ${items.length} and ${keys.length} elements respectively`);
  }
  if (items.length === 0) return items;
  const t = comparableType(keys[0]);
  if (t === undefined) throw new Error('list elements must be comparable');
  if (keys.some((k) => comparableType(k) !== t)) throw new Error('list elements must have the same type');
  const order = keys.map((_, i) => i);
  order.sort((i, j) => (celLess(keys[i], keys[j]) ? -1 : celLess(keys[j], keys[i]) ? 1 : 0));
  return order.map((i) => items[i]);
}
function flattenList(l: any, depth: bigint): any[] {
  if (depth < 0n) throw new Error('level must be non-negative');
  const out: any[] = [];
  for (const v of l) {
    if (isCelList(v) && depth > 0n) out.push(...flattenList(v, depth - 1n));
    else out.push(v);
  }
  return out;
}
/** Go's %v of a CEL map key, as cel-go prints it in "insert failed" errors. */
const goKey = (k: any): string => (isCelUint(k) ? String(k.value) : String(k));

/**
 * cel.@mapInsert of the two-variable comprehensions. The accumulator maps it builds are its own
 * (no expression can reach them before the comprehension ends), so it grows them in place.
 */
const ownMaps = new WeakMap<object, Map<unknown, unknown>>();
function mapInsert(m: any, entries: [unknown, unknown][]): any {
  let inner = ownMaps.get(m);
  let out = m;
  if (!inner) {
    inner = new Map();
    for (const k of m.keys()) inner.set(k, m.get(k));
    out = celMap(inner as ReadonlyMap<any, any>);
    ownMaps.set(out, inner);
  }
  for (const [k, v] of entries) {
    if (out.has(k)) throw new Error(`insert failed: key ${goKey(k)} already exists`);
    inner.set(k, v);
  }
  return out;
}

// --- format (the Kubernetes format library) ---

/** The named formats of kube's format library and their validations (apimachinery's messages). */
const FORMATS: Record<string, (s: string) => string[]> = {
  dns1123Label: (s) => validateName(s, 'dns1123Label'),
  dns1123Subdomain: (s) => validateName(s, 'dns1123Subdomain'),
  dns1035Label: (s) => validateName(s, 'dns1035Label'),
  qualifiedName: isQualifiedName,
  dns1123LabelPrefix: (s) => validateName(s, 'dns1123Label', true),
  dns1123SubdomainPrefix: (s) => validateName(s, 'dns1123Subdomain', true),
  dns1035LabelPrefix: (s) => validateName(s, 'dns1035Label', true),
  labelValue: isValidLabelValue,
  uri: (s) => {
    const e = parseRequestURIError(s);
    return e === undefined ? [] : [e];
  },
  uuid: (s) => (FORMAT_CHECKS.uuid(s) ? [] : ['does not match the UUID format']),
  byte: (s) => (FORMAT_CHECKS.byte(s) ? [] : ['invalid base64']),
  date: (s) => (FORMAT_CHECKS.date(s) ? [] : ['invalid date']),
  datetime: (s) => (FORMAT_CHECKS.datetime(s) ? [] : ['invalid datetime']),
};
const formatValue = (name: string) => tagged('format', { name });

// --- semver (blang/semver v4 as kube's semver library uses it) ---

/** strconv.ParseUint(s, 10, 64), throwing Go's error. */
function mustParseUint64(s: string): bigint {
  const n = parseUint64(s);
  if (typeof n === 'string') throw new Error(`strconv.ParseUint: parsing ${goQuote(s)}: ${n}`);
  return n;
}
const NUMBERS = /^[0-9]*$/;
const ALPHANUM = /^[0-9a-zA-Z-]*$/;
const leadingZero = (s: string) => s.length > 1 && s[0] === '0';
/** semver.Parse: the version as a CEL value (build metadata dropped: it takes no part in comparisons). */
function parseSemver(s: string): Map<string, any> {
  if (s.length === 0) throw new Error('Version string empty');
  const parts = splitN(s, '.', 3);
  if (parts.length !== 3) throw new Error('No Major.Minor.Patch elements found');
  const num = (p: string, what: string): bigint => {
    if (!NUMBERS.test(p)) throw new Error(`Invalid character(s) found in ${what} number ${goQuote(p)}`);
    if (leadingZero(p)) throw new Error(`${what[0].toUpperCase()}${what.slice(1)} number must not contain leading zeroes ${goQuote(p)}`);
    return mustParseUint64(p);
  };
  const major = num(parts[0], 'major');
  const minor = num(parts[1], 'minor');
  let patchStr = parts[2];
  let build: string[] = [];
  let pre: string[] = [];
  const plus = patchStr.indexOf('+');
  if (plus >= 0) [build, patchStr] = [patchStr.slice(plus + 1).split('.'), patchStr.slice(0, plus)];
  const dash = patchStr.indexOf('-');
  if (dash >= 0) [pre, patchStr] = [patchStr.slice(dash + 1).split('.'), patchStr.slice(0, dash)];
  const patch = num(patchStr, 'patch');
  for (const p of pre) {
    if (p.length === 0) throw new Error('Prerelease is empty');
    if (NUMBERS.test(p)) {
      if (leadingZero(p)) throw new Error(`Numeric PreRelease version must not contain leading zeroes ${goQuote(p)}`);
      mustParseUint64(p);
    } else if (!ALPHANUM.test(p)) throw new Error(`Invalid character(s) found in prerelease ${goQuote(p)}`);
  }
  for (const b of build) {
    if (b.length === 0) throw new Error('Build meta data is empty');
    if (!ALPHANUM.test(b)) throw new Error(`Invalid character(s) found in build meta data ${goQuote(b)}`);
  }
  return tagged('semver', { major, minor, patch, pre: pre.join('.') });
}
/** kube's normalizeAndParse: no "v" prefix, missing minor/patch filled in, leading zeroes dropped. */
function parseSemverNormalized(s: string): Map<string, any> {
  if (s.startsWith('v')) s = s.slice(1);
  const parts = splitN(s, '.', 3).map((p) => {
    if (p.length <= 1) return p;
    const t = p.replace(/^0+/, '');
    return t.length === 0 || !/^[0-9]/.test(t) ? '0' + t : t;
  });
  if (parts.length < 3) {
    if (/[+-]/.test(parts[parts.length - 1])) throw new Error('short version cannot contain PreRelease/Build meta data');
    while (parts.length < 3) parts.push('0');
  }
  return parseSemver(parts.join('.'));
}
function semverOk(s: string, normalize: boolean): boolean {
  try {
    (normalize ? parseSemverNormalized : parseSemver)(s);
    return true;
  } catch {
    return false;
  }
}
/** semver.Version.Compare. */
function cmpSemver(a: Map<string, any>, b: Map<string, any>): number {
  for (const k of ['major', 'minor', 'patch']) {
    const x = a.get(k) as bigint;
    const y = b.get(k) as bigint;
    if (x !== y) return x > y ? 1 : -1;
  }
  const pa = String(a.get('pre'));
  const pb = String(b.get('pre'));
  if (pa === '' || pb === '') return pa === pb ? 0 : pa === '' ? 1 : -1;
  const xs = pa.split('.');
  const ys = pb.split('.');
  for (let i = 0; i < xs.length && i < ys.length; i++) {
    const xn = /^[0-9]+$/.test(xs[i]);
    const yn = /^[0-9]+$/.test(ys[i]);
    let c: number;
    if (xn && yn) c = BigInt(xs[i]) === BigInt(ys[i]) ? 0 : BigInt(xs[i]) > BigInt(ys[i]) ? 1 : -1;
    else if (xn !== yn) c = xn ? -1 : 1;
    else c = xs[i] === ys[i] ? 0 : xs[i] > ys[i] ? 1 : -1;
    if (c !== 0) return c;
  }
  return xs.length === ys.length ? 0 : xs.length < ys.length ? -1 : 1;
}
/** isGreaterThan/isLessThan/compareTo are shared by Quantity and Semver. */
function compareOrdered(a: any, b: any, fn: string): number {
  if (tagOf(a) === 'semver') return cmpSemver(a, expectTag(b, 'semver', fn));
  return cmpRat(ratOf(a), ratOf(b));
}

/** The internal function lowered two-variable comprehensions iterate (not reachable from rule text). */
const PAIRS = '@pairs';
/** The internal functions the optional syntax is lowered to (see lowerForPlan; not reachable from rule text). */
const OPT_SELECT = '@optSelect';
const OPT_INDEX = '@optIndex';
const OPT_LIST = '@optList';
const OPT_MAP = '@optMap';
/** Whether an optional holds a value, failing as `fn` does on what is not an optional (or/orValue, lowered). */
const OPT_PRESENT = '@optPresent';
/** The argument of `or`, checked to be an optional as `or` checks it. */
const OPT_OR_ARG = '@optOrArg';

function listItems(l: any): any[] {
  return isCelList(l) ? [...l] : [];
}

const K8S_FUNCS = [
  // lists
  celMethod('isSorted', LIST, [], BOOL, function () {
    const a = listItems(this);
    for (let i = 1; i < a.length; i++) if (compareCel(a[i - 1], a[i]) > 0) return false;
    return true;
  }),
  celMethod('sum', LIST, [], DYN, function () {
    const a = listItems(this);
    if (a.length === 0) return 0n;
    if (a.every((x) => typeof x === 'bigint')) return a.reduce((s: bigint, x: bigint) => s + x, 0n);
    return a.reduce((s: number, x: any) => s + Number(x), 0);
  }),
  celMethod('min', LIST, [], DYN, function () {
    const a = listItems(this);
    if (a.length === 0) throw new Error('min called on empty list');
    return a.reduce((m, x) => (compareCel(x, m) < 0 ? x : m));
  }),
  celMethod('max', LIST, [], DYN, function () {
    const a = listItems(this);
    if (a.length === 0) throw new Error('max called on empty list');
    return a.reduce((m, x) => (compareCel(x, m) > 0 ? x : m));
  }),
  celMethod('indexOf', LIST, [DYN], INT, function (v: any) {
    const a = listItems(this);
    return BigInt(a.findIndex((x) => celEquals(x, v)));
  }),
  celMethod('lastIndexOf', LIST, [DYN], INT, function (v: any) {
    const a = listItems(this);
    for (let i = a.length - 1; i >= 0; i--) if (celEquals(a[i], v)) return BigInt(i);
    return -1n;
  }),
  // regex
  celMethod('find', STRING, [STRING], STRING, function (re: string) {
    const m = new RegExp(re, 'u').exec(this);
    return m ? m[0] : '';
  }),
  celMethod('findAll', STRING, [STRING], listType(STRING), function (re: string) {
    return [...this.matchAll(new RegExp(re, 'gu'))].map((m) => m[0]);
  }),
  celMethod('findAll', STRING, [STRING, INT], listType(STRING), function (re: string, n: bigint) {
    const all = [...this.matchAll(new RegExp(re, 'gu'))].map((m) => m[0]);
    return n < 0n ? all : all.slice(0, Number(n));
  }),
  // sets
  celFunc('sets.contains', [LIST, LIST], BOOL, (a: any, b: any) => listItems(b).every((x) => listItems(a).some((y) => celEquals(x, y)))),
  celFunc('sets.equivalent', [LIST, LIST], BOOL, (a: any, b: any) => listItems(b).every((x) => listItems(a).some((y) => celEquals(x, y))) && listItems(a).every((x) => listItems(b).some((y) => celEquals(x, y)))),
  celFunc('sets.intersects', [LIST, LIST], BOOL, (a: any, b: any) => listItems(a).some((x) => listItems(b).some((y) => celEquals(x, y)))),
  // url
  celFunc('url', [STRING], MAP, (s: string) => parseURLValue(s)),
  celFunc('isURL', [STRING], BOOL, (s: string) => isURLString(s)),
  celMethod('getScheme', MAP, [], STRING, function () {
    return expectTag(this, 'url', 'getScheme').get('scheme');
  }),
  celMethod('getHost', MAP, [], STRING, function () {
    return expectTag(this, 'url', 'getHost').get('host');
  }),
  celMethod('getHostname', MAP, [], STRING, function () {
    return expectTag(this, 'url', 'getHostname').get('hostname');
  }),
  celMethod('getPort', MAP, [], STRING, function () {
    return expectTag(this, 'url', 'getPort').get('port');
  }),
  celMethod('getEscapedPath', MAP, [], STRING, function () {
    return expectTag(this, 'url', 'getEscapedPath').get('path');
  }),
  celMethod('getQuery', MAP, [], MAP, function () {
    const q = String(expectTag(this, 'url', 'getQuery').get('query'));
    const out = new Map<string, string[]>();
    for (const [k, v] of new URLSearchParams(q)) {
      const l = out.get(k) ?? [];
      l.push(v);
      out.set(k, l);
    }
    return out;
  }),
  // ip
  celFunc('ip', [STRING], MAP, (s: string) => parseIPValue(s)),
  celFunc('isIP', [STRING], BOOL, (s: string) => ipBytes(s) !== undefined),
  celFunc('ip.isCanonical', [STRING], BOOL, (s: string) => {
    const b = ipBytes(s);
    if (!b) throw new Error(`IP Address ${goQuote(s)} parse error during conversion from string`);
    return ipString(b.fam, b.bytes) === s;
  }),
  celMethod('family', MAP, [], INT, function () {
    return expectTag(this, 'ip', 'family').get('family');
  }),
  celMethod('isUnspecified', MAP, [], BOOL, function () {
    const a = String(expectTag(this, 'ip', 'isUnspecified').get('addr'));
    return a === '0.0.0.0' || a === '::';
  }),
  celMethod('isLoopback', MAP, [], BOOL, function () {
    const a = String(expectTag(this, 'ip', 'isLoopback').get('addr'));
    return a.startsWith('127.') || a === '::1';
  }),
  celMethod('isLinkLocalMulticast', MAP, [], BOOL, function () {
    const a = String(expectTag(this, 'ip', 'isLinkLocalMulticast').get('addr'));
    return a.startsWith('224.0.0.') || /^ff[0-9a-f]2:/.test(a);
  }),
  celMethod('isLinkLocalUnicast', MAP, [], BOOL, function () {
    const a = String(expectTag(this, 'ip', 'isLinkLocalUnicast').get('addr'));
    return a.startsWith('169.254.') || /^fe[89ab][0-9a-f]:/.test(a);
  }),
  celMethod('isGlobalUnicast', MAP, [], BOOL, function () {
    const ipv = expectTag(this, 'ip', 'isGlobalUnicast');
    const a = String(ipv.get('addr'));
    const b = ipBytes(a)!;
    if (b.fam === 4) return !(a === '0.0.0.0' || a === '255.255.255.255' || b.bytes[0] === 127 || b.bytes[0] >= 224 || (b.bytes[0] === 169 && b.bytes[1] === 254));
    return !(a === '::' || a === '::1' || b.bytes[0] === 0xff || (b.bytes[0] === 0xfe && (b.bytes[1] & 0xc0) === 0x80));
  }),
  // cidr
  celFunc('cidr', [STRING], MAP, (s: string) => parseCIDRValue(s)),
  celFunc('isCIDR', [STRING], BOOL, (s: string) => cidrParts(s) !== undefined),
  celMethod('containsIP', MAP, [DYN], BOOL, function (ip: any) {
    const c = expectTag(this, 'cidr', 'containsIP');
    const s = typeof ip === 'string' ? ip : String(expectTag(ip, 'ip', 'containsIP').get('addr'));
    return cidrContains(c, s);
  }),
  celMethod('containsCIDR', MAP, [DYN], BOOL, function (other: any) {
    const c = expectTag(this, 'cidr', 'containsCIDR');
    const o = typeof other === 'string' ? parseCIDRValue(other) : expectTag(other, 'cidr', 'containsCIDR');
    return cidrContains(c, String(o.get('addr')), Number(o.get('bits')));
  }),
  celMethod('ip', MAP, [], MAP, function () {
    const c = expectTag(this, 'cidr', 'ip');
    return parseIPValue(String(c.get('addr')));
  }),
  celMethod('masked', MAP, [], MAP, function () {
    const c = expectTag(this, 'cidr', 'masked');
    const p = cidrParts(`${c.get('addr')}/${c.get('bits')}`)!;
    return cidrValue(p.fam, maskBytes(p.bytes, p.bits), p.bits);
  }),
  celMethod('prefixLength', MAP, [], INT, function () {
    return expectTag(this, 'cidr', 'prefixLength').get('bits');
  }),
  celFunc('string', [MAP], STRING, (v: any) => {
    const t = tagOf(v);
    if (t === 'ip') return String(v.get('addr'));
    if (t === 'cidr') return `${v.get('addr')}/${v.get('bits')}`;
    throw new Error('no such overload: string');
  }),
  // quantity
  celFunc('quantity', [STRING], MAP, (s: string) => {
    const r = parseQuantity(s);
    if (!r) throw new Error('quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'');
    return quantityValue(r);
  }),
  celFunc('isQuantity', [STRING], BOOL, (s: string) => parseQuantity(s) !== undefined),
  celMethod('isInteger', MAP, [], BOOL, function () {
    const r = ratOf(this);
    return r.den === 1n && r.num >= -(2n ** 63n) && r.num < 2n ** 63n;
  }),
  celMethod('asInteger', MAP, [], INT, function () {
    const r = ratOf(this);
    if (r.den !== 1n || r.num < -(2n ** 63n) || r.num >= 2n ** 63n) throw new Error('cannot convert value to integer');
    return r.num;
  }),
  celMethod('asApproximateFloat', MAP, [], DOUBLE, function () {
    const r = ratOf(this);
    return Number(r.num) / Number(r.den);
  }),
  celMethod('sign', MAP, [], INT, function () {
    const r = ratOf(this);
    return r.num > 0n ? 1n : r.num < 0n ? -1n : 0n;
  }),
  celMethod('add', MAP, [DYN], MAP, function (o: any) {
    const a = ratOf(this);
    const b = ratOf(o);
    return quantityValue(addRationals(a, b));
  }),
  celMethod('sub', MAP, [DYN], MAP, function (o: any) {
    const a = ratOf(this);
    const b = ratOf(o);
    return quantityValue(subtractRationals(a, b));
  }),
  // (quantity and semver)
  celMethod('isGreaterThan', MAP, [MAP], BOOL, function (o: any) {
    return compareOrdered(this, o, 'isGreaterThan') > 0;
  }),
  celMethod('isLessThan', MAP, [MAP], BOOL, function (o: any) {
    return compareOrdered(this, o, 'isLessThan') < 0;
  }),
  celMethod('compareTo', MAP, [MAP], INT, function (o: any) {
    return BigInt(compareOrdered(this, o, 'compareTo'));
  }),
  // semver
  celFunc('semver', [STRING], MAP, (s: string) => parseSemver(s)),
  celFunc('semver', [STRING, BOOL], MAP, (s: string, normalize: boolean) => (normalize ? parseSemverNormalized(s) : parseSemver(s))),
  celFunc('isSemver', [STRING], BOOL, (s: string) => semverOk(s, false)),
  celFunc('isSemver', [STRING, BOOL], BOOL, (s: string, normalize: boolean) => semverOk(s, normalize)),
  ...(['major', 'minor', 'patch'] as const).map((part) =>
    celMethod(part, MAP, [], INT, function () {
      return BigInt.asIntN(64, expectTag(this, 'semver', part).get(part));
    }),
  ),
  // format
  ...Object.keys(FORMATS).map((name) => celFunc(`format.${name}`, [], MAP, () => formatValue(name))),
  celFunc('format.named', [STRING], MAP, (name: string) => (Object.prototype.hasOwnProperty.call(FORMATS, name) ? optOf(formatValue(name)) : optNone())),
  celMethod('validate', MAP, [STRING], MAP, function (s: string) {
    const errs = FORMATS[String(expectTag(this, 'format', 'validate').get('name'))](s);
    return errs.length === 0 ? optNone() : optOf(celList(errs));
  }),
  // lists (cel-go's ext.Lists at version 3)
  celMethod('slice', LIST, [INT, INT], LIST, function (start: bigint, end: bigint) {
    const a = listItems(this);
    if (start < 0n || end < 0n) throw new Error(`cannot slice(${start}, ${end}), negative indexes not supported`);
    if (start > end) throw new Error(`cannot slice(${start}, ${end}), start index must be less than or equal to end index`);
    if (BigInt(a.length) < end) throw new Error(`cannot slice(${start}, ${end}), list is length ${a.length}`);
    return a.slice(Number(start), Number(end));
  }),
  celMethod('flatten', LIST, [], LIST, function () {
    return flattenList(this, 1n);
  }),
  celMethod('flatten', LIST, [INT], LIST, function (depth: bigint) {
    return flattenList(this, depth);
  }),
  celMethod('sort', LIST, [], LIST, function () {
    const a = listItems(this);
    return sortByKeys(a, a);
  }),
  celMethod('@sortByAssociatedKeys', LIST, [LIST], LIST, function (keys: any) {
    return sortByKeys(listItems(this), listItems(keys));
  }),
  celMethod('reverse', LIST, [], LIST, function () {
    return listItems(this).reverse();
  }),
  celMethod('distinct', LIST, [], LIST, function () {
    const out: any[] = [];
    for (const v of listItems(this)) if (!out.some((x) => celEq(v, x))) out.push(v);
    return out;
  }),
  celFunc('lists.range', [INT], LIST, (n: bigint) => {
    if (n < 0n) throw new Error(`lists.range: size must be non-negative, got ${n}`);
    if (n > 10_000_000n) throw new Error(`lists.range: size ${n} exceeds maximum allowed (10000000)`);
    return Array.from({ length: Number(n) }, (_, i) => BigInt(i));
  }),
  // two-variable comprehensions (cel.@mapInsert), and the (index, value) / (key, value) pairs
  // hearth's lowering of them iterates (see lowerForPlan)
  celFunc('cel.@mapInsert', [MAP, DYN, DYN], MAP, (m: any, k: unknown, v: unknown) => mapInsert(m, [[k, v]])),
  celFunc('cel.@mapInsert', [MAP, MAP], MAP, (m: any, u: any) => mapInsert(m, [...u.keys()].map((k) => [k, u.get(k)]))),
  celFunc(PAIRS, [DYN], LIST, (r: any) => {
    if (isCelList(r)) return [...r].map((v, i) => celList([BigInt(i), v]));
    if (isCelMap(r)) return [...r.keys()].map((k) => celList([k, r.get(k) as any]));
    throw new Error('no such overload: comprehension range');
  }),
  // optional values (oldSelf with optionalOldSelf, format.named, validate, optional.*)
  celMethod('hasValue', MAP, [], BOOL, function () {
    return expectTag(this, 'optional', 'hasValue').get('has') === true;
  }),
  celMethod('value', MAP, [], DYN, function () {
    const o = expectTag(this, 'optional', 'value');
    if (o.get('has') !== true) throw new Error('optional.none() dereference');
    return o.get('v');
  }),
  // (or and orValue are lowered to a conditional: lowerForPlan)
  celFunc('optional.of', [DYN], MAP, (v: unknown) => optOf(v)),
  celFunc('optional.ofNonZeroValue', [DYN], MAP, (v: unknown) => (isZeroValue(v) ? optNone() : optOf(v))),
  celFunc('optional.none', [], MAP, () => optNone()),
  // the optional syntax: a.?b and selections on optionals, a[?k] and indexing of optionals,
  // optional list elements and map entries (see lowerForPlan)
  celFunc(OPT_PRESENT, [DYN, STRING], BOOL, (x: unknown, fn: string) => expectTag(x, 'optional', fn).get('has') === true),
  celFunc(OPT_OR_ARG, [DYN], MAP, (x: unknown) => expectTag(x, 'optional', 'or')),
  celFunc(OPT_SELECT, [DYN, STRING], MAP, (x: unknown, field: string) => {
    const v = optionalReceiver(x);
    if (v === NONE) return optNone();
    if (!isCelMap(v) || tagOf(v) !== undefined) throw new Error('no such overload: _?._');
    const r = v.get(field);
    return r === undefined ? optNone() : optOf(r);
  }),
  celFunc(OPT_INDEX, [DYN, DYN], MAP, (x: unknown, k: any) => {
    const v = optionalReceiver(x);
    if (v === NONE) return optNone();
    if (isCelList(v)) {
      let i: number;
      if (typeof k === 'bigint') i = Number(k);
      else if (isCelUint(k)) i = Number(k.value);
      else if (typeof k === 'number' && Number.isInteger(k)) i = k;
      else throw new Error('unsupported index type');
      return i >= 0 && i < v.size ? optOf(v.get(i)) : optNone();
    }
    if (isCelMap(v) && tagOf(v) === undefined) {
      const r = v.get(k);
      return r === undefined ? optNone() : optOf(r);
    }
    throw new Error('no such overload: _[?_]');
  }),
  celFunc(OPT_LIST, [LIST, LIST], LIST, (elems: any, optional: any) => {
    const opt = new Set([...optional].map(Number));
    const out: any[] = [];
    let i = 0;
    for (const el of elems) {
      if (!opt.has(i++)) out.push(el);
      else if (tagOf(el) !== 'optional') throw new Error(`cannot initialize optional list element from non-optional value ${goValueText(el)}`);
      else if (el.get('has') === true) out.push(el.get('v'));
    }
    return out;
  }),
  celFunc(OPT_MAP, [LIST, LIST, LIST], MAP, (keys: any, values: any, optional: any) => {
    const opt = new Set([...optional].map(Number));
    const entries = new Map<unknown, unknown>();
    for (let i = 0; i < keys.size; i++) {
      let k = keys.get(i);
      if (typeof k === 'number') {
        if (!Number.isInteger(k)) throw new Error('unsupported key type');
        k = BigInt(k);
      } else if (!(typeof k === 'string' || typeof k === 'bigint' || typeof k === 'boolean' || isCelUint(k))) throw new Error('unsupported key type');
      let v = values.get(i);
      if (opt.has(i)) {
        if (tagOf(v) !== 'optional') throw new Error(`cannot initialize optional entry '${goKey(k)}' from non-optional value ${goValueText(v)}`);
        if (v.get('has') !== true) {
          entries.delete(k);
          continue;
        }
        v = v.get('v');
      }
      if (entries.has(k)) throw new Error(`map key conflict: ${goKey(k)}`);
      entries.set(k, v);
    }
    return celMap(entries as ReadonlyMap<any, any>);
  }),
];

const NONE = Symbol('none');
/** The value an optional-chain step reads: an optional's value (NONE when it has none), else x itself. */
function optionalReceiver(x: any): any {
  if (tagOf(x) !== 'optional') return x;
  return x.get('has') === true ? x.get('v') : NONE;
}
/** A value in a runtime error message (Go's %v of simple values). */
function goValueText(v: unknown): string {
  if (typeof v === 'string' || typeof v === 'bigint' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (isCelUint(v)) return String(v.value);
  if (v === null) return 'null_type';
  return isCelList(v) ? 'list' : isCelMap(v) ? 'map' : String(v);
}

let baseEnv: CelEnv | undefined;
function env(): CelEnv {
  if (!baseEnv) baseEnv = celEnv({ funcs: [...strings, ...K8S_FUNCS], variables: { self: DYN, oldSelf: DYN } });
  return baseEnv;
}

// Conversions of JSON strings to CEL timestamps/durations, done by CEL itself.
let tsPlan: ((ctx: any) => any) | undefined;
let durPlan: ((ctx: any) => any) | undefined;
function toTimestamp(s: string): unknown {
  tsPlan ??= plan(celEnv({ variables: { s: STRING } }), parse('timestamp(s)')) as (ctx: any) => any;
  const r = tsPlan({ s });
  return isCelError(r) ? s : r;
}
function toDuration(s: string): unknown {
  durPlan ??= plan(celEnv({ variables: { s: STRING } }), parse('duration(s)')) as (ctx: any) => any;
  const r = durPlan({ s });
  return isCelError(r) ? s : r;
}

/**
 * An object with properties as CEL sees it, converted field by field as rules read it: a rule on
 * a large object usually reads a few fields (`self.min <= self.max`), so converting the whole
 * subtree up front would dominate its cost. @bufbuild/cel takes any Map as a CEL map (wrapped in
 * celMap, which toCelValue does once). Field reads go through a per-schema index of the
 * properties rules can see; the index of the fields present is only built for iteration and size.
 */
class LazyObject extends Map<string, unknown> {
  private index?: Map<string, string>;
  private converted?: Map<string, unknown>;

  constructor(private readonly src: Obj, private readonly shape: ObjectShape) {
    super();
  }

  /** CEL name → property name, for the properties present that rules can see (in src's order). */
  private fieldIndex(): Map<string, string> {
    if (this.index) return this.index;
    const index = new Map<string, string>();
    const props = this.shape.props;
    for (const k of Object.keys(this.src)) {
      const x = this.src[k];
      if (x === undefined) continue;
      const esc = escapeCelName(k);
      if (esc === undefined) continue;
      const p = props[k];
      if (isPlainObject(p)) {
        if (celVisible(p)) index.set(esc, k);
      } else if (this.shape.embedded && (((k === 'apiVersion' || k === 'kind') && typeof x === 'string') || (k === 'metadata' && isPlainObject(x)))) {
        index.set(k, k);
      }
    }
    return (this.index = index);
  }

  /** The field a CEL name reads, when present (what fieldIndex().get(name) gives, without building it). */
  private fieldOf(name: string): VisibleField | string | undefined {
    const f = visibleFields(this.shape).get(name);
    if (f !== undefined) return Object.prototype.hasOwnProperty.call(this.src, f.key) && this.src[f.key] !== undefined ? f : undefined;
    // apiVersion, kind and metadata of an embedded resource are visible unless declared otherwise.
    if (!this.shape.embedded || !(name === 'apiVersion' || name === 'kind' || name === 'metadata') || isPlainObject(this.shape.props[name])) return undefined;
    if (!Object.prototype.hasOwnProperty.call(this.src, name)) return undefined;
    const x = this.src[name];
    return (name === 'metadata' ? isPlainObject(x) : typeof x === 'string') ? name : undefined;
  }

  override get size(): number {
    return this.fieldIndex().size;
  }

  override has(name: string): boolean {
    return this.fieldOf(name) !== undefined;
  }

  override get(name: string): unknown {
    const f = this.fieldOf(name);
    if (f === undefined) return undefined;
    const k = typeof f === 'string' ? f : f.key;
    const converted = (this.converted ??= new Map());
    if (converted.has(k)) return converted.get(k);
    const x = this.src[k];
    let value: unknown;
    if (typeof f !== 'string') value = x === null ? null : f.conv(x);
    else if (k === 'metadata') {
      const meta = new Map<string, unknown>();
      if (typeof x.name === 'string') meta.set('name', x.name);
      if (typeof x.generateName === 'string') meta.set('generateName', x.generateName);
      value = wrapMap(meta);
    } else value = x;
    converted.set(k, value);
    return value;
  }

  override keys(): MapIterator<string> {
    return this.fieldIndex().keys();
  }

  override *entries(): MapIterator<[string, unknown]> {
    for (const name of this.fieldIndex().keys()) yield [name, this.get(name)];
  }

  override *values(): MapIterator<unknown> {
    for (const name of this.fieldIndex().keys()) yield this.get(name);
  }

  override forEach(fn: (value: unknown, key: string, map: Map<string, unknown>) => void, thisArg?: unknown): void {
    for (const name of this.fieldIndex().keys()) fn.call(thisArg, this.get(name), name, this);
  }

  override [Symbol.iterator](): MapIterator<[string, unknown]> {
    return this.entries();
  }
}

/** Whether rules can see a property (it has a CEL type); schemas are immutable once compiled. */
const visibility = new WeakMap<Obj, boolean>();
function celVisible(prop: Obj): boolean {
  let v = visibility.get(prop);
  if (v === undefined) visibility.set(prop, (v = schemaDeclType(prop, prop['x-kubernetes-embedded-resource'] === true) !== undefined));
  return v;
}

// Conversion of JSON values to CEL values, compiled per schema node: a converter knows its node's
// type, format, items and properties, so converting a value reads nothing of the schema.

/** Converts a value that is not null or undefined (those are CEL null everywhere). */
type Converter = (v: any) => unknown;

/** An object schema with properties, as LazyObject reads it. */
interface ObjectShape {
  props: Obj;
  embedded: boolean;
  /** CEL name → the property and its converter, for the properties rules can see (built on first read). */
  visible?: Map<string, VisibleField>;
}
interface VisibleField {
  key: string;
  conv: Converter;
}

/**
 * Visible properties by CEL name. Own keys only: the one inherited key an object could name,
 * __proto__, has no CEL type.
 */
function visibleFields(shape: ObjectShape): Map<string, VisibleField> {
  if (shape.visible) return shape.visible;
  const m = new Map<string, VisibleField>();
  for (const k of Object.keys(shape.props)) {
    const p = shape.props[k];
    const esc = escapeCelName(k);
    if (esc !== undefined && isPlainObject(p) && celVisible(p)) m.set(esc, { key: k, conv: converter(p, p['x-kubernetes-embedded-resource'] === true) });
  }
  return (shape.visible = m);
}

const NO_PROPERTIES: Obj = {};
/** celMap over values that are CEL values already (or convert on read, as LazyObject does). */
const wrapMap = (m: Map<string, unknown>): unknown => celMap(m as ReadonlyMap<string, any>);
const same: Converter = (v) => v;
const integer: Converter = (v) => (typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : v);
const celValue = (v: unknown, conv: Converter): unknown => (v === null || v === undefined ? null : conv(v));

/** Converters by schema node, for nodes that are resource roots and for the rest. */
const converters = [new WeakMap<Obj, Converter>(), new WeakMap<Obj, Converter>()];

function converter(s: unknown, isResourceRoot: boolean): Converter {
  const sch = isPlainObject(s) ? s : NO_PROPERTIES;
  const cache = converters[isResourceRoot ? 1 : 0];
  let c = cache.get(sch);
  if (!c) cache.set(sch, (c = buildConverter(sch, isResourceRoot)));
  return c;
}

/** kube's UnstructuredToVal for one schema node; children's converters are built on first use. */
function buildConverter(sch: Obj, isResourceRoot: boolean): Converter {
  if (sch['x-kubernetes-int-or-string'] === true) return integer;
  switch (sch.type) {
    case 'integer':
      return integer;
    case 'string':
      switch (sch.format) {
        case 'byte':
          return (v) => (typeof v === 'string' ? new Uint8Array(Buffer.from(v, 'base64')) : v);
        case 'date-time':
          return (v) => (typeof v === 'string' ? toTimestamp(v) : v);
        case 'date':
          return (v) => (typeof v === 'string' ? toTimestamp(`${v}T00:00:00Z`) : v);
        case 'duration':
          return (v) => (typeof v === 'string' ? toDuration(v) : v);
      }
      return same;
    case 'array': {
      const items = isPlainObject(sch.items) ? sch.items : undefined;
      let conv: Converter | undefined;
      return (v) => {
        if (!Array.isArray(v)) return v;
        conv ??= converter(items, items?.['x-kubernetes-embedded-resource'] === true);
        const out = new Array(v.length);
        for (let i = 0; i < v.length; i++) out[i] = celValue(v[i], conv);
        return celList(out);
      };
    }
    case 'object': {
      if (isPlainObject(sch.additionalProperties)) {
        const addl = sch.additionalProperties;
        let conv: Converter | undefined;
        return (v) => {
          if (!isPlainObject(v)) return v;
          conv ??= converter(addl, addl['x-kubernetes-embedded-resource'] === true);
          const m = new Map<string, unknown>();
          for (const k of Object.keys(v)) m.set(k, celValue(v[k], conv));
          return wrapMap(m);
        };
      }
      const shape: ObjectShape = { props: isPlainObject(sch.properties) ? sch.properties : NO_PROPERTIES, embedded: isResourceRoot || sch['x-kubernetes-embedded-resource'] === true };
      return (v) => (isPlainObject(v) ? wrapMap(new LazyObject(v, shape)) : v);
    }
    default:
      return same;
  }
}

/**
 * A JSON value as CEL sees it under schema node s (kube's UnstructuredToVal). Lists and maps come
 * wrapped as CEL values already (celList/celMap), so evaluation does not wrap them on every read.
 */
export function toCelValue(v: unknown, s: unknown, isResourceRoot = false): unknown {
  return celValue(v, converter(s, isResourceRoot));
}

// ---------------------------------------------------------------------------------------------
// Static checking and cost estimation over the parsed AST.

interface Issue {
  offset: number;
  message: string;
}

interface Checked {
  t: CT;
  cost: number;
}

type Expr = any;

const TYPE_IDENTS = new Set(['int', 'uint', 'double', 'string', 'bool', 'bytes', 'list', 'map', 'null_type', 'type']);
const NUMERIC = new Set<Kind>(['int', 'uint', 'double']);
const isDyn = (t: CT) => t.k === 'dyn';
const sizeOf = (t: CT): number => t.max ?? (t.k === 'dyn' ? MaxRequestSizeBytes : 1);
const strCost = (n: number, f = 0.1): number => Math.ceil(n * f);

/** Whether values of a and b can meet in a comparison (dyn and null match anything). */
function compatible(a: CT, b: CT): boolean {
  if (isDyn(a) || isDyn(b) || a.k === 'null' || b.k === 'null') return true;
  if (a.k !== b.k) return false;
  if (a.k === 'list') return compatible(a.e ?? T.dyn, b.e ?? T.dyn);
  if (a.k === 'map') return compatible(a.e ?? T.dyn, b.e ?? T.dyn);
  return true;
}
/**
 * A literal's element (map key, map value) type joined with the ones before it, as cel-go joins
 * them under HomogeneousAggregateLiterals, an option of kube's base environment: undefined when
 * `t` does not fit `prev` (`[1, 'a']`, `{'a': 1, 'b': 2.0}` are type errors). A dyn element makes
 * the rest fit, as cel-go's most general type of the two.
 */
function joinLiteral(prev: CT | undefined, t: CT): CT | undefined {
  if (prev === undefined) return t;
  if (!compatible(prev, t) || (prev.k === 'map' && t.k === 'map' && !compatible(prev.key ?? T.dyn, t.key ?? T.dyn))) return undefined;
  return isDyn(t) ? t : prev;
}
function join(a: CT, b: CT): CT {
  if (isDyn(a) || a.k === 'null') return b;
  if (isDyn(b) || b.k === 'null') return a;
  if (a.k === 'list' && b.k === 'list') return listOf(join(a.e ?? T.dyn, b.e ?? T.dyn), Math.max(sizeOf(a), sizeOf(b)));
  return a.k === b.k ? { ...a, max: Math.max(sizeOf(a), sizeOf(b)) } : T.dyn;
}

// (no prototype: rule text names methods, and `constructor` or `toString` must not find Object's)
const STRING_METHODS: Record<string, { args: Kind[][]; result: (recv: CT) => CT; cost: (recv: CT, args: CT[]) => number }> = Object.create(null);
function defStr(name: string, args: Kind[][], result: (recv: CT) => CT, cost?: (recv: CT, args: CT[]) => number): void {
  STRING_METHODS[name] = { args, result, cost: cost ?? ((r) => 1 + strCost(sizeOf(r))) };
}
defStr('contains', [['string']], () => T.bool, (r, a) => 1 + strCost(sizeOf(r)) * strCost(sizeOf(a[0])));
defStr('startsWith', [['string']], () => T.bool, (_r, a) => 1 + strCost(sizeOf(a[0])));
defStr('endsWith', [['string']], () => T.bool, (_r, a) => 1 + strCost(sizeOf(a[0])));
defStr('matches', [['string']], () => T.bool, (r, a) => 1 + strCost(sizeOf(r)) * strCost(sizeOf(a[0]), 0.25));
defStr('size', [], () => T.int, () => 1);
defStr('charAt', [['int']], (r) => ({ ...T.string, max: 1 }));
defStr('indexOf', [['string'], ['string', 'int']], () => T.int);
defStr('lastIndexOf', [['string'], ['string', 'int']], () => T.int);
defStr('lowerAscii', [], (r) => ({ ...T.string, max: sizeOf(r) }));
defStr('upperAscii', [], (r) => ({ ...T.string, max: sizeOf(r) }));
defStr('trim', [], (r) => ({ ...T.string, max: sizeOf(r) }));
defStr('replace', [['string', 'string'], ['string', 'string', 'int']], (r) => ({ ...T.string, max: sizeOf(r) * 2 }));
defStr('split', [['string'], ['string', 'int']], (r) => listOf({ ...T.string, max: sizeOf(r) }, sizeOf(r)));
defStr('substring', [['int'], ['int', 'int']], (r) => ({ ...T.string, max: sizeOf(r) }));
defStr('format', [['list']], (r) => ({ ...T.string, max: sizeOf(r) * 2 }));
defStr('find', [['string']], (r) => ({ ...T.string, max: sizeOf(r) }), (r, a) => 1 + strCost(sizeOf(r)) * strCost(sizeOf(a[0]), 0.25));
defStr('findAll', [['string'], ['string', 'int']], (r) => listOf({ ...T.string, max: sizeOf(r) }, sizeOf(r)), (r, a) => 1 + strCost(sizeOf(r)) * strCost(sizeOf(a[0]), 0.25));

const TIMESTAMP_GETTERS = new Set(['getFullYear', 'getMonth', 'getDayOfYear', 'getDayOfMonth', 'getDate', 'getDayOfWeek', 'getHours', 'getMinutes', 'getSeconds', 'getMilliseconds']);
const DURATION_GETTERS = new Set(['getHours', 'getMinutes', 'getSeconds', 'getMilliseconds']);
const URL_GETTERS = new Set(['getScheme', 'getHost', 'getHostname', 'getPort', 'getEscapedPath']);
const IP_PREDICATES = new Set(['isUnspecified', 'isLoopback', 'isLinkLocalMulticast', 'isLinkLocalUnicast', 'isGlobalUnicast']);
const LIST_METHODS = new Set(['size', 'join', 'isSorted', 'sum', 'min', 'max', 'indexOf', 'lastIndexOf', 'slice', 'flatten', 'sort', 'reverse', 'distinct', '@sortByAssociatedKeys']);
const QUANTITY_METHODS = new Set(['isInteger', 'asInteger', 'asApproximateFloat', 'sign', 'add', 'sub', 'isGreaterThan', 'isLessThan', 'compareTo']);
const SEMVER_METHODS = new Set(['major', 'minor', 'patch', 'isGreaterThan', 'isLessThan', 'compareTo']);
const CIDR_METHODS = new Set(['containsIP', 'containsCIDR', 'ip', 'masked', 'prefixLength']);
const OPTIONAL_METHODS = new Set(['hasValue', 'value', 'orValue', 'or']);
/** Element types ext.Lists' sort and sortBy accept (cel-go's comparableTypes). */
const SORTABLE = new Set<Kind>(['int', 'uint', 'double', 'bool', 'duration', 'timestamp', 'string', 'bytes', 'dyn']);
/** cel-go's ListCreateBaseCost, charged by the ext.Lists functions that build a list. */
const LIST_CREATE_COST = 10;
/** A size cel-go cannot bound (math.MaxUint64): any cost multiplied by it is over budget. */
const UNBOUNDED = 2 ** 64;
/** kube's MaxNameFormatRegexSize × RegexStringLengthCostFactor: validate()'s cost per traversed character. */
const FORMAT_VALIDATE_FACTOR = 128 * 0.25;
const ALL_METHODS = new Set([
  ...Object.keys(STRING_METHODS),
  ...TIMESTAMP_GETTERS,
  ...URL_GETTERS,
  'getQuery',
  'family',
  ...IP_PREDICATES,
  ...LIST_METHODS,
  ...QUANTITY_METHODS,
  ...SEMVER_METHODS,
  ...CIDR_METHODS,
  ...OPTIONAL_METHODS,
  'validate',
]);
const GLOBALS = new Set([
  'size',
  'matches',
  'int',
  'uint',
  'double',
  'string',
  'bytes',
  'bool',
  'dyn',
  'type',
  'duration',
  'timestamp',
  'url',
  'isURL',
  'ip',
  'isIP',
  'ip.isCanonical',
  'cidr',
  'isCIDR',
  'quantity',
  'isQuantity',
  'sets.contains',
  'sets.equivalent',
  'sets.intersects',
  'semver',
  'isSemver',
  ...Object.keys(FORMATS).map((name) => `format.${name}`),
  'format.named',
  'optional.of',
  'optional.ofNonZeroValue',
  'optional.none',
  'lists.range',
]);

/** The value of an int literal argument (cel-go's nodeAsUintValue), else undefined. */
function constUint(e: Expr | undefined): number | undefined {
  const c = e?.exprKind?.case === 'constExpr' ? e.exprKind.value.constantKind : undefined;
  if ((c?.case === 'int64Value' || c?.case === 'uint64Value') && c.value >= 0n) return Number(c.value);
  return undefined;
}

class Checker {
  readonly issues: Issue[] = [];
  usesOldSelf = false;
  /** Regex constants to verify at compile time (cel-go precompiles them). */
  readonly regexes: { offset: number; pattern: string }[] = [];
  /** Selections and index calls on optional values (run as optional chains: see lowerForPlan). */
  readonly optChain = new Set<string>();

  constructor(
    private readonly positions: Record<string, number>,
    private readonly macroCalls: Record<string, any>,
  ) {}

  private err(e: Expr, message: string): void {
    this.issues.push({ offset: this.positions[String(e.id)] ?? 0, message });
  }

  private overload(e: Expr, fn: string, recv: CT | undefined, args: CT[]): Checked {
    this.err(e, `found no matching overload for '${fn}' applied to '${recv ? typeName(recv) + '.' : ''}(${args.map(typeName).join(', ')})'`);
    return { t: T.dyn, cost: 1 };
  }

  check(e: Expr, scope: Map<string, CT>): Checked {
    const kind = e.exprKind;
    switch (kind.case) {
      case 'constExpr': {
        const c = kind.value.constantKind;
        switch (c.case) {
          case 'int64Value':
            return { t: T.int, cost: 0 };
          case 'uint64Value':
            return { t: T.uint, cost: 0 };
          case 'doubleValue':
            return { t: T.double, cost: 0 };
          case 'stringValue':
            return { t: { ...T.string, max: [...String(c.value)].length }, cost: 0 };
          case 'bytesValue':
            return { t: { ...T.bytes, max: c.value?.length ?? 0 }, cost: 0 };
          case 'boolValue':
            return { t: T.bool, cost: 0 };
          case 'nullValue':
            return { t: T.null, cost: 0 };
          default:
            return { t: T.dyn, cost: 0 };
        }
      }
      case 'identExpr': {
        const name = kind.value.name as string;
        const t = scope.get(name);
        if (t) {
          if (name === 'oldSelf' && !scope.has('\u0000shadow:oldSelf')) this.usesOldSelf = true;
          return { t, cost: 1 };
        }
        if (TYPE_IDENTS.has(name)) return { t: T.type, cost: 0 };
        this.err(e, `undeclared reference to '${name}' (in container '')`);
        return { t: T.dyn, cost: 1 };
      }
      case 'selectExpr': {
        const sel = kind.value;
        const operand = this.check(sel.operand, scope);
        let ot = operand.t;
        const field = sel.field as string;
        // A selection on an optional value selects into its value (cel-go: the result is optional,
        // none when the value or the field is absent; has() is whether it has a value).
        const onOptional = ot.k === 'optional';
        if (onOptional) {
          this.optChain.add(String(e.id));
          ot = ot.e ?? T.dyn;
        }
        if (sel.testOnly) {
          if (ot.k === 'object' && !ot.fields!.has(field)) this.err(e, `undefined field '${field}'`);
          else if (!['object', 'map', 'dyn'].includes(ot.k)) this.err(e, `type '${typeName(ot)}' does not support field selection`);
          return { t: T.bool, cost: operand.cost + 1 };
        }
        const ft = this.fieldType(e, ot, field);
        // (cel-go charges nothing for selecting from an optional value)
        return onOptional ? { t: optionalOf(ft), cost: operand.cost } : { t: ft, cost: operand.cost + 1 };
      }
      case 'listExpr': {
        let et: CT | undefined;
        let cost = 10;
        const optional = new Set<number>(kind.value.optionalIndices ?? []);
        let literal: CT | undefined;
        kind.value.elements.forEach((el: Expr, i: number) => {
          const c = this.check(el, scope);
          cost += c.cost;
          const t = optional.has(i) ? this.optionalValue(el, c.t) : c.t;
          et = et ? join(et, t) : t;
          literal = this.homogeneous(el, literal, t);
        });
        return { t: listOf(et ?? T.dyn, kind.value.elements.length), cost };
      }
      case 'structExpr': {
        const st = kind.value;
        if (st.messageName) {
          this.err(e, `undeclared reference to '${st.messageName}' (in container '')`);
          return { t: T.dyn, cost: 40 };
        }
        let kt: CT | undefined;
        let vt: CT | undefined;
        let literalKey: CT | undefined;
        let literalValue: CT | undefined;
        let cost = 30;
        for (const entry of st.entries) {
          if (entry.keyKind?.case === 'mapKey') {
            const k = this.check(entry.keyKind.value, scope);
            kt = kt ? join(kt, k.t) : k.t;
            literalKey = this.homogeneous(entry.keyKind.value, literalKey, k.t);
            cost += k.cost;
          }
          const v = this.check(entry.value, scope);
          const t = entry.optionalEntry ? this.optionalValue(entry.value, v.t) : v.t;
          vt = vt ? join(vt, t) : t;
          literalValue = this.homogeneous(entry.value, literalValue, t);
          cost += v.cost;
        }
        return { t: mapOf(kt ?? T.dyn, vt ?? T.dyn, st.entries.length), cost };
      }
      case 'comprehensionExpr':
        return this.checkComprehension(e, scope);
      case 'callExpr':
        return this.checkCall(e, scope);
      default:
        return { t: T.dyn, cost: 1 };
    }
  }

  /** joinLiteral, reporting an element that does not fit as cel-go does (and starting over after it, as cel-go does). */
  private homogeneous(e: Expr, prev: CT | undefined, t: CT): CT | undefined {
    const joined = joinLiteral(prev, t);
    if (joined === undefined) this.err(e, `expected type '${typeName(prev!)}' but found '${typeName(t)}'`);
    return joined;
  }

  /** The type of selecting field from a value of type ot (not optional), reporting what cannot be selected. */
  private fieldType(e: Expr, ot: CT, field: string): CT {
    if (ot.k === 'object') {
      const ft = ot.fields!.get(field);
      if (!ft) this.err(e, `undefined field '${field}'`);
      return ft ?? T.dyn;
    }
    if (ot.k === 'map') return ot.e ?? T.dyn;
    if (ot.k !== 'dyn') this.err(e, `type '${typeName(ot)}' does not support field selection`);
    return T.dyn;
  }

  /** The element type an optional list element or map entry contributes (cel-go: it must be optional). */
  private optionalValue(e: Expr, t: CT): CT {
    if (t.k === 'optional') return t.e ?? T.dyn;
    if (!isDyn(t)) this.err(e, `expected type '${typeName(optionalOf(t))}' but found '${typeName(t)}'`);
    return t;
  }

  private checkComprehension(e: Expr, scope: Map<string, CT>): Checked {
    const c = e.exprKind.value;
    const range = this.check(c.iterRange, scope);
    const rt = range.t;
    let iterT: CT = T.dyn;
    let iter2T: CT | undefined;
    if (rt.k === 'list') {
      iterT = rt.e ?? T.dyn;
      iter2T = iterT;
      if (c.iterVar2) iterT = T.int;
    } else if (rt.k === 'map') {
      iterT = rt.key ?? T.dyn;
      iter2T = rt.e ?? T.dyn;
    } else if (!isDyn(rt)) {
      this.err(c.iterRange, `expression of type '${typeName(rt)}' cannot be range of a comprehension (must be list, map, or dynamic)`);
    }
    const n = sizeOf(rt);
    const accuInit = this.check(c.accuInit, scope);
    const inner = new Map(scope);
    inner.set(c.iterVar, iterT);
    if (c.iterVar2) inner.set(c.iterVar2, iter2T ?? T.dyn);
    inner.set(c.accuVar, accuInit.t);
    if (c.iterVar === 'oldSelf' || c.iterVar2 === 'oldSelf' || c.accuVar === 'oldSelf') inner.set('\u0000shadow:oldSelf', T.dyn);
    const cond = this.check(c.loopCondition, inner);
    let step = this.check(c.loopStep, inner);
    // map(), transformList(), transformMap(): the accumulator starts as [] (list(dyn)) or {}
    // (map(dyn, dyn)); re-check with the element type learnt from the step.
    let accuT = accuInit.t;
    if (accuT.k === 'list' && step.t.k === 'list' && isDyn(accuT.e ?? T.dyn)) {
      accuT = listOf(step.t.e ?? T.dyn, n);
      inner.set(c.accuVar, accuT);
      step = this.check(c.loopStep, inner);
    } else if (accuT.k === 'map' && step.t.k === 'map' && isDyn(accuT.e ?? T.dyn) && isDyn(accuT.key ?? T.dyn)) {
      accuT = mapOf(step.t.key ?? T.dyn, step.t.e ?? T.dyn, n);
      inner.set(c.accuVar, accuT);
      step = this.check(c.loopStep, inner);
    }
    const result = this.check(c.result, inner);
    let rt2 = result.t;
    const macro = this.macroCalls[String(e.id)]?.exprKind?.value?.function as string | undefined;
    if (macro === 'all' || macro === 'exists' || macro === 'exists_one' || macro === 'existsOne') rt2 = T.bool;
    // (a binding — cel.bind's shape, which sortBy and optMap expand to — does not iterate)
    if ((rt2.k === 'list' || rt2.k === 'map') && c.iterVar !== BIND_ITER_VAR) rt2 = { ...rt2, max: n };
    return { t: rt2, cost: range.cost + accuInit.cost + n * (cond.cost + step.cost) + result.cost };
  }

  private checkCall(e: Expr, scope: Map<string, CT>): Checked {
    const call = e.exprKind.value;
    let fn = call.function as string;
    let target: Expr | undefined = call.target;
    // Namespaced functions parse as a call on an identifier: sets.contains(...), ip.isCanonical(...).
    if (target && target.exprKind.case === 'identExpr' && !scope.has(target.exprKind.value.name) && GLOBALS.has(`${target.exprKind.value.name}.${fn}`)) {
      fn = `${target.exprKind.value.name}.${fn}`;
      target = undefined;
    }
    // Optional field selection a.?b: _?._(a, "b"), typed as the selection of b, made optional.
    if (fn === OPT_SELECT_FN && !target && call.args.length === 2) {
      const operand = this.check(call.args[0], scope);
      const ot = operand.t.k === 'optional' ? (operand.t.e ?? T.dyn) : operand.t;
      const field = call.args[1].exprKind.value.constantKind.value as string;
      return { t: optionalOf(this.fieldType(e, ot, field)), cost: operand.cost + 1 };
    }
    // Short-circuit operators and conditionals.
    if (fn === '_&&_' || fn === '_||_') {
      const a = this.check(call.args[0], scope);
      const b = this.check(call.args[1], scope);
      for (const x of [a, b]) if (x.t.k !== 'bool' && !isDyn(x.t)) return this.overload(e, fn, undefined, [a.t, b.t]);
      return { t: T.bool, cost: a.cost + b.cost };
    }
    if (fn === '_?_:_') {
      const c = this.check(call.args[0], scope);
      const a = this.check(call.args[1], scope);
      const b = this.check(call.args[2], scope);
      if ((c.t.k !== 'bool' && !isDyn(c.t)) || !compatible(a.t, b.t)) return this.overload(e, fn, undefined, [c.t, a.t, b.t]);
      return { t: join(a.t, b.t), cost: c.cost + Math.max(a.cost, b.cost) };
    }
    const recv = target ? this.check(target, scope) : undefined;
    const args = (call.args as Expr[]).map((a) => this.check(a, scope));
    const at = args.map((a) => a.t);
    const argCost = args.reduce((s, a) => s + a.cost, recv?.cost ?? 0);
    const res = (t: CT, cost = 1): Checked => ({ t, cost: argCost + cost });

    if (!target) {
      switch (fn) {
        case '@not_strictly_false':
          return { t: T.bool, cost: argCost };
        case '!_':
          return at[0].k === 'bool' || isDyn(at[0]) ? res(T.bool) : this.overload(e, fn, undefined, at);
        case '-_':
          return NUMERIC.has(at[0].k) || isDyn(at[0]) ? res(at[0]) : this.overload(e, fn, undefined, at);
        case '_==_':
        case '_!=_': {
          if (!compatible(at[0], at[1])) return this.overload(e, fn, undefined, at);
          const traversal = ['string', 'bytes'].includes(at[0].k) ? strCost(Math.min(sizeOf(at[0]), sizeOf(at[1]))) : ['list', 'map'].includes(at[0].k) ? Math.min(sizeOf(at[0]), sizeOf(at[1])) : 0;
          return res(T.bool, 1 + traversal);
        }
        case '_<_':
        case '_<=_':
        case '_>_':
        case '_>=_': {
          const [a, b] = at;
          const ok = isDyn(a) || isDyn(b) || (NUMERIC.has(a.k) && NUMERIC.has(b.k)) || (a.k === b.k && ['string', 'bytes', 'bool', 'timestamp', 'duration'].includes(a.k));
          if (!ok) return this.overload(e, fn, undefined, at);
          return res(T.bool, 1 + (a.k === 'string' ? strCost(Math.min(sizeOf(a), sizeOf(b))) : 0));
        }
        case '_+_': {
          const [a, b] = at;
          if (isDyn(a) || isDyn(b)) return res(isDyn(a) ? b : a);
          if (a.k === b.k && NUMERIC.has(a.k)) return res(a);
          if (a.k === b.k && (a.k === 'string' || a.k === 'bytes')) return res({ ...a, max: sizeOf(a) + sizeOf(b) }, 1 + strCost(sizeOf(a) + sizeOf(b)));
          if (a.k === 'list' && b.k === 'list') return res(listOf(join(a.e ?? T.dyn, b.e ?? T.dyn), sizeOf(a) + sizeOf(b)), 1 + Math.ceil((sizeOf(a) + sizeOf(b)) * 0.1));
          if ((a.k === 'timestamp' && b.k === 'duration') || (a.k === 'duration' && b.k === 'timestamp')) return res(T.timestamp);
          if (a.k === 'duration' && b.k === 'duration') return res(T.duration);
          return this.overload(e, fn, undefined, at);
        }
        case '_-_': {
          const [a, b] = at;
          if (isDyn(a) || isDyn(b)) return res(isDyn(a) ? b : a);
          if (a.k === b.k && NUMERIC.has(a.k)) return res(a);
          if (a.k === 'timestamp' && b.k === 'timestamp') return res(T.duration);
          if (a.k === 'timestamp' && b.k === 'duration') return res(T.timestamp);
          if (a.k === 'duration' && b.k === 'duration') return res(T.duration);
          return this.overload(e, fn, undefined, at);
        }
        case '_*_':
        case '_/_':
        case '_%_': {
          const [a, b] = at;
          if (isDyn(a) || isDyn(b)) return res(isDyn(a) ? b : a);
          if (a.k === b.k && NUMERIC.has(a.k) && !(fn === '_%_' && a.k === 'double')) return res(a);
          return this.overload(e, fn, undefined, at);
        }
        case OPT_INDEX_FN: {
          // a[?k]: the element or value at k when there is one (list(V), int / map(K, V), K, or
          // an optional of either, as cel-go's overloads of _[?_])
          const [c0, i] = at;
          const c = c0.k === 'optional' ? (c0.e ?? T.dyn) : c0;
          if (isDyn(c)) return res(optionalOf(T.dyn));
          if (c.k === 'list' && (i.k === 'int' || isDyn(i))) return res(optionalOf(c.e ?? T.dyn));
          if (c.k === 'map' && compatible(c.key ?? T.dyn, i)) return res(optionalOf(c.e ?? T.dyn));
          return this.overload(e, fn, undefined, at);
        }
        case '_[_]': {
          const [c, i] = at;
          if (c.k === 'optional') {
            // indexing an optional list or map (cel-go's optional_list_index_int, optional_map_index_value)
            const inner = c.e ?? T.dyn;
            this.optChain.add(String(e.id));
            if (isDyn(inner)) return res(optionalOf(T.dyn));
            if (inner.k === 'list' && (i.k === 'int' || isDyn(i))) return res(optionalOf(inner.e ?? T.dyn));
            if (inner.k === 'map' && compatible(inner.key ?? T.dyn, i)) return res(optionalOf(inner.e ?? T.dyn));
            return this.overload(e, fn, undefined, at);
          }
          if (isDyn(c)) return res(T.dyn);
          if (c.k === 'list' && (i.k === 'int' || i.k === 'uint' || isDyn(i))) return res(c.e ?? T.dyn);
          if (c.k === 'map' && compatible(c.key ?? T.dyn, i)) return res(c.e ?? T.dyn);
          return this.overload(e, fn, undefined, at);
        }
        case '@in': {
          const [x, c] = at;
          if (isDyn(c)) return res(T.bool);
          if (c.k === 'list' && compatible(x, c.e ?? T.dyn)) return res(T.bool, 1 + sizeOf(c));
          if (c.k === 'map' && compatible(x, c.key ?? T.dyn)) return res(T.bool);
          return this.overload(e, fn, undefined, at);
        }
        case 'size':
          return at.length === 1 && ['string', 'bytes', 'list', 'map', 'dyn'].includes(at[0].k) ? res(T.int) : this.overload(e, fn, undefined, at);
        case 'matches':
          if (at.length === 2 && [0, 1].every((i) => at[i].k === 'string' || isDyn(at[i]))) {
            this.noteRegex(call.args[1]);
            return res(T.bool, 1 + strCost(sizeOf(at[0])) * strCost(sizeOf(at[1]), 0.25));
          }
          return this.overload(e, fn, undefined, at);
        case 'int':
          return at.length === 1 && ['int', 'uint', 'double', 'string', 'timestamp', 'dyn'].includes(at[0].k) ? res(T.int) : this.overload(e, fn, undefined, at);
        case 'uint':
          return at.length === 1 && ['int', 'uint', 'double', 'string', 'dyn'].includes(at[0].k) ? res(T.uint) : this.overload(e, fn, undefined, at);
        case 'double':
          return at.length === 1 && ['int', 'uint', 'double', 'string', 'dyn'].includes(at[0].k) ? res(T.double) : this.overload(e, fn, undefined, at);
        case 'string':
          return at.length === 1 && !['list', 'map', 'object', 'url', 'quantity', 'format', 'semver', 'optional', 'type'].includes(at[0].k) ? res({ ...T.string, max: sizeOf(at[0]) }, 1 + strCost(sizeOf(at[0]))) : this.overload(e, fn, undefined, at);
        case 'bytes':
          return at.length === 1 && ['string', 'bytes', 'dyn'].includes(at[0].k) ? res(T.bytes) : this.overload(e, fn, undefined, at);
        case 'bool':
          return at.length === 1 && ['string', 'bool', 'dyn'].includes(at[0].k) ? res(T.bool) : this.overload(e, fn, undefined, at);
        case 'dyn':
          return at.length === 1 ? res(T.dyn) : this.overload(e, fn, undefined, at);
        case 'type':
          return at.length === 1 ? res(T.type) : this.overload(e, fn, undefined, at);
        case 'duration':
          return at.length === 1 && ['string', 'duration', 'dyn'].includes(at[0].k) ? res(T.duration) : this.overload(e, fn, undefined, at);
        case 'timestamp':
          return at.length === 1 && ['string', 'int', 'timestamp', 'dyn'].includes(at[0].k) ? res(T.timestamp) : this.overload(e, fn, undefined, at);
        case 'url':
        case 'ip':
        case 'cidr':
        case 'quantity':
          return at.length === 1 && (at[0].k === 'string' || isDyn(at[0])) ? res(T[fn], 1 + strCost(sizeOf(at[0]))) : this.overload(e, fn, undefined, at);
        case 'isURL':
        case 'isIP':
        case 'isCIDR':
        case 'isQuantity':
        case 'ip.isCanonical':
          return at.length === 1 && (at[0].k === 'string' || isDyn(at[0])) ? res(T.bool, 1 + strCost(sizeOf(at[0]))) : this.overload(e, fn, undefined, at);
        case 'sets.contains':
        case 'sets.equivalent':
        case 'sets.intersects':
          return at.length === 2 && at.every((t) => t.k === 'list' || isDyn(t)) ? res(T.bool, 1 + sizeOf(at[0]) * sizeOf(at[1])) : this.overload(e, fn, undefined, at);
        case 'semver':
        case 'isSemver': {
          const ok = (at.length === 1 || (at.length === 2 && (at[1].k === 'bool' || isDyn(at[1])))) && (at[0].k === 'string' || isDyn(at[0]));
          return ok ? res(fn === 'semver' ? T.semver : T.bool, 1 + strCost(sizeOf(at[0]))) : this.overload(e, fn, undefined, at);
        }
        case 'format.named':
          return at.length === 1 && (at[0].k === 'string' || isDyn(at[0])) ? res(optionalOf(T.format)) : this.overload(e, fn, undefined, at);
        case 'optional.of':
        case 'optional.ofNonZeroValue':
          return at.length === 1 ? res(optionalOf(at[0])) : this.overload(e, fn, undefined, at);
        case 'optional.none':
          return at.length === 0 ? res(optionalOf(T.dyn)) : this.overload(e, fn, undefined, at);
        case 'lists.range': {
          if (at.length !== 1 || !(at[0].k === 'int' || isDyn(at[0]))) return this.overload(e, fn, undefined, at);
          const n = constUint(call.args[0]) ?? UNBOUNDED;
          return res(listOf(T.int, n), 1 + LIST_CREATE_COST + n);
        }
        case 'cel.@mapInsert': {
          // (only in expanded transformMap/transformMapEntry: the accumulator and an entry, or a map of entries)
          const [m, k, v] = at;
          if (at.length === 3 && (m.k === 'map' || isDyn(m))) return res(mapOf(join(m.key ?? T.dyn, k), join(m.e ?? T.dyn, v), sizeOf(m)));
          if (at.length === 2 && (m.k === 'map' || isDyn(m)) && (k.k === 'map' || isDyn(k))) return res(mapOf(join(m.key ?? T.dyn, k.key ?? T.dyn), join(m.e ?? T.dyn, k.e ?? T.dyn), sizeOf(m)));
          return this.overload(e, fn, undefined, at);
        }
      }
      if (fn.startsWith('format.') && GLOBALS.has(fn)) return at.length === 0 ? res(T.format) : this.overload(e, fn, undefined, at);
      if (ALL_METHODS.has(fn)) return this.overload(e, fn, undefined, at);
      this.err(e, `undeclared reference to '${fn}' (in container '')`);
      return res(T.dyn);
    }

    // Receiver-style calls.
    const r = recv!.t;
    const mismatch = () => this.overload(e, fn, r, at);
    if (isDyn(r)) {
      if (!ALL_METHODS.has(fn)) {
        this.err(e, `undeclared reference to '${fn}' (in container '')`);
      }
      if (fn === 'matches' || fn === 'find' || fn === 'findAll') this.noteRegex(call.args[0]);
      const known = STRING_METHODS[fn];
      return res(known && !['size', 'indexOf', 'lastIndexOf', 'min', 'max', 'sum'].includes(fn) ? known.result(T.dyn) : T.dyn, 1 + strCost(MaxRequestSizeBytes));
    }
    switch (r.k) {
      case 'string': {
        const m = STRING_METHODS[fn];
        if (!m) break;
        const okArgs = m.args.some((sig) => sig.length === at.length && sig.every((k, i) => at[i].k === k || isDyn(at[i]) || (k === 'list' && at[i].k === 'list')));
        if (!okArgs && !(m.args.length === 0 && at.length === 0)) return mismatch();
        if (fn === 'matches' || fn === 'find' || fn === 'findAll') this.noteRegex(call.args[0]);
        return res(m.result(r), m.cost(r, at));
      }
      case 'bytes':
        if (fn === 'size' && at.length === 0) return res(T.int);
        break;
      case 'map':
        if (fn === 'size' && at.length === 0) return res(T.int);
        break;
      case 'list': {
        if (!LIST_METHODS.has(fn)) break;
        const e0 = r.e ?? T.dyn;
        const n = sizeOf(r);
        const per = e0.k === 'string' ? 1 + strCost(sizeOf(e0)) : 1;
        switch (fn) {
          case 'size':
            return at.length === 0 ? res(T.int) : mismatch();
          case 'join':
            if (!(e0.k === 'string' || isDyn(e0)) || at.length > 1 || (at.length === 1 && at[0].k !== 'string' && !isDyn(at[0]))) return mismatch();
            return res({ ...T.string, max: n * sizeOf(e0) }, 1 + Math.ceil(n * per));
          case 'isSorted':
            if (at.length !== 0 || !(isDyn(e0) || ['int', 'uint', 'double', 'string', 'bool', 'bytes', 'timestamp', 'duration'].includes(e0.k))) return mismatch();
            return res(T.bool, 1 + Math.ceil(n * per));
          case 'sum':
            if (at.length !== 0 || !(isDyn(e0) || ['int', 'uint', 'double', 'duration'].includes(e0.k))) return mismatch();
            return res(e0, 1 + n);
          case 'min':
          case 'max':
            if (at.length !== 0 || !(isDyn(e0) || ['int', 'uint', 'double', 'string', 'bool', 'bytes', 'timestamp', 'duration'].includes(e0.k))) return mismatch();
            return res(e0, 1 + Math.ceil(n * per));
          case 'indexOf':
          case 'lastIndexOf':
            if (at.length !== 1 || !compatible(at[0], e0)) return mismatch();
            return res(T.int, 1 + Math.ceil(n * per));
          // ext.Lists (version 3), with its cost estimators
          case 'slice': {
            if (at.length !== 2 || !at.every((t) => t.k === 'int' || isDyn(t))) return mismatch();
            const size = Math.max(0, (constUint(call.args[1]) ?? n) - (constUint(call.args[0]) ?? 0));
            return res(listOf(e0, size), 1 + LIST_CREATE_COST + size);
          }
          case 'flatten': {
            if (at.length === 0) {
              if (!(e0.k === 'list' || isDyn(e0))) return mismatch();
              return res(listOf(e0.e ?? T.dyn, n), 1 + LIST_CREATE_COST + n);
            }
            if (at.length !== 1 || !(at[0].k === 'int' || isDyn(at[0]))) return mismatch();
            return res(listOf(T.dyn, n), 1 + LIST_CREATE_COST + n * (constUint(call.args[0]) ?? UNBOUNDED));
          }
          case 'sort':
            if (at.length !== 0 || !SORTABLE.has(e0.k)) return mismatch();
            return res(listOf(e0, n), 1 + LIST_CREATE_COST + Math.ceil(n * n * (e0.k === 'string' || e0.k === 'bytes' ? 2.1 : 2)));
          case '@sortByAssociatedKeys': {
            // (sortBy's expansion: the list, sorted by the keys its map() computed)
            const keys = at[0];
            const k0 = keys?.k === 'list' ? (keys.e ?? T.dyn) : T.dyn;
            if (at.length !== 1 || !(keys.k === 'list' || isDyn(keys)) || !SORTABLE.has(k0.k)) return mismatch();
            const m = sizeOf(keys);
            return res(listOf(e0, n), 1 + LIST_CREATE_COST + Math.ceil(m * m * (k0.k === 'string' || k0.k === 'bytes' ? 2.1 : 2)));
          }
          case 'reverse':
            return at.length === 0 ? res(listOf(e0, n), 1 + LIST_CREATE_COST + n) : mismatch();
          case 'distinct':
            return at.length === 0 ? res(listOf(e0, n), 1 + LIST_CREATE_COST + 2 * n * n) : mismatch();
        }
        break;
      }
      case 'timestamp':
        if (TIMESTAMP_GETTERS.has(fn)) return at.length === 0 || (at.length === 1 && (at[0].k === 'string' || isDyn(at[0]))) ? res(T.int) : mismatch();
        break;
      case 'duration':
        if (DURATION_GETTERS.has(fn)) return at.length === 0 ? res(T.int) : mismatch();
        break;
      case 'url':
        if (URL_GETTERS.has(fn)) return at.length === 0 ? res(T.string) : mismatch();
        if (fn === 'getQuery') return at.length === 0 ? res(mapOf(T.string, listOf(T.string))) : mismatch();
        break;
      case 'ip':
        if (fn === 'family') return at.length === 0 ? res(T.int) : mismatch();
        if (IP_PREDICATES.has(fn)) return at.length === 0 ? res(T.bool) : mismatch();
        break;
      case 'cidr':
        if (fn === 'containsIP') return at.length === 1 && ['ip', 'string', 'dyn'].includes(at[0].k) ? res(T.bool) : mismatch();
        if (fn === 'containsCIDR') return at.length === 1 && ['cidr', 'string', 'dyn'].includes(at[0].k) ? res(T.bool) : mismatch();
        if (fn === 'ip') return at.length === 0 ? res(T.ip) : mismatch();
        if (fn === 'masked') return at.length === 0 ? res(T.cidr) : mismatch();
        if (fn === 'prefixLength') return at.length === 0 ? res(T.int) : mismatch();
        break;
      case 'quantity':
        if (!QUANTITY_METHODS.has(fn)) break;
        switch (fn) {
          case 'isInteger':
            return at.length === 0 ? res(T.bool) : mismatch();
          case 'asInteger':
          case 'sign':
            return at.length === 0 ? res(T.int) : mismatch();
          case 'asApproximateFloat':
            return at.length === 0 ? res(T.double) : mismatch();
          case 'add':
          case 'sub':
            return at.length === 1 && ['quantity', 'int', 'dyn'].includes(at[0].k) ? res(T.quantity) : mismatch();
          case 'isGreaterThan':
          case 'isLessThan':
            return at.length === 1 && ['quantity', 'dyn'].includes(at[0].k) ? res(T.bool) : mismatch();
          case 'compareTo':
            return at.length === 1 && ['quantity', 'dyn'].includes(at[0].k) ? res(T.int) : mismatch();
        }
        break;
      case 'semver':
        if (!SEMVER_METHODS.has(fn)) break;
        if (fn === 'major' || fn === 'minor' || fn === 'patch') return at.length === 0 ? res(T.int) : mismatch();
        return at.length === 1 && ['semver', 'dyn'].includes(at[0].k) ? res(fn === 'compareTo' ? T.int : T.bool) : mismatch();
      case 'format':
        if (fn !== 'validate') break;
        if (at.length !== 1 || !(at[0].k === 'string' || isDyn(at[0]))) return mismatch();
        // (the messages are a few short sentences; cel-go leaves their size unknown)
        return res(optionalOf(listOf({ ...T.string, max: 512 }, 4)), 1 + strCost(sizeOf(at[0])) * FORMAT_VALIDATE_FACTOR);
      case 'optional':
        if (fn === 'hasValue') return at.length === 0 ? res(T.bool) : mismatch();
        if (fn === 'value') return at.length === 0 ? res(r.e ?? T.dyn) : mismatch();
        if (fn === 'orValue') return at.length === 1 && compatible(at[0], r.e ?? T.dyn) ? res(join(r.e ?? T.dyn, at[0])) : mismatch();
        if (fn === 'or') return at.length === 1 && (at[0].k === 'optional' || isDyn(at[0])) && compatible(at[0].e ?? T.dyn, r.e ?? T.dyn) ? res(optionalOf(join(r.e ?? T.dyn, at[0].e ?? T.dyn))) : mismatch();
        break;
    }
    if (ALL_METHODS.has(fn) || GLOBALS.has(fn)) return mismatch();
    this.err(e, `undeclared reference to '${fn}' (in container '')`);
    return res(T.dyn);
  }

  private noteRegex(arg: Expr | undefined): void {
    const c = arg?.exprKind?.case === 'constExpr' ? arg.exprKind.value.constantKind : undefined;
    if (c?.case === 'stringValue') this.regexes.push({ offset: this.positions[String(arg.id)] ?? 0, pattern: c.value });
  }
}

/** cel-go's issue rendering: "ERROR: <input>:L:C: msg\n | source line\n | ....^". */
function renderIssues(src: string, issues: Issue[]): string {
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

// ---------------------------------------------------------------------------------------------
// Macros @bufbuild/cel's parser does not expand, and what its planner cannot run.
//
// After parsing, the macros of kube's environment that @bufbuild/cel leaves as plain calls are
// expanded the way cel-go expands them: the two-variable comprehensions (all, exists, existsOne,
// exists_one, transformList, transformMap, transformMapEntry with an index/key and a value
// variable), ext.Lists' sortBy, and the optional library's optMap and optFlatMap. The checker
// then sees cel-go's AST (comprehensions with iterVar2, cel.bind-shaped bindings). Before
// planning, comprehensions with two variables — which @bufbuild/cel's planner does not run —
// are lowered to one-variable ones over the (index, value) or (key, value) pairs of their range,
// with both variables bound per iteration by bindings (a comprehension over [] whose accumulator
// is the variable, as cel.bind expands). Rule text cannot name the lowering's identifiers: they
// start with '@'.

/** cel-go's accumulator variable, and the name it reserves (iteration variables may not take either). */
const ACCU = '@result';
const LEGACY_ACCU = '__result__';
/** The iteration variable of a binding (cel-go's unusedIterVar). */
const BIND_ITER_VAR = '#unused';
const PAIR_VAR = '@kv';
const OR_VAR = '@or';
const SORT_BY_VAR = '@__sortBy_input__';

interface SourceInfo {
  positions: Record<string, number>;
  macroCalls: Record<string, any>;
}

/** Builds AST nodes with fresh ids, their positions those of the call they expand. */
class AstBuilder {
  private nextId: bigint;

  constructor(private readonly info: SourceInfo) {
    let max = 0n;
    for (const k of Object.keys(info.positions)) if (BigInt(k) > max) max = BigInt(k);
    this.nextId = max;
  }

  private node(offset: number, kind: string, value: object): Expr {
    const id = ++this.nextId;
    this.info.positions[String(id)] = offset;
    return { $typeName: 'cel.expr.Expr', id, exprKind: { case: kind, value } };
  }
  ident(offset: number, name: string): Expr {
    return this.node(offset, 'identExpr', { $typeName: 'cel.expr.Expr.Ident', name });
  }
  call(offset: number, fn: string, args: Expr[], target?: Expr): Expr {
    return this.node(offset, 'callExpr', { $typeName: 'cel.expr.Expr.Call', function: fn, args, ...(target ? { target } : {}) });
  }
  bool(offset: number, value: boolean): Expr {
    return this.node(offset, 'constExpr', { $typeName: 'cel.expr.Constant', constantKind: { case: 'boolValue', value } });
  }
  int(offset: number, value: bigint): Expr {
    return this.node(offset, 'constExpr', { $typeName: 'cel.expr.Constant', constantKind: { case: 'int64Value', value } });
  }
  str(offset: number, value: string): Expr {
    return this.node(offset, 'constExpr', { $typeName: 'cel.expr.Constant', constantKind: { case: 'stringValue', value } });
  }
  list(offset: number, elements: Expr[]): Expr {
    return this.node(offset, 'listExpr', { $typeName: 'cel.expr.Expr.CreateList', elements, optionalIndices: [] });
  }
  emptyMap(offset: number): Expr {
    return this.node(offset, 'structExpr', { $typeName: 'cel.expr.Expr.CreateStruct', messageName: '', entries: [] });
  }
  comprehension(offset: number, c: { iterRange: Expr; iterVar: string; iterVar2?: string; accuVar: string; accuInit: Expr; loopCondition: Expr; loopStep: Expr; result: Expr }): Expr {
    return this.node(offset, 'comprehensionExpr', { $typeName: 'cel.expr.Expr.Comprehension', iterVar2: '', ...c });
  }
  /** cel.bind(name, init, body) as cel-go expands it. */
  bind(offset: number, name: string, init: Expr, body: Expr): Expr {
    return this.comprehension(offset, { iterRange: this.list(offset, []), iterVar: BIND_ITER_VAR, accuVar: name, accuInit: init, loopCondition: this.bool(offset, false), loopStep: this.ident(offset, name), result: body });
  }
  /** Records what an expansion came from (the checker reads the macro's name). */
  macro(e: Expr, fn: string): Expr {
    this.info.macroCalls[String(e.id)] = { $typeName: 'cel.expr.Expr', id: 0n, exprKind: { case: 'callExpr', value: { $typeName: 'cel.expr.Expr.Call', function: fn, args: [] } } };
    return e;
  }
}

/** Replaces each child of e by f(child), in place. */
function mapChildren(e: Expr, f: (c: Expr) => Expr): void {
  const v = e.exprKind.value;
  switch (e.exprKind.case) {
    case 'selectExpr':
      v.operand = f(v.operand);
      break;
    case 'callExpr':
      if (v.target) v.target = f(v.target);
      v.args = v.args.map(f);
      break;
    case 'listExpr':
      v.elements = v.elements.map(f);
      break;
    case 'structExpr':
      for (const entry of v.entries) {
        if (entry.keyKind?.case === 'mapKey') entry.keyKind.value = f(entry.keyKind.value);
        entry.value = f(entry.value);
      }
      break;
    case 'comprehensionExpr':
      for (const k of ['iterRange', 'accuInit', 'loopCondition', 'loopStep', 'result']) v[k] = f(v[k]);
      break;
  }
}

const identName = (e: Expr | undefined): string | undefined => (e?.exprKind?.case === 'identExpr' ? (e.exprKind.value.name as string) : undefined);

/** The two-variable comprehension macros (ext.TwoVarComprehensions) and their argument counts. */
const TWO_VAR_MACROS = new Map<string, number[]>([
  ['all', [3]],
  ['exists', [3]],
  ['existsOne', [3]],
  ['exists_one', [3]],
  ['transformList', [3, 4]],
  ['transformMap', [3, 4]],
  ['transformMapEntry', [3, 4]],
]);

/** Expands the macros @bufbuild/cel leaves unexpanded (see above); returns the expansion errors. */
function expandMacros(parsed: { expr: Expr; sourceInfo: SourceInfo }): Issue[] {
  const info = parsed.sourceInfo;
  const b = new AstBuilder(info);
  const issues: Issue[] = [];
  const at = (e: Expr) => info.positions[String(e.id)] ?? 0;
  const fail = (e: Expr, message: string): undefined => {
    issues.push({ offset: at(e), message });
    return undefined;
  };
  const iterVar = (arg: Expr, message: string): string | undefined => {
    const name = identName(arg);
    if (name === undefined) return fail(arg, message);
    if (name === ACCU || name === LEGACY_ACCU) return fail(arg, 'iteration variable overwrites accumulator variable');
    return name;
  };

  const twoVar = (e: Expr, fn: string, target: Expr, args: Expr[]): Expr => {
    const o = at(e);
    const v1 = identName(args[0]);
    const v2 = identName(args[1]);
    if (v1 === undefined) return fail(args[0], 'argument must be a simple name') ?? e;
    if (v2 === undefined) return fail(args[1], 'argument must be a simple name') ?? e;
    if (v1 === v2) return fail(args[1], `duplicate variable name: ${v1}`) ?? e;
    if (v1 === ACCU || v1 === LEGACY_ACCU) return fail(args[0], 'iteration variable overwrites accumulator variable') ?? e;
    if (v2 === ACCU || v2 === LEGACY_ACCU) return fail(args[1], 'iteration variable overwrites accumulator variable') ?? e;
    const accu = () => b.ident(o, ACCU);
    const filter = args.length === 4 ? args[2] : undefined;
    const transform = args[args.length - 1];
    const filtered = (step: Expr) => (filter ? b.call(o, '_?_:_', [filter, step, accu()]) : step);
    let accuInit: Expr;
    let loopCondition: Expr;
    let loopStep: Expr;
    let result: Expr = accu();
    switch (fn) {
      case 'all':
        accuInit = b.bool(o, true);
        loopCondition = b.call(o, '@not_strictly_false', [accu()]);
        loopStep = b.call(o, '_&&_', [accu(), args[2]]);
        break;
      case 'exists':
        accuInit = b.bool(o, false);
        loopCondition = b.call(o, '@not_strictly_false', [b.call(o, '!_', [accu()])]);
        loopStep = b.call(o, '_||_', [accu(), args[2]]);
        break;
      case 'existsOne':
      case 'exists_one':
        accuInit = b.int(o, 0n);
        loopCondition = b.bool(o, true);
        loopStep = b.call(o, '_?_:_', [args[2], b.call(o, '_+_', [accu(), b.int(o, 1n)]), accu()]);
        result = b.call(o, '_==_', [accu(), b.int(o, 1n)]);
        break;
      case 'transformList':
        accuInit = b.list(o, []);
        loopCondition = b.bool(o, true);
        loopStep = filtered(b.call(o, '_+_', [accu(), b.list(o, [transform])]));
        break;
      case 'transformMap':
        accuInit = b.emptyMap(o);
        loopCondition = b.bool(o, true);
        loopStep = filtered(b.call(o, 'cel.@mapInsert', [accu(), b.ident(o, v1), transform]));
        break;
      default: // transformMapEntry
        accuInit = b.emptyMap(o);
        loopCondition = b.bool(o, true);
        loopStep = filtered(b.call(o, 'cel.@mapInsert', [accu(), transform]));
        break;
    }
    return b.macro(b.comprehension(o, { iterRange: target, iterVar: v1, iterVar2: v2, accuVar: ACCU, accuInit, loopCondition, loopStep, result }), fn);
  };

  /** ext.Lists' sortBy: cel.bind(@__sortBy_input__, target, @__sortBy_input__.@sortByAssociatedKeys(@__sortBy_input__.map(v, key))). */
  const sortBy = (e: Expr, target: Expr, args: Expr[]): Expr => {
    const o = at(e);
    if (!['listExpr', 'selectExpr', 'identExpr', 'comprehensionExpr', 'callExpr'].includes(target.exprKind.case)) {
      return fail(target, 'sortBy can only be applied to a list, identifier, comprehension, call or select expression') ?? e;
    }
    const v = iterVar(args[0], 'argument is not an identifier');
    if (v === undefined) return e;
    const keys = b.macro(
      b.comprehension(o, { iterRange: b.ident(o, SORT_BY_VAR), iterVar: v, accuVar: ACCU, accuInit: b.list(o, []), loopCondition: b.bool(o, true), loopStep: b.call(o, '_+_', [b.ident(o, ACCU), b.list(o, [args[1]])]), result: b.ident(o, ACCU) }),
      'map',
    );
    return b.macro(b.bind(o, SORT_BY_VAR, target, b.call(o, '@sortByAssociatedKeys', [keys], b.ident(o, SORT_BY_VAR))), 'sortBy');
  };

  /** optMap: target.hasValue() ? optional.of(cel.bind(v, target.value(), expr)) : optional.none(); optFlatMap without the optional.of. */
  const optMap = (e: Expr, fn: string, target: Expr, args: Expr[]): Expr => {
    const o = at(e);
    const v = identName(args[0]);
    if (v === undefined) return fail(args[0], `${fn}() variable name must be a simple identifier`) ?? e;
    let mapped = b.bind(o, v, b.call(o, 'value', [], target), args[1]);
    if (fn === 'optMap') mapped = b.call(o, 'optional.of', [mapped]);
    return b.macro(b.call(o, '_?_:_', [b.call(o, 'hasValue', [], target), mapped, b.call(o, 'optional.none', [])]), fn);
  };

  const visit = (e: Expr): Expr => {
    mapChildren(e, visit);
    if (e.exprKind.case !== 'callExpr') return e;
    const call = e.exprKind.value;
    const fn = call.function as string;
    const args = call.args as Expr[];
    if (!call.target) return e;
    if (TWO_VAR_MACROS.get(fn)?.includes(args.length)) return twoVar(e, fn, call.target, args);
    if (fn === 'sortBy' && args.length === 2) return sortBy(e, call.target, args);
    if ((fn === 'optMap' || fn === 'optFlatMap') && args.length === 2) return optMap(e, fn, call.target, args);
    return e;
  };
  parsed.expr = visit(parsed.expr);
  return issues;
}

/** Whether e reads one of the names (a comprehension or binding that rebinds it hides it below). */
function readsAny(e: Expr, names: Set<string>): boolean {
  switch (e.exprKind.case) {
    case 'identExpr':
      return names.has(e.exprKind.value.name);
    case 'comprehensionExpr': {
      const c = e.exprKind.value;
      if (readsAny(c.iterRange, names) || readsAny(c.accuInit, names)) return true;
      const inner = new Set([...names].filter((n) => n !== c.iterVar && n !== c.iterVar2 && n !== c.accuVar));
      return inner.size > 0 && (readsAny(c.loopCondition, inner) || readsAny(c.loopStep, inner) || readsAny(c.result, inner));
    }
  }
  let found = false;
  mapChildren(e, (c) => {
    found ||= readsAny(c, names);
    return c;
  });
  return found;
}

// ---------------------------------------------------------------------------------------------
// The optional syntax, which @bufbuild/cel's parser does not accept.
//
// cel-go parses `a.?b` as the call _?._(a, "b"), `a[?k]` as _[?_](a, k), and marks optional list
// elements (`[a, ?b]`: the list's optionalIndices) and map entries (`{?k: v}`: the entry's
// optionalEntry). Before parsing, the `?` of each is replaced by a space — which keeps every
// offset, so positions and error carets stay those of the rule text — and its place recorded:
// the offset of the `.` or `[` (the select node's or index call's position) and, for literals,
// the offset of the `[` or `{` (the literal's position) with the indices of the optional
// elements. After parsing, the recorded nodes are turned into cel-go's forms. A tokenizer skips
// string and bytes literals (quoted, triple-quoted, raw) and comments, so a `?` in them is kept.

const OPT_SELECT_FN = '_?._';
const OPT_INDEX_FN = '_[?_]';

interface OptionalSyntax {
  /** the rule text with the optional markers blanked */
  text: string;
  /** offsets of the `.` of each `.?` */
  selects: Set<number>;
  /** offsets of the `[` of each `[?` that indexes */
  indexes: Set<number>;
  /** offset of the `[` of a list literal → indices of its optional elements */
  lists: Map<number, Set<number>>;
  /** offset of the `{` of a map literal → indices of its optional entries */
  maps: Map<number, Set<number>>;
}

const IDENT_START = /[_a-zA-Z]/;
const IDENT_PART = /[_a-zA-Z0-9]/;
const NUMBER = /0[xX][0-9a-fA-F]+[uU]?|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?[uU]?|\.[0-9]+(?:[eE][+-]?[0-9]+)?/y;

/** Finds the optional syntax in src (see above); returns undefined when there is none. */
function scanOptionalSyntax(src: string): OptionalSyntax | undefined {
  if (!src.includes('?')) return undefined;
  // (offsets are UTF-16 code units, as the parser's are; split('') keeps them)
  const text = src.split('');
  const out: OptionalSyntax = { text: '', selects: new Set(), indexes: new Set(), lists: new Map(), maps: new Map() };
  const stack: { kind: '(' | 'index' | 'list' | 'map'; open: number; count: number }[] = [];
  /** whether the last token ends an operand (so `[` indexes it and `.` selects from it) */
  let operand = false;
  const skip = (i: number): number => {
    for (;;) {
      while (i < src.length && /[ \t\n\r\f]/.test(src[i])) i++;
      if (src.startsWith('//', i)) {
        while (i < src.length && src[i] !== '\n') i++;
        continue;
      }
      return i;
    }
  };
  /** Blanks a `?` that starts at or after i (whitespace and comments between); returns whether it did. */
  const marker = (i: number): boolean => {
    const j = skip(i);
    if (src[j] !== '?') return false;
    text[j] = ' ';
    return true;
  };
  const element = (top: { kind: string; open: number; count: number }) => {
    const m = top.kind === 'list' ? out.lists : out.maps;
    let set = m.get(top.open);
    if (!set) m.set(top.open, (set = new Set()));
    set.add(top.count);
  };
  let found = false;
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/[ \t\n\r\f]/.test(c)) {
      i++;
      continue;
    }
    if (src.startsWith('//', i)) {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    // string and bytes literals, with their r/b prefixes
    const lit = /^(?:[rR][bB]?|[bB][rR]?)?("""|'''|"|')/.exec(src.slice(i, i + 5));
    if (lit) {
      const raw = /[rR]/.test(lit[0].slice(0, lit[0].length - lit[1].length));
      const q = lit[1];
      let j = i + lit[0].length;
      while (j < src.length && !src.startsWith(q, j)) j += !raw && src[j] === '\\' ? 2 : 1;
      i = j + q.length;
      operand = true;
      continue;
    }
    if (IDENT_START.test(c)) {
      let j = i + 1;
      while (j < src.length && IDENT_PART.test(src[j])) j++;
      operand = src.slice(i, j) !== 'in';
      i = j;
      continue;
    }
    NUMBER.lastIndex = i;
    if (/[0-9]/.test(c) || (c === '.' && !operand && /[0-9]/.test(src[i + 1] ?? ''))) {
      const m = NUMBER.exec(src);
      i += m ? m[0].length : 1;
      operand = true;
      continue;
    }
    switch (c) {
      case '.':
        if (marker(i + 1)) {
          out.selects.add(i);
          found = true;
        }
        operand = false;
        break;
      case '[':
        if (operand) {
          if (marker(i + 1)) {
            out.indexes.add(i);
            found = true;
          }
          stack.push({ kind: 'index', open: i, count: 0 });
        } else {
          const top = { kind: 'list' as const, open: i, count: 0 };
          stack.push(top);
          if (marker(i + 1)) {
            element(top);
            found = true;
          }
        }
        operand = false;
        break;
      case '{': {
        const top = { kind: 'map' as const, open: i, count: 0 };
        stack.push(top);
        if (marker(i + 1)) {
          element(top);
          found = true;
        }
        operand = false;
        break;
      }
      case '(':
        stack.push({ kind: '(', open: i, count: 0 });
        operand = false;
        break;
      case ')':
      case ']':
      case '}':
        stack.pop();
        operand = true;
        break;
      case ',': {
        const top = stack[stack.length - 1];
        if (top && (top.kind === 'list' || top.kind === 'map')) {
          top.count++;
          if (marker(i + 1)) {
            element(top);
            found = true;
          }
        }
        operand = false;
        break;
      }
      default:
        operand = false;
    }
    i++;
  }
  if (!found) return undefined;
  out.text = text.join('');
  return out;
}

/**
 * Turns the nodes scanOptionalSyntax recorded into cel-go's forms; returns an issue for each
 * marker no node took (`.?` before a call, or as the argument of has()).
 */
function applyOptionalSyntax(parsed: { expr: Expr; sourceInfo: SourceInfo }, syn: OptionalSyntax, src: string): Issue[] {
  const info = parsed.sourceInfo;
  const b = new AstBuilder(info);
  const selects = new Set(syn.selects);
  const indexes = new Set(syn.indexes);
  const lists = new Map(syn.lists);
  const maps = new Map(syn.maps);
  const visit = (e: Expr): Expr => {
    mapChildren(e, visit);
    const pos = info.positions[String(e.id)];
    const v = e.exprKind.value;
    switch (e.exprKind.case) {
      case 'selectExpr':
        if (!v.testOnly && selects.delete(pos)) {
          e.exprKind = { case: 'callExpr', value: { $typeName: 'cel.expr.Expr.Call', function: OPT_SELECT_FN, args: [v.operand, b.str(pos, v.field)] } };
        }
        break;
      case 'callExpr':
        if (v.function === '_[_]' && !v.target && indexes.delete(pos)) v.function = OPT_INDEX_FN;
        break;
      case 'listExpr': {
        const opt = lists.get(pos);
        if (opt) {
          lists.delete(pos);
          v.optionalIndices = [...opt].filter((i) => i < v.elements.length).sort((x, y) => x - y);
        }
        break;
      }
      case 'structExpr': {
        const opt = maps.get(pos);
        if (opt) {
          maps.delete(pos);
          v.entries.forEach((en: any, i: number) => {
            if (opt.has(i)) en.optionalEntry = true;
          });
        }
        break;
      }
    }
    return e;
  };
  parsed.expr = visit(parsed.expr);
  const issues: Issue[] = [];
  for (const at of selects) {
    // `a.?b(...)`, or has(a.?b) (the has() macro replaced the selection)
    const rest = /^\.\s*\??\s*[_a-zA-Z][_a-zA-Z0-9]*\s*(\()?/.exec(src.slice(at));
    issues.push({ offset: at, message: rest?.[1] ? "unsupported syntax '.?'" : 'invalid argument to has() macro' });
  }
  for (const at of [...indexes, ...lists.keys(), ...maps.keys()]) issues.push({ offset: at, message: "unsupported syntax '?'" });
  return issues;
}

/**
 * Lowers what @bufbuild/cel's planner cannot run (after checking): each comprehension over two
 * variables becomes one over @pairs(range), its variables bound from each pair; the optional
 * syntax becomes calls of internal functions: `_?._` and selections on optional values
 * @optSelect(operand, field), `_[?_]` and indexing of optional values @optIndex(operand, key),
 * has() of a field of an optional value @optSelect(operand, field).hasValue(), and list and map
 * literals with optional elements or entries @optList([elements], [optional indices]) and
 * @optMap([keys], [values], [optional indices]). optChain holds the ids of the selections and
 * index calls whose operand the checker typed optional.
 */
function lowerForPlan(parsed: { expr: Expr; sourceInfo: SourceInfo }, optChain: ReadonlySet<string>): void {
  const b = new AstBuilder(parsed.sourceInfo);
  const ints = (o: number, xs: number[]) => b.list(o, xs.map((x) => b.int(o, BigInt(x))));
  const visit = (e: Expr): Expr => {
    mapChildren(e, visit);
    const o = parsed.sourceInfo.positions[String(e.id)] ?? 0;
    const v = e.exprKind.value;
    switch (e.exprKind.case) {
      case 'callExpr':
        if (v.function === OPT_SELECT_FN) v.function = OPT_SELECT;
        else if (v.function === OPT_INDEX_FN || (v.function === '_[_]' && optChain.has(String(e.id)))) v.function = OPT_INDEX;
        else if ((v.function === 'orValue' || v.function === 'or') && v.target && v.args.length === 1) {
          // cel-go evaluates the argument only when the target is none (an error in it is not
          // reached otherwise): x.orValue(d) is bind(t, x, t has a value ? t.value() : d).
          const t = () => b.ident(o, OR_VAR);
          const present = b.call(o, OPT_PRESENT, [t(), b.str(o, v.function)]);
          const [then, otherwise] = v.function === 'orValue' ? [b.call(o, 'value', [], t()), v.args[0]] : [t(), b.call(o, OPT_OR_ARG, [v.args[0]])];
          return b.bind(o, OR_VAR, v.target, b.call(o, '_?_:_', [present, then, otherwise]));
        }
        return e;
      case 'selectExpr': {
        if (!optChain.has(String(e.id))) return e;
        const sel = b.call(o, OPT_SELECT, [v.operand, b.str(o, v.field)]);
        return v.testOnly ? b.call(o, 'hasValue', [], sel) : sel;
      }
      case 'listExpr': {
        const idx = (v.optionalIndices ?? []) as number[];
        if (idx.length === 0) return e;
        return b.call(o, OPT_LIST, [b.list(o, v.elements), ints(o, [...idx])]);
      }
      case 'structExpr': {
        if (v.messageName || !v.entries.some((en: any) => en.optionalEntry)) return e;
        const entries = v.entries as any[];
        const opt = entries.flatMap((en, i) => (en.optionalEntry ? [i] : []));
        return b.call(o, OPT_MAP, [b.list(o, entries.map((en) => en.keyKind.value)), b.list(o, entries.map((en) => en.value)), ints(o, opt)]);
      }
      case 'comprehensionExpr':
        break;
      default:
        return e;
    }
    if (!v.iterVar2) return e;
    const c = v;
    const vars = new Set<string>([c.iterVar, c.iterVar2]);
    const bound = (body: Expr) =>
      b.bind(o, c.iterVar, b.call(o, '_[_]', [b.ident(o, PAIR_VAR), b.int(o, 0n)]), b.bind(o, c.iterVar2, b.call(o, '_[_]', [b.ident(o, PAIR_VAR), b.int(o, 1n)]), body));
    c.iterRange = b.call(o, PAIRS, [c.iterRange]);
    if (readsAny(c.loopCondition, vars)) c.loopCondition = bound(c.loopCondition);
    c.loopStep = bound(c.loopStep);
    c.iterVar = PAIR_VAR;
    c.iterVar2 = '';
    return e;
  };
  parsed.expr = visit(parsed.expr);
}

interface CompiledExpr {
  program?: (ctx: any) => unknown;
  error?: string;
  resultType?: CT;
  cost: number;
  usesOldSelf: boolean;
}

/** Parses, checks and plans one expression with self/oldSelf of the given types. */
function compileExpr(src: string, selfT: CT, oldSelfT: CT): CompiledExpr {
  let parsed: any;
  const syn = scanOptionalSyntax(src);
  try {
    // (@bufbuild/cel's parser ends a // comment only at a newline, cel-go's also at the end of the text)
    const text = syn ? syn.text : src;
    parsed = parse(text.includes('//') ? `${text}\n` : text);
  } catch (e: any) {
    const loc = e?.location?.start;
    const offset = typeof loc?.offset === 'number' ? loc.offset : 0;
    const raw = String(e?.message ?? e).replace(/^<input>:\d+:\d+:\s*/, '');
    return { error: renderIssues(src, [{ offset, message: `Syntax error: ${raw}` }]), cost: 0, usesOldSelf: false };
  }
  parsed.sourceInfo ??= { positions: {}, macroCalls: {} };
  if (syn) {
    const synIssues = applyOptionalSyntax(parsed, syn, src);
    if (synIssues.length) return { error: renderIssues(src, synIssues), cost: 0, usesOldSelf: false };
  }
  const macroIssues = expandMacros(parsed);
  if (macroIssues.length) return { error: renderIssues(src, macroIssues), cost: 0, usesOldSelf: false };
  const checker = new Checker(parsed.sourceInfo.positions, parsed.sourceInfo.macroCalls);
  const scope = new Map<string, CT>([
    ['self', selfT],
    ['oldSelf', oldSelfT],
  ]);
  const checked = checker.check(parsed.expr, scope);
  if (checker.issues.length) return { error: renderIssues(src, checker.issues), cost: checked.cost, usesOldSelf: checker.usesOldSelf };
  for (const r of checker.regexes) {
    const err = re2Error(r.pattern);
    if (err) return { error: `program instantiation failed: ${err}`, cost: 0, usesOldSelf: checker.usesOldSelf, resultType: checked.t };
  }
  lowerForPlan(parsed, checker.optChain);
  const program = plan(env(), parsed) as (ctx: any) => unknown;
  return { program, resultType: checked.t, cost: checked.cost, usesOldSelf: checker.usesOldSelf };
}

// ---------------------------------------------------------------------------------------------
// Field paths of rules (kube's ValidFieldPath).

/** Validates a rule's fieldPath against the node schema; returns the normalized path or an error. */
export function validFieldPath(jsonPath: string, schema: unknown): { path?: string; error?: string } {
  const tokens: string[] = [];
  for (let i = 0; i < jsonPath.length; ) {
    const ch = jsonPath[i];
    if (ch === '.' || ch === '[' || ch === ']') {
      tokens.push(ch);
      i++;
    } else if (ch === "'") {
      let j = i + 1;
      while (j < jsonPath.length && !(jsonPath[j] === "'" && jsonPath[j - 1] !== '\\')) j++;
      tokens.push(jsonPath.slice(i, Math.min(j + 1, jsonPath.length)));
      i = j + 1;
    } else {
      let j = i;
      while (j < jsonPath.length && !'.[]'.includes(jsonPath[j])) j++;
      tokens.push(jsonPath.slice(i, j));
      i = j;
    }
  }
  let s: any = schema;
  let path = '';
  const append = (name: string, named: boolean): string | undefined => {
    if (named) {
      path = path === '' ? name : `${path}.${name}`;
      const p = isPlainObject(s?.properties) ? s.properties[name] : undefined;
      if (!isPlainObject(p)) return 'does not refer to a valid field';
      s = p;
    } else {
      path = `${path}[${name}]`;
      s = isPlainObject(s?.additionalProperties) ? s.additionalProperties : undefined;
    }
    return undefined;
  };
  const namedHere = (): boolean | undefined => (isPlainObject(s?.properties) ? true : s?.additionalProperties !== undefined ? false : undefined);
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i];
    if (tok === '[') {
      const q = tokens[++i];
      if (q === undefined) return { error: 'unexpected end of JSON path' };
      if (q.length < 2 || q[0] !== "'" || q[q.length - 1] !== "'") return { error: `expected single quoted string but got ${q}` };
      let bad: string | undefined;
      const unescaped = q.slice(1, -1).replace(/\\./g, (m) => {
        const map: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', "'": "'", '\\': '\\' };
        if (!(m[1] in map)) bad = `invalid escape char ${m}`;
        return map[m[1]] ?? '';
      });
      if (bad) return { error: `invalid string literal: ${bad}` };
      const named = namedHere();
      if (named === undefined) return { error: 'does not refer to a valid field' };
      const err = append(unescaped, named);
      if (err) return { error: err };
      const close = tokens[++i];
      if (close === undefined) return { error: 'unexpected end of JSON path' };
      if (close !== ']') return { error: `expected ] but got ${close}` };
    } else if (tok === '.') {
      const name = tokens[++i];
      if (name === undefined) return { error: 'unexpected end of JSON path' };
      const named = namedHere();
      if (named === undefined) return { error: 'does not refer to a valid field' };
      const err = append(name, named);
      if (err) return { error: err };
    } else {
      return { error: `expected [ or . but got: ${tok}` };
    }
  }
  return { path };
}

// ---------------------------------------------------------------------------------------------
// Compilation of a whole schema.

interface CompiledRule {
  rule: ValidationRule;
  program: (ctx: any) => unknown;
  messageProgram?: (ctx: any) => unknown;
  transition: boolean;
  fieldPath: string;
}

/** Compiled rules of one schema node and, recursively, of its properties, items and map values. */
export interface CelNode {
  schema: Obj;
  isResourceRoot: boolean;
  rules: CompiledRule[];
  properties?: Map<string, CelNode>;
  items?: CelNode;
  additionalProperties?: CelNode;
}

export interface CompiledSchemaRules {
  /** Undefined when the schema has no x-kubernetes-validations anywhere. */
  root?: CelNode;
  /** Compile and cost errors, with paths under basePath. */
  errors: FieldError[];
  /** Sum of the estimated costs of all rules and messageExpressions (× cardinality). */
  totalCost: number;
}

export interface CompileRulesOptions {
  /** Path of the schema in the CRD, e.g. "spec.validation.openAPIV3Schema". */
  basePath: string;
  /** The schema is a resource root (default true). */
  isResourceRoot?: boolean;
  /** Nodes (by path) whose rules must not be compiled, e.g. because their schema is invalid. */
  skipNode?: (path: string) => boolean;
}

export function hasValidationRules(s: unknown): boolean {
  if (!isPlainObject(s)) return false;
  if (Array.isArray(s['x-kubernetes-validations']) && s['x-kubernetes-validations'].length > 0) return true;
  if (isPlainObject(s.properties) && Object.values(s.properties).some(hasValidationRules)) return true;
  return hasValidationRules(s.items) || hasValidationRules(s.additionalProperties);
}

/** Go's %#v of an apiextensions.ValidationRule, as kube prints the bad value of a rule error. */
export function goValidationRule(r: ValidationRule): string {
  const ptr = (set: boolean, type: string) => (set ? `(${type})(0xc000000000)` : `(${type})(nil)`);
  return (
    `apiextensions.ValidationRule{Rule:${goQuote(r.rule ?? '')}, Message:${goQuote(r.message ?? '')}, ` +
    `MessageExpression:${goQuote(r.messageExpression ?? '')}, Reason:${ptr(r.reason !== undefined, '*apiextensions.FieldValueErrorReason')}, ` +
    `FieldPath:${goQuote(r.fieldPath ?? '')}, OptionalOldSelf:${ptr(r.optionalOldSelf !== undefined, '*bool')}}`
  );
}

export function costErrorMessage(costName: string, cost: number, limit: number): string {
  const f = cost / limit;
  const factor = f > 100 ? 'more than 100x' : f < 1.5 ? `${f.toFixed(6)}x` : `${f.toFixed(1)}x`;
  return `${costName} exceeds budget by factor of ${factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

function asRules(v: unknown): ValidationRule[] {
  if (!Array.isArray(v)) return [];
  return v.map((r) => (isPlainObject(r) ? (r as ValidationRule) : { rule: '' }));
}

/**
 * Compiles every x-kubernetes-validations rule of a schema (call once per CRD version and keep
 * the result). Errors are the ones kube-apiserver reports when the CRD is written: compilation
 * failures, non-bool rules, messageExpression failures, estimated cost over budget, oldSelf on
 * uncorrelatable parts of the schema, optionalOldSelf without oldSelf, and the total cost.
 */
export function compileSchemaRules(schema: unknown, opts: CompileRulesOptions): CompiledSchemaRules {
  const errors: FieldError[] = [];
  const costs: { path: string; cost: number }[] = [];
  let total = 0;
  const observe = (path: string, cost: number) => {
    total += cost;
    if (cost >= StaticEstimatedCRDCostLimit / 100) costs.push({ path, cost });
  };

  const walk = (s: unknown, path: string, isResourceRoot: boolean, cardinality: number | null, uncorrelatable: string | undefined): CelNode | undefined => {
    if (!isPlainObject(s)) return undefined;
    const node: CelNode = { schema: s, isResourceRoot, rules: [] };
    const rules = asRules(s['x-kubernetes-validations']);
    if (rules.length > 0 && !(opts.skipNode?.(path) ?? false)) {
      const vpath = childPath(path, 'x-kubernetes-validations');
      const declType = schemaDeclType(s, isResourceRoot);
      if (!declType) {
        errors.push({
          reason: 'InternalError',
          field: vpath,
          message: `Internal error: rule declared on schema that does not support validation rules type: '${typeof s.type === 'string' ? s.type : ''}' x-kubernetes-preserve-unknown-fields: '${s['x-kubernetes-preserve-unknown-fields'] === true}'`,
        });
      } else {
        const card = cardinality ?? Math.floor(MaxRequestSizeBytes / (declType.min + 1));
        rules.forEach((rule, i) => {
          const rpath = `${vpath}[${i}]`;
          if (typeof rule.rule !== 'string' || rule.rule.trim() === '') return;
          const optional = rule.optionalOldSelf === true;
          const compiled = compileExpr(rule.rule, declType, optional ? optionalOf(declType) : declType);
          const cost = compiled.error ? 0 : compiled.cost * card;
          if (cost > StaticEstimatedCostLimit) errors.push(forbiddenError(`${rpath}.rule`, costErrorMessage('estimated rule cost', cost, StaticEstimatedCostLimit)));
          observe(`${rpath}.rule`, cost);
          if (compiled.error) {
            errors.push(invalidError(`${rpath}.rule`, goValidationRule(rule), `compilation failed: ${compiled.error}`.replace(/^compilation failed: program instantiation failed/, 'program instantiation failed')));
          } else if (compiled.resultType && compiled.resultType.k !== 'bool' && compiled.resultType.k !== 'dyn') {
            errors.push(invalidError(`${rpath}.rule`, goValidationRule(rule), 'cel expression must evaluate to a bool'));
            compiled.program = undefined;
          }
          let messageProgram: ((ctx: any) => unknown) | undefined;
          let messageOk = true;
          if (compiled.program && typeof rule.messageExpression === 'string' && rule.messageExpression.trim() !== '') {
            const m = compileExpr(rule.messageExpression, declType, optional ? optionalOf(declType) : declType);
            if (m.error) {
              messageOk = false;
              errors.push(invalidError(`${rpath}.messageExpression`, goValidationRule(rule), m.error.startsWith('program instantiation failed') ? m.error.replace(/^program/, 'messageExpression') : `messageExpression compilation failed: ${m.error}`));
            } else if (m.resultType && m.resultType.k !== 'string' && m.resultType.k !== 'dyn') {
              messageOk = false;
              errors.push(invalidError(`${rpath}.messageExpression`, goValidationRule(rule), 'messageExpression must evaluate to a string'));
            } else {
              const mcost = m.cost * card;
              if (mcost > StaticEstimatedCostLimit) errors.push(forbiddenError(`${rpath}.messageExpression`, costErrorMessage('estimated messageExpression cost', mcost, StaticEstimatedCostLimit)));
              observe(`${rpath}.messageExpression`, mcost);
              messageProgram = m.program;
            }
          }
          if (compiled.program) {
            if (compiled.usesOldSelf) {
              if (uncorrelatable !== undefined) errors.push(invalidError(`${rpath}.rule`, goQuote(rule.rule), `oldSelf cannot be used on the uncorrelatable portion of the schema within ${uncorrelatable}`));
            } else if (rule.optionalOldSelf !== undefined) {
              errors.push(invalidError(`${rpath}.optionalOldSelf`, String(rule.optionalOldSelf), 'may not be set if oldSelf is not used in rule'));
            }
          }
          if (compiled.program && messageOk) {
            const fp = typeof rule.fieldPath === 'string' && rule.fieldPath.trim() !== '' ? (validFieldPath(rule.fieldPath, s).path ?? '') : '';
            node.rules.push({ rule, program: compiled.program, messageProgram, transition: compiled.usesOldSelf, fieldPath: fp });
          }
        });
      }
    }
    const correlatableMap = s['x-kubernetes-map-type'] !== 'atomic';
    if (isPlainObject(s.properties)) {
      for (const [k, p] of Object.entries(s.properties)) {
        if (!hasValidationRules(p)) continue;
        const child = walk(p, `${path}.properties[${k}]`, isPlainObject(p) && p['x-kubernetes-embedded-resource'] === true, cardinality, uncorrelatable ?? (correlatableMap ? undefined : path));
        if (child) (node.properties ??= new Map()).set(k, child);
      }
    }
    if (isPlainObject(s.items) && hasValidationRules(s.items)) {
      const card = cardinality === null || typeof s.maxItems !== 'number' ? null : cardinality * Math.max(0, s.maxItems);
      const listMap = s['x-kubernetes-list-type'] === 'map';
      node.items = walk(s.items, `${path}.items`, s.items['x-kubernetes-embedded-resource'] === true, card, uncorrelatable ?? (listMap ? undefined : path));
    }
    if (isPlainObject(s.additionalProperties) && hasValidationRules(s.additionalProperties)) {
      const card = cardinality === null || typeof s.maxProperties !== 'number' ? null : cardinality * Math.max(0, s.maxProperties);
      node.additionalProperties = walk(s.additionalProperties, `${path}.additionalProperties`, s.additionalProperties['x-kubernetes-embedded-resource'] === true, card, uncorrelatable);
    }
    return node;
  };

  const root = hasValidationRules(schema) ? walk(schema, opts.basePath, opts.isResourceRoot !== false, 1, undefined) : undefined;
  if (total > StaticEstimatedCRDCostLimit) {
    costs.sort((a, b) => b.cost - a.cost);
    for (const c of costs.slice(0, 4)) errors.push(forbiddenError(c.path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'));
    errors.push(forbiddenError(opts.basePath, costErrorMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', total, StaticEstimatedCRDCostLimit)));
  }
  return { root, errors, totalCost: total };
}

// ---------------------------------------------------------------------------------------------
// Evaluation.

/** cel-go's wording for runtime errors @bufbuild/cel words differently. */
function runtimeErrorText(msg: string): string {
  let m: RegExpExecArray | null;
  if ((m = /^field not found: (.*)$/.exec(msg))) return `no such key: ${m[1]}`;
  if ((m = /^index (-?\d+) out of bounds \[0, (-?\d+)\)$/.exec(msg))) return `index '${m[1]}' out of range in list size '${Math.max(0, Number(m[2]))}'`;
  if (/divide by zero/.test(msg)) return 'division by zero';
  if (/modulus by zero/.test(msg)) return 'modulus by zero';
  if (/overflow/.test(msg)) return 'integer overflow';
  return msg;
}
const isOverloadError = (msg: string) => /no such overload|no matching overload|unbound function/.test(msg);

function ruleErrorString(r: ValidationRule): string {
  return typeof r.message === 'string' && r.message.trim() !== '' ? r.message.trim() : String(r.rule ?? '').trim();
}
function ruleMessageOrDefault(r: ValidationRule): string {
  return typeof r.message === 'string' && r.message.trim() !== '' ? r.message.trim() : `failed rule: ${String(r.rule ?? '').trim()}`;
}

function schemaTypeText(s: Obj): string {
  return goQuote(typeof s.type === 'string' ? s.type : '');
}

function fieldErrorForReason(path: string, valueText: string | null, detail: string, reason: string | undefined): FieldError {
  switch (reason) {
    case 'FieldValueForbidden':
      return forbiddenError(path, detail);
    case 'FieldValueRequired':
      return requiredError(path, detail);
    case 'FieldValueDuplicate':
      return duplicateError(path, valueText);
    default:
      return invalidError(path, valueText, detail);
  }
}

const readsOld = new WeakMap<CelNode, boolean>();
function readsOldSelf(node: CelNode): boolean {
  let r = readsOld.get(node);
  if (r === undefined) readsOld.set(node, (r = node.rules.some((x) => x.transition || x.rule.optionalOldSelf === true || x.messageProgram !== undefined)));
  return r;
}

/**
 * The nearest value at or above a node that correlates with the stored object (see evalNode),
 * and whether it is unchanged, compared once when a rule first fails under it.
 */
interface Correlated {
  obj: unknown;
  old: unknown;
  unchanged?: boolean;
}

/** Where a rule's failures go: errors, or (ratcheted on an update) warnings. */
interface Sinks {
  errs: FieldError[];
  warnings: FieldError[] | undefined;
}

function evalNodeRules(node: CelNode, path: string, obj: unknown, old: unknown, near: Correlated | undefined, sinks: Sinks): void {
  const errs = sinks.errs;
  if (node.rules.length === 0) return;
  const self = toCelValue(obj, node.schema, node.isResourceRoot);
  const hasOld = old !== undefined && old !== null;
  // oldSelf only where a rule (or its message) can read it
  const oldSelf = hasOld && readsOldSelf(node) ? toCelValue(old, node.schema, node.isResourceRoot) : null;
  let plain: { self: unknown; oldSelf: unknown } | undefined;
  for (const r of node.rules) {
    const optional = r.rule.optionalOldSelf === true;
    if (r.transition && !hasOld && !optional) continue;
    const ctx = optional ? { self, oldSelf: tagged('optional', hasOld ? { has: true, v: oldSelf } : { has: false }) } : (plain ??= { self, oldSelf });
    let result: unknown;
    try {
      result = r.program(ctx);
    } catch (e: any) {
      result = { __thrown: String(e?.message ?? e) };
    }
    if (result === true) continue;
    const thrown = isPlainObject(result) && typeof (result as any).__thrown === 'string' ? (result as any).__thrown : undefined;
    if (isCelError(result) || thrown !== undefined) {
      const msg = thrown ?? (result as Error).message;
      const at = path || '<nil>';
      if (isOverloadError(msg)) errs.push(invalidError(at, schemaTypeText(node.schema), `'no such overload': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(r.rule)}`));
      else errs.push(invalidError(at, schemaTypeText(node.schema), `${runtimeErrorText(msg)} evaluating rule: ${ruleErrorString(r.rule)}`));
      continue;
    }
    // kube validates with a nil root path: errors on the object itself print as "<nil>".
    const target = (r.fieldPath ? childPath(path, r.fieldPath) : path) || '<nil>';
    let detail: string | undefined;
    if (r.messageProgram) {
      let m: unknown;
      try {
        m = r.messageProgram(ctx);
      } catch {
        m = undefined;
      }
      if (typeof m === 'string') {
        const t = m.trim();
        if (t !== '' && !/\n/.test(t) && t.length <= 5120) detail = t;
      }
    }
    detail ??= ruleMessageOrDefault(r.rule);
    const t = node.schema.type;
    const valueText = t === 'object' || t === 'array' ? null : goValue(obj);
    const e = fieldErrorForReason(target, valueText, detail, r.rule.reason);
    // kube's ratcheting: a rule that does not read oldSelf fails only a changed value; on an
    // unchanged one its failure becomes a warning.
    if (!r.transition && near !== undefined && sinks.warnings !== undefined && (near.unchanged ??= deepEqual(near.obj, near.old))) sinks.warnings.push(e);
    else errs.push(e);
  }
}

/**
 * Identity of a list-type map item by its keys: equal exactly when the JSON of the key values
 * (`[v1, v2...]`, absent ones null) is; a single string or number key skips JSON.
 */
function listMapKey(item: unknown, keys: string[]): string | undefined {
  if (!isPlainObject(item)) return undefined;
  if (keys.length === 1) {
    const v = item[keys[0]] ?? null;
    if (typeof v === 'string') return 's' + v;
    if (typeof v === 'number' && Number.isFinite(v)) return 'n' + v;
    return 'j' + JSON.stringify([v]);
  }
  const values: unknown[] = [];
  for (const k of keys) values.push(item[k] ?? null);
  return 'j' + JSON.stringify(values);
}

/** What evaluation reads of a node's schema, looked up once per node. */
interface EvalPlan {
  /** x-kubernetes-list-map-keys of a list-type map (old items correlate by them), else undefined. */
  listMapKeys?: string[];
  /** x-kubernetes-map-type: atomic (rules below it get no oldSelf). */
  atomic: boolean;
  properties?: [string, CelNode][];
}
const evalPlans = new WeakMap<CelNode, EvalPlan>();
function evalPlan(node: CelNode): EvalPlan {
  let p = evalPlans.get(node);
  if (p) return p;
  const s = node.schema;
  const keys = Array.isArray(s['x-kubernetes-list-map-keys']) ? (s['x-kubernetes-list-map-keys'] as string[]) : [];
  p = {
    listMapKeys: s['x-kubernetes-list-type'] === 'map' ? keys : undefined,
    atomic: s['x-kubernetes-map-type'] === 'atomic',
    properties: node.properties ? [...node.properties] : undefined,
  };
  evalPlans.set(node, p);
  return p;
}

/**
 * `old`: the old value that correlates with obj (ratcheting compares them). `inAtomicMap`: obj is
 * inside an x-kubernetes-map-type: atomic map, where kube still correlates old values for
 * ratcheting (CorrelatedObject.Key looks at no map type) but gives rules no oldSelf.
 */
function evalNode(node: CelNode, path: string, obj: unknown, old: unknown, near: Correlated | undefined, sinks: Sinks, inAtomicMap = false): void {
  if (obj === null || obj === undefined) return;
  // (an old value here means this value correlates: it becomes the nearest for what is below)
  if (old !== undefined && sinks.warnings !== undefined) near = { obj, old };
  if (node.rules.length) evalNodeRules(node, path, obj, inAtomicMap ? undefined : old, near, sinks);
  if (Array.isArray(obj)) {
    const items = node.items;
    if (!items) return;
    const keys = evalPlan(node).listMapKeys;
    let oldByKey: Map<string, unknown> | undefined;
    if (keys && Array.isArray(old)) {
      oldByKey = new Map();
      for (const o of old) {
        const k = listMapKey(o, keys);
        if (k !== undefined) oldByKey.set(k, o);
      }
    }
    for (let i = 0; i < obj.length; i++) {
      const item = obj[i];
      const k = oldByKey ? listMapKey(item, keys!) : undefined;
      evalNode(items, indexPath(path, i), item, k !== undefined ? oldByKey!.get(k) : undefined, near, sinks, inAtomicMap);
    }
    return;
  }
  if (!isPlainObject(obj)) return;
  if (!node.additionalProperties && !node.properties) return;
  const plan = evalPlan(node);
  const oldObj = isPlainObject(old) ? old : undefined;
  const atomic = inAtomicMap || plan.atomic;
  if (node.additionalProperties) {
    for (const k of Object.keys(obj)) evalNode(node.additionalProperties, indexPath(path, k), obj[k], oldValueAt(oldObj, k), near, sinks, atomic);
  }
  if (plan.properties) {
    // Only the properties with rules below them are visited; their errors are reported in the
    // object's key order (kube's), so the rare case of errors under several gets reordered.
    let chunks: { key: string; start: number; end: number }[] | undefined;
    for (let i = 0; i < plan.properties.length; i++) {
      const [k, child] = plan.properties[i];
      if (!Object.prototype.hasOwnProperty.call(obj, k)) continue;
      const errs = sinks.errs;
      const start = errs.length;
      evalNode(child, childPath(path, k), obj[k], oldValueAt(oldObj, k), near, sinks, atomic);
      if (errs.length > start) (chunks ??= []).push({ key: k, start, end: errs.length });
    }
    if (chunks && chunks.length > 1) inKeyOrder(obj, chunks, sinks.errs);
  }
}

/** The old map's own entry at k (a key such as "constructor" must not find Object's). */
function oldValueAt(old: Obj | undefined, k: string): unknown {
  return old !== undefined && Object.prototype.hasOwnProperty.call(old, k) ? old[k] : undefined;
}

/** Reorders the error runs of several properties (the tail of errs) into obj's key order. */
function inKeyOrder(obj: Obj, chunks: { key: string; start: number; end: number }[], errs: FieldError[]): void {
  const order = new Map(Object.keys(obj).map((k, i) => [k, i]));
  const from = chunks[0].start;
  const runs = chunks.map((c) => ({ at: order.get(c.key)!, errs: errs.slice(c.start, c.end) }));
  runs.sort((a, b) => a.at - b.at);
  errs.length = from;
  for (const r of runs) errs.push(...r.errs);
}

export interface EvaluateOptions {
  /** Path of obj in the request ("" for a whole custom object). */
  basePath?: string;
  /**
   * On an update, where the failures that ratcheting forgives go (kube sends them as warnings):
   * those of rules that do not read oldSelf, on a value unchanged from oldObj (the nearest value
   * above it that correlates, when it does not itself). Without it every failure is an error.
   */
  warnings?: FieldError[];
}

/**
 * Evaluates the compiled rules against obj (and oldObj on updates). Transition rules (those
 * using oldSelf) run only where an old value correlates (object fields, map entries, list-type
 * map items by key) unless optionalOldSelf is set. Failures use `message`, the evaluated
 * `messageExpression`, or "failed rule: <rule>", with the rule's reason and fieldPath.
 */
export function evaluateRules(compiled: CompiledSchemaRules, obj: unknown, oldObj?: unknown, opts: EvaluateOptions = {}): FieldError[] {
  const sinks: Sinks = { errs: [], warnings: oldObj === undefined ? undefined : opts.warnings };
  if (compiled.root) evalNode(compiled.root, opts.basePath ?? '', obj, oldObj, undefined, sinks);
  return sinks.errs;
}
