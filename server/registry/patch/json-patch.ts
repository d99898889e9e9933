// application/json-patch+json: RFC 6902 JSON Patch as kube-apiserver applies it (it uses the
// json-patch v4 library, whose quirks are part of the wire behaviour):
// - a body that does not decode as a list of operations is 400 BadRequest "error decoding patch: ...";
// - more than 10000 operations is 413 RequestEntityTooLarge;
// - an operation that cannot be applied is 422 Invalid with the generic message "the server
//   rejected our request due to an error in our request" (the library's own text is not sent; it
//   is kept as the error's `cause`);
// - "replace" of a missing member of an object adds it (only missing parents / array indexes fail);
// - negative array indexes count from the end; "-" appends for "add";
// - a "test" with value null matches a missing member;
// - the copies of one patch may add at most 3 MiB (the library's AccumulatedCopySizeLimit).
import { ApiError, badRequest, requestEntityTooLarge } from '../../errors.ts';
import { deepEqual } from '../../util/json.ts';
import { cloneMeasured } from '../../util/json-depth.ts';
import { getOwn, hasOwn, isJsonObject, setOwn, type JsonObject } from './merge-patch.ts';
import { jsonKind } from '../../go/json.ts';

/** kube-apiserver's maxJSONPatchOperations. */
export const MAX_JSON_PATCH_OPERATIONS = 10000;

/**
 * kube-apiserver's --json-patch-max-copy-bytes default (its JSONPatchMaxCopyBytes, 3 MiB, set as
 * the json-patch library's AccumulatedCopySizeLimit): the most the copy operations of one patch
 * may add, counted as the JSON of each copied value.
 */
export const MAX_JSON_PATCH_COPY_BYTES = 3 * 1024 * 1024;

const MISSING = 'missing value';
const INVALID_INDEX = 'invalid index referenced';

/** An operation that could not be applied; becomes the 422. */
class ApplyFailure extends Error {}

function fail(message: string): never {
  throw new ApplyFailure(message);
}

/** The 422 kube-apiserver answers when the patch decodes but does not apply. */
export function jsonPatchApplyError(detail: string): ApiError {
  const err = new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
  err.cause = detail;
  return err;
}

/** Decode the body the way the handler does (strictly, into []jsonPatchOp) before applying it. */
function decodeOperations(patch: unknown): JsonObject[] {
  if (patch === null || patch === undefined) return [];
  if (!Array.isArray(patch)) {
    throw badRequest(`error decoding patch: json: cannot unmarshal ${jsonKind(patch)} into Go value of type []handlers.jsonPatchOp`);
  }
  const ops: JsonObject[] = [];
  for (const el of patch) {
    if (el === null) {
      ops.push({});
      continue;
    }
    if (!isJsonObject(el)) {
      throw badRequest(`error decoding patch: json: cannot unmarshal ${jsonKind(el)} into Go value of type handlers.jsonPatchOp`);
    }
    for (const field of ['op', 'path', 'from']) {
      const v = getOwn(el, field);
      if (v !== undefined && v !== null && typeof v !== 'string') {
        throw badRequest(`error decoding patch: json: cannot unmarshal ${jsonKind(v)} into Go struct field jsonPatchOp.${field} of type string`);
      }
    }
    ops.push(el);
  }
  return ops;
}

type Container = JsonObject | unknown[];

function isContainer(v: unknown): v is Container {
  return typeof v === 'object' && v !== null;
}

/** RFC 6901 reference tokens; like the library, the text before the first "/" is ignored. */
function pointerTokens(path: string): string[] | undefined {
  const split = path.split('/');
  if (split.length < 2) return undefined;
  return split.slice(1).map((t) => t.replace(/~[01]/g, (m) => (m === '~1' ? '/' : '~')));
}

/** strconv.Atoi: an optionally signed decimal integer, or the error text. */
function atoi(s: string): number | string {
  if (!/^[+-]?[0-9]+$/.test(s)) return `strconv.Atoi: parsing "${s}": invalid syntax`;
  const n = Number(s);
  if (!Number.isSafeInteger(n)) return `strconv.Atoi: parsing "${s}": value out of range`;
  return n;
}

/** Index of an existing element (negative counts from the end), or the error text. */
function existingIndex(arr: unknown[], key: string): number | string {
  const n = atoi(key);
  if (typeof n === 'string') return n;
  let idx = n;
  if (idx < 0) {
    if (idx < -arr.length) return `Unable to access invalid index: ${idx}: ${INVALID_INDEX}`;
    idx += arr.length;
  }
  if (idx >= arr.length) return `Unable to access invalid index: ${idx}: ${INVALID_INDEX}`;
  return idx;
}

function stringField(op: JsonObject, field: string): string | undefined {
  const v = getOwn(op, field);
  return typeof v === 'string' ? v : undefined;
}

/** The patched document, copied on write: containers this patch created are mutated in place. */
class Working {
  root: unknown;
  private readonly owned = new WeakSet<object>();
  /** Bytes the copy operations have added so far. */
  private copied = 0;

  constructor(doc: unknown) {
    this.root = doc;
  }

  private own<T extends Container>(c: T): T {
    if (this.owned.has(c)) return c;
    const copy = (Array.isArray(c) ? c.slice() : { ...c }) as T;
    this.owned.add(copy);
    return copy;
  }

  /** The container holding the last token, and that token; undefined if a parent is missing. */
  private locate(path: string, write: boolean): { con: Container; key: string } | undefined {
    const tokens = pointerTokens(path);
    if (!tokens || !isContainer(this.root)) return undefined;
    let cur: Container = this.root;
    if (write) cur = this.root = this.own(cur);
    for (let i = 0; i < tokens.length - 1; i++) {
      const token = tokens[i]!;
      let next: unknown;
      let idx = -1;
      if (Array.isArray(cur)) {
        const r = existingIndex(cur, token);
        if (typeof r === 'string') return undefined;
        idx = r;
        next = cur[r];
      } else {
        next = getOwn(cur, token);
      }
      if (!isContainer(next)) return undefined;
      if (write) {
        const mine = this.own(next);
        if (mine !== next) {
          if (Array.isArray(cur)) cur[idx] = mine;
          else setOwn(cur, token, mine);
        }
        next = mine;
      }
      cur = next as Container;
    }
    return { con: cur, key: tokens[tokens.length - 1]! };
  }

  /** The library's container add; returns the error text instead of throwing. */
  private static add(con: Container, key: string, value: unknown): string | undefined {
    if (!Array.isArray(con)) {
      setOwn(con, key, value);
      return undefined;
    }
    if (key === '-') {
      con.push(value);
      return undefined;
    }
    const n = atoi(key);
    if (typeof n === 'string') return `value was not a proper array index: '${key}': ${n}`;
    const size = con.length + 1;
    let idx = n;
    if (idx >= size) return `Unable to access invalid index: ${idx}: ${INVALID_INDEX}`;
    if (idx < 0) {
      if (idx < -size) return `Unable to access invalid index: ${idx}: ${INVALID_INDEX}`;
      idx += size;
    }
    con.splice(idx, 0, value);
    return undefined;
  }

  /** The library's container get: a missing object member is undefined, a bad index an error text. */
  private static get(con: Container, key: string): { value: unknown } | string {
    if (!Array.isArray(con)) return { value: getOwn(con, key) };
    const idx = existingIndex(con, key);
    if (typeof idx === 'string') return idx;
    return { value: con[idx] };
  }

  private static remove(con: Container, key: string): string | undefined {
    if (!Array.isArray(con)) {
      if (!hasOwn(con, key)) return `Unable to remove nonexistent key: ${key}: ${MISSING}`;
      delete con[key];
      return undefined;
    }
    const n = atoi(key);
    if (typeof n === 'string') return n;
    let idx = n;
    if (idx >= con.length) return `Unable to access invalid index: ${idx}: ${INVALID_INDEX}`;
    if (idx < 0) {
      if (idx < -con.length) return `Unable to access invalid index: ${idx}: ${INVALID_INDEX}`;
      idx += con.length;
    }
    con.splice(idx, 1);
    return undefined;
  }

  apply(op: JsonObject): void {
    const kind = stringField(op, 'op') ?? 'unknown';
    switch (kind) {
      case 'add':
        return this.addOp(op);
      case 'remove':
        return this.removeOp(op);
      case 'replace':
        return this.replaceOp(op);
      case 'move':
        return this.moveOp(op);
      case 'copy':
        return this.copyOp(op);
      case 'test':
        return this.testOp(op);
      default:
        fail(`Unexpected kind: ${kind}`);
    }
  }

  private addOp(op: JsonObject): void {
    const path = stringField(op, 'path');
    if (path === undefined) fail(`add operation failed to decode path: ${MISSING}`);
    const loc = this.locate(path, true);
    if (!loc) fail(`add operation does not apply: doc is missing path: "${path}": ${MISSING}`);
    const err = Working.add(loc.con, loc.key, valueOf(op));
    if (err) fail(`error in add for path: '${path}': ${err}`);
  }

  private removeOp(op: JsonObject): void {
    const path = stringField(op, 'path');
    if (path === undefined) fail(`remove operation failed to decode path: ${MISSING}`);
    const loc = this.locate(path, true);
    if (!loc) fail(`remove operation does not apply: doc is missing path: "${path}": ${MISSING}`);
    const err = Working.remove(loc.con, loc.key);
    if (err) fail(`error in remove for path: '${path}': ${err}`);
  }

  private replaceOp(op: JsonObject): void {
    const path = stringField(op, 'path');
    if (path === undefined) fail(`replace operation failed to decode path: operation missing path field: ${MISSING}`);
    const value = valueOf(op);
    if (path === '') {
      if (!isContainer(value)) fail('replace operation value must be object or array: %!w(<nil>)');
      this.root = value;
      return;
    }
    const loc = this.locate(path, true);
    if (!loc) fail(`replace operation does not apply: doc is missing path: ${path}: ${MISSING}`);
    if (Array.isArray(loc.con)) {
      const idx = existingIndex(loc.con, loc.key);
      if (typeof idx === 'string') fail(`replace operation does not apply: doc is missing key: ${path}: ${MISSING}`);
      loc.con[idx] = value;
    } else {
      setOwn(loc.con, loc.key, value);
    }
  }

  private moveOp(op: JsonObject): void {
    const from = stringField(op, 'from');
    if (from === undefined) fail(`move operation failed to decode from: operation, missing from field: ${MISSING}`);
    const src = this.locate(from, true);
    if (!src) fail(`move operation does not apply: doc is missing from path: ${from}: ${MISSING}`);
    const got = Working.get(src.con, src.key);
    if (typeof got === 'string') fail(`error in move for path: '${src.key}': ${got}`);
    const removeErr = Working.remove(src.con, src.key);
    if (removeErr) fail(`error in move for path: '${src.key}': ${removeErr}`);
    const path = stringField(op, 'path');
    if (path === undefined) fail(`move operation failed to decode path: operation missing path field: ${MISSING}`);
    const dst = this.locate(path, true);
    if (!dst) fail(`move operation does not apply: doc is missing destination path: ${path}: ${MISSING}`);
    const err = Working.add(dst.con, dst.key, got.value ?? null);
    if (err) fail(`error in move for path: '${path}': ${err}`);
  }

  private copyOp(op: JsonObject): void {
    const from = stringField(op, 'from');
    if (from === undefined) fail(`copy operation failed to decode from: operation, missing from field: ${MISSING}`);
    const src = this.locate(from, false);
    if (!src) fail(`copy operation does not apply: doc is missing from path: ${from}: ${MISSING}`);
    const got = Working.get(src.con, src.key);
    if (typeof got === 'string') fail(`error in copy for from: '${from}': ${got}`);
    const path = stringField(op, 'path');
    if (path === undefined) fail(`copy operation failed to decode path: ${MISSING}`);
    const dst = this.locate(path, true);
    if (!dst) fail(`copy operation does not apply: doc is missing destination path: ${path}: ${MISSING}`);
    // A fresh copy, so later operations on either location cannot affect the other; what the
    // copies add up to is limited as kube limits it, or a few copies of the document into
    // itself would double it each time.
    const { copy, size } = cloneMeasured(got.value);
    this.copied += size;
    if (this.copied > MAX_JSON_PATCH_COPY_BYTES) {
      fail(`Unable to complete the copy, the accumulated size increase of copy is ${this.copied}, exceeding the limit ${MAX_JSON_PATCH_COPY_BYTES}`);
    }
    const err = Working.add(dst.con, dst.key, copy);
    if (err) fail(`error while adding value during copy: ${err}`);
  }

  private testOp(op: JsonObject): void {
    const path = stringField(op, 'path');
    if (path === undefined) fail(`test operation failed to decode path: operation missing path field: ${MISSING}`);
    const hasValue = hasOwn(op, 'value');
    const expected = getOwn(op, 'value');
    if (path === '') {
      if (hasValue && expected !== null && deepEqual(this.root, expected)) return;
      fail(`testing value ${path} failed: test failed`);
    }
    const loc = this.locate(path, false);
    if (!loc) fail(`test operation does not apply: is missing path: ${path}: ${MISSING}`);
    const got = Working.get(loc.con, loc.key);
    if (typeof got === 'string') fail(`error in test for path: '${path}': ${got}`);
    const actual = got.value;
    if (actual === undefined || actual === null) {
      if (!hasValue || expected === null) return;
      fail(`testing value ${path} failed: test failed`);
    }
    if (hasValue && expected !== null && deepEqual(actual, expected)) return;
    fail(`testing value ${path} failed: test failed`);
  }
}

/** The operation's value; an absent value is null, as the library treats it. */
function valueOf(op: JsonObject): unknown {
  const v = getOwn(op, 'value');
  return v === undefined ? null : v;
}

/**
 * Apply an RFC 6902 patch (the parsed request body) to `doc`. Pure: `doc` and `patch` are not
 * modified; containers the patch does not touch are shared with the result.
 * Throws ApiError 400 (not a list of operations), 413 (too many operations) or 422 (does not apply).
 */
export function applyJsonPatch(doc: unknown, patch: unknown): unknown {
  const ops = decodeOperations(patch);
  if (ops.length > MAX_JSON_PATCH_OPERATIONS) {
    throw requestEntityTooLarge(
      `Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${ops.length}`,
    );
  }
  const work = new Working(doc);
  try {
    for (const op of ops) work.apply(op);
  } catch (e) {
    if (e instanceof ApplyFailure) throw jsonPatchApplyError(e.message);
    throw e;
  }
  return work.root;
}
