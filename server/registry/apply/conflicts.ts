// Apply conflicts (kube's internal/conflict.go): fields another manager owns that an apply would
// change, and the 409 kube-apiserver answers for them.
import { ApiError, type StatusCause } from '../../errors.ts';
import { compareStrings } from '../../go/strings.ts';
import { type FieldPath, pathString } from './fieldpath/path.ts';
import { FieldSet } from './fieldpath/set.ts';
import type { ManagerInfo } from './managed-fields.ts';

interface Conflict {
  manager: string; // identifier
  path: FieldPath;
}

export class ApplyConflicts extends Error {
  constructor(readonly conflicts: Conflict[]) {
    super('conflicts');
  }
}

export function conflictsFromManagers(sets: Map<string, FieldSet>): Conflict[] {
  const out: Conflict[] = [];
  for (const id of [...sets.keys()].sort(compareStrings)) for (const path of sets.get(id)!.paths()) out.push({ manager: id, path });
  return out;
}

/** `"kubectl"`, `"hpa" using apps/v1`, `"x" with subresource "status" using v1`. */
function printManager(id: string): string {
  let info: ManagerInfo;
  try {
    info = JSON.parse(id) as ManagerInfo;
  } catch {
    return JSON.stringify(id);
  }
  let s = JSON.stringify(info.manager ?? '');
  if (info.subresource) s += ` with subresource ${JSON.stringify(info.subresource)}`;
  if (info.operation === 'Update') s += ` using ${info.apiVersion ?? ''}`;
  return s;
}

/** The 409 kube-apiserver answers for apply conflicts, with one FieldManagerConflict cause per field. */
export function conflictError(conflicts: readonly Conflict[]): ApiError {
  const causes: StatusCause[] = conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${printManager(c.manager)}`, field: pathString(c.path) }));
  let message: string;
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0].manager)}: ${pathString(conflicts[0].path)}`;
  } else {
    const byManager = new Map<string, FieldPath[]>();
    for (const c of conflicts) {
      const list = byManager.get(c.manager) ?? [];
      list.push(c.path);
      byManager.set(c.manager, list);
    }
    const lines: string[] = [];
    for (const id of [...byManager.keys()].sort(compareStrings)) {
      lines.push(`conflicts with ${printManager(id)}:`);
      for (const p of byManager.get(id)!) lines.push(`- ${pathString(p)}`);
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError(409, 'Conflict', message, { causes });
}
