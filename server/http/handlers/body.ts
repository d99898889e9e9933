// Request bodies: an object decoded from any of the served encodings and held to its Go type as
// kube-apiserver's decoder holds it (each refusal in kube's words), and the fields the body set
// twice (reported per fieldValidation).
import type { ResourceInfo } from '../../schema/types.ts';
import type { TypeModel } from '../../schema/model.ts';
import type { RequestContext } from '../../registry/store.ts';
import { badRequest, unsupportedMediaType } from '../../errors.ts';
import { goDecodeError, goJsonTypeError, summarizeBody, unreadableKindError } from '../../schema/go-decode.ts';
import { isPlainObject } from '../../util/json.ts';
import { readBody, decodeBody, bodyEncoding, mediaTypeOf, SUPPORTED_MEDIA_TYPES, type DecodedBody, type Encoding } from '../negotiation.ts';
import { duplicateJsonFields, duplicateYamlFields } from '../duplicate-fields.ts';
import type { HttpContext } from '../state.ts';

export const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/**
 * The body of a create or update, decoded as an object of `definition` (the resource's own, or a
 * subresource's: Scale, Eviction, Binding); its duplicate fields go into rc.
 */
export async function readObjectBody(ctx: HttpContext, info: ResourceInfo, definition: string | undefined, rc: RequestContext, model: TypeModel): Promise<unknown> {
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
  // The audit event's object reference (and, at Request level, the object as sent).
  ctx.state.audit?.logRequestObject(value);
  return decoded.value;
}

/** Duplicate fields of a body already known to parse; `d.value` is what it parsed to, untouched. */
export function findDuplicates(d: DecodedBody, enc: Encoding): string[] {
  if (d.text === undefined) return [];
  if (enc === 'json') return duplicateJsonFields(d.text, d.value);
  // JSON text sent as YAML (apply bodies from most clients): the JSON scan, not a YAML parse.
  if (enc === 'yaml') return d.jsonText ? duplicateJsonFields(d.text, d.value) : duplicateYamlFields(d.text);
  return [];
}
