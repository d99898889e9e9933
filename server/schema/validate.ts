// Schema walk run on every write: drops nulls, prunes (or just reports) unknown fields, and reports
// type, required and enum violations with kube-apiserver's field error wording.
//
// Wording follows apiextensions-apiserver's translation of kube-openapi results:
//   type:     FieldValueTypeInvalid  'Invalid value: "string": spec.replicas in body must be of type integer: "string"'
//   required: FieldValueRequired     'Required value'
//   enum:     FieldValueNotSupported 'Unsupported value: "X": supported values: "A", "B"'
import type { TypeNode } from './types.ts';
import { jsonTypeName, type FieldError } from '../validation/field.ts';
import { isPlainObject } from '../util/json.ts';

export interface ValidationResult {
  errors: FieldError[];
  unknownFields: string[];
}

export interface ValidateOptions {
  /** Remove unknown fields (they are reported in unknownFields either way). */
  prune?: boolean;
  /** Path of obj inside the enclosing object, e.g. "spec.template"; "" or absent for the root. */
  path?: string;
  /**
   * A null list element or map value decodes as its type's zero value: what this gives for its
   * node (written in its place, then walked; null: none). Absent: list elements stay null, map
   * entries are dropped.
   */
  zeroOf?: (node: TypeNode) => unknown;
}

/** Segment kinds on the path stack. */
const FIELD = 0;
const INDEX = 1;
const KEY = 2;

class Walker {
  readonly errors: FieldError[] = [];
  readonly unknownFields: string[] = [];
  private readonly segs: (string | number)[] = [];
  private readonly kinds: number[] = [];

  constructor(
    private readonly prune: boolean,
    private readonly base: string,
    private readonly zeroOf: ((node: TypeNode) => unknown) | undefined,
  ) {}

  /** The current path, built only when something must be reported. */
  path(extra?: string): string {
    let s = this.base;
    const n = this.segs.length;
    for (let i = 0; i < n; i++) s = appendSeg(s, this.kinds[i], this.segs[i]);
    if (extra !== undefined) s = appendSeg(s, FIELD, extra);
    return s;
  }

  walk(node: TypeNode, value: unknown): void {
    switch (node.type) {
      case 'any':
        return;
      case 'object':
        if (!isPlainObject(value)) return this.typeError(node, value);
        this.walkObject(node, value);
        break;
      case 'map':
        if (!isPlainObject(value)) return this.typeError(node, value);
        this.walkMap(node, value);
        break;
      case 'array':
        if (!Array.isArray(value)) return this.typeError(node, value);
        this.walkArray(node, value);
        break;
      case 'string':
        if (typeof value !== 'string') return this.typeError(node, value);
        break;
      case 'integer':
        if (typeof value !== 'number' || !Number.isInteger(value)) return this.typeError(node, value);
        break;
      case 'number':
        if (typeof value !== 'number') return this.typeError(node, value);
        break;
      case 'boolean':
        if (typeof value !== 'boolean') return this.typeError(node, value);
        break;
      case 'int-or-string':
        if (typeof value === 'string') break;
        // Quantity also takes fractional numbers; IntOrString only integers.
        if (typeof value === 'number' && (node.format === 'quantity' || Number.isInteger(value))) break;
        return this.typeError(node, value);
    }
    if (node.enum !== undefined) this.checkEnum(node.enum, value);
  }

  private walkObject(node: TypeNode, obj: Record<string, unknown>): void {
    const props = node.properties;
    for (const key in obj) {
      const v = obj[key];
      if (v === null || v === undefined) {
        delete obj[key];
        continue;
      }
      const child = props !== undefined ? props[key] : undefined;
      if (child === undefined) {
        if (node.preserveUnknownFields) continue;
        if (node.embeddedResource && (key === 'apiVersion' || key === 'kind' || key === 'metadata')) continue;
        this.unknownFields.push(this.path(key));
        if (this.prune) delete obj[key];
        continue;
      }
      this.segs.push(key);
      this.kinds.push(FIELD);
      this.walk(child, v);
      this.segs.pop();
      this.kinds.pop();
    }
    const required = node.required;
    if (required !== undefined) {
      for (let i = 0; i < required.length; i++) {
        const r = required[i];
        if (obj[r] === undefined) this.errors.push({ reason: 'FieldValueRequired', field: this.path(r), message: 'Required value' });
      }
    }
  }

  private walkMap(node: TypeNode, obj: Record<string, unknown>): void {
    const values = node.values;
    const descend = values !== undefined && values.type !== 'any';
    for (const key in obj) {
      let v = obj[key];
      if (v === null || v === undefined) {
        // Go keeps the key with the value type's zero value (a Helm chart's `KEY:` is "" in a
        // ConfigMap); a nil pointer, slice or map value, and an untyped one, is dropped here.
        if (!descend || this.zeroOf === undefined || (v = this.zeroOf(values!)) === null) {
          delete obj[key];
          continue;
        }
        obj[key] = v;
      }
      if (!descend) continue;
      this.segs.push(key);
      this.kinds.push(KEY);
      this.walk(values!, v);
      this.segs.pop();
      this.kinds.pop();
    }
  }

  private walkArray(node: TypeNode, arr: unknown[]): void {
    const items = node.items;
    if (items === undefined || items.type === 'any') return;
    for (let i = 0; i < arr.length; i++) {
      let v = arr[i];
      if (v === null || v === undefined) {
        // Go decodes it as the element type's zero value (a nil pointer or slice stays null).
        if (this.zeroOf === undefined || (v = this.zeroOf(items)) === null) continue;
        arr[i] = v;
      }
      this.segs.push(i);
      this.kinds.push(INDEX);
      this.walk(items, v);
      this.segs.pop();
      this.kinds.pop();
    }
  }

  private typeError(node: TypeNode, value: unknown): void {
    const field = this.path();
    const actual = jsonTypeName(value);
    const expected = node.type === 'int-or-string' ? (node.format === 'quantity' ? 'number,string' : 'integer,string') : node.type === 'map' ? 'object' : node.type;
    this.errors.push({
      reason: 'FieldValueTypeInvalid',
      field,
      message: `Invalid value: ${JSON.stringify(actual)}: ${field} in body must be of type ${expected}: ${JSON.stringify(actual)}`,
    });
  }

  private checkEnum(allowed: unknown[], value: unknown): void {
    for (let i = 0; i < allowed.length; i++) if (allowed[i] === value) return;
    if (typeof value === 'object') {
      const json = JSON.stringify(value);
      for (let i = 0; i < allowed.length; i++) if (typeof allowed[i] === 'object' && JSON.stringify(allowed[i]) === json) return;
    }
    const supported = allowed.map((a) => JSON.stringify(typeof a === 'string' ? a : JSON.stringify(a))).join(', ');
    this.errors.push({
      reason: 'FieldValueNotSupported',
      field: this.path(),
      message: `Unsupported value: ${formatValue(value)}: supported values: ${supported}`,
    });
  }
}

function appendSeg(s: string, kind: number, seg: string | number): string {
  if (kind === INDEX || kind === KEY) return `${s}[${seg}]`;
  return s === '' ? String(seg) : `${s}.${seg}`;
}

/** A bad value as field.Error prints it: strings quoted, numbers/booleans bare, the rest as JSON. */
function formatValue(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v) ?? 'null';
}

/**
 * Walks obj against node, in place: removes null values (kube decodes null as "absent"), and,
 * when prune is true, removes fields unknown to the schema (their paths are reported either way,
 * e.g. "spec.foo", "spec.template.spec.containers[0].bogus"). Reports type mismatches, missing
 * required fields and enum violations. Does not descend into `any` nodes.
 */
export function validateObject(node: TypeNode, obj: unknown, opts?: ValidateOptions): ValidationResult {
  const w = new Walker(opts?.prune === true, opts?.path ?? '', opts?.zeroOf);
  if (obj !== null && obj !== undefined) w.walk(node, obj);
  return { errors: w.errors, unknownFields: w.unknownFields };
}
