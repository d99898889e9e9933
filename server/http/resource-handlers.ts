// One handler per verb for every resource: the HTTP face of the generic store. It reads query
// parameters and bodies, calls the store, and shapes the answer (object, list, Table,
// PartialObjectMetadata) in the negotiated encoding.
import type { HttpContext, HttpMiddleware } from './state.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { ResourceInfo } from '../schema/types.ts';
import type { GenericStore, RequestContext, FieldValidation, DeleteOptions, ListResult } from '../registry/store.ts';
import { apiVersionOf, objectMetaInOrder, nowTimestamp } from '../registry/store.ts';
import { evictPod, type EvictionTargets } from '../registry/eviction.ts';
import { int64Param, queryFlag, queryOf, sendInitialEventsOf, type RequestInfo } from './request-info.ts';
import { ApiError, badRequest, invalid, methodNotRouted, unsupportedMediaType } from '../errors.ts';
import type { FieldError } from '../schema/types.ts';
import { forbiddenError, invalidError, notSupportedError, requiredError } from '../registry/crd/schema-validator.ts';
import { goIsPrint, goQuote, goRuneU } from '../registry/metadata-validation.ts';
import { negotiateOutput, readBody, decodeAs, decodeBody, bodyEncoding, mediaTypeOf, SUPPORTED_MEDIA_TYPES, type DecodedBody, type OutputFormat, type Shape } from './negotiation.ts';
import { applyPatch, checkPatchedTypes, PATCH_TYPES } from '../registry/patch/index.ts';
import type { TypeModel } from '../schema/model.ts';
import { printerFor, scalePrinter, type TablePrinter } from './printers.ts';
import { prettyPrint, send, sendEncoded } from './respond.ts';
import { storedItemsOf, storedListJson } from '../storage/codec.ts';
import { SERVED_SUBRESOURCES } from './discovery.ts';
import { scaleFromObject, applyScaleToObject } from '../registry/scale.ts';
import { duplicateJsonFields, duplicateYamlFields } from './duplicate-fields.ts';
import { goDecodeError, goJsonTypeError, summarizeBody, unreadableKindError } from '../schema/go-decode.ts';
import { isPlainObject } from '../util/json.ts';
import { addWarnings } from './warnings.ts';
import type { WatchService } from './watch.ts';

export interface ResourceHandlerDeps {
  catalog: ResourceCatalog;
  store: GenericStore;
  model: TypeModel;
  watch: WatchService;
}

/** JSON bodies end with a newline (as encode() writes them). */
const NEWLINE = Buffer.from('\n');

const NOT_FOUND = new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});

export function resourceHandler(deps: ResourceHandlerDeps): HttpMiddleware {
  const { catalog, store } = deps;
  return async (ctx) => {
    const ri = ctx.state.requestInfo;
    const info = catalog.lookup(ri.apiGroup, ri.apiVersion, ri.resource);
    if (!info) throw NOT_FOUND;
    // Namespaced kinds: single objects and writes need a namespace; cluster-scoped kinds never take one.
    if (!info.namespaced && ri.namespace && !(info.resource === 'namespaces')) throw NOT_FOUND;
    if (info.namespaced && !ri.namespace && ri.verb !== 'list' && ri.verb !== 'watch') {
      if (ri.name) throw NOT_FOUND;
      throw methodNotRouted();
    }
    if (ri.subresource && !(SERVED_SUBRESOURCES.includes(ri.subresource) && info.subresources?.[ri.subresource])) throw NOT_FOUND;
    if (ri.extraParts.length) throw NOT_FOUND;
    // A collection takes GET, POST and DELETE; an object GET, PUT, PATCH and DELETE (kube's routes).
    if (!ri.subresource && (ri.name ? ri.verb === 'create' : ri.verb === 'update' || ri.verb === 'patch')) throw methodNotRouted();
    const verbs = ri.subresource ? info.subresources![ri.subresource].verbs : info.verbs;
    if (!verbs.includes(ri.verb)) throw methodNotRouted();
    // Every request to a deprecated custom resource version hears of it.
    if (info.custom?.deprecationWarning) setWarnings(ctx, [info.custom.deprecationWarning]);

    const q = queryOf(ctx);
    const ns = info.namespaced ? ri.namespace : '';
    // A write decides the form of its answer first, as kube's handlers do: an Accept it cannot
    // answer in is a 406 before the body is read, and nothing is written.
    if (ri.verb !== 'get' && ri.verb !== 'list' && ri.verb !== 'watch') outputFormat(ctx, info, ri.verb === 'deletecollection' ? [] : OBJECT_SHAPES);
    switch (ri.verb) {
      case 'get':
        return await getOne(ctx, deps, info, ns, ri);
      case 'list':
        return await list(ctx, deps, info, ri);
      case 'watch':
        return deps.watch.serve(ctx, info, ri);
      case 'create': {
        const rc = requestContext(ctx, 'CreateOptions');
        if (!info.group && info.resource === 'pods' && ri.subresource === 'eviction') {
          const eviction = await readObjectBody(ctx, info, EVICTION, rc, deps.model);
          await evictPod(store, evictionTargets(catalog), ns, ri.name, eviction, rc, nowTimestamp);
          return respondObject(ctx, info, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }, 201, rc, true);
        }
        const sub = ri.subresource ? store.subresourceCreate(info, ri.subresource) : undefined;
        if (sub) {
          await store.createSubresource(info, ns, ri.name, ri.subresource, await readObjectBody(ctx, info, sub.definition, rc, deps.model), rc);
          // As kube-apiserver answers a create that returns a Status.
          return respondObject(ctx, info, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }, 201, rc, true);
        }
        const body = await readObjectBody(ctx, info, info.definition, rc, deps.model);
        const created = await store.create(info, ns, body, rc);
        return respondObject(ctx, info, created, 201, rc);
      }
      case 'update': {
        const rc = requestContext(ctx, 'UpdateOptions');
        const body = await readObjectBody(ctx, info, ri.subresource === 'scale' ? 'io.k8s.api.autoscaling.v1.Scale' : info.definition, rc, deps.model);
        let updated: any;
        if (ri.subresource === 'scale') {
          updated = await store.patch(info, ns, ri.name, (cur) => applyScaleToObject(info, cur, body), rc, 'scale');
          return respondScale(ctx, info, updated, rc);
        }
        updated = await store.update(info, ns, ri.name, body, rc, ri.subresource);
        return respondObject(ctx, info, updated, 200, rc);
      }
      case 'patch': {
        const mediaType = mediaTypeOf(ctx.get('content-type'));
        const isApply = APPLY_TYPES.includes(mediaType);
        // Custom resources have no patch strategies: strategic merge patch is not offered for them.
        const patchTypes = info.custom ? CUSTOM_PATCH_TYPES : PATCH_TYPES;
        if (!isApply && !patchTypes.includes(mediaType)) {
          throw unsupportedMediaType(`the body of the request was in an unknown format - accepted media types include: ${[...patchTypes, ...APPLY_TYPES].join(', ')}`);
        }
        const force = parseForce(q.get('force'));
        const rc = requestContext(ctx, 'PatchOptions', isApply
          ? (q.get('fieldManager') ? [] : [requiredError('fieldManager', 'is required for apply patch')])
          : (force === undefined ? [] : [forbiddenError('force', 'may not be specified for non-apply patch')]));
        if (isApply) {
          const raw = await readBody(ctx.req);
          const enc = bodyEncoding(mediaType)!;
          const decoded = decodeBody(raw, enc, undefined, { apply: true });
          const config = decoded.value;
          rc.duplicateFields = findDuplicates(decoded, enc);
          if (ri.subresource === 'scale') throw unsupportedMediaType('apply is not supported on the scale subresource');
          const { object, created } = await store.apply(info, ns, ri.name, config, rc, { force: force ?? false, subresource: ri.subresource });
          return respondObject(ctx, info, object, created ? 201 : 200, rc);
        }
        const rawPatch = await readBody(ctx.req);
        const decodedPatch = decodeBody(rawPatch, bodyEncoding(mediaType)!, undefined, { patch: mediaType, fieldValidation: rc.fieldValidation });
        const patchBody = decodedPatch.value;
        if (mediaType !== 'application/json-patch+json') rc.duplicateFields = findDuplicates(decodedPatch, bodyEncoding(mediaType)!);
        const node = info.definition ? deps.model.node(info.definition) : info.custom?.typeNode();
        if (ri.subresource === 'scale') {
          const scaleNode = deps.model.node('io.k8s.api.autoscaling.v1.Scale');
          const updated = await store.patch(info, ns, ri.name, (cur) => {
            const patchedScale = applyPatch(mediaType, scaleFromObject(info, cur), patchBody, scaleNode);
            checkPatchedTypes(mediaType, scaleNode, patchedScale, patchBody);
            return applyScaleToObject(info, cur, patchedScale);
          }, rc, 'scale');
          return respondScale(ctx, info, updated, rc);
        }
        const metaNode = deps.model.node(OBJECT_META);
        const updated = await store.patch(info, ns, ri.name, (cur) => {
          const patched = applyPatch(mediaType, cur, patchBody, node);
          // A custom object is decoded into a map, but for its metadata.
          if (info.custom) checkPatchedTypes(mediaType, metaNode, patched, patchBody, true);
          else if (node) checkPatchedTypes(mediaType, node, patched, patchBody);
          return patched;
        }, rc, ri.subresource);
        return respondObject(ctx, info, updated, 200, rc);
      }
      case 'delete': {
        const { opts, problems } = await deleteOptions(ctx, deps.model); // may carry dryRun in the body
        const rc = requestContext(ctx, 'DeleteOptions', problems);
        if (opts.ignoreStoreReadErrorWithClusterBreakingPotential) {
          // kube's unsafe delete of a corrupt object: answered as a delete whose object could not be read.
          await store.deleteCorrupt(info, ns, ri.name);
          const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: ri.name, group: info.group || undefined, kind: info.resource } };
          return respondObject(ctx, info, status, 200, rc, true);
        }
        const r = await store.delete(info, ns, ri.name, opts, rc);
        if (r.deleted) {
          const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: ri.name, group: info.group || undefined, kind: info.resource, uid: r.object.metadata.uid } };
          return respondObject(ctx, info, status, 200, rc, true);
        }
        return respondObject(ctx, info, r.object, 200, rc);
      }
      case 'deletecollection': {
        const { opts, problems } = await deleteOptions(ctx, deps.model);
        const rc = requestContext(ctx, 'DeleteOptions', problems);
        const items = await store.deleteCollection(info, info.namespaced ? ri.namespace || undefined : undefined, {
          labelSelector: q.get('labelSelector') ?? undefined,
          fieldSelector: q.get('fieldSelector') ?? undefined,
        }, opts, rc);
        const listObj = { kind: info.listKind, apiVersion: apiVersionOf(info), metadata: {}, items };
        return respondObject(ctx, info, listObj, 200, rc, true);
      }
    }
    throw methodNotRouted();
  };
}

async function getOne(ctx: HttpContext, deps: ResourceHandlerDeps, info: ResourceInfo, ns: string, ri: RequestInfo) {
  const rv = queryOf(ctx).get('resourceVersion') ?? undefined;
  if (ri.subresource === 'scale') {
    const fmt = outputFormat(ctx, info, OBJECT_SHAPES);
    const obj = await deps.store.getAtLeast(info, ns, ri.name, rv);
    return send(ctx, 200, shapeScale(ctx, info, scaleFromObject(info, obj), fmt), fmt);
  }
  // Negotiated before the read, as kube-apiserver does: a missing object asked for in an unacceptable form is a 406.
  const fmt = outputFormat(ctx, info, OBJECT_SHAPES);
  if (fmt.shape === 'object' && fmt.encoding === 'json' && !prettyPrint(ctx)) {
    // The stored bytes when they are served as they are: never decoded, never encoded again.
    const got = await deps.store.getJsonAtLeast(info, ns, ri.name, rv);
    if ('json' in got) return sendEncoded(ctx, 200, Buffer.concat([got.json, NEWLINE]), fmt);
    return send(ctx, 200, got.object, fmt);
  }
  const obj = await deps.store.getAtLeast(info, ns, ri.name, rv);
  const body = shapeObject(info, obj, fmt, queryOf(ctx).get('includeObject'));
  return send(ctx, 200, body, fmt);
}

async function list(ctx: HttpContext, deps: ResourceHandlerDeps, info: ResourceInfo, ri: RequestInfo) {
  const q = queryOf(ctx);
  const fmt = outputFormat(ctx, info, LIST_SHAPES);
  // (as kube's storage: a limit of 0 or less is no limit)
  const limit = int64Param(q, 'limit');
  int64Param(q, 'timeoutSeconds'); // (decoded as kube decodes it, for its error; a list does not wait)
  const result = await deps.store.list(info, info.namespaced ? ri.namespace || undefined : undefined, {
    labelSelector: q.get('labelSelector') ?? undefined,
    fieldSelector: q.get('fieldSelector') ?? undefined,
    limit,
    continue: q.get('continue') || undefined,
    resourceVersion: q.get('resourceVersion') ?? undefined,
    resourceVersionMatch: q.get('resourceVersionMatch') ?? undefined,
    sendInitialEvents: sendInitialEventsOf(q),
  });
  // A plain JSON list of stored objects: transcoded from the stored bytes, never decoded.
  const stored = fmt.shape === 'object' && fmt.encoding === 'json' && !prettyPrint(ctx) ? storedItemsOf(result) : undefined;
  if (stored) return sendEncoded(ctx, 200, storedListJson(objectList(info, result, []), stored), fmt);
  const body = shapeList(info, result, fmt, q.get('includeObject'));
  return send(ctx, 200, body, fmt);
}

/**
 * A list of the resource's objects as kube writes it: a built-in kind's in struct order, items
 * last; a custom kind's (an UnstructuredList, a map) with its keys sorted and `continue` always
 * set, as kube's storage sets it on every list.
 */
function objectList(info: ResourceInfo, result: ListResult, items: unknown[]): Record<string, unknown> {
  if (!info.custom) return { kind: info.listKind, apiVersion: apiVersionOf(info), metadata: listMetadata(result), items };
  const metadata: Record<string, unknown> = { continue: result.continue ?? '' };
  if (result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount;
  metadata.resourceVersion = result.resourceVersion;
  return { apiVersion: apiVersionOf(info), items, kind: info.listKind, metadata };
}

function listMetadata(result: ListResult): Record<string, unknown> {
  const m: Record<string, unknown> = { resourceVersion: result.resourceVersion };
  if (result.continue) m.continue = result.continue;
  if (result.remainingItemCount !== undefined) m.remainingItemCount = result.remainingItemCount;
  return m;
}

export function shapeList(info: ResourceInfo, result: ListResult, fmt: OutputFormat, includeObject: string | null): unknown {
  switch (fmt.shape) {
    case 'Table':
      return toTable(info, result.items, listMetadata(result), fmt.metaVersion, includeObject);
    case 'PartialObjectMetadataList':
      return {
        kind: 'PartialObjectMetadataList',
        apiVersion: `meta.k8s.io/${fmt.metaVersion}`,
        metadata: listMetadata(result),
        items: result.items.map((o) => partialMetadata(o, fmt.metaVersion, !!info.custom)),
      };
    default:
      return objectList(info, result, result.items);
  }
}

export function shapeObject(info: ResourceInfo, obj: any, fmt: OutputFormat, includeObject: string | null, printer?: TablePrinter): unknown {
  switch (fmt.shape) {
    case 'Table':
      return toTable(info, [obj], { resourceVersion: obj.metadata?.resourceVersion }, fmt.metaVersion, includeObject, printer);
    case 'PartialObjectMetadata':
      return partialMetadata(obj, fmt.metaVersion, !!info.custom);
    default:
      return obj;
  }
}

/** An object's PartialObjectMetadata. A custom object's metadata (sorted, as kube holds it) is put in ObjectMeta's order. */
export function partialMetadata(obj: any, metaVersion = 'v1', custom = false): unknown {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${metaVersion}`, metadata: custom ? objectMetaInOrder(obj.metadata) : obj.metadata };
}

export function toTable(
  info: ResourceInfo,
  items: any[],
  metadata: Record<string, unknown>,
  metaVersion: string,
  includeObject: string | null,
  printer: TablePrinter = info.custom ? info.custom.printer() : printerFor(info.group, info.resource),
): unknown {
  const mode = includeObject ?? 'Metadata';
  if (mode !== 'None' && mode !== 'Metadata' && mode !== 'Object') {
    throw badRequest(`includeObject: Unsupported value: "${mode}": supported values: "None", "Metadata", "Object"`);
  }
  const now = Date.now();
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${metaVersion}`,
    metadata,
    columnDefinitions: printer.columns,
    rows: items.map((o) => {
      const row: Record<string, unknown> = { cells: printer.cells(o, now) };
      if (mode === 'Object') row.object = o;
      else if (mode === 'Metadata') row.object = partialMetadata(o, metaVersion, !!info.custom);
      return row;
    }),
  };
}

const OBJECT_SHAPES: Shape[] = ['Table', 'PartialObjectMetadata'];
const LIST_SHAPES: Shape[] = ['Table', 'PartialObjectMetadataList'];

/**
 * The form of this request's answer (its subresources' too: kube's custom resource scopes,
 * scale and status included, share the standard serializers without protobuf).
 */
function outputFormat(ctx: HttpContext, info: ResourceInfo, shapes: Shape[]): OutputFormat {
  return negotiateOutput(ctx.get('accept'), shapes, !info.custom);
}

function respondObject(ctx: HttpContext, info: ResourceInfo, obj: any, code: number, rc: RequestContext, plain = false) {
  const fmt = outputFormat(ctx, info, plain ? [] : OBJECT_SHAPES);
  setWarnings(ctx, rc.warnings);
  const body = plain ? obj : shapeObject(info, obj, fmt, queryOf(ctx).get('includeObject'));
  return send(ctx, code, body, fmt);
}

function respondScale(ctx: HttpContext, info: ResourceInfo, obj: any, rc: RequestContext) {
  const fmt = outputFormat(ctx, info, OBJECT_SHAPES);
  setWarnings(ctx, rc.warnings);
  return send(ctx, 200, shapeScale(ctx, info, scaleFromObject(info, obj), fmt), fmt);
}

/**
 * A Scale as asked for. Its Table is printed by the printer of the object's store: kube's
 * printScale for built-in kinds, the printer columns of a custom resource (read from the Scale).
 */
function shapeScale(ctx: HttpContext, info: ResourceInfo, scale: any, fmt: OutputFormat): unknown {
  return shapeObject(info, scale, fmt, queryOf(ctx).get('includeObject'), info.custom ? undefined : scalePrinter);
}

/** `Warning: 299 - "text"` headers, one per warning, as kube-apiserver's recorder sends them. */
export function setWarnings(ctx: HttpContext, warnings: string[]): void {
  if (warnings.length) addWarnings(ctx, warnings);
}

async function readObjectBody(ctx: HttpContext, info: ResourceInfo, definition: string | undefined, rc: RequestContext, model: TypeModel): Promise<any> {
  // No Content-Type is JSON, the first media type served, as kube-apiserver reads it
  // (`kubectl create --raw` sends none).
  const mediaType = mediaTypeOf(ctx.get('content-type')) || 'application/json';
  const enc = bodyEncoding(mediaType);
  // Custom objects have no protobuf form (their Scale has).
  const noProtobuf = !!info.custom && definition === info.definition;
  if (!enc || mediaType.includes('patch') || (noProtobuf && enc === 'protobuf')) {
    const accepted = noProtobuf ? SUPPORTED_MEDIA_TYPES.filter((t) => bodyEncoding(t) !== 'protobuf') : SUPPORTED_MEDIA_TYPES;
    throw unsupportedMediaType(`the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`);
  }
  const raw = await readBody(ctx.req);
  let decoded: DecodedBody;
  const kind = definition && definition !== info.definition ? definition.slice(definition.lastIndexOf('.') + 1) : info.kind;
  if (enc === 'json') {
    // kube reads a JSON body's apiVersion and kind first; one it cannot read them from (not JSON,
    // not an object, a kind that is no string) is refused with that reason and the body's start.
    const unrecognized = (why: string) => badRequest(`the object provided is unrecognized (must be of type ${kind}): ${why} (${summarizeBody(raw)})`);
    try {
      decoded = decodeBody(raw, enc, definition);
    } catch {
      throw unrecognized(unreadableKindError(raw.toString('utf8'))!);
    }
    const why = unreadableKindError(decoded.text!, decoded);
    if (why) throw unrecognized(why);
    // null reads as an empty object.
    if (decoded.value === null) decoded = { ...decoded, value: {} };
  } else {
    if (raw.length === 0) throw badRequest('the body of the request was empty');
    decoded = decodeBody(raw, enc, definition, { object: kind, version: info.version });
  }
  // A built-in body is decoded into Go types first: JSON that does not fit them is a 400 there.
  // (CBOR and protobuf bodies are checked later, by the schema.)
  const value = decoded.value;
  if (definition && !noProtobuf && (enc === 'json' || enc === 'yaml') && isPlainObject(value)) {
    const decodeError = goDecodeError(model.node(definition), value);
    if (decodeError) throw badRequest(decodeError);
  } else if (noProtobuf && isPlainObject(value) && isPlainObject(value.metadata)) {
    // A custom object's metadata is decoded into ObjectMeta (the rest into a map).
    const metaError = goJsonTypeError(model.node(OBJECT_META), value.metadata);
    if (metaError) throw badRequest(`${info.kind} in version ${JSON.stringify(info.version)} cannot be handled as a ${info.kind}: ${metaError}`);
  }
  rc.duplicateFields = findDuplicates(decoded, enc);
  return decoded.value;
}

/** Duplicate fields of a body already known to parse; `d.value` is what it parsed to, untouched. */
function findDuplicates(d: DecodedBody, enc: string): string[] {
  if (d.text === undefined) return [];
  if (enc === 'json') return duplicateJsonFields(d.text, d.value);
  // JSON text sent as YAML (apply bodies from most clients): the JSON scan, not a YAML parse.
  if (enc === 'yaml') return d.jsonText ? duplicateJsonFields(d.text, d.value) : duplicateYamlFields(d.text);
  return [];
}

const APPLY_TYPES = ['application/apply-patch+yaml', 'application/apply-patch+cbor'];
const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const DELETE_OPTIONS = 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions';
const EVICTION = 'io.k8s.api.policy.v1.Eviction';

/** What an eviction reads and writes: pods, and the disruption budgets that guard them. */
function evictionTargets(catalog: ResourceCatalog): EvictionTargets {
  return { pods: catalog.lookup('', 'v1', 'pods')!, budgets: catalog.lookup('policy', 'v1', 'poddisruptionbudgets')! };
}
const CUSTOM_PATCH_TYPES = PATCH_TYPES.filter((t) => t !== 'application/strategic-merge-patch+json');
const MAX_FIELD_MANAGER_LENGTH = 128;

/** force is a pointer in kube: absent → undefined, else its boolean parameter reading (queryFlag). */
function parseForce(v: string | null): boolean | undefined {
  return v === null ? undefined : queryFlag(v);
}

/** The field manager a write is recorded under: the parameter, else derived from the User-Agent. */
function fieldManagerOf(ctx: HttpContext, given: string | null): string {
  if (given !== null && given !== '') return given;
  const ua = ctx.get('user-agent');
  let manager = managerByUserAgent.get(ua);
  if (manager === undefined) {
    // The User-Agent up to its first "/", as kube-apiserver derives it.
    manager = ua.split('/')[0].replace(/[^\x20-\x7e]/g, '').slice(0, MAX_FIELD_MANAGER_LENGTH) || 'unknown';
    // Clients send the same few User-Agents over and over; a bounded cache of their managers.
    if (managerByUserAgent.size < 1000) managerByUserAgent.set(ua, manager);
  }
  return manager;
}

const managerByUserAgent = new Map<string, string>();

/** kube's ValidateFieldManager: at most 128 bytes, every character printable (one cause per character). */
function fieldManagerErrors(given: string): FieldError[] {
  const errs: FieldError[] = [];
  if (Buffer.byteLength(given) > MAX_FIELD_MANAGER_LENGTH) {
    errs.push({ reason: 'FieldValueTooLong', field: 'fieldManager', message: `Too long: may not be more than ${MAX_FIELD_MANAGER_LENGTH} bytes` });
  }
  let at = 0; // Go ranges over a string by byte offset
  for (const ch of given) {
    if (!goIsPrint(ch)) errs.push(invalidError('fieldManager', goQuote(given), `invalid character ${goRuneU(ch.codePointAt(0)!)} (at position ${at})`));
    at += Buffer.byteLength(ch);
  }
  return errs;
}

type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';
const FIELD_VALIDATIONS: readonly string[] = ['', 'Ignore', 'Strict', 'Warn'];

/**
 * The write options of the query, validated as kube-apiserver validates its Create/Update/
 * PatchOptions: every problem in one 422 Invalid naming the options kind (`leading`: the
 * verb's own, which kube lists first). DeleteOptions take neither fieldManager nor
 * fieldValidation. A dryRun other than All is a 400 BadRequest, as this project's issue asks.
 */
function requestContext(ctx: HttpContext, kind: OptionsKind, leading: FieldError[] = []): RequestContext {
  const q = queryOf(ctx);
  const dry = q.getAll('dryRun');
  for (const d of dry) if (d !== 'All') throw badRequest(`dryRun: Unsupported value: "${d}": supported values: "All"`);
  const takesWriteOptions = kind !== 'DeleteOptions';
  const given = takesWriteOptions ? q.get('fieldManager') : null;
  const fv = (takesWriteOptions ? q.get('fieldValidation') : null) ?? '';
  const errs = [...leading];
  if (given) errs.push(...fieldManagerErrors(given));
  if (!FIELD_VALIDATIONS.includes(fv)) errs.push(notSupportedError('fieldValidation', goQuote(fv), [...FIELD_VALIDATIONS]));
  if (errs.length) throw invalid('meta.k8s.io', kind, '', errs);
  return { user: ctx.state.user, dryRun: dry.length > 0, fieldValidation: (fv || 'Warn') as FieldValidation, warnings: [], fieldManager: fieldManagerOf(ctx, given) };
}

const PROPAGATION_POLICIES: readonly string[] = ['Foreground', 'Background', 'Orphan'];

/**
 * DeleteOptions come from the body (if any) and from query parameters; `problems` are what kube's
 * ValidateDeleteOptions finds in them (for requestContext's 422).
 */
async function deleteOptions(ctx: HttpContext, model: TypeModel): Promise<{ opts: DeleteOptions; problems: FieldError[] }> {
  const q = queryOf(ctx);
  const raw = await readBody(ctx.req);
  let body: any = {};
  if (raw.length > 0) {
    const enc = bodyEncoding(mediaTypeOf(ctx.get('content-type')) || 'application/json') ?? 'json';
    body = decodeAs(raw, enc, DELETE_OPTIONS) ?? {};
    if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('the body of the request was not a DeleteOptions object');
    // Decoded into the Go type, as every body: `dryRun: "All"` (not a list) is refused, never read as no dry run.
    const typeError = goJsonTypeError(model.node(DELETE_OPTIONS), body);
    if (typeError) throw badRequest(typeError);
  }
  const opts: DeleteOptions = {};
  if (body.preconditions) opts.preconditions = body.preconditions;
  const policy: unknown = q.get('propagationPolicy') ?? body.propagationPolicy ?? undefined;
  const orphanParam = q.get('orphanDependents');
  const orphan: unknown = orphanParam !== null ? queryFlag(orphanParam) : body.orphanDependents ?? undefined;
  const problems: FieldError[] = [];
  if (orphan !== undefined && policy !== undefined) problems.push(invalidError('propagationPolicy', goQuote(String(policy)), 'orphanDependents and deletionPropagation cannot be both set'));
  if (policy !== undefined && !PROPAGATION_POLICIES.includes(String(policy))) problems.push(notSupportedError('propagationPolicy', goQuote(String(policy)), [...PROPAGATION_POLICIES, 'nil']));
  opts.propagationPolicy = policy !== undefined ? String(policy) : orphan === true ? 'Orphan' : undefined;
  const gp = int64Param(q, 'gracePeriodSeconds') ?? body.gracePeriodSeconds;
  if (gp !== undefined && gp !== null) {
    if (!Number.isInteger(gp)) throw badRequest(`invalid gracePeriodSeconds: ${JSON.stringify(gp)}`);
    opts.gracePeriodSeconds = gp;
  }
  if (q.getAll('dryRun').length === 0 && Array.isArray(body.dryRun) && body.dryRun.length) {
    for (const d of body.dryRun) if (d !== 'All') throw badRequest(`dryRun: Unsupported value: "${d}": supported values: "All"`);
    queryOf(ctx).set('dryRun', 'All');
  }
  const unsafeParam = q.get('ignoreStoreReadErrorWithClusterBreakingPotential');
  if (unsafeParam !== null ? queryFlag(unsafeParam) : body.ignoreStoreReadErrorWithClusterBreakingPotential === true) {
    // ValidateIgnoreStoreReadError: the unsafe delete takes none of a normal delete's options.
    const together = (what: string) => problems.push(invalidError('ignoreStoreReadErrorWithClusterBreakingPotential', 'true', `cannot be set together with .${what}`));
    if (q.getAll('dryRun').length) together('dryRun');
    if (policy !== undefined) together('propagationPolicy');
    if (orphan !== undefined) together('orphanDependents');
    if (opts.gracePeriodSeconds !== undefined) together('gracePeriodSeconds');
    if (opts.preconditions) together('preconditions');
    opts.ignoreStoreReadErrorWithClusterBreakingPotential = true;
  }
  return { opts, problems };
}

export type { Shape };
