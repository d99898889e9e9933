// What the command line sets for hearth's own log: kube components' -v and --log-format
// (k8s.io/component-base/logs).

export interface LoggingOptions {
  /** -v / --v: the verbosity; 0 by default; 2 logs one line per request, as kube-apiserver's httplog does. */
  verbosity: number;
  /** --log-format: text (klog's header and key=value pairs; the default) or json. */
  format: 'text' | 'json';
}

export const DEFAULT_LOGGING_OPTIONS: LoggingOptions = { verbosity: 0, format: 'text' };
