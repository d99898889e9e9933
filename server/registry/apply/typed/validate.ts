// The check of an apply configuration as a typed object (structured-merge-diff's typed/validate.go),
// worded as structured-merge-diff words its errors, and in the same walk the fields it sets.
import { goSharpV, goSprint, goTypeName } from '../../../go/fmt.ts';
import type { TypeNode } from '../../../schema/types.ts';
import { isPlainObject } from '../../../util/json.ts';
import { indexPE, pathElementString, type PathElement } from '../fieldpath/element.ts';
import { fieldNamed, type Named } from '../fieldpath/serialize-pe.ts';
import { FieldSet, level, type Entry } from '../fieldpath/set.ts';
import { SchemaError, declaredField, resolveAtom } from './atom.ts';
import { NamingError, listItemNamed } from './list-items.ts';
import { nullOrEmptyMap, rootLevel } from './tofieldset.ts';

/**
 * Problems that make an apply configuration unusable as a typed object, one message per problem
 * in structured-merge-diff's words: undeclared struct fields, list elements without their key
 * fields, repeated keys or set values.
 */
export function validateApplyConfiguration(node: TypeNode, obj: unknown): string[] {
  return checkedFieldsOf(node, obj).problems;
}

/**
 * validateApplyConfiguration, and in the same walk the fields the configuration sets —
 * fieldsOf(node, obj) — when it has no problems.
 */
export function checkedFieldsOf(node: TypeNode, obj: unknown): { problems: string[]; fields: FieldSet | undefined } {
  const problems: string[] = [];
  const fields = checkValue(node, obj, [], problems);
  return { problems, fields: problems.length > 0 ? undefined : rootLevel(fields) };
}

/** The second result of checkValue, as walkFields' selfMember: whether the value's path itself is a field. */
let checkedSelf = false;

/**
 * Checks a value, returning (with checkedSelf) what walkFields returns for it — meaningful only
 * when no problem is found, for then the two walks go the same way.
 */
function checkValue(node: TypeNode, value: unknown, path: PathElement[], errors: string[]): FieldSet | undefined {
  const atom = resolveAtom(node, value);
  if (atom.kind === 'scalar') {
    if (node.type !== 'any' && value !== null && value !== undefined) {
      const problem = scalarProblem(node, value);
      if (problem !== undefined) errors.push(new SchemaError(path, problem).message);
    }
    checkedSelf = true;
    return undefined;
  }
  if (atom.kind === 'list') {
    if (!Array.isArray(value)) {
      if (value !== null && value !== undefined) errors.push(new SchemaError(path, `expected list, got ${valueV(value)}`).message);
      checkedSelf = atom.relationship === 'atomic' || (value !== null && value !== undefined);
      return undefined;
    }
    if (atom.relationship === 'atomic') {
      for (let i = 0; i < value.length; i++) {
        const item = value[i];
        if (resolveAtom(atom.elem, item).kind === 'scalar') continue;
        path.push(indexPE(i));
        checkValue(atom.elem, item, path, errors);
        path.pop();
      }
      checkedSelf = true;
      return undefined;
    }
    const entries: Entry[] = [];
    let seen: Set<string> | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      let n: Named;
      try {
        n = listItemNamed(atom, i, item);
      } catch (e) {
        if (e instanceof NamingError) throw e.inner;
        errors.push(new SchemaError(path, `element ${i}: ${(e as Error).message}`).message);
        continue;
      }
      if (entries.length > 0) {
        if (seen === undefined) {
          seen = new Set();
          for (const x of entries) seen.add(x.name);
        }
        if (seen.has(n.name)) {
          errors.push(new SchemaError(path, `duplicate entries for key ${pathElementString(n.pe)}`).message);
          continue;
        }
      }
      seen?.add(n.name);
      path.push(n.pe);
      const sub = checkValue(atom.elem, item, path, errors);
      path.pop();
      entries.push({ name: n.name, pe: n.pe, member: true, sub });
    }
    checkedSelf = false;
    return entries.length > 0 ? level(entries, false) : undefined;
  }
  if (!isPlainObject(value)) {
    if (value !== null && value !== undefined) errors.push(new SchemaError(path, `expected map, got ${valueV(value)}`).message);
    checkedSelf = atom.atomic || (value !== null && value !== undefined);
    return undefined;
  }
  const fields = atom.fields;
  const entries: Entry[] = [];
  for (const key of Object.keys(value)) {
    const child = fields !== undefined ? declaredField(atom, key) : undefined;
    if (fields && child === undefined && !node.preserveUnknownFields) {
      path.push(fieldNamed(key).pe);
      errors.push(new SchemaError(path, 'field not declared in schema').message);
      path.pop();
      continue;
    }
    const n = fieldNamed(key);
    const v = value[key];
    path.push(n.pe);
    const sub = checkValue(child ?? atom.elem, v, path, errors);
    path.pop();
    // A declared field set to null or to an empty map is a field itself (what the configuration
    // says of it: owned, and not pruned), as structured-merge-diff records it.
    const member = child === undefined || checkedSelf || nullOrEmptyMap(v);
    if (member || sub !== undefined) entries.push({ name: n.name, pe: n.pe, member, sub });
  }
  // An atomic map or struct is one field, whatever it holds.
  checkedSelf = atom.atomic;
  return atom.atomic || entries.length === 0 ? undefined : level(entries, false);
}

/**
 * structured-merge-diff's check of a typed scalar (validateScalar), worded as it prints the value:
 * the value.Value holding it, with %T, %#v or %v. Integers and floats are both numeric;
 * int-or-string, Quantity and formatted strings take any scalar (kube-openapi's schemaconv).
 */
function scalarProblem(node: TypeNode, v: unknown): string | undefined {
  switch (node.type) {
    case 'integer':
    case 'number':
      return typeof v === 'number' ? undefined : `expected numeric (int or float), got ${goTypeName(v)}`;
    case 'string':
      // A format other than byte (date-time: metav1.Time) makes the scalar untyped there.
      if (node.format && node.format !== 'byte') return typeof v === 'object' ? `expected any scalar, got ${valueV(v)}` : undefined;
      return typeof v === 'string' ? undefined : `expected string, got &value.valueUnstructured{Value:${goSharpV(v)}}`;
    case 'boolean':
      return typeof v === 'boolean' ? undefined : `expected boolean, got ${valueV(v)}`;
    case 'int-or-string':
      return typeof v === 'object' ? `expected any scalar, got ${valueV(v)}` : undefined;
  }
  return undefined;
}

/** %v of the *valueUnstructured holding a decoded value: `&{5}`, `&{map[a:b]}`. */
function valueV(v: unknown): string {
  return `&{${goSprint(v)}}`;
}
