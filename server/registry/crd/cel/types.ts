// The CEL types of schema nodes (kube's DeclTypes, SchemaDeclType): what `self` and `oldSelf` are
// to the checker (objects expose their declared properties with kube's name escaping, maps their
// values, int-or-string is dyn, date/date-time are timestamps, byte is bytes, duration is a
// duration), with the sizes cost estimation takes from the schema (maxLength×4, maxItems,
// maxProperties; unbounded values sized from the 3 MiB request limit and the minimum serialized
// size of their elements).
import { isPlainObject } from '../../../util/json.ts';
import { MaxRequestSizeBytes } from './limits.ts';

/** A schema node (or any JSON object) as this folder reads it. */
export type Obj = Record<string, any>;

export type Kind =
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
  | 'optional'
  | 'authorizer'
  | 'pathcheck'
  | 'groupcheck'
  | 'resourcecheck'
  | 'decision';

export interface CT {
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

export const T = {
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
  authorizer: { k: 'authorizer', min: 2 } as CT,
  pathcheck: { k: 'pathcheck', min: 2 } as CT,
  groupcheck: { k: 'groupcheck', min: 2 } as CT,
  resourcecheck: { k: 'resourcecheck', min: 2 } as CT,
  decision: { k: 'decision', min: 2 } as CT,
};
export const listOf = (e: CT, max?: number): CT => ({ k: 'list', e, max, min: 2 });
export const mapOf = (key: CT, e: CT, max?: number): CT => ({ k: 'map', key, e, max, min: 2 });
export const optionalOf = (e: CT): CT => ({ k: 'optional', e, min: e.min });

export function typeName(t: CT): string {
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
    case 'authorizer':
      return 'kubernetes.authorization.Authorizer';
    case 'pathcheck':
      return 'kubernetes.authorization.PathCheck';
    case 'groupcheck':
      return 'kubernetes.authorization.GroupCheck';
    case 'resourcecheck':
      return 'kubernetes.authorization.ResourceCheck';
    case 'decision':
      return 'kubernetes.authorization.Decision';
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
