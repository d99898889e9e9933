// kube-apiserver's BasicLongRunningRequestCheck (k8s.io/apiserver/pkg/server/filters/longrunning.go
// with the verbs and subresources kube-apiserver's config names): the requests that stream for
// long, which flow control, audit and the timeout parameter treat apart. One rule for all three.

const LONG_RUNNING_VERBS: ReadonlySet<string> = new Set(['watch', 'proxy']);
const LONG_RUNNING_SUBRESOURCES: ReadonlySet<string> = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

/** The little of a request's RequestInfo the check reads. */
export interface LongRunningCheckInfo {
  isResourceRequest: boolean;
  verb: string;
  subresource: string;
  path: string;
}

export function isLongRunningRequest(info: LongRunningCheckInfo): boolean {
  if (LONG_RUNNING_VERBS.has(info.verb)) return true;
  if (info.isResourceRequest) return LONG_RUNNING_SUBRESOURCES.has(info.subresource);
  return info.path.startsWith('/debug/pprof/');
}
