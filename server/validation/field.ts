// apimachinery's util/validation/field: field paths, and the field errors a 422 Invalid lists in
// its causes and message, worded as kube-apiserver's field.Error words them. Builders take the
// bad value already rendered (goValue renders one as ErrorBody does).
import { goNumber, goSharpV } from '../go/fmt.ts';
import { goQuote } from '../go/strconv.ts';

/** One cause of a 422 Invalid, in the shape of metav1.StatusCause. */
export interface FieldError {
  reason:
    | 'FieldValueRequired'
    | 'FieldValueInvalid'
    | 'FieldValueNotSupported'
    | 'FieldValueDuplicate'
    | 'FieldValueForbidden'
    | 'FieldValueTooLong'
    | 'FieldValueTooMany'
    | 'FieldValueTypeInvalid'
    | 'FieldValueNotFound'
    | 'InternalError';
  field: string; // e.g. "spec.template.spec.containers[0].image"
  message: string; // e.g. 'Required value' — without the field prefix
}

/** apimachinery field.Path joins: child names with ".", indexes and keys in brackets. */
export const childPath = (base: string, name: string): string => (base ? `${base}.${name}` : name);
export const indexPath = (base: string, i: number | string): string => `${base}[${i}]`;

/** The value part of "Invalid value: <value>": strings quoted, numbers and booleans bare, the rest %#v. */
export function goValue(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return goSharpV(v);
}

/** kube-openapi's JSON type name for a value, as its type errors say it (int64 → integer, float64 → number). */
export function jsonTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isInteger(v) ? 'integer' : 'number';
    case 'bigint':
      return 'integer';
    default:
      return 'object';
  }
}

export function invalidError(field: string, valueText: string | null, detail: string): FieldError {
  const head = valueText === null ? 'Invalid value' : `Invalid value: ${valueText}`;
  return { reason: 'FieldValueInvalid', field, message: detail ? `${head}: ${detail}` : head };
}
/** apivalidation.ValidateNonnegativeField: a negative number is invalid. */
export function nonNegativeErrors(field: string, v: unknown): FieldError[] {
  return typeof v === 'number' && v < 0 ? [invalidError(field, goValue(v), 'must be greater than or equal to 0')] : [];
}
export function requiredError(field: string, detail = ''): FieldError {
  return { reason: 'FieldValueRequired', field, message: detail ? `Required value: ${detail}` : 'Required value' };
}
export function forbiddenError(field: string, detail = ''): FieldError {
  return { reason: 'FieldValueForbidden', field, message: detail ? `Forbidden: ${detail}` : 'Forbidden' };
}
export function notSupportedError(field: string, valueText: string, supported: string[]): FieldError {
  const detail = supported.length ? `: supported values: ${supported.map(goQuote).join(', ')}` : '';
  return { reason: 'FieldValueNotSupported', field, message: `Unsupported value: ${valueText}${detail}` };
}
export function duplicateError(field: string, valueText: string | null): FieldError {
  return { reason: 'FieldValueDuplicate', field, message: valueText === null ? 'Duplicate value' : `Duplicate value: ${valueText}` };
}
export function typeInvalidError(field: string, valueText: string, detail: string): FieldError {
  return { reason: 'FieldValueTypeInvalid', field, message: `Invalid value: ${valueText}: ${detail}` };
}
export function tooLongError(field: string, max: number): FieldError {
  return { reason: 'FieldValueTooLong', field, message: `Too long: may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}` };
}
export function tooManyError(field: string, actual: number, max: number): FieldError {
  return { reason: 'FieldValueTooMany', field, message: `Too many: ${actual}: must have at most ${max} items` };
}

/** One error as its text, several as "[a, b]": how kube-apiserver joins a field ErrorList. */
export function fieldErrorsText(errors: FieldError[]): string {
  const list = errors.map(fieldErrorText);
  return list.length === 1 ? list[0] : `[${list.join(', ')}]`;
}

/** "spec.replicas: Invalid value: ..." — a field error as kube-apiserver prints it. */
export function fieldErrorText(e: FieldError): string {
  return e.field ? `${e.field}: ${e.message}` : e.message;
}
