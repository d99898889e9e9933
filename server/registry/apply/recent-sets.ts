// Sets recently written or read, by object (uid) and manager. The same managers write the same
// objects again and again: a set whose FieldsV1 has not changed since is taken as it is (after
// checking that the FieldsV1 describes exactly that set), with what was derived from it (schema
// reconciliation, ensureNamedFieldsAreMembers). Cached sets are frozen: nothing changes them.
import { isPlainObject } from '../../util/json.ts';
import { describesExactly, FieldSet } from './fieldpath/set.ts';

const RECENT_SETS = new Map<string, FieldSet[]>();
/** At most this many objects and managers, and about this many set entries in all. */
const RECENT_SETS_LIMIT = 1024;
const RECENT_ENTRIES_LIMIT = 200_000;
let recentEntries = 0;
const RECENT_WEIGHT = new WeakMap<FieldSet, number>();
/** Sets kept per object and manager: the last written, and the one before (a write may be retried on the same live object). */
const RECENT_PER_KEY = 2;

export function recentKey(uid: string | undefined, id: string): string | undefined {
  return uid ? uid + '\n' + id : undefined;
}

export function rememberSet(key: string, set: FieldSet): FieldSet {
  const sets = RECENT_SETS.get(key);
  if (sets !== undefined) {
    RECENT_SETS.delete(key); // most recently used last
    // The same set again (often rebuilt from the one read: it shares most levels) keeps its first copy.
    // (set.equals looks names up in the kept sets, whose levels have their indexes already)
    let at = -1;
    for (let i = 0; i < sets.length && at < 0; i++) if (sets[i] === set || set.equals(sets[i])) at = i;
    if (at >= 0) set = sets.splice(at, 1)[0];
    else recentEntries += weigh(set);
    sets.unshift(set);
    while (sets.length > RECENT_PER_KEY) recentEntries -= weigh(sets.pop()!);
    RECENT_SETS.set(key, sets);
  } else {
    recentEntries += weigh(set);
    RECENT_SETS.set(key, [set]);
  }
  // Forget the least recently used beyond the limits (never the one just remembered).
  while (RECENT_SETS.size > 1 && (RECENT_SETS.size > RECENT_SETS_LIMIT || recentEntries > RECENT_ENTRIES_LIMIT)) {
    const oldest = RECENT_SETS.keys().next().value!;
    for (const s of RECENT_SETS.get(oldest)!) recentEntries -= weigh(s);
    RECENT_SETS.delete(oldest);
  }
  return set;
}

/** The entries of a set (levels shared with other sets counted again), remembered. */
function weigh(set: FieldSet): number {
  let w = RECENT_WEIGHT.get(set);
  if (w === undefined) {
    w = countEntries(set);
    RECENT_WEIGHT.set(set, w);
  }
  return w;
}

function countEntries(set: FieldSet): number {
  let n = set._e.length;
  for (const e of set._e) if (e.sub) n += countEntries(e.sub);
  return n;
}

/** A recent set the FieldsV1 describes exactly. */
export function recentSet(key: string | undefined, raw: unknown): FieldSet | undefined {
  const sets = key === undefined ? undefined : RECENT_SETS.get(key);
  if (sets !== undefined) for (const s of sets) if (describesExactly(raw, s)) return s;
  return undefined;
}

/**
 * Whose sets are kept. Keeping an object's sets costs its write most of what it saves the next
 * one (a new set retained is a set the garbage collector promotes, and later evicts), so they are
 * kept only for objects written again: a create keeps nothing, an object's first write after it
 * is remembered by its uid only, and from its second write on its sets are kept.
 */
const WRITTEN_ONCE = new Map<string, true>();
const KEPT = new Map<string, true>();
/** Uids remembered in each map (a string each; the sets themselves are bounded by RECENT_SETS). */
const UIDS_LIMIT = 8192;

function bounded(m: Map<string, true>, uid: string): void {
  m.set(uid, true);
  if (m.size > UIDS_LIMIT) m.delete(m.keys().next().value!);
}

/** The uid to read and keep this write's sets under: undefined when the object is not written often enough. */
export function keptUid(uid: string | undefined): string | undefined {
  if (uid === undefined) return undefined;
  if (KEPT.has(uid)) return uid;
  if (WRITTEN_ONCE.delete(uid)) {
    bounded(KEPT, uid);
    return uid;
  }
  bounded(WRITTEN_ONCE, uid);
  return undefined;
}

export function uidOf(obj: unknown): string | undefined {
  const meta = isPlainObject(obj) ? obj.metadata : undefined;
  const uid = isPlainObject(meta) ? meta.uid : undefined;
  return typeof uid === 'string' && uid !== '' ? uid : undefined;
}
