// Removal of the fields in a set from an object (structured-merge-diff's typed/remove.go).
import type { TypeNode } from '../../../schema/types.ts';
import { cloneJSON, isPlainObject } from '../../../util/json.ts';
import type { PathElement } from '../fieldpath/element.ts';
import { fieldNamed } from '../fieldpath/serialize-pe.ts';
import { FieldSet } from '../fieldpath/set.ts';
import { emptyMap } from '../fieldpath/value.ts';
import { mapChildNode, resolveAtom } from './atom.ts';
import { indexItems } from './list-items.ts';

/** The copy removeFieldsShared makes of what it keeps: none. */
function share<T>(v: T): T {
  return v;
}

/**
 * A copy of obj without the fields in the set: a member path removes the field, element or map
 * entry with everything below it. A map or list that loses its last entry this way is left null,
 * as structured-merge-diff's RemoveItems leaves it (whoever owns the field itself keeps it; the
 * built-in kinds' decoding then omits it); a list-map element that loses every field is dropped
 * (structured-merge-diff would keep a null element, which no key names).
 */
export function removeFields(node: TypeNode, obj: unknown, fields: FieldSet): unknown {
  if (fields.isEmpty()) return cloneJSON(obj);
  const out = removeValue(node, obj, fields, [], cloneJSON);
  return out === null && isPlainObject(obj) ? {} : out;
}

/**
 * removeFields without the copy: what the set leaves alone is shared with obj (for values that
 * are only read, or when obj itself is a private copy).
 */
export function removeFieldsShared(node: TypeNode, obj: unknown, fields: FieldSet): unknown {
  if (fields.isEmpty()) return obj;
  const out = removeValue(node, obj, fields, [], share);
  return out === null && isPlainObject(obj) ? {} : out;
}

function removeValue(node: TypeNode, value: unknown, toRemove: FieldSet, path: PathElement[], copy: <T>(v: T) => T): unknown {
  const atom = resolveAtom(node, value);
  if (atom.kind === 'scalar') return copy(value);
  if (atom.kind === 'list') {
    if (!Array.isArray(value) || value.length === 0 || atom.relationship === 'atomic') return copy(value);
    const out: unknown[] = [];
    for (const { pe, name, item } of indexItems(atom, value, path, false)) {
      const e = toRemove._get(name);
      if (e?.member) continue;
      let v: unknown;
      if (e?.sub) {
        path.push(pe);
        v = removeValue(atom.elem, item, e.sub, path, copy);
        path.pop();
      } else v = copy(item);
      // (an element emptied here is dropped, not left null)
      if (v !== undefined && (v !== null || item === null)) out.push(v);
    }
    return out.length > 0 ? out : null;
  }
  if (!isPlainObject(value) || emptyMap(value) || atom.atomic) return copy(value);
  const out: Record<string, unknown> = {};
  let any = false;
  for (const k of Object.keys(value)) {
    const n = fieldNamed(k);
    const e = toRemove._get(n.name);
    if (e?.member) continue;
    let v: unknown;
    if (e?.sub) {
      path.push(n.pe);
      v = removeValue(mapChildNode(atom, k), value[k], e.sub, path, copy);
      path.pop();
    } else v = copy(value[k]);
    if (v !== undefined) {
      out[k] = v;
      any = true;
    }
  }
  return any ? out : null;
}
