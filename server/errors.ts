// Every failure a client sees is a metav1.Status built here, with the reasons and codes the
// API conventions list. Handlers throw ApiError; the HTTP layer renders it. Every floor uses
// these, so this file stands on the ground floor: it imports only go/, util/ and validation/
// (.dependency-cruiser.cjs).
import { fieldErrorsText, type FieldError } from './validation/field.ts';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, unknown>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

export class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details?: StatusDetails;
  /** Extra response headers, e.g. Retry-After. */
  readonly headers?: Record<string, string>;
  /** ListMeta of the Status (a fresh continue token on an expired one). */
  readonly statusMetadata?: Record<string, unknown>;

  constructor(code: number, reason: string, message: string, details?: StatusDetails, headers?: Record<string, string>, statusMetadata?: Record<string, unknown>) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.details = details;
    this.headers = headers;
    this.statusMetadata = statusMetadata;
  }

  toStatus(): Status {
    // metav1.Status's field order; an empty message or reason (an error that is no Status) is left out.
    const s = { kind: 'Status', apiVersion: 'v1', metadata: this.statusMetadata ?? {}, status: 'Failure' } as Status;
    if (this.message) s.message = this.message;
    if (this.reason) s.reason = this.reason;
    // kube writes an empty details object where it made one with no fields set (a 404 of an unknown path).
    if (this.details !== undefined) {
      // Members left undefined are absent (JSON drops them; CBOR would write an undefined).
      const d = definedMembers(this.details);
      if (d.causes) d.causes = d.causes.map(definedMembers);
      s.details = d;
    }
    s.code = this.code;
    return s;
  }
}

function definedMembers<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as T;
}

/** "deployments.apps" / "pods": how kube-apiserver names a group-resource in messages. */
export function qualifiedResource(group: string, resource: string): string {
  return group ? `${resource}.${group}` : resource;
}

export function badRequest(message: string, causes?: StatusCause[]): ApiError {
  return new ApiError(400, 'BadRequest', message, causes ? { causes } : undefined);
}

export function unauthorized(message = 'Unauthorized'): ApiError {
  return new ApiError(401, 'Unauthorized', message);
}

export function forbidden(group: string, resource: string, name: string, message: string): ApiError {
  const what = name ? `${qualifiedResource(group, resource)} "${name}"` : qualifiedResource(group, resource);
  return new ApiError(403, 'Forbidden', `${what} is forbidden: ${message}`, { name: name || undefined, group: group || undefined, kind: resource });
}

export function notFound(group: string, resource: string, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualifiedResource(group, resource)} "${name}" not found`, { name, group: group || undefined, kind: resource });
}

export function alreadyExists(group: string, resource: string, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualifiedResource(group, resource)} "${name}" already exists`, { name, group: group || undefined, kind: resource });
}

export function conflict(group: string, resource: string, name: string, message: string): ApiError {
  return new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(group, resource)} "${name}": ${message}`, { name, group: group || undefined, kind: resource });
}

/** 422 with one cause per field; the message lists them the way kube-apiserver does. */
export function invalid(group: string, kind: string, name: string, errors: FieldError[]): ApiError {
  // A cause's message is the error without its field (kube's ErrorBody); the summary has both.
  const causes = errors.map((e) => ({ reason: e.reason, message: e.message, field: e.field }));
  const what = group ? `${kind}.${group}` : kind;
  return new ApiError(422, 'Invalid', `${what} "${name}" is invalid: ${fieldErrorsText(errors)}`, { name: name || undefined, group: group || undefined, kind: kind || undefined, causes });
}

export function methodNotAllowed(message: string): ApiError {
  return new ApiError(405, 'MethodNotAllowed', message);
}

/**
 * A method the URL has no route for (PUT on a collection, POST on an object): kube-apiserver's
 * router answers it with NewGenericServerResponse's Status, whose details are there but empty.
 */
export function methodNotRouted(): ApiError {
  return new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
}

export function notAcceptable(message: string): ApiError {
  return new ApiError(406, 'NotAcceptable', message);
}

export function unsupportedMediaType(message: string): ApiError {
  return new ApiError(415, 'UnsupportedMediaType', message);
}

export function requestEntityTooLarge(message: string): ApiError {
  return new ApiError(413, 'RequestEntityTooLarge', message);
}

/**
 * The most bytes an object may take stored. kube-apiserver keeps objects in etcd, which refuses a
 * request over its --max-request-bytes (1.5 MiB by default) with "etcdserver: request is too
 * large" (kube answers that as a 500); a request carries the object and its key thrice. hearth
 * refuses objects that would not fit there (4 KiB left for the key and the request around it),
 * so that every object of a store can be written to a kube cluster as it is.
 */
export const MAX_OBJECT_BYTES = 1.5 * 1024 * 1024 - 4096;

/** A write of an object larger than MAX_OBJECT_BYTES: 413, whatever the kind, verb or encoding. */
export class ObjectTooLargeError extends ApiError {
  constructor(bytes: number) {
    super(413, 'RequestEntityTooLarge', `Request entity too large: the object is ${bytes} bytes, over the limit of ${MAX_OBJECT_BYTES} (etcd's default --max-request-bytes less room for the key): request is too large`);
  }
}

export function gone(message: string, statusMetadata?: Record<string, unknown>): ApiError {
  return new ApiError(410, 'Expired', message, undefined, undefined, statusMetadata);
}

/** 410 for a list or watch from a resourceVersion older than the compacted one. */
export function tooOldResourceVersion(rv: number, compacted: number): ApiError {
  return gone(`too old resource version: ${rv} (${compacted})`);
}

/** 504 after waiting for a resourceVersion the server has not reached. */
export function tooLargeResourceVersion(rv: number, current: number): ApiError {
  return new ApiError(504, 'Timeout', `Timeout: Too large resource version: ${rv}, current: ${current}`, { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 }, { 'Retry-After': '1' });
}

export function tooManyRequests(message: string, retryAfterSeconds: number): ApiError {
  return new ApiError(429, 'TooManyRequests', message, { retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
}

export function internalError(message: string): ApiError {
  return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

export function timeout(message: string, retryAfterSeconds?: number): ApiError {
  return new ApiError(504, 'Timeout', message, retryAfterSeconds ? { retryAfterSeconds } : undefined, retryAfterSeconds ? { 'Retry-After': String(retryAfterSeconds) } : undefined);
}
