// The Go structs of the built-in kinds as schemas/protobuf.json records them, keyed by OpenAPI
// definition name: each field's protobuf number and wire type, and its Go shape (pointer,
// `omitempty`, JSON-inlined embedded struct), taken from the upstream generated.proto files and
// the Go struct tags. Read once at start: the protobuf codec (http/protobuf.ts) builds its message
// layouts from these facts, and what encoding/json writes of a zero value (goFieldShape,
// goOmitsZero, goZeroFields: omitempty.ts, the store's zero objects) is answered from them here.
import { readFileSync } from 'node:fs';

export type ScalarType = 'string' | 'bytes' | 'bool' | 'int32' | 'int64' | 'double';
export type FieldType = ScalarType | 'message';
/** Types with their own JSON and wire forms (not a plain struct of their fields). */
export type Special =
  | 'time'
  | 'microTime'
  | 'quantity'
  | 'intOrString'
  | 'rawExtension'
  | 'fieldsV1'
  | 'json'
  | 'jsonSchemaPropsOrArray'
  | 'jsonSchemaPropsOrBool'
  | 'jsonSchemaPropsOrStringArray'
  | 'wrapper';

/** One struct field, keyed by its JSON name. */
export interface FieldFacts {
  number: number;
  type: FieldType;
  repeated?: boolean;
  map?: { key: ScalarType; value: FieldType };
  message?: string;
  ptr?: boolean;
  omitempty?: boolean;
  inline?: boolean;
}

export interface StructFacts {
  special?: Special;
  fields: Record<string, FieldFacts>;
}

/** schemas/protobuf.json's messages: every built-in struct by definition name. */
export const STRUCT_FACTS: Record<string, StructFacts> = (
  JSON.parse(readFileSync(new URL('../../schemas/protobuf.json', import.meta.url), 'utf8')) as { messages: Record<string, StructFacts> }
).messages;

/** Whether a struct field is a Go pointer (absent when unset), from the same facts; for zero values. */
export function goFieldShape(definition: string, field: string): { ptr?: boolean } | undefined {
  const f = STRUCT_FACTS[definition]?.fields?.[field] as { ptr?: boolean } | undefined;
  return f ? { ptr: f.ptr } : undefined;
}

const SCALARS: ReadonlySet<FieldType> = new Set(['string', 'bytes', 'bool', 'int32', 'int64', 'double']);

/**
 * Whether encoding/json leaves a struct field out when it holds its zero value ("", 0, false): a
 * non-pointer scalar with `omitempty`, from the same facts; fields of JSON-inlined embedded
 * structs (a Volume's sources, a RuleWithOperations' Rule) are looked up where they are declared.
 */
export function goOmitsZero(definition: string, field: string): boolean {
  const data = STRUCT_FACTS[definition];
  if (!data) return false;
  const f = data.fields[field];
  if (f) return !!f.omitempty && !f.ptr && !f.repeated && !f.map && SCALARS.has(f.type);
  for (const inlined of Object.values(data.fields)) if (inlined.inline && inlined.message && goOmitsZero(inlined.message, field)) return true;
  return false;
}

/** A field encoding/json writes even when its struct is the zero value, and what it writes then. */
export interface GoZeroField {
  field: string;
  /** A nested struct (written as its own zero value: see `message`), or a scalar's zero value. */
  zero: 'struct' | '' | 0 | false;
  message?: string;
}

const ZERO_FIELDS = new Map<string, GoZeroField[]>();

/**
 * The fields of a struct that encoding/json writes however empty it is: non-pointer structs (but
 * the types with their own JSON form, such as Time, Quantity and IntOrString) and scalars
 * without `omitempty`; those of JSON-inlined embedded structs included.
 */
export function goZeroFields(definition: string): GoZeroField[] {
  let out = ZERO_FIELDS.get(definition);
  if (out) return out;
  out = [];
  for (const [field, f] of Object.entries(STRUCT_FACTS[definition]?.fields ?? {})) {
    if (f.ptr || f.repeated || f.map) continue;
    if (f.inline) {
      if (f.message) out.push(...goZeroFields(f.message));
    } else if (f.type === 'message') {
      if (f.message && STRUCT_FACTS[f.message] && !STRUCT_FACTS[f.message].special) out.push({ field, zero: 'struct', message: f.message });
    } else if (!f.omitempty && f.type !== 'bytes') {
      out.push({ field, zero: f.type === 'string' ? '' : f.type === 'bool' ? false : 0 });
    }
  }
  ZERO_FIELDS.set(definition, out);
  return out;
}
