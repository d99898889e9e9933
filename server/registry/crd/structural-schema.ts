// Structural schemas (apiextensions-apiserver's pkg/apiserver/schema: NewStructural's refusals and
// ValidateStructural), as kube-apiserver words and orders their errors when a CRD is written: the
// invariants a schema must keep to be structural (types everywhere, metadata only name and
// generateName at the root, nothing but value validations under allOf/anyOf/oneOf/not) and the
// completeness of its value validations. crd-validation.ts runs them on each schema of a CRD.
import { goQuote } from '../../go/strconv.ts';
import { re2Error } from '../../go/regexp.ts';
import { isPlainObject } from '../../util/json.ts';
import { forbiddenError, invalidError, requiredError, type FieldError } from '../../validation/field.ts';

type Obj = Record<string, unknown>;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const q = goQuote;

/** Whether a JSON field holds a non-zero Go value (false, "" and absent are zero). */
export const nonZero = (v: unknown): boolean => v !== undefined && v !== null && v !== false && v !== '';

/** NewStructural's refusals: the first unsupported construct anywhere in the schema. */
export function structuralInitError(s: unknown): string | undefined {
  if (!isPlainObject(s)) return undefined;
  if (str(s.id)) return "OpenAPIV3Schema 'id' is not supported";
  if (str(s.$schema)) return "OpenAPIV3Schema 'schema' is not supported";
  if (str(s.$ref)) return "OpenAPIV3Schema '$ref' is not supported";
  if (isPlainObject(s.patternProperties) && Object.keys(s.patternProperties).length) return "OpenAPIV3Schema 'patternProperties' is not supported";
  if (isPlainObject(s.dependencies) && Object.keys(s.dependencies).length) return "OpenAPIV3Schema 'dependencies' is not supported";
  if (s.additionalItems !== undefined && s.additionalItems !== null) return "OpenAPIV3Schema 'additionalItems' is not supported";
  if (isPlainObject(s.definitions) && Object.keys(s.definitions).length) return "OpenAPIV3Schema 'definitions' is not supported";
  if (s['x-kubernetes-preserve-unknown-fields'] === false) return "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined";
  if (Array.isArray(s.items)) return "OpenAPIV3Schema 'items' must be a schema, but is an array";
  const subs: unknown[] = [s.items, s.not, s.additionalProperties, ...arr(s.allOf), ...arr(s.anyOf), ...arr(s.oneOf), ...Object.values(isPlainObject(s.properties) ? s.properties : {})];
  for (const x of subs) {
    const e = structuralInitError(x);
    if (e) return e;
  }
  return undefined;
}

const ROOT = 0;
const ITEM = 1;
const FIELD = 2;

function isIntOrStringAnyOf(v: unknown): boolean {
  if (!Array.isArray(v) || v.length !== 2) return false;
  const only = (x: unknown, t: string) => isPlainObject(x) && Object.keys(x).length === 1 && x.type === t;
  return only(v[0], 'integer') && only(v[1], 'string');
}

function structuralInvariants(s: Obj, lvl: number, path: string, errs: FieldError[]): void {
  const type = str(s.type);
  if (type === 'array' && !isPlainObject(s.items)) errs.push(requiredError(`${path}.items`, 'must be specified'));
  if (isPlainObject(s.items)) structuralInvariants(s.items, ITEM, `${path}.items`, errs);
  if (isPlainObject(s.properties)) for (const [k, p] of Object.entries(s.properties)) if (isPlainObject(p)) structuralInvariants(p, FIELD, `${path}.properties[${k}]`, errs);
  if (s.additionalProperties !== undefined && s.additionalProperties !== null) {
    if (lvl === ROOT) errs.push(forbiddenError(`${path}.additionalProperties`, 'must not be used at the root'));
    if (isPlainObject(s.additionalProperties)) structuralInvariants(s.additionalProperties, FIELD, `${path}.additionalProperties`, errs);
  }
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (intOrString && preserve) errs.push(invalidError(`${path}.x-kubernetes-preserve-unknown-fields`, 'true', 'must be false if x-kubernetes-int-or-string is true'));
  if (intOrString && embedded) errs.push(invalidError(`${path}.x-kubernetes-embedded-resource`, 'true', 'must be false if x-kubernetes-int-or-string is true'));
  const skipAnyOf = isIntOrStringAnyOf(s.anyOf);
  const skipFirstAllOfAnyOf = Array.isArray(s.allOf) && s.allOf.length >= 1 && isPlainObject(s.allOf[0]) && isIntOrStringAnyOf(s.allOf[0].anyOf);
  valueValidation(s, skipAnyOf, skipFirstAllOfAnyOf, lvl, path, errs);
  const checkMetadata = lvl === ROOT || embedded;
  if (embedded && type !== 'object') {
    if (!type) errs.push(requiredError(`${path}.type`, 'must be object if x-kubernetes-embedded-resource is true'));
    else errs.push(invalidError(`${path}.type`, q(type), 'must be object if x-kubernetes-embedded-resource is true'));
  } else if (!type && !intOrString && !preserve) {
    const detail = lvl === ROOT ? 'must not be empty at the root' : lvl === ITEM ? 'must not be empty for specified array items' : 'must not be empty for specified object fields';
    errs.push(requiredError(`${path}.type`, detail));
  }
  if (embedded && s.additionalProperties !== undefined && s.additionalProperties !== null) {
    errs.push(forbiddenError(`${path}.additionalProperties`, 'must not be used if x-kubernetes-embedded-resource is set'));
  }
  if (lvl === ROOT && type && type !== 'object') errs.push(invalidError(`${path}.type`, q(type), 'must be object at the root'));
  const props = isPlainObject(s.properties) ? s.properties : {};
  if (isPlainObject(props.kind) && checkMetadata && props.kind.type !== 'string') errs.push(invalidError(`${path}.properties[kind].type`, q(str(props.kind.type)), 'must be string'));
  if (isPlainObject(props.apiVersion) && checkMetadata && props.apiVersion.type !== 'string') errs.push(invalidError(`${path}.properties[apiVersion].type`, q(str(props.apiVersion.type)), 'must be string'));
  if (isPlainObject(props.metadata)) metadataInvariants(props.metadata, checkMetadata, lvl, `${path}.properties[metadata]`, errs);
  if (embedded && !preserve && Object.keys(props).length === 0) {
    errs.push(requiredError(`${path}.properties`, 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
  }
}

/** Keys that survive into a Structural but may not appear on the root metadata schema. */
const STRUCTURAL_KEYS = new Set([
  'description',
  'title',
  'nullable',
  'additionalProperties',
  'format',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
  'required',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'items',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
]);

function metadataInvariants(m: Obj, checkMetadata: boolean, lvl: number, path: string, errs: FieldError[]): void {
  if (checkMetadata && m.type !== 'object') errs.push(invalidError(`${path}.type`, q(str(m.type)), 'must be object'));
  if (lvl !== ROOT) return;
  let offending = false;
  for (const [k, v] of Object.entries(m)) {
    if (k === 'properties') {
      if (!isPlainObject(v)) continue;
      const keys = Object.keys(v);
      if (keys.length > 0 && !keys.every((x) => x === 'name' || x === 'generateName')) offending = true;
    } else if (STRUCTURAL_KEYS.has(k) && nonZero(v) && !(Array.isArray(v) && v.length === 0 && k !== 'enum')) {
      offending = true;
    }
  }
  if (offending) errs.push(forbiddenError(path, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
}

function valueValidation(v: Obj, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, lvl: number, path: string, errs: FieldError[]): void {
  if (!skipAnyOf) arr(v.anyOf).forEach((x, i) => isPlainObject(x) && nestedValueValidation(x, false, false, lvl, `${path}.anyOf[${i}]`, errs));
  arr(v.allOf).forEach((x, i) => isPlainObject(x) && nestedValueValidation(x, skipFirstAllOfAnyOf && i === 0, false, lvl, `${path}.allOf[${i}]`, errs));
  arr(v.oneOf).forEach((x, i) => isPlainObject(x) && nestedValueValidation(x, false, false, lvl, `${path}.oneOf[${i}]`, errs));
  if (isPlainObject(v.not)) nestedValueValidation(v.not, false, false, lvl, `${path}.not`, errs);
  if (typeof v.pattern === 'string' && v.pattern.length > 0) {
    const e = re2Error(v.pattern);
    if (e) errs.push(invalidError(`${path}.pattern`, q(v.pattern), `must be a valid regular expression, but isn't: ${e}`));
  }
}

function nestedValueValidation(v: Obj, skipAnyOf: boolean, skipAllOfAnyOf: boolean, lvl: number, path: string, errs: FieldError[]): void {
  valueValidation(v, skipAnyOf, skipAllOfAnyOf, lvl, path, errs);
  if (isPlainObject(v.items)) nestedValueValidation(v.items, false, false, lvl, `${path}.items`, errs);
  if (isPlainObject(v.properties)) for (const [k, p] of Object.entries(v.properties)) if (isPlainObject(p)) nestedValueValidation(p, false, false, FIELD, `${path}.properties[${k}]`, errs);
  if (str(v.type)) errs.push(forbiddenError(`${path}.type`, 'must be empty to be structural'));
  if (v.additionalProperties !== undefined && v.additionalProperties !== null) errs.push(forbiddenError(`${path}.additionalProperties`, 'must be undefined to be structural'));
  if (v.default !== undefined && v.default !== null) errs.push(forbiddenError(`${path}.default`, 'must be undefined to be structural'));
  if (str(v.title)) errs.push(forbiddenError(`${path}.title`, 'must be empty to be structural'));
  if (str(v.description)) errs.push(forbiddenError(`${path}.description`, 'must be empty to be structural'));
  if (v.nullable === true) errs.push(forbiddenError(`${path}.nullable`, 'must be false to be structural'));
  if (v.externalDocs !== undefined && v.externalDocs !== null) errs.push(forbiddenError(`${path}.externalDocs`, 'must be undefined to be structural'));
  if (v['x-kubernetes-preserve-unknown-fields'] === true) errs.push(forbiddenError(`${path}.x-kubernetes-preserve-unknown-fields`, 'must be false to be structural'));
  if (v['x-kubernetes-embedded-resource'] === true) errs.push(forbiddenError(`${path}.x-kubernetes-embedded-resource`, 'must be false to be structural'));
  if (v['x-kubernetes-int-or-string'] === true) errs.push(forbiddenError(`${path}.x-kubernetes-int-or-string`, 'must be false to be structural'));
  if (arr(v['x-kubernetes-list-map-keys']).length > 0) errs.push(forbiddenError(`${path}.x-kubernetes-list-map-keys`, 'must be empty to be structural'));
  if (v['x-kubernetes-list-type'] !== undefined && v['x-kubernetes-list-type'] !== null) errs.push(forbiddenError(`${path}.x-kubernetes-list-type`, 'must be undefined to be structural'));
  if (v['x-kubernetes-map-type'] !== undefined && v['x-kubernetes-map-type'] !== null) errs.push(forbiddenError(`${path}.x-kubernetes-map-type`, 'must be undefined to be structural'));
  if (arr(v['x-kubernetes-validations']).length > 0) errs.push(forbiddenError(`${path}.x-kubernetes-validations`, 'must be empty to be structural'));
  if (isPlainObject(v.properties) && 'metadata' in v.properties) errs.push(forbiddenError(`${path}.properties[metadata]`, 'must not be specified in a nested context'));
}

function valueValidationCompleteness(v: Obj, s: Obj | undefined, sPath: string, vPath: string, errs: FieldError[]): void {
  if (!s) {
    errs.push(requiredError(sPath, `because it is defined in ${vPath}`));
    return;
  }
  if (isPlainObject(v.not)) nestedCompleteness(v.not, s, sPath, `${vPath}.not`, errs);
  arr(v.allOf).forEach((x, i) => isPlainObject(x) && nestedCompleteness(x, s, sPath, `${vPath}.allOf[${i}]`, errs));
  arr(v.anyOf).forEach((x, i) => isPlainObject(x) && nestedCompleteness(x, s, sPath, `${vPath}.anyOf[${i}]`, errs));
  arr(v.oneOf).forEach((x, i) => isPlainObject(x) && nestedCompleteness(x, s, sPath, `${vPath}.oneOf[${i}]`, errs));
}

function nestedCompleteness(v: Obj, s: Obj | undefined, sPath: string, vPath: string, errs: FieldError[]): void {
  if (!s) {
    errs.push(requiredError(sPath, `because it is defined in ${vPath}`));
    return;
  }
  valueValidationCompleteness(v, s, sPath, vPath, errs);
  if (isPlainObject(v.items)) nestedCompleteness(v.items, isPlainObject(s.items) ? s.items : undefined, `${sPath}.items`, `${vPath}.items`, errs);
  if (isPlainObject(v.properties)) {
    const sp = isPlainObject(s.properties) ? s.properties : {};
    for (const [k, p] of Object.entries(v.properties)) {
      if (!isPlainObject(p)) continue;
      if (!isPlainObject(sp[k])) errs.push(requiredError(`${sPath}.properties[${k}]`, `because it is defined in ${vPath}.properties[${k}]`));
      else nestedCompleteness(p, sp[k], `${sPath}.properties[${k}]`, `${vPath}.properties[${k}]`, errs);
    }
  }
}

/** ValidateStructural: invariants and completeness, sorted by their printed form as kube does. */
export function validateStructural(schema: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  structuralInvariants(schema, ROOT, path, errs);
  valueValidationCompleteness(schema, schema, path, path, errs);
  const text = (e: FieldError) => `${e.field}: ${e.message}`;
  return errs.sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
}
