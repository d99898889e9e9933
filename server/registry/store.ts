// The one generic store. Every write of every kind goes through writeObject(): it validates,
// runs admission, bumps generation, and appends to the log in one transaction; watchers are
// notified by the log after commit. Per-kind rules come from strategies (strategy.ts).
import { randomUUID } from 'node:crypto';
import type { EventLog } from '../storage/log/event-log.ts';
import type { Key, StoredObject, WriteTx } from '../storage/log/types.ts';
import type { ResourceInfo, TypeNode, ServiceLookup } from '../schema/types.ts';
import { TypeModel } from '../schema/model.ts';
import { validateObject } from '../schema/validate.ts';
import type { AdmissionChain } from '../admission/chain.ts';
import type { AdmissionAttributes } from '../admission/types.ts';
import type { UserInfo } from '../authentication/user.ts';
import type { Strategy, SubresourceCreate } from './strategy.ts';
import { conversionOf, convertTo, defaultsFor, nameRuleFor, strategyFor, type KindConversion } from './kinds/index.ts';
import { applyScaleToObject, scaleFromObject } from './kinds/autoscaling/scale.ts';
import { apply as applyEngine, checkApplyTarget, update as recordManagedUpdate, zeroObject, type OtherVersion } from './apply/index.ts';
import { UNTYPED } from './apply/index.ts';
import { goFieldShape, goZeroFields } from '../schema/go-structs.ts';
import { validateObjectMeta, validateObjectMetaUpdate } from '../validation/object-meta.ts';
import { generateNameFrom } from '../validation/names.ts';
import { parseLabelSelector, parseFieldSelector, fieldsOf, checkFieldSelectorFor, stringFieldPath, type FieldSelector, type LabelSelector } from './selectors.ts';
import { ApiError, ObjectTooLargeError, alreadyExists, badRequest, conflict, gone, invalid, methodNotAllowed, methodNotRouted, notFound, tooLargeResourceVersion, tooOldResourceVersion } from '../errors.ts';
import { cloneJSON, deepEqual, deepFreeze, isPlainObject } from '../util/json.ts';
import { goJsonText } from '../go/json.ts';
import { formatRFC3339 } from '../go/time.ts';
import { canonicalizeQuantities } from '../schema/quantities.ts';
import { nowTimestamp } from './now.ts';
import { dropOmittedZeros, fillGoZeros } from '../schema/omitempty.ts';
import { goJsonOrder } from '../schema/go-order.ts';
import { canonicalOrder, customObjectOrder, metadataInOrder } from './object-order.ts';
import { servedJsonPrefix, servedAsStored, withStoredItems, decodeObject, CHECK_STORED_JSON, type StoredRow, type ListRow } from '../storage/rows/codec.ts';
import { encodeContinue, decodeContinue } from './continue-token.ts';
import { validateListOptions, type ListParameters } from './list-options.ts';
import { CorruptObjectError } from '../storage/rows/corrupt-rows.ts';
import { invalidError, type FieldError } from '../validation/field.ts';
import { TurnBudget } from '../util/turns.ts';
import { ListCache } from './list-cache.ts';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

/** Per-request facts the store needs. */
export interface RequestContext {
  user: UserInfo;
  dryRun: boolean;
  fieldValidation: FieldValidation;
  /** Warnings to return in `Warning: 299` headers. */
  warnings: string[];
  /** Paths of fields the request body set twice (reported per fieldValidation). */
  duplicateFields?: string[];
  /** Who owns the fields this write sets: the fieldManager parameter, else from the User-Agent. */
  fieldManager?: string;
  /** Unknown fields pruned from a custom object (reported per fieldValidation). */
  prunedFields?: string[];
  /** The fieldManager and fieldValidation parameters as given (admission's options show only those). */
  fieldManagerParam?: string;
  fieldValidationParam?: string;
  /** What admission recorded for the request's audit event (key → value). */
  auditAnnotations?: Record<string, string>;
}

export interface ApplyOptions {
  force: boolean;
  subresource?: string;
}

export interface ListOptions extends ListParameters {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
}

/** How long a request for a resourceVersion the server has not reached yet waits for it. */
const TOO_LARGE_RV_WAIT_MS = 3000;

/** Rows a list reads at a time (between pages it may yield, see TurnBudget). */
const LIST_PAGE_ROWS = 64;
/** The bytes of recent whole lists kept to answer them again (ListCache). */
const LIST_CACHE_BYTES = 16 << 20;
const COMMA = Buffer.from(',');

const EXPIRED_CONTINUE_MESSAGE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

export function parseResourceVersion(v: string): number {
  if (!/^\d+$/.test(v)) throw badRequest(`invalid resource version: ${JSON.stringify(v)}`);
  return Number(v);
}

export interface ListResult {
  items: any[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: string;
  gracePeriodSeconds?: number;
  /** The unsafe delete of a corrupt object (see deleteCorrupt). */
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
}

export interface DeleteResult {
  /** True when the object is gone; false when deletion waits on finalizers. */
  deleted: boolean;
  object: any;
}

/** A function that produces the desired object from the current one (update and patch). */
export type UpdateFn = (current: any) => any;

// Unconditional writes (no resourceVersion precondition) retry when another write got in first,
// as kube-apiserver's guaranteed update does; only one write per key lands per batch.
const MAX_CONFLICT_RETRIES = 200;

/** The resource's own qualified name: `resource.group`, or `resource` for the core group. */
function ownQualifiedName(info: ResourceInfo): string {
  return info.group ? `${info.resource}.${info.group}` : info.resource;
}

/** Where a resource's rows are kept: its own name, or the shared one of a kind served by several groups (events). */
export function qualifiedResourceOf(info: ResourceInfo): string {
  return builtinConversionOf(info)?.storageResource ?? ownQualifiedName(info);
}

const BUILTIN_CONVERSIONS = new WeakMap<ResourceInfo, KindConversion | null>();

/** How a built-in resource kept in another form than served converts (see kinds/index.ts). */
export function builtinConversionOf(info: ResourceInfo): KindConversion | undefined {
  let c = BUILTIN_CONVERSIONS.get(info);
  if (c === undefined) BUILTIN_CONVERSIONS.set(info, (c = (!info.custom && conversionOf(info.group, info.resource)) || null));
  return c ?? undefined;
}

/**
 * When rows of this resource may be served as they are stored (see servedAsStored): what their
 * JSON must open with, and whether a null member rules a row out. Custom objects qualify when
 * reading them applies nothing: stored in the served version (the prefix), under a schema without
 * defaults, with no null member (the one thing defaulting changes then).
 */
function servedAsStoredIf(info: ResourceInfo): { prefix: Buffer; noNulls: boolean } | undefined {
  if (info.custom?.compiled().hasDefaults) return undefined;
  return { prefix: servedJsonPrefix(apiVersionOf(info), info.kind, !!info.custom), noNulls: !!info.custom };
}

export function apiVersionOf(info: ResourceInfo): string {
  return info.group ? `${info.group}/${info.version}` : info.version;
}

export class GenericStore {
  /** Strategies that hold this server's state (the Service IP allocator), by qualified resource. */
  private readonly ownStrategies = new Map<string, Strategy>();

  private readonly listCache: ListCache;

  constructor(
    private readonly log: EventLog,
    private readonly model: TypeModel,
    private readonly admission: AdmissionChain,
  ) {
    this.listCache = new ListCache(log, LIST_CACHE_BYTES);
  }

  /** A strategy for this store only; wins over the process-wide one. */
  setStrategy(group: string, resource: string, strategy: Strategy): void {
    this.ownStrategies.set(group ? `${resource}.${group}` : resource, strategy);
  }

  private strategyFor(info: ResourceInfo): Strategy {
    return (!info.custom && this.ownStrategies.get(ownQualifiedName(info))) || strategyFor(info);
  }

  get currentResourceVersion(): number {
    return this.log.currentRv;
  }

  /** The current Services, as a webhook's `service` reference is resolved against them. */
  readonly services: ServiceLookup = (namespace, name) => this.log.get({ res: 'services', ns: namespace, name })?.object;

  private key(info: ResourceInfo, ns: string, name: string): Key {
    return { res: qualifiedResourceOf(info), ns: info.namespaced ? ns : '', name };
  }

  private typeOf(info: ResourceInfo): TypeNode | undefined {
    // A CRD version's published definition types metadata and embedded resources too.
    return info.definition ? this.model.node(info.definition) : info.custom?.typeNode();
  }

  /**
   * Stored objects carry their own apiVersion; serve them in the version asked for. Custom
   * objects also get their schema's defaults, which may be newer than the stored object.
   */
  private present(info: ResourceInfo, obj: any, defaulted = false): any {
    // Assigned only when different: a committed object is read-only (frozen in the tests).
    const apiVersion = apiVersionOf(info);
    if (obj.apiVersion !== apiVersion || obj.kind !== info.kind) {
      const builtin = builtinConversionOf(info);
      if (builtin) return convertTo(builtin, obj, apiVersion);
    }
    if (obj.apiVersion !== apiVersion) obj.apiVersion = apiVersion;
    if (obj.kind !== info.kind) obj.kind = info.kind;
    if (info.custom && !defaulted) {
      const schema = info.custom.compiled();
      schema.applyDefaults(obj);
      // A default may land after the other fields; kube writes the map sorted.
      if (schema.hasDefaults) return customObjectOrder(obj);
    }
    return obj;
  }

  /**
   * A stored object as present() serves it, in a copy: for an object shared by many readers (a
   * watch event's, seen by every watcher), which is never changed in place. A custom object's
   * keys are always put in kube's order, since a webhook's conversion answers them in any order.
   */
  presentedCopy(info: ResourceInfo, obj: Record<string, unknown>): Record<string, unknown> {
    const apiVersion = apiVersionOf(info);
    if (!info.custom) {
      const builtin = obj.apiVersion !== apiVersion || obj.kind !== info.kind ? builtinConversionOf(info) : undefined;
      return builtin ? convertTo(builtin, obj, apiVersion) : { ...obj, apiVersion, kind: info.kind };
    }
    const o = cloneJSON(obj);
    o.apiVersion = apiVersion;
    o.kind = info.kind;
    info.custom.compiled().applyDefaults(o);
    return customObjectOrder(o);
  }

  /** Converts stored custom objects to the requested version first when that takes a webhook. */
  private async presentAll(info: ResourceInfo, objs: any[]): Promise<any[]> {
    const cr = info.custom;
    if (cr && !cr.converter.trivial) {
      const want = apiVersionOf(info);
      if (objs.some((o) => o.apiVersion !== want)) objs = await cr.converter.convert(objs, info.version, this.services);
    }
    return objs.map((o) => this.present(info, o));
  }

  /**
   * The object as kube-apiserver writes it: a built-in kind's fields in Go struct order and its
   * Go maps' keys sorted (goJsonOrder); a custom object, which kube holds as a map, sorted (see
   * customObjectOrder). `rvSlot` holds resourceVersion's place for the write to fill in. Returns
   * obj, or a copy where an order changed.
   */
  private inKubeOrder(info: ResourceInfo, obj: any, rvSlot = false): any {
    if (info.custom) {
      if (rvSlot && obj.metadata.resourceVersion === undefined) obj.metadata.resourceVersion = '';
      return customObjectOrder(obj);
    }
    const node = this.typeOf(info);
    const out = node ? (goJsonOrder(node, obj) as any) : obj;
    out.metadata = metadataInOrder(out.metadata, rvSlot);
    return out;
  }

  /**
   * An object of `info`'s resource in another served version of it (`to` is the target version's
   * ResourceInfo): what admission webhooks matched by matchPolicy Equivalent are sent, and how
   * their patched object comes back (kube's ConvertVersionedAttributes).
   */
  async convertToVersion(to: ResourceInfo, obj: any): Promise<any> {
    const apiVersion = apiVersionOf(to);
    if (obj?.apiVersion === apiVersion) return obj;
    const builtin = builtinConversionOf(to);
    if (builtin) return convertTo(builtin, obj, apiVersion);
    const cr = to.custom;
    if (cr && !cr.converter.trivial) return (await cr.converter.convert([obj], to.version, this.services))[0];
    return { ...obj, apiVersion };
  }

  /**
   * The form written to storage: custom objects in their CRD's storage version, built-ins kept in
   * another version (or group) converted to it; in kube's order (rvSlot: see inKubeOrder). obj
   * itself when it is stored as it is (the caller orders it).
   */
  private async toStorage(info: ResourceInfo, obj: any, rvSlot = false): Promise<any> {
    const builtin = builtinConversionOf(info);
    if (builtin) {
      if (apiVersionOf(info) === builtin.storageApiVersion) return obj;
      // (defaulted: kube defaults the stored version when it reads it back; the same, done once here)
      const out = convertTo(builtin, obj, builtin.storageApiVersion, true);
      out.metadata = metadataInOrder(out.metadata, rvSlot);
      return out;
    }
    const cr = info.custom;
    if (!cr || cr.storageVersion === info.version) return obj;
    const stored = cr.converter.trivial ? { ...obj, apiVersion: `${info.group}/${cr.storageVersion}` } : (await cr.converter.convert([obj], cr.storageVersion, this.services))[0];
    return this.inKubeOrder(info, stored, rvSlot);
  }

  /**
   * What a write answers: obj, as the request's version has it; for a built-in kept in another
   * form, what was stored converted back (kube answers with the stored object decoded).
   */
  private written(info: ResourceInfo, obj: any, stored: any): any {
    const builtin = stored !== obj ? builtinConversionOf(info) : undefined;
    return builtin ? convertTo(builtin, stored, apiVersionOf(info)) : this.present(info, obj, true);
  }

  /** Unknown fields of a custom object are pruned (and reported) before its schema's defaults apply. */
  private pruneAndDefault(info: ResourceInfo, obj: any, ctx: RequestContext): void {
    if (info.custom) ctx.prunedFields = info.custom.compiled().pruneAndDefault(obj);
    else this.decodeBuiltin(info, obj);
  }

  /**
   * A built-in object as kube holds it once decoded into its Go type: quantities canonical,
   * defaults filled in, and without what encoding it back leaves out (`apiGroup: ""`,
   * `hostNetwork: false`). Request bodies get it, and so do stored objects an update reads, as
   * kube decodes them from etcd: an object an older hearth wrote (before a default existed)
   * compares with the update's body on equal terms.
   */
  private decodeBuiltin(info: ResourceInfo, obj: any): void {
    if (!info.definition) return;
    // As decoding into Go types leaves them, before defaults copy any (requests from limits).
    const node = this.model.node(info.definition);
    canonicalizeQuantities(node, obj);
    defaultsFor(info.definition)?.(obj);
    dropOmittedZeros(node, obj);
    // A status is a non-pointer struct: written (with what its zero value holds) however empty.
    const status = node.properties?.status;
    if (status && hasGoStatus(info.definition)) fillGoZeros(status, isPlainObject(obj.status) ? obj.status : (obj.status = {}));
  }

  /**
   * An object a mutating admission webhook patched, as kube holds it once its JSON is decoded
   * back into the kind and defaulted (the mutating dispatcher's Decode and Default): fields the
   * kind does not have dropped, quantities canonical, defaults filled in.
   */
  decodeAdmitted(info: ResourceInfo, obj: any): void {
    if (info.custom) {
      info.custom.compiled().pruneAndDefault(obj);
      return;
    }
    if (!info.definition) return;
    validateObject(this.model.node(info.definition), obj, { prune: true });
    this.decodeBuiltin(info, obj);
  }

  get(info: ResourceInfo, ns: string, name: string): any {
    const cur = this.log.get(this.key(info, ns, name));
    if (!cur) throw notFound(info.group, info.resource, name);
    return this.present(info, cur.object);
  }

  /** Current object or undefined; for in-process callers. */
  tryGet(info: ResourceInfo, ns: string, name: string): any | undefined {
    const cur = this.log.get(this.key(info, ns, name));
    return cur ? this.present(info, cur.object) : undefined;
  }

  /**
   * The current objects of a resource, no paging or selectors: for in-process callers. With
   * selectors, a superset of those matching them (the rows scopeOf and the labels the label
   * selector requires allow): the caller still applies them.
   */
  listCurrent(info: ResourceInfo, ns: string | undefined, fields?: FieldSelector, labels?: LabelSelector): any[] {
    const scope = scopeOf(info, info.namespaced ? ns : undefined, fields);
    if (scope === null) return [];
    return this.log.list(qualifiedResourceOf(info), scope.ns, undefined, -1, { name: scope.named, fields: scope.fields, labels: labels?.required }).map((r) => this.present(info, r.object));
  }

  /**
   * listCurrent for in-process readers at start (indexes, controllers): a corrupt row is left
   * out (it is reported) rather than stopping the server; clients still get the 500 for it.
   */
  listReadable(info: ResourceInfo, ns: string | undefined): any[] {
    const out: any[] = [];
    for (const row of this.log.list(qualifiedResourceOf(info), info.namespaced ? ns : undefined, undefined, -1, { skipCorrupt: true })) {
      try {
        out.push(this.present(info, row.object));
      } catch (e) {
        if (!(e instanceof CorruptObjectError)) throw e;
      }
    }
    return out;
  }

  /**
   * A list with kube-apiserver's resourceVersion semantics: unset → the newest state; "0" or
   * NotOlderThan X → a state at least as new as X (waiting briefly for X, else 504); Exact X →
   * the state at X read from the log (410 below the compacted version). Every page of a
   * chunked list is served at the first page's resourceVersion.
   */
  async list(info: ResourceInfo, ns: string | undefined, opts: ListOptions = {}): Promise<ListResult> {
    const labels = parseLabelSelector(opts.labelSelector);
    const fields = parseFieldSelector(opts.fieldSelector);
    // (after the selectors' syntax: kube decodes the parameters before it judges their combination)
    validateListOptions(opts, false);
    checkFieldSelectorFor(info, fields);
    const rvParam = opts.resourceVersion ?? '';
    const match = opts.resourceVersionMatch ?? '';
    if (opts.continue && rvParam && rvParam !== '0') throw badRequest('specifying resource version is not allowed when using continue');
    const requested = rvParam && rvParam !== '0' ? parseResourceVersion(rvParam) : undefined;
    if (requested !== undefined && requested > this.log.currentRv) {
      if (!(await this.log.waitForRv(requested, TOO_LARGE_RV_WAIT_MS))) throw tooLargeResourceVersion(requested, this.log.currentRv);
    }

    const res = qualifiedResourceOf(info);
    // Only rows the selectors allow are read (see scopeOf and RowFilter).
    const scope = scopeOf(info, info.namespaced ? ns : undefined, fields);
    const scopeNs = scope?.ns;
    // With a label selector, SQLite also gives each row's labels: rows are matched undecoded.
    const only = { name: scope === null ? NO_NAME : scope.named, fields: scope?.fields, labels: labels.required, readLabels: !labels.empty };
    let snapshot = this.log.currentRv;
    let after: { ns: string; name: string } | undefined;
    if (opts.continue) {
      const tok = decodeContinue(opts.continue);
      after = { ns: tok.ns, name: tok.name };
      if (tok.rv < this.log.compactedRv) {
        const fresh = encodeContinue({ rv: this.log.currentRv, ns: tok.ns, name: tok.name });
        throw gone(EXPIRED_CONTINUE_MESSAGE, { continue: fresh });
      }
      snapshot = tok.rv;
    } else if (match === 'Exact' && requested !== undefined) {
      if (requested < this.log.compactedRv) throw tooOldResourceVersion(requested, this.log.compactedRv);
      snapshot = requested;
    }
    // A list is read a page at a time, yielding to the event loop between pages once a turn's
    // budget is spent: a large list must not hold the one thread while other clients wait (Node
    // cannot preempt it, as Go's scheduler would). Each page is read at the snapshot (from the
    // current table while nothing of this resource changed since it, else from the log).
    const turns = new TurnBudget();
    const at = () => {
      // (only a list that outlived a compaction interval between its pages: its snapshot is gone)
      if (snapshot < this.log.compactedRv) throw tooOldResourceVersion(snapshot, this.log.compactedRv);
      return snapshot;
    };
    const read = (from: { ns: string; name: string } | undefined, n: number) => this.log.listAt(res, scopeNs, at(), from, n, only);

    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    const kept: StoredObject[] = [];
    const filtering = !labels.empty || !fields.empty;
    const keyOf = (row: StoredObject) => ({ ns: row.object.metadata.namespace ?? '', name: row.object.metadata.name });
    // Built-in objects are decoded only if the caller reads `items`: a plain JSON list transcodes
    // the stored bytes (storedListJson). Custom objects may need conversion and defaults first.
    const resultOf = async (rows: StoredObject[]): Promise<ListResult> => {
      const resourceVersion = String(snapshot);
      // (a built-in kept in another form converts: its stored bytes are never transcoded as they are)
      if (info.custom || builtinConversionOf(info)) return { items: await this.presentAll(info, rows.map((r) => r.object)), resourceVersion };
      return withStoredItems({ resourceVersion } as ListResult, { rows: rows as ListRow[], apiVersion: apiVersionOf(info), kind: info.kind, present: (o) => this.present(info, o) });
    };
    // Unfiltered objects as JSON rows that are served as they are stored: pages of stored bytes
    // joined, none decoded.
    const asStored = filtering ? undefined : servedAsStoredIf(info);
    if (asStored) {
      const served = (joined: readonly Buffer[]) => withStoredItems({ resourceVersion: String(snapshot) } as ListResult, { rows: [], joined, apiVersion: apiVersionOf(info), kind: info.kind, present: (o) => this.present(info, o) });
      // A whole list at the newest state: the same list again while nothing of the resource changed.
      const cacheKey = !limit && !opts.continue && snapshot === this.log.currentRv ? ListCache.key(res, scopeNs, asStored.prefix, asStored.noNulls) : undefined;
      const cached = cacheKey === undefined ? undefined : this.listCache.get(cacheKey, res);
      if (cached) return served(cached.joined);
      const joined: Buffer[] = [];
      let count = 0;
      let last = after;
      for (;;) {
        const want = limit ? Math.min(LIST_PAGE_ROWS, limit - count) : LIST_PAGE_ROWS;
        const page = this.log.listJoined(res, scopeNs, asStored.prefix, { rv: at(), after: last, limit: want, noNulls: asStored.noNulls });
        // (a row that is not served as stored: the rows are read and presented instead)
        if (!page) break;
        if (page.count) {
          if (joined.length) joined.push(COMMA);
          joined.push(page.json);
          count += page.count;
          last = page.last;
        }
        if (page.count < want || count === limit) {
          if (cacheKey !== undefined) this.listCache.set(cacheKey, { rv: snapshot, joined, count });
          const result = served(joined);
          if (limit && count === limit && last && read(last, 1).length > 0) {
            result.continue = encodeContinue({ rv: snapshot, ns: last.ns, name: last.name });
            result.remainingItemCount = this.log.countAfterAt(res, scopeNs, at(), last);
          }
          return result;
        }
        await turns.pause();
      }
    }
    for (;;) {
      const rows = read(after, LIST_PAGE_ROWS);
      for (const row of rows) {
        if (filtering) {
          if (!labels.empty && !labels.matches(labelsOf(row))) continue;
          if (!fields.empty && !fields.matches(fieldsOf(info, row.object))) continue;
        }
        kept.push(row);
        if (limit && kept.length === limit) {
          after = keyOf(row);
          const result = await resultOf(kept);
          if (read(after, 1).length > 0) {
            result.continue = encodeContinue({ rv: snapshot, ns: after.ns, name: after.name });
            if (!filtering) result.remainingItemCount = this.log.countAfterAt(res, scopeNs, at(), after);
          }
          return result;
        }
      }
      if (rows.length < LIST_PAGE_ROWS) break;
      after = keyOf(rows[rows.length - 1]);
      await turns.pause();
    }
    return resultOf(kept);
  }

  /** GET with resourceVersion: any state at least as new as the one asked for. */
  async getAtLeast(info: ResourceInfo, ns: string, name: string, rvParam: string | undefined): Promise<any> {
    return (await this.presentAll(info, [(await this.currentAtLeast(info, ns, name, rvParam)).object]))[0];
  }

  /**
   * getAtLeast for a plain JSON answer: the stored bytes when they are served as they are (the
   * condition of a joined list), so the object is neither decoded nor encoded again; the
   * presented object otherwise.
   */
  async getJsonAtLeast(info: ResourceInfo, ns: string, name: string, rvParam: string | undefined): Promise<{ json: Buffer } | { object: any }> {
    const cur = await this.currentAtLeast(info, ns, name, rvParam);
    const data = (cur as StoredRow).data;
    const asStored = servedAsStoredIf(info);
    if (asStored && Buffer.isBuffer(data) && servedAsStored(data, asStored.prefix, asStored.noNulls)) {
      if (CHECK_STORED_JSON) {
        const served = goJsonText(JSON.stringify((await this.presentAll(info, [decodeObject(data)]))[0]));
        if (served !== data.toString('utf8')) throw new Error(`stored JSON served as it is differs from the presented object: ${data.toString('utf8').slice(0, 200)}`);
      }
      return { json: data };
    }
    return { object: (await this.presentAll(info, [cur.object]))[0] };
  }

  private async currentAtLeast(info: ResourceInfo, ns: string, name: string, rvParam: string | undefined): Promise<StoredObject> {
    if (rvParam && rvParam !== '0') {
      const rv = parseResourceVersion(rvParam);
      if (rv > this.log.currentRv && !(await this.log.waitForRv(rv, TOO_LARGE_RV_WAIT_MS))) throw tooLargeResourceVersion(rv, this.log.currentRv);
    }
    const cur = this.log.get(this.key(info, ns, name));
    if (!cur) throw notFound(info.group, info.resource, name);
    return cur;
  }

  // ---- writes ----

  async create(info: ResourceInfo, ns: string, body: any, ctx: RequestContext, managedFieldsDone = false): Promise<any> {
    const strategy = this.strategyFor(info);
    let obj = this.checkBody(info, body);
    this.ensureNamespace(info, ns, obj.metadata);
    if (obj.metadata.resourceVersion) throw badRequest('resourceVersion should not be set on objects to be created');
    if (info.custom?.terminating) throw methodNotAllowed(`create not allowed while custom resource definition is terminating`);
    // A status sent with a create is dropped (kube's PrepareForCreate resets it to its zero
    // value, which defaulting then fills in) before ownership is recorded.
    if (info.subresources?.status && !strategy.statusOnCreate) delete obj.status;
    this.pruneAndDefault(info, obj, ctx);
    // Ownership is recorded before admission and the strategy's create-time changes, as kube's
    // create handler runs the field manager first: what the server sets (a job's generated
    // selector, a pod's status) belongs to no manager, so an apply that leaves it out does not
    // remove it.
    if (!managedFieldsDone) this.recordUpdate(info, undefined, obj, ctx, '');
    // Mutating admission sees the object as the client sent it, decoded and defaulted, before the
    // store fills in what it sets (kube admits in the handler, before store.Create's
    // BeforeCreate): a generateName has no name yet, there is no uid, and the pod's QoS class is
    // worked out from the resources admission gave it.
    const attrs = this.attrs('CREATE', info, '', obj.metadata.namespace ?? '', obj.metadata.name ?? '', obj, undefined, ctx, writeOptions('CreateOptions', ctx));
    await this.admission.admit(attrs);
    obj = attrs.object;
    const meta = obj.metadata;
    if (!meta.name && meta.generateName) meta.name = generateNameFrom(meta.generateName);
    meta.uid = randomUUID();
    meta.creationTimestamp = nowTimestamp();
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    if (strategy.tracksGeneration) meta.generation = 1;
    else delete meta.generation;
    strategy.prepareForCreate?.(obj, ctx.user);
    this.validate(info, strategy, obj, undefined, ctx);
    await this.admission.validate(attrs);
    if (ctx.dryRun) {
      if (this.log.get(this.key(info, ns, meta.name))) throw alreadyExists(info.group, info.resource, meta.name);
      obj = this.inKubeOrder(info, obj);
      return this.written(info, obj, builtinConversionOf(info) ? await this.toStorage(info, obj) : obj);
    }
    const key = this.key(info, ns, meta.name);
    const converted = await this.toStorage(info, obj, true);
    const unconverted = converted === obj;
    // What the server set (and admission added) goes where kube writes it; the write fills in the resourceVersion.
    obj = this.inKubeOrder(info, obj, true);
    const stored = unconverted ? obj : converted;
    await retriedWithoutManagedFields([obj, stored], !managedFieldsDone, () =>
      this.log.write((tx) => {
        if (tx.currentRv(key) !== undefined) throw alreadyExists(info.group, info.resource, meta.name);
        tx.put('ADDED', key, stored);
      }),
    );
    carryResourceVersion(obj, stored);
    return this.written(info, obj, stored);
  }

  /** The rules of a subresource a POST writes through (pods/binding), if the kind has one by that name. */
  subresourceCreate(info: ResourceInfo, subresource: string): SubresourceCreate | undefined {
    return this.strategyFor(info).subresourceCreate?.[subresource];
  }

  /**
   * Admission of a create on a subresource that stores nothing of its own (pods/eviction,
   * serviceaccounts/token): kube's create handler runs the chain on the request's object (an
   * Eviction, a TokenRequest) before the REST call, as for any create.
   */
  async admitSubresourceCreate(info: ResourceInfo, ns: string, name: string, subresource: string, obj: unknown, ctx: RequestContext): Promise<void> {
    const attrs = this.attrs('CREATE', info, subresource, ns, name, obj, undefined, ctx, writeOptions('CreateOptions', ctx));
    await this.admission.admit(attrs);
    await this.admission.validate(attrs);
  }

  /** POST to such a subresource: the object is rewritten by its rules (see Strategy.subresourceCreate). */
  async createSubresource(info: ResourceInfo, ns: string, name: string, subresource: string, body: any, ctx: RequestContext): Promise<void> {
    const rules = this.subresourceCreate(info, subresource);
    if (!rules) throw methodNotRouted();
    rules.check(body, name);
    // Admission sees the request's own object (a Binding) as a create, as kube's create handler runs it.
    await this.admitSubresourceCreate(info, ns, name, subresource, body, ctx);
    await this.guaranteedUpdate(info, ns, name, subresource, ctx, undefined, (obj: any) => rules.apply(obj, body));
  }

  /** PUT: body replaces the object (or, for a subresource, what that subresource owns). */
  async update(info: ResourceInfo, ns: string, name: string, body: any, ctx: RequestContext, subresource = ''): Promise<any> {
    const obj = this.checkBody(info, body);
    if (obj.metadata.name && obj.metadata.name !== name) {
      throw badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`);
    }
    obj.metadata.name = name;
    this.ensureNamespace(info, ns, obj.metadata);
    const precondition = obj.metadata.resourceVersion as string | undefined;
    return this.guaranteedUpdate(info, ns, name, subresource, ctx, precondition, () => cloneJSON(obj));
  }

  /** PATCH and other read-modify-write callers: fn maps the current object to the desired one. */
  async patch(info: ResourceInfo, ns: string, name: string, fn: UpdateFn, ctx: RequestContext, subresource = ''): Promise<any> {
    return this.guaranteedUpdate(info, ns, name, subresource, ctx, undefined, (cur) => {
      const next = fn(cur);
      if (!isPlainObject(next)) throw badRequest('the patch produced an object that is not a JSON object');
      const checked = this.checkBody(info, next);
      // kube's checkName on the patched object: 400s, before anything validates it.
      const meta = checked.metadata;
      const objName = typeof meta.name === 'string' ? meta.name : '';
      if (objName !== name) throw badRequest(`the name of the object (${objName}) does not match the name on the URL (${name})`);
      const objNs = typeof meta.namespace === 'string' ? meta.namespace : '';
      if (info.namespaced && objNs && objNs !== ns) throw badRequest(`the namespace of the object (${objNs}) does not match the namespace on the URL (${ns})`);
      return checked;
    }, true);
  }

  private async guaranteedUpdate(
    info: ResourceInfo,
    ns: string,
    name: string,
    subresource: string,
    ctx: RequestContext,
    precondition: string | undefined,
    produce: UpdateFn,
    isPatch = false,
    /**
     * The producer is a server-side apply: it records managedFields itself, and it reads the
     * current object without changing it or sharing anything with its result (the engine's
     * contract, test/unit/registry/apply/shortcuts.test.ts), so it gets no copy.
     */
    isApply = false,
    /** The current row, when the caller just read it; a write conflict reads it again. */
    known?: StoredObject,
  ): Promise<any> {
    const strategy = this.strategyFor(info);
    const key = this.key(info, ns, name);
    for (let attempt = 0; ; attempt++) {
      const current = attempt === 0 && known ? known : this.log.get(key);
      if (!current) throw notFound(info.group, info.resource, name);
      // old is only read: the committed object serves when it is already what present() gives.
      // One read from the file may have been written by an older hearth: it is decoded as a
      // body is (a copy: current.object is this read's own), as kube decodes what etcd holds.
      const committed = current.committed;
      let old = !info.custom && committed?.apiVersion === apiVersionOf(info) && committed.kind === info.kind ? committed : undefined;
      if (!old) {
        old = (await this.presentAll(info, [current.object]))[0];
        if (!info.custom && !committed) this.decodeBuiltin(info, old);
      }
      // A private copy of the current object for producers that read it and may change it; one
      // declared without parameters (a PUT's) gets none. cloneJSON: structuredClone costs ~5x
      // more on JSON data.
      const desired = produce.length === 0 ? produce(undefined) : produce(isApply ? old : cloneJSON(old));
      // Defaults first, so a PUT that omits defaulted fields is not a spec change.
      this.pruneAndDefault(info, desired, ctx);
      const rvWanted = this.updatePrecondition(info, strategy, name, isPatch ? desired.metadata?.resourceVersion : precondition, isPatch, old);
      if (rvWanted && rvWanted !== String(current.rv)) {
        throw conflict(info.group, info.resource, name, 'the object has been modified; please apply your changes to the latest version and try again');
      }
      let obj = this.prepareUpdate(info, strategy, subresource, desired, old);
      // (a subresource create was admitted on its own object before: see createSubresource)
      const admitted = !strategy.subresourceCreate?.[subresource];
      // On /scale admission sees Scales, as kube's scale REST hands them to it, and what it set comes back.
      const scale = subresource === 'scale' ? scaleFromObject(info, obj) : undefined;
      const attrs = scale
        ? this.attrs('UPDATE', info, subresource, key.ns, name, scale, scaleFromObject(info, old), ctx, writeOptions('UpdateOptions', ctx))
        : this.attrs('UPDATE', info, subresource, key.ns, name, obj, old, ctx, writeOptions('UpdateOptions', ctx));
      const replicas = scale?.spec.replicas;
      if (admitted) await this.admission.admit(attrs);
      if (scale && (attrs.object as typeof scale | undefined)?.spec?.replicas !== replicas) obj = applyScaleToObject(info, obj, { ...(attrs.object as object), metadata: undefined });
      if (!isApply && admitted) this.recordUpdate(info, old, obj, ctx, subresource);
      this.validate(info, strategy, obj, old, ctx, subresource);
      if (admitted) await this.admission.validate(attrs);
      const finishDeletion = obj.metadata.deletionTimestamp && pendingFinalizers(strategy, obj).length === 0;
      if (!finishDeletion && unchanged(obj, old)) return old;
      // A body without the fields the server carries over (uid, creationTimestamp) gets them in kube's place.
      obj = this.inKubeOrder(info, obj);
      // (a dry run converts only a built-in: its answer is what storing would give back)
      if (ctx.dryRun && !builtinConversionOf(info)) return obj;
      const stored = await this.toStorage(info, obj);
      if (ctx.dryRun) return this.written(info, obj, stored);
      const written = await retriedWithoutManagedFields([obj, stored], !isApply, () =>
        this.writeIfUnchanged(info, key, current, (tx) => {
          if (finishDeletion) tx.remove(key, stored, current);
          else tx.put('MODIFIED', key, stored, current);
        }, !rvWanted && attempt < MAX_CONFLICT_RETRIES),
      );
      carryResourceVersion(obj, stored);
      if (written) return stored === obj ? obj : this.written(info, obj, stored);
    }
  }

  /**
   * The resourceVersion an update is conditional on, as kube's store Update decides it: the one a
   * PUT's body names, or the one a patch set (a patch that leaves the read one is retried on a
   * conflict). None ("", "0", absent) makes the update unconditional where the kind allows it,
   * and is Invalid where it does not (custom resources, leases, ...), in kube's words: the
   * resourceVersion as the uint64 it parsed to, the resource where the kind goes.
   */
  private updatePrecondition(info: ResourceInfo, strategy: Strategy, name: string, given: unknown, isPatch: boolean, old: any): string | undefined {
    if (isPatch && given === old.metadata.resourceVersion) return undefined;
    if (given !== undefined && given !== null && given !== '' && given !== '0') return String(given);
    if (strategy.allowUnconditionalUpdate === false) {
      throw invalid(info.group, info.resource, name, [invalidError('metadata.resourceVersion', '0x0', 'must be specified for an update')]);
    }
    return undefined;
  }

  /** Merges what the request may change into the stored object, per the subresource rules. */
  private prepareUpdate(info: ResourceInfo, strategy: Strategy, subresource: string, desired: any, old: any): any {
    let obj: any;
    if (subresource === 'status') {
      obj = cloneJSON(old);
      if (desired.status === undefined) delete obj.status;
      else obj.status = desired.status;
      // Ownership an apply to /status computed; other writes recompute it from the live entries.
      if (desired.metadata?.managedFields !== undefined) obj.metadata.managedFields = desired.metadata.managedFields;
      strategy.prepareForStatusUpdate?.(obj, old);
    } else if (subresource && strategy.subresourceUpdate?.[subresource]) {
      obj = strategy.subresourceUpdate[subresource](desired, cloneJSON(old));
    } else if (strategy.subresourceCreate?.[subresource]) {
      obj = desired; // (made by its apply from a copy of old)
    } else {
      obj = desired;
      if (info.subresources?.status) {
        if (old.status === undefined) delete obj.status;
        else obj.status = cloneJSON(old.status); // old may be the shared committed object
      }
    }
    const meta = obj.metadata;
    const oldMeta = old.metadata;
    // Fields only the server sets are carried over from the stored object.
    meta.uid = meta.uid ?? oldMeta.uid;
    meta.creationTimestamp = oldMeta.creationTimestamp;
    meta.resourceVersion = oldMeta.resourceVersion;
    if (oldMeta.deletionTimestamp) {
      meta.deletionTimestamp = oldMeta.deletionTimestamp;
      meta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
    } else {
      delete meta.deletionTimestamp;
      delete meta.deletionGracePeriodSeconds;
    }
    delete meta.selfLink;
    if (!subresource) strategy.prepareForUpdate?.(obj, old);
    if (strategy.subresourceCreate?.[subresource]) {
      if (oldMeta.generation !== undefined) meta.generation = oldMeta.generation;
    } else if (strategy.tracksGeneration) {
      meta.generation = oldMeta.generation ?? 1;
      // Custom objects without a status subresource count status changes too, as kube does.
      const countsStatus = info.custom && !info.custom.hasStatus;
      if (countsStatus ? !deepEqual(withoutMeta(obj), withoutMeta(old)) : !deepEqual(specOf(obj), specOf(old))) meta.generation++;
    } else {
      delete meta.generation;
    }
    return obj;
  }

  /**
   * Server-side apply: merge the configuration into the live object by the schema, with field
   * ownership; creates the object when it does not exist (not through a subresource).
   */
  async apply(info: ResourceInfo, ns: string, name: string, body: any, ctx: RequestContext, opts: ApplyOptions): Promise<{ object: any; created: boolean }> {
    checkApplyTarget(body, apiVersionOf(info), info.kind);
    const config = this.checkBody(info, body);
    if (config.metadata.name && config.metadata.name !== name) {
      throw badRequest(`the name of the object (${config.metadata.name}) does not match the name on the URL (${name})`);
    }
    config.metadata.name = name;
    if (info.namespaced) this.ensureNamespace(info, ns, config.metadata);
    const node = this.typeOf(info) ?? UNTYPED;
    const subresource = opts.subresource ?? '';
    const applyOpts = { ...this.managerOptions(info, ctx, subresource), force: opts.force };
    for (let attempt = 0; ; attempt++) {
      const current = subresource ? undefined : this.log.get(this.key(info, ns, name));
      if (!subresource && !current) {
        const { object } = applyEngine(node, undefined, config, applyOpts);
        try {
          return { object: await this.create(info, ns, object, ctx, true), created: true };
        } catch (e) {
          // Someone created it meanwhile: apply to theirs.
          if (!(e instanceof ApiError && e.reason === 'AlreadyExists') || attempt > 3) throw e;
          continue;
        }
      }
      const object = await this.guaranteedUpdate(info, ns, name, subresource, ctx, undefined, (cur) => this.checkBody(info, applyEngine(node, cur, config, applyOpts).object), true, true, current);
      return { object, created: false };
    }
  }

  /** managedFields of a non-apply write: the manager takes what it changed. */
  private recordUpdate(info: ResourceInfo, old: any | undefined, obj: any, ctx: RequestContext, subresource: string): void {
    const node = this.typeOf(info) ?? UNTYPED;
    const entries = recordManagedUpdate(node, old, obj, this.managerOptions(info, ctx, subresource));
    if (entries.length) obj.metadata.managedFields = entries;
    else delete obj.metadata.managedFields;
  }

  private managerOptions(info: ResourceInfo, ctx: RequestContext, subresource: string) {
    return {
      manager: ctx.fieldManager ?? 'unknown',
      apiVersion: apiVersionOf(info),
      subresource: subresource || undefined,
      now: nowTimestamp(),
      statusSubresource: !!info.subresources?.status,
      emptyObject: this.zeroOf(info),
      otherVersion: this.otherVersions(info),
    };
  }

  /** A built-in kept in several versions: each version's schema and the conversion to it, for its managers. */
  private otherVersions(info: ResourceInfo): ((apiVersion: string) => OtherVersion | undefined) | undefined {
    const builtin = builtinConversionOf(info);
    if (!builtin) return undefined;
    return (apiVersion) => {
      const definition = builtin.definitions[apiVersion];
      if (!definition) return undefined;
      return { node: this.model.node(definition), convert: (o) => (isPlainObject(o) && o.apiVersion !== undefined ? convertTo(builtin, o, apiVersion) : o) };
    };
  }

  private readonly zeros = new Map<string, Record<string, unknown>>();
  /**
   * The kind's Go zero value, which creates are compared with (kube attributes fields against it).
   * One frozen copy per kind: the engine only reads it, and a write to it would throw.
   */
  private zeroOf(info: ResourceInfo): Record<string, unknown> {
    const def = info.definition;
    // Custom objects have no Go struct: kube compares them with an empty object.
    if (!def || info.custom) return EMPTY_OBJECT;
    let z = this.zeros.get(def);
    if (!z) this.zeros.set(def, (z = deepFreeze(zeroObject(this.model.node(def), goFieldShape))));
    return z;
  }

  async delete(info: ResourceInfo, ns: string, name: string, opts: DeleteOptions, ctx: RequestContext): Promise<DeleteResult> {
    const strategy = this.strategyFor(info);
    const key = this.key(info, ns, name);
    for (let attempt = 0; ; attempt++) {
      const current = this.log.get(key);
      if (!current) throw notFound(info.group, info.resource, name);
      const [old] = await this.presentAll(info, [current.object]);
      const pre = opts.preconditions;
      if (pre?.uid && pre.uid !== old.metadata.uid) {
        throw conflict(info.group, info.resource, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata.uid}`);
      }
      if (pre?.resourceVersion && pre.resourceVersion !== old.metadata.resourceVersion) {
        throw conflict(info.group, info.resource, name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion}`);
      }
      const attrs = this.attrs('DELETE', info, '', key.ns, name, undefined, old, ctx, deleteOptionsObject(opts, ctx));
      await this.admission.admit(attrs);
      await this.admission.validate(attrs);

      // What the delete writes: the object marked as going (kept while its grace period or
      // finalizers hold it), then, unless something holds it, its removal.
      let next = structuredClone(old);
      let marked = false;
      let held = pendingFinalizers(strategy, old).length > 0;
      // (a negative period is one second, as kube reads it)
      const requested = opts.gracePeriodSeconds !== undefined && opts.gracePeriodSeconds < 0 ? 1 : opts.gracePeriodSeconds;
      const meta = next.metadata;
      if (old.metadata.deletionTimestamp) {
        const remaining: number = old.metadata.deletionGracePeriodSeconds ?? 0;
        if (strategy.gracePeriod && remaining > 0) {
          // A graceful deletion under way: only a shorter period changes it.
          if (requested === undefined || requested >= remaining) return { deleted: false, object: old };
          meta.deletionTimestamp = formatRFC3339(Date.parse(old.metadata.deletionTimestamp) + (requested - remaining) * 1000);
          meta.deletionGracePeriodSeconds = requested;
          marked = true;
          held ||= requested > 0;
        } else if (held) {
          // Already terminating: nothing more to do until the finalizers are gone.
          return { deleted: false, object: old };
        }
      } else {
        const period = strategy.gracePeriod?.(old, requested);
        if (period !== undefined || held) {
          marked = true;
          held ||= (period ?? 0) > 0;
          meta.deletionTimestamp = period ? formatRFC3339(Date.now() + period * 1000) : nowTimestamp();
          meta.deletionGracePeriodSeconds = period ?? 0;
          if (period !== undefined ? meta.generation > 0 : strategy.tracksGeneration) meta.generation = (meta.generation ?? 1) + 1;
          if (held) strategy.prepareForDeletion?.(next);
        }
      }
      next = this.inKubeOrder(info, next);
      if (ctx.dryRun) return { deleted: !held, object: next };
      const stored = await this.toStorage(info, next);
      // The removal carries the last state (a fresh copy: the mark's event keeps its own resourceVersion).
      const removed = marked && !held ? cloneJSON(stored) : stored;
      const written = await this.writeIfUnchanged(info, key, current, (tx) => {
        if (marked) tx.put('MODIFIED', key, stored, current);
        if (!held) tx.remove(key, removed, marked ? tx.get(key)! : current);
      }, attempt < MAX_CONFLICT_RETRIES);
      carryResourceVersion(next, stored);
      if (written) return { deleted: !held, object: next };
    }
  }

  /**
   * DELETE ...?ignoreStoreReadErrorWithClusterBreakingPotential=true, as kube-apiserver's
   * corrupt-object deleter: only for an object that cannot be read (else 422, as kube answers);
   * removes its row without reading it: no finalizers, grace period or preconditions. Watchers
   * see DELETED with what is known without the bytes (name, namespace, uid, resourceVersion).
   */
  async deleteCorrupt(info: ResourceInfo, ns: string, name: string): Promise<void> {
    const key = this.key(info, ns, name);
    let corrupt = this.log.currentRow(key)?.corrupt ?? false;
    if (!corrupt) {
      // Bytes that match their checksum but do not decode are as corrupt.
      try {
        void this.log.get(key)?.object; // the getter decodes the bytes
      } catch (e) {
        if (!(e instanceof CorruptObjectError)) throw e;
        corrupt = true;
      }
    }
    if (!corrupt) {
      throw invalid(info.group, info.resource, name, [invalidError('ignoreStoreReadErrorWithClusterBreakingPotential', 'true', 'is exclusively used to delete corrupt object(s), try again by removing this option')]);
    }
    await this.log.write((tx) => {
      const row = this.log.currentRow(key);
      if (!row) throw notFound(info.group, info.resource, name);
      const tombstone = { apiVersion: apiVersionOf(info), kind: info.kind, metadata: { name, namespace: key.ns || undefined, uid: row.uid, resourceVersion: String(row.rv) } };
      tx.remove(key, tombstone, { rv: row.rv, uid: row.uid, object: tombstone });
    });
  }

  /** Deletes every object the list options select, one by one (each is its own event). */
  async deleteCollection(info: ResourceInfo, ns: string | undefined, listOpts: ListOptions, opts: DeleteOptions, ctx: RequestContext): Promise<any[]> {
    const { items } = await this.list(info, ns, { labelSelector: listOpts.labelSelector, fieldSelector: listOpts.fieldSelector });
    const out: any[] = [];
    for (const item of items) {
      try {
        const r = await this.delete(info, item.metadata.namespace ?? '', item.metadata.name, opts, ctx);
        out.push(r.object);
      } catch (e) {
        // Gone in the meantime: that is what we wanted.
        if (e instanceof ApiError && e.code === 404) continue;
        throw e;
      }
    }
    return out;
  }

  /**
   * Writes only if the key still holds the version `current` was read at. Returns false when
   * it changed meanwhile and the caller may retry; otherwise a change is a 409 Conflict.
   */
  private async writeIfUnchanged(info: ResourceInfo, key: Key, current: StoredObject, write: (tx: WriteTx) => void, mayRetry: boolean): Promise<boolean> {
    try {
      await this.log.write((tx) => {
        const rv = tx.currentRv(key);
        if (rv === undefined) throw notFound(info.group, info.resource, key.name);
        if (rv !== current.rv) throw new RetryableConflict();
        write(tx);
      });
      return true;
    } catch (e) {
      if (!(e instanceof RetryableConflict)) throw e;
      if (mayRetry) return false;
      throw conflict(info.group, info.resource, key.name, 'the object has been modified; please apply your changes to the latest version and try again');
    }
  }

  // ---- shared checks ----

  /** kind/apiVersion must match the URL; metadata must be an object. Returns the body, defaulted. */
  private checkBody(info: ResourceInfo, body: any): any {
    if (!isPlainObject(body)) throw badRequest('the body of the request was not a JSON object');
    const gv = apiVersionOf(info);
    if (body.apiVersion !== undefined && body.apiVersion !== gv) {
      throw badRequest(`the API version in the data (${body.apiVersion}) does not match the expected API version (${gv})`);
    }
    if (body.kind !== undefined && body.kind !== info.kind) {
      throw badRequest(`the kind in the data (${body.kind}) does not match the expected kind (${info.kind})`);
    }
    if (body.metadata === undefined || body.metadata === null) body.metadata = {};
    if (!isPlainObject(body.metadata)) throw badRequest('metadata must be an object');
    return canonicalOrder(body, info.kind, gv);
  }

  private ensureNamespace(info: ResourceInfo, ns: string, meta: any): void {
    if (!info.namespaced) {
      delete meta.namespace;
      return;
    }
    if (!meta.namespace) meta.namespace = ns;
    else if (meta.namespace !== ns) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
  }

  private validate(info: ResourceInfo, strategy: Strategy, obj: any, old: any | undefined, ctx: RequestContext, subresource = ''): void {
    const errors: FieldError[] = [];
    const type = this.typeOf(info);
    const decodeProblems = (ctx.duplicateFields ?? []).map((f) => `duplicate field "${f}"`);
    if (info.custom) {
      for (const f of ctx.prunedFields ?? []) decodeProblems.push(`unknown field "${f}"`);
      errors.push(...info.custom.validate(obj, old, ctx.warnings));
    } else if (type) {
      const r = validateObject(type, obj, { prune: true, zeroOf: goZeroValue });
      // validateObjectMeta reports metadata in kube's words; a value of the wrong type (a CBOR
      // body's: JSON ones never get here with one) it does not look at.
      errors.push(...r.errors.filter((e) => (!e.field.startsWith('metadata.') || e.reason === 'FieldValueTypeInvalid') && !(e.reason === 'FieldValueRequired' && (strategy.reportsRequired || isUnder(e.field, strategy.unvalidated)))));
      for (const f of r.unknownFields) decodeProblems.push(`unknown field "${f}"`);
    }
    if (decodeProblems.length) {
      // Unknown fields are dropped in every mode; the mode decides whether the client hears of it.
      if (ctx.fieldValidation === 'Strict') throw badRequest(`strict decoding error: ${decodeProblems.join(', ')}`);
      // (a loop: spreading 100,000 unknown fields into push's arguments overflows the stack)
      if (ctx.fieldValidation === 'Warn') for (const p of decodeProblems) ctx.warnings.push(p);
    }
    const nameRule = nameRuleFor(info.group, info.resource);
    errors.push(...validateObjectMeta(obj.metadata, { namespaced: info.namespaced, nameRule, isCreate: !old }));
    if (old) errors.push(...validateObjectMetaUpdate(obj.metadata, old.metadata));
    if (old && strategy.validateUpdate) errors.push(...strategy.validateUpdate(obj, old, subresource));
    else if (strategy.validate) errors.push(...strategy.validate(obj));
    if (errors.length) throw invalid(info.group, info.kind, obj.metadata.name ?? '', errors);
  }

  private attrs(op: AdmissionAttributes['operation'], info: ResourceInfo, subresource: string, ns: string, name: string, obj: any, old: any, ctx: RequestContext, options: Record<string, unknown>): AdmissionAttributes {
    return {
      operation: op,
      info,
      subresource,
      // A Namespace's own requests carry its name as their namespace (kube's RequestInfo reads it from the URL), but for its create.
      namespace: info.namespaced ? ns : info.group === '' && info.resource === 'namespaces' && op !== 'CREATE' ? name : '',
      name,
      object: obj,
      oldObject: old,
      user: ctx.user,
      dryRun: ctx.dryRun,
      kind: admissionKind(info, subresource, obj),
      options,
      warn: (message) => ctx.warnings.push(message),
      addAuditAnnotation: (key, value) => {
        (ctx.auditAnnotations ??= {})[key] = value;
      },
    };
  }

}

class RetryableConflict extends Error {}

/**
 * The kind admission reports: the resource's at the request's version, or, on a subresource with
 * a kind of its own (an Eviction, a TokenRequest, a Scale), the request object's.
 */
function admissionKind(info: ResourceInfo, subresource: string, obj: unknown): AdmissionAttributes['kind'] {
  if (subresource && isPlainObject(obj) && typeof obj.apiVersion === 'string' && typeof obj.kind === 'string') {
    const slash = obj.apiVersion.indexOf('/');
    return { group: slash < 0 ? '' : obj.apiVersion.slice(0, slash), version: obj.apiVersion.slice(slash + 1), kind: obj.kind };
  }
  return { group: info.group, version: info.version, kind: info.kind };
}

/** Create- or UpdateOptions as kube hands them to admission: only what the request set. */
function writeOptions(kind: 'CreateOptions' | 'UpdateOptions', ctx: RequestContext): Record<string, unknown> {
  const o: Record<string, unknown> = { kind, apiVersion: 'meta.k8s.io/v1' };
  if (ctx.dryRun) o.dryRun = ['All'];
  if (ctx.fieldManagerParam) o.fieldManager = ctx.fieldManagerParam;
  if (ctx.fieldValidationParam) o.fieldValidation = ctx.fieldValidationParam;
  return o;
}

/** The DeleteOptions a delete was given, as admission sees them. */
function deleteOptionsObject(opts: DeleteOptions, ctx: RequestContext): Record<string, unknown> {
  const o: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1' };
  if (opts.gracePeriodSeconds !== undefined) o.gracePeriodSeconds = opts.gracePeriodSeconds;
  if (opts.preconditions) o.preconditions = { ...opts.preconditions };
  if (opts.propagationPolicy) o.propagationPolicy = opts.propagationPolicy;
  if (ctx.dryRun) o.dryRun = ['All'];
  return o;
}

/**
 * A write refused as too large is tried once more without managedFields, which can be large, as
 * kube's create, update and patch handlers retry an etcd "request is too large" (not apply's).
 */
async function retriedWithoutManagedFields<T>(objects: any[], retry: boolean, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (e) {
    if (!retry || !(e instanceof ObjectTooLargeError) || !objects.some((o) => o.metadata?.managedFields !== undefined)) throw e;
    for (const o of objects) delete o.metadata.managedFields;
    return write();
  }
}

/** A row's metadata.labels, from the labels the read gave when it did (StoredRow.labelsJson), else from the object. */
function labelsOf(row: StoredObject): Record<string, string> | undefined {
  const json = (row as Partial<StoredRow>).labelsJson;
  if (json !== undefined) return (JSON.parse(json) as Record<string, string> | null) ?? undefined;
  return row.object.metadata?.labels;
}

/** No object has it: the name the rows are read by when the field selector allows none (it asks for two names, say). */
const NO_NAME = '';

/**
 * Which rows a field selector leaves to look at: the namespace its metadata.namespace equality
 * names (when the request itself spans all namespaces), the name its metadata.name equality
 * names, and the non-empty string values its equalities on plain string fields ask for (a
 * pod's spec.nodeName; an empty one also matches objects without the field); null when two
 * equalities of one field contradict each other. Every row read is still matched against the
 * whole selector: this only spares decoding the rows it cannot match.
 */
function scopeOf(info: ResourceInfo, ns: string | undefined, fields: FieldSelector | undefined): { ns: string | undefined; named: string | undefined; fields: { path: string; value: string }[] } | null {
  let named: string | undefined;
  let inNs: string | undefined;
  const values: { path: string; value: string }[] = [];
  for (const r of fields?.requirements ?? []) {
    if (r.op !== '=') continue;
    if (r.field === 'metadata.name') {
      if (named !== undefined && named !== r.value) return null;
      named = r.value;
    } else if (r.field === 'metadata.namespace' && info.namespaced) {
      if (inNs !== undefined && inNs !== r.value) return null;
      inNs = r.value;
    } else if (r.value !== '') {
      const path = stringFieldPath(info, r.field);
      if (path !== undefined) values.push({ path, value: r.value });
    }
  }
  return { ns: ns ?? inNs, named, fields: values };
}

/** What Go decodes a JSON null list element of this type as, written back as JSON (null: a nil pointer, slice or map). */
function goZeroValue(node: TypeNode): unknown {
  switch (node.type) {
    case 'object':
      return node.definition ? zeroObject(node, goFieldShape) : null;
    case 'string':
      if (node.definition?.startsWith('io.k8s.apimachinery.pkg.apis.meta.v1.') && node.definition.endsWith('Time')) return null;
      return node.format === 'byte' ? null : '';
    case 'integer':
    case 'number':
      return 0;
    case 'boolean':
      return false;
    case 'int-or-string':
      return node.format === 'quantity' ? '0' : 0;
    default:
      return null;
  }
}

function pendingFinalizers(strategy: Strategy, obj: any): string[] {
  const own: string[] = Array.isArray(obj.metadata?.finalizers) ? obj.metadata.finalizers : [];
  const extra = strategy.pendingFinalizers?.(obj) ?? [];
  return extra.length ? [...own, ...extra] : own;
}

/** Whether objects of this definition have a non-pointer `status` struct (always written, as `status: {}` at least). */
function hasGoStatus(definition: string): boolean {
  return goZeroFields(definition).some((z) => z.field === 'status' && z.zero === 'struct');
}

/** Whether a field path is one of `paths` or below one. */
function isUnder(field: string, paths: readonly string[] | undefined): boolean {
  return !!paths?.some((p) => field.startsWith(p) && (field.length === p.length || field[p.length] === '.' || field[p.length] === '['));
}

/** Everything but metadata and status: what a generation counts. */
function specOf(obj: any): Record<string, unknown> {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = obj;
  return rest;
}

function withoutMeta(obj: any): Record<string, unknown> {
  const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = obj;
  return rest;
}

/** An update that changes nothing is not written and keeps the resourceVersion. */
function unchanged(obj: any, old: any): boolean {
  return deepEqual(obj, old);
}

const EMPTY_OBJECT: Record<string, unknown> = Object.freeze({});

/**
 * After a write, the object answered gets the resourceVersion the stored form got. They are
 * usually one object, which is committed and so read-only (frozen in the tests): assigned only
 * when a conversion made them two.
 */
function carryResourceVersion(obj: any, stored: any): void {
  if (obj.metadata.resourceVersion !== stored.metadata.resourceVersion) obj.metadata.resourceVersion = stored.metadata.resourceVersion;
}
