// Turns a URL and method into what the rest of the request path reasons about (kube's
// RequestInfo): is it a resource request, which verb, group, version, namespace, resource,
// name and subresource.

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
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    extraParts: [],
  };
  const parts = path.split('/').filter((p) => p !== '');
  if (parts.length === 0) return info;
  let rest: string[];
  if (parts[0] === 'api') {
    if (parts.length < 3) return info;
    info.apiPrefix = 'api';
    info.apiVersion = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === 'apis') {
    if (parts.length < 4) return info;
    info.apiPrefix = 'apis';
    info.apiGroup = parts[1];
    info.apiVersion = parts[2];
    rest = parts.slice(3);
  } else {
    return info;
  }
  info.isResourceRequest = true;
  let watchPath = false;
  // The deprecated /watch/ prefix: /api/v1/watch/namespaces/x/pods.
  if (rest[0] === 'watch') {
    watchPath = true;
    rest = rest.slice(1);
  }
  if (rest[0] === 'namespaces' && rest.length > 1) {
    info.namespace = decodeURIComponent(rest[1]);
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2])) rest = rest.slice(2);
  }
  info.resource = rest[0] ?? '';
  if (rest.length > 1) info.name = decodeURIComponent(rest[1]);
  if (rest.length > 2) info.subresource = rest[2];
  if (rest.length > 3) info.extraParts = rest.slice(3);

  const watchParam = query.get('watch');
  const isWatch = watchPath || watchParam === 'true' || watchParam === '1';
  switch (method) {
    case 'GET':
    case 'HEAD':
      info.verb = isWatch ? 'watch' : info.name ? 'get' : 'list';
      break;
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
