// metadata.managedFields on the wire (kube's internal/managedfields.go): the identity of an entry
// (manager, operation, subresource and, for Update only, apiVersion), and entries read into sets
// by identity and written back in kube's order and spelling. Sets recently read or written are
// taken again without a walk (recent-sets.ts), and shared sets' FieldsV1 made once.
import { goJsonMarshal } from '../../go/json.ts';
import { compareStrings } from '../../go/strings.ts';
import { deepFreeze, isPlainObject } from '../../util/json.ts';
import { FieldSet, frozen } from './fieldpath/set.ts';
import { recentKey, recentSet, rememberSet } from './recent-sets.ts';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: object;
  subresource?: string;
}

/** A manager's set, the version it wrote in, and whether it was written by an Apply. */
export interface VersionedSet {
  set: FieldSet;
  apiVersion: string;
  applied: boolean;
}

/** Decoded managedFields: sets and times keyed by manager identifier. */
export interface Managed {
  fields: Map<string, VersionedSet>;
  times: Map<string, string | undefined>;
}

export const emptyManaged = (): Managed => ({ fields: new Map(), times: new Map() });

export interface ManagerInfo {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  subresource?: string;
}

/** The identity of an entry: its manager, operation, subresource and — for Update only — apiVersion (kube's JSON spelling). */
export function managerIdentifier(info: ManagerInfo): string {
  const key = `${info.manager ?? ''}\u0000${info.operation ?? ''}\u0000${info.apiVersion ?? ''}\u0000${info.subresource ?? ''}`;
  let id = IDENTIFIER_OF.get(key);
  if (id === undefined) {
    id = writeIdentifier(info);
    if (IDENTIFIER_OF.size >= 4096) IDENTIFIER_OF.clear();
    IDENTIFIER_OF.set(key, id);
  }
  return id;
}

/** Identifiers by their parts (manager, operation, apiVersion, subresource), bounded. */
const IDENTIFIER_OF = new Map<string, string>();

function writeIdentifier(info: ManagerInfo): string {
  const parts: string[] = [];
  if (info.manager) parts.push(`"manager":${goJsonMarshal(info.manager)}`);
  if (info.operation) parts.push(`"operation":${goJsonMarshal(info.operation)}`);
  if (info.apiVersion && info.operation !== 'Apply') parts.push(`"apiVersion":${goJsonMarshal(info.apiVersion)}`);
  if (info.subresource) parts.push(`"subresource":${goJsonMarshal(info.subresource)}`);
  return '{' + parts.join(',') + '}';
}

/** Parsed identifiers (only read), bounded. */
const IDENTIFIERS = new Map<string, ManagerInfo>();

export function parseIdentifier(id: string): ManagerInfo {
  let info = IDENTIFIERS.get(id);
  if (info !== undefined) return info;
  try {
    const v = JSON.parse(id) as unknown;
    info = isPlainObject(v) ? (v as ManagerInfo) : {};
  } catch {
    info = {};
  }
  if (IDENTIFIERS.size >= 4096) IDENTIFIERS.clear();
  IDENTIFIERS.set(id, info);
  return info;
}

/** A field of an object's metadata (undefined when the object or its metadata is not a map). */
export function metadataField(obj: unknown, key: string): unknown {
  const meta = isPlainObject(obj) ? obj.metadata : undefined;
  return isPlainObject(meta) ? meta[key] : undefined;
}

/** A string value as Go reads an unstructured field into a string: anything else is "". */
export const stringOrEmpty = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Reads managedFields; with the object's uid, through the recent sets (and then the sets are frozen). */
export function decodeEntries(entries: unknown, uid: string | undefined): Managed {
  const managed = emptyManaged();
  if (entries === undefined || entries === null) return managed;
  if (!Array.isArray(entries)) throw new Error('managedFields must be a list');
  for (let i = 0; i < entries.length; i++) {
    const e: unknown = entries[i];
    if (!isPlainObject(e)) throw new Error(`managed fields entry ${i} is not an object`);
    const operation = stringOrEmpty(e.operation);
    if (operation !== 'Apply' && operation !== 'Update') throw new Error('operation must be `Apply` or `Update`');
    if (stringOrEmpty(e.apiVersion).length < 1) throw new Error('apiVersion must not be empty');
    const fieldsType = stringOrEmpty(e.fieldsType);
    if (fieldsType === '') throw new Error(`missing fieldsType in managed fields entry ${i}`);
    if (fieldsType !== 'FieldsV1') throw new Error(`invalid fieldsType "${fieldsType}" in managed fields entry ${i}`);
    const id = managerIdentifier({ manager: stringOrEmpty(e.manager), operation, apiVersion: stringOrEmpty(e.apiVersion), subresource: stringOrEmpty(e.subresource) });
    const key = recentKey(uid, id);
    let set = (typeof e.fieldsV1 === 'object' && e.fieldsV1 !== null ? SET_OF_FIELDS_V1.get(e.fieldsV1) : undefined) ?? recentSet(key, e.fieldsV1);
    if (set === undefined) {
      try {
        set = e.fieldsV1 === undefined || e.fieldsV1 === null ? new FieldSet() : FieldSet.fromFieldsV1(e.fieldsV1);
      } catch (err) {
        throw new Error(`error decoding versioned set from entry ${i}: error decoding set: ${(err as Error).message}`);
      }
      if (key !== undefined) rememberSet(key, (set = frozen(set)));
    }
    managed.fields.set(id, { set, apiVersion: stringOrEmpty(e.apiVersion), applied: operation === 'Apply' });
    managed.times.set(id, typeof e.time === 'string' && e.time !== '' ? e.time : undefined);
  }
  return managed;
}

export const seconds = (t: string | undefined): number => {
  if (!t) return 0;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
};

/**
 * Writes managedFields, sorted as kube sorts them: Apply before Update, then by time, manager,
 * apiVersion, subresource. With the object's uid, the sets are remembered as its recent ones.
 */
export function encodeManagedFields(managed: Managed, uid?: string): ManagedFieldsEntry[] {
  const out: ManagedFieldsEntry[] = [];
  for (const [id, vs] of managed.fields) {
    const key = recentKey(uid, id);
    const set = key !== undefined ? rememberSet(key, frozen(vs.set)) : vs.set;
    const info = parseIdentifier(id);
    const time = managed.times.get(id);
    // Key order as kube writes an entry: manager, operation, apiVersion, time, fieldsType, fieldsV1, subresource.
    const entry: ManagedFieldsEntry = {
      manager: info.manager ?? '',
      operation: vs.applied || info.operation === 'Apply' ? 'Apply' : 'Update',
      apiVersion: vs.apiVersion,
      ...(time !== undefined ? { time } : {}),
      fieldsType: 'FieldsV1',
      fieldsV1: fieldsV1Of(set),
      ...(info.subresource ? { subresource: info.subresource } : {}),
    };
    out.push(entry);
  }
  out.sort((p, q) => {
    if (p.operation !== q.operation) return p.operation < q.operation ? -1 : 1;
    const ps = seconds(p.time);
    const qs = seconds(q.time);
    if (ps !== qs) return ps - qs;
    if (p.manager !== q.manager) return compareStrings(p.manager, q.manager);
    if (p.apiVersion !== q.apiVersion) return compareStrings(p.apiVersion, q.apiVersion);
    return compareStrings(p.subresource ?? '', q.subresource ?? '');
  });
  return out;
}

/**
 * The FieldsV1 of a set. Shared (frozen) sets are written again and again, mostly unchanged: their
 * FieldsV1 is made once and shared too, frozen so that no holder can change it for the others.
 */
function fieldsV1Of(set: FieldSet): Record<string, unknown> {
  if (!set._frozen) return set.toFieldsV1();
  const f = FIELDS_V1.get(set);
  if (f) return f;
  // Kept from the second time on: a set written once (a create's) is not worth freezing.
  if (f === undefined) {
    FIELDS_V1.set(set, null);
    return set.toFieldsV1();
  }
  const made = deepFreeze(set.toFieldsV1());
  FIELDS_V1.set(set, made);
  SET_OF_FIELDS_V1.set(made, set);
  return made;
}

/**
 * The set each shared FieldsV1 was made from. A write reads the object the last write stored
 * (the committed object itself, see StoredObject.committed), so its managedFields hold these
 * very objects: deep-frozen, they still describe their set, and are recognised without a walk.
 */
const SET_OF_FIELDS_V1 = new WeakMap<object, FieldSet>();

/** FieldsV1 by set: null once written, the shared frozen object from the second time on. */
const FIELDS_V1 = new WeakMap<FieldSet, Record<string, unknown> | null>();

/** True for managedFields that ask for a reset: an empty list, or a list of one empty entry. */
export function isResetManagedFields(mf: unknown): boolean {
  if (!Array.isArray(mf)) return false;
  if (mf.length === 0) return true;
  if (mf.length !== 1 || !isPlainObject(mf[0])) return false;
  const e = mf[0];
  return Object.keys(e).every((k) => {
    const v = e[k];
    if (k === 'fieldsV1') return v === undefined || v === null;
    return v === undefined || v === null || v === '';
  });
}
