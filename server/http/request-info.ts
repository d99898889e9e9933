// Turns a URL and method into what the rest of the request path reasons about (kube's
// RequestInfo): is it a resource request, which verb, group, version, namespace, resource,
// name and subresource.
import { badRequest } from '../errors.ts';
import { parseGoDuration } from '../go/time.ts';
import { isLongRunningRequest } from '../util/long-running.ts';

export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  /** get, list, watch, create, update, patch, delete, deletecollection; for non-resource requests the lower-cased method. */
  verb: string;
  apiPrefix: 'api' | 'apis' | '';
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** Path segments after the resource name (proxy-style subresources); usually empty. */
  extraParts: string[];
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: '',
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    extraParts: NO_PARTS,
  };
  // Segment bounds, not a split: only the segments the answer names become strings.
  const count = scanSegments(path);
  const isApi = count >= 3 && segmentIs(path, 0, 'api');
  if (!isApi && !(count >= 4 && segmentIs(path, 0, 'apis'))) {
    info.verb = method.toLowerCase();
    return info;
  }
  let i: number;
  if (isApi) {
    info.apiPrefix = 'api';
    info.apiVersion = segment(path, 1);
    i = 2;
  } else {
    info.apiPrefix = 'apis';
    info.apiGroup = segment(path, 1);
    info.apiVersion = segment(path, 2);
    i = 3;
  }
  info.isResourceRequest = true;
  let watchPath = false;
  // The deprecated /watch/ prefix: /api/v1/watch/namespaces/x/pods.
  if (i < count && segmentIs(path, i, 'watch')) {
    watchPath = true;
    i++;
  }
  const n = count - i;
  if (n > 1 && segmentIs(path, i, 'namespaces')) {
    info.namespace = decodeSegment(segment(path, i + 1));
    if (n > 2 && !NAMESPACE_SUBRESOURCES.has(segment(path, i + 2))) i += 2;
  }
  const rest = count - i;
  if (rest > 0) info.resource = segment(path, i);
  if (rest > 1) info.name = decodeSegment(segment(path, i + 1));
  if (rest > 2) info.subresource = segment(path, i + 2);
  if (rest > 3) {
    info.extraParts = [];
    for (let k = i + 3; k < count; k++) info.extraParts.push(segment(path, k));
  }

  switch (method) {
    case 'GET':
    case 'HEAD': {
      // As kube-apiserver's RequestInfo: the watch parameter turns only a collection GET into a
      // watch (a named GET with ?watch=1 is a get); the /watch/ prefix turns either.
      const isWatch = watchPath || (!info.name && queryFlag(query.get('watch')));
      info.verb = isWatch ? 'watch' : info.name ? 'get' : 'list';
      break;
    }
    case 'POST':
      info.verb = 'create';
      break;
    case 'PUT':
      info.verb = 'update';
      break;
    case 'PATCH':
      info.verb = 'patch';
      break;
    case 'DELETE':
      info.verb = info.name ? 'delete' : 'deletecollection';
      break;
    default:
      info.verb = method.toLowerCase();
  }
  return info;
}

// Start and end of each non-empty segment of the path last scanned (reused: parsing is synchronous).
const starts: number[] = [];
const ends: number[] = [];

/** Finds the non-empty "/"-separated segments of path (empty ones, from "//" or a trailing "/", count for nothing); returns how many. */
function scanSegments(path: string): number {
  let count = 0;
  let i = 0;
  const len = path.length;
  while (i < len) {
    let j = path.indexOf('/', i);
    if (j < 0) j = len;
    if (j > i) {
      starts[count] = i;
      ends[count] = j;
      count++;
    }
    i = j + 1;
  }
  return count;
}

function segment(path: string, k: number): string {
  return path.slice(starts[k], ends[k]);
}

function segmentIs(path: string, k: number, s: string): boolean {
  return ends[k] - starts[k] === s.length && path.startsWith(s, starts[k]);
}

/** Shared empty extraParts: nothing writes to it. */
const NO_PARTS: string[] = [];

function decodeSegment(s: string): string {
  return s.includes('%') ? decodeURIComponent(s) : s;
}

/**
 * The request's query parameters, parsed once per request from the raw query string (koa's
 * ctx.URL would build a whole WHATWG URL, host included, for the same parameters). Every reader
 * of a request's parameters shares this one object.
 */
export function queryOf(ctx: { querystring: string; state: { query?: URLSearchParams } }): URLSearchParams {
  return (ctx.state.query ??= new URLSearchParams(ctx.querystring));
}

/** kube's boolean query parameter: absent → false; "0" or "false" (any case) → false; anything else → true. */
export function queryFlag(v: string | null): boolean {
  return v !== null && v !== '0' && v.toLowerCase() !== 'false';
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * An integer query parameter (limit, timeoutSeconds, gracePeriodSeconds) read as kube decodes it
 * (Go's strconv.ParseInt(v, 10, 64)): absent → undefined; present, even empty, it must be a
 * decimal int64, else 400 with Go's message.
 */
export function int64Param(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  if (!/^[+-]?[0-9]+$/.test(v)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  const n = BigInt(v);
  if (n < INT64_MIN || n > INT64_MAX) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: value out of range`);
  return Number(n);
}

/** sendInitialEvents is a pointer in kube: absent stays undefined. */
export function sendInitialEventsOf(q: URLSearchParams): boolean | undefined {
  return q.has('sendInitialEvents') ? queryFlag(q.get('sendInitialEvents')) : undefined;
}

/**
 * kube-apiserver's request deadline filter reads `timeout` (a Go duration) on every request that
 * is not long-running (watches, and the proxy, exec, attach, log and port-forward subresources); one
 * that does not parse is a 400 before authentication. Returns that message, or undefined.
 */
export function timeoutParamError(info: RequestInfo, q: URLSearchParams): string | undefined {
  const value = q.get('timeout');
  if (!value) return undefined;
  if (isLongRunningRequest(info)) return undefined;
  const parsed = parseGoDuration(value);
  return typeof parsed === 'number' ? undefined : `invalid timeout specified in the request URL - ${parsed}`;
}

