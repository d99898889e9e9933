// The forms of an answer, as kube-apiserver's handlers shape them: an object or a list as it is, a
// Table (printer columns), PartialObjectMetadata(List); and writing an object's answer in the
// form the client negotiated, with the request's warnings.
import type { ResourceInfo, TablePrinter } from '../../schema/types.ts';
import type { RequestContext, ListResult } from '../../registry/store.ts';
import { apiVersionOf } from '../../registry/store.ts';
import { objectMetaInOrder } from '../../registry/object-order.ts';
import { scaleFromObject } from '../../registry/kinds/autoscaling/scale.ts';
import { badRequest } from '../../errors.ts';
import { negotiateOutput, type OutputFormat, type Shape } from '../negotiation.ts';
import { scalePrinter, tablePrinterFor } from '../../registry/printers/index.ts';
import { queryOf } from '../request-info.ts';
import { send } from '../respond.ts';
import { addWarnings } from '../warnings.ts';
import type { HttpContext } from '../state.ts';

/** An object as the store answers it, as far as shaping reads it. */
type ObjectJson = { metadata?: { resourceVersion?: string }; [field: string]: unknown };

export const OBJECT_SHAPES: Shape[] = ['Table', 'PartialObjectMetadata'];
export const LIST_SHAPES: Shape[] = ['Table', 'PartialObjectMetadataList'];

/**
 * The form of this request's answer (its subresources' too: kube's custom resource scopes,
 * scale and status included, share the standard serializers without protobuf).
 */
export function outputFormat(ctx: HttpContext, info: ResourceInfo, shapes: Shape[]): OutputFormat {
  return negotiateOutput(ctx.get('accept'), shapes, !info.custom);
}

/**
 * A list of the resource's objects as kube writes it: a built-in kind's in struct order, items
 * last; a custom kind's (an UnstructuredList, a map) with its keys sorted and `continue` always
 * set, as kube's storage sets it on every list.
 */
export function objectList(info: ResourceInfo, result: ListResult, items: unknown[]): Record<string, unknown> {
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

export function shapeObject(info: ResourceInfo, obj: ObjectJson, fmt: OutputFormat, includeObject: string | null, printer?: TablePrinter): unknown {
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
export function partialMetadata(obj: ObjectJson, metaVersion = 'v1', custom = false): unknown {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${metaVersion}`, metadata: custom ? objectMetaInOrder(obj.metadata) : obj.metadata };
}

export function toTable(
  info: ResourceInfo,
  items: ObjectJson[],
  metadata: Record<string, unknown>,
  metaVersion: string,
  includeObject: string | null,
  printer: TablePrinter = tablePrinterFor(info),
): Record<string, unknown> {
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
    rows: (printer.rowOrder && items.length > 1 ? [...items].sort(printer.rowOrder) : items).map((o) => {
      const row: Record<string, unknown> = { cells: printer.cells(o, now) };
      if (mode === 'Object') row.object = o;
      else if (mode === 'Metadata') row.object = partialMetadata(o, metaVersion, !!info.custom);
      return row;
    }),
  };
}

/**
 * A Scale as asked for. Its Table is printed by the printer of the object's store: kube's
 * printScale for built-in kinds, the printer columns of a custom resource (read from the Scale).
 */
export function shapeScale(ctx: HttpContext, info: ResourceInfo, scale: ObjectJson, fmt: OutputFormat): unknown {
  return shapeObject(info, scale, fmt, queryOf(ctx).get('includeObject'), info.custom ? undefined : scalePrinter);
}

/** A write's answer: the object in the negotiated shape (`plain`: a Status or list, never reshaped), with its warnings. */
export function respondObject(ctx: HttpContext, info: ResourceInfo, obj: ObjectJson, code: number, rc: RequestContext, plain = false): void {
  const fmt = outputFormat(ctx, info, plain ? [] : OBJECT_SHAPES);
  setWarnings(ctx, rc.warnings);
  const body = plain ? obj : shapeObject(info, obj, fmt, queryOf(ctx).get('includeObject'));
  return send(ctx, code, body, fmt);
}

/** A write's answer on the scale subresource: the object's Scale. */
export function respondScale(ctx: HttpContext, info: ResourceInfo, obj: ObjectJson, rc: RequestContext): void {
  const fmt = outputFormat(ctx, info, OBJECT_SHAPES);
  setWarnings(ctx, rc.warnings);
  return send(ctx, 200, shapeScale(ctx, info, scaleFromObject(info, obj), fmt), fmt);
}

/** `Warning: 299 - "text"` headers, one per warning, as kube-apiserver's recorder sends them. */
export function setWarnings(ctx: HttpContext, warnings: string[]): void {
  if (warnings.length) addWarnings(ctx, warnings);
}
