// What the command line sets for audit: kube-apiserver's --audit-policy-file, --audit-log-* and
// --audit-webhook-* flags, with kube's defaults (k8s.io/apiserver/pkg/server/options/audit.go).

export interface AuditLogOptions {
  /** --audit-log-path: the file events are written to, one JSON line each; `-` is stdout. */
  path: string;
  /** --audit-log-maxage: days to keep rotated files (0: no limit by age). */
  maxAgeDays: number;
  /** --audit-log-maxbackup: rotated files to keep (0: no limit by count). */
  maxBackups: number;
  /** --audit-log-maxsize: megabytes before the file is rotated (0: never). */
  maxSizeMegabytes: number;
  /** --audit-log-format: json (the default) or legacy. */
  format: 'json' | 'legacy';
  /** --audit-log-mode: blocking (the default), batch or blocking-strict. */
  mode: 'blocking' | 'batch' | 'blocking-strict';
}

export interface AuditWebhookOptions {
  /** --audit-webhook-config-file: a kubeconfig naming the remote audit sink. */
  configFile: string;
  /** --audit-webhook-mode: batch (the default), blocking or blocking-strict. */
  mode: 'blocking' | 'batch' | 'blocking-strict';
  /** --audit-webhook-batch-max-size (default 400 events). */
  batchMaxSize: number;
  /** --audit-webhook-batch-max-wait (default 30s). */
  batchMaxWaitMs: number;
  /** --audit-webhook-batch-buffer-size (default 10000 events). */
  batchBufferSize: number;
  /** --audit-webhook-initial-backoff (default 10s). */
  initialBackoffMs: number;
  /** --audit-webhook-version (default audit.k8s.io/v1). */
  version: string;
}

export interface AuditOptions {
  /** --audit-policy-file: an audit.k8s.io/v1 Policy; without it nothing is audited. */
  policyFile?: string;
  log?: AuditLogOptions;
  webhook?: AuditWebhookOptions;
}

export const DEFAULT_AUDIT_LOG_OPTIONS: Omit<AuditLogOptions, 'path'> = { maxAgeDays: 0, maxBackups: 0, maxSizeMegabytes: 0, format: 'json', mode: 'blocking' };
export const DEFAULT_AUDIT_WEBHOOK_OPTIONS: Omit<AuditWebhookOptions, 'configFile'> = { mode: 'batch', batchMaxSize: 400, batchMaxWaitMs: 30_000, batchBufferSize: 10_000, initialBackoffMs: 10_000, version: 'audit.k8s.io/v1' };
