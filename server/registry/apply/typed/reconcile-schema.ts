// A manager's set against a schema that changed (structured-merge-diff's typed/reconcile_schema.go).
import type { TypeNode } from '../../../schema/types.ts';
import type { FieldPath } from '../fieldpath/path.ts';
import { FieldSet, frozen } from '../fieldpath/set.ts';
import { UNTYPED, mapChildNode, resolveAtom } from './atom.ts';

/**
 * Where a set disagrees with the schema after the schema made a granular field atomic: the paths
 * of atomic fields the set owns parts of. (A field made granular is not reconciled: as in
 * structured-merge-diff, its owner keeps owning the field itself and nothing below it.)
 */
export type SchemaMismatches = FieldPath[];

export const NO_MISMATCHES: SchemaMismatches = [];
const ATOMIC_HERE: SchemaMismatches = [[]];

export function schemaMismatches(node: TypeNode, set: FieldSet): SchemaMismatches {
  if (node.type === 'any' || set.isEmpty()) return NO_MISMATCHES; // untyped values carry no atomic/granular marks
  const atom = resolveAtom(node, undefined);
  if (atom.kind === 'scalar' || (atom.kind === 'list' ? atom.relationship === 'atomic' : atom.atomic)) return NO_MISMATCHES;
  return mismatchesBelow(node, set, set._frozen);
}

/**
 * The mismatches of a non-empty level at node, relative to the level's path; remembered on frozen
 * levels (`immutable`: below a frozen level, which makes this one unchangeable too).
 */
function mismatchesBelow(n: TypeNode, s: FieldSet, immutable: boolean): SchemaMismatches {
  if (n.type === 'any') return NO_MISMATCHES;
  const atom = resolveAtom(n, undefined);
  if (atom.kind === 'scalar') return NO_MISMATCHES;
  if (atom.kind === 'list' ? atom.relationship === 'atomic' : atom.atomic) return ATOMIC_HERE;
  if (immutable) frozen(s);
  else immutable = s._frozen;
  if (immutable && s._mmNode === n) return s._mm!;
  let out: SchemaMismatches | undefined;
  for (const e of s._e) {
    if (e.sub === undefined) continue;
    const pe = e.pe;
    const child = atom.kind === 'list' ? atom.elem : 'field' in pe ? mapChildNode(atom, pe.field) : UNTYPED;
    const r = mismatchesBelow(child, e.sub, immutable);
    if (r === NO_MISMATCHES) continue;
    out ??= [];
    for (const p of r) out.push([pe, ...p]);
  }
  const result = out ?? NO_MISMATCHES;
  if (immutable) {
    s._mm = result;
    s._mmNode = n;
  }
  return result;
}
