// JSON values as CEL sees them under a schema node (kube's UnstructuredToVal): integers as int,
// byte strings as bytes, date/date-time as timestamps, durations as durations, lists and maps as
// CEL lists and maps, and objects read lazily, field by field, through converters compiled per
// schema node.
import { celEnv, celList, celMap, isCelError, parse, plan } from '@bufbuild/cel';
import { isPlainObject } from '../../../util/json.ts';
import { escapeCelName, schemaDeclType, type Obj } from './types.ts';
import { STRING } from './values.ts';

// Conversions of JSON strings to CEL timestamps/durations, done by CEL itself.
type OfString = (ctx: { s: string }) => unknown;
let tsPlan: OfString | undefined;
let durPlan: OfString | undefined;
function toTimestamp(s: string): unknown {
  tsPlan ??= plan(celEnv({ variables: { s: STRING } }), parse('timestamp(s)')) as OfString;
  const r = tsPlan({ s });
  return isCelError(r) ? s : r;
}
function toDuration(s: string): unknown {
  durPlan ??= plan(celEnv({ variables: { s: STRING } }), parse('duration(s)')) as OfString;
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
