// The server's auditing: the policy, the backends and kube's audit metrics, built at start from
// --audit-policy-file and the --audit-log-* / --audit-webhook-* flags. http/audit.ts asks it for a
// request's event and hands it each stage. Without a policy file there is no Auditor at all.
// Follows k8s.io/apiserver/pkg/server/options/audit.go (which backends, their modes) and
// pkg/endpoints/filters/audit.go (processAuditEvent) and pkg/audit/metrics.go.
import { Counter, type Registry } from 'prom-client';
import type { AuditLogOptions, AuditOptions } from './options.ts';
import { aggregateErrors } from '../go/errors.ts';
import { loadAuditPolicy, type AuditAttributes, type AuditLevel, type AuditPolicy, type AuditStage, type RequestAuditConfig } from './policy.ts';
import { AuditEvent, nowMicros, type EventSource } from './event.ts';
import { LogBackend, WebhookBackend, type AuditBackend } from './backends.ts';
import { loadWebhookKubeconfig, type WebhookClientConfig } from '../webhook/kubeconfig.ts';

/**
 * kube's audit metrics (pkg/audit/metrics.go), on the server's registry. The per-request counts
 * (events, levels) are plain numbers added to the counters when /metrics is read: a prom-client
 * inc() per event would cost more than the rest of a request's auditing.
 */
export class AuditMetrics {
  readonly errors: Counter<'plugin'>;
  readonly rejected: Counter;
  /** Events sent, and requests per level, since the last scrape. */
  events = 0;
  readonly levels: Record<AuditLevel, number> = { None: 0, Metadata: 0, Request: 0, RequestResponse: 0 };

  constructor(registry: Registry) {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const counts = this;
    new Counter({
      name: 'apiserver_audit_event_total',
      help: '[ALPHA] Counter of audit events generated and sent to the audit backend.',
      registers: [registry],
      collect() {
        this.inc(counts.events);
        counts.events = 0;
      },
    });
    this.errors = new Counter({ name: 'apiserver_audit_error_total', help: '[ALPHA] Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.', labelNames: ['plugin'], registers: [registry] });
    new Counter({
      name: 'apiserver_audit_level_total',
      help: '[ALPHA] Counter of policy levels for audit events (1 per request).',
      labelNames: ['level'],
      registers: [registry],
      collect() {
        for (const level of Object.keys(counts.levels) as AuditLevel[]) {
          if (!counts.levels[level]) continue;
          this.labels(level).inc(counts.levels[level]);
          counts.levels[level] = 0;
        }
      },
    });
    this.rejected = new Counter({ name: 'apiserver_audit_requests_rejected_total', help: '[ALPHA] Counter of apiserver requests rejected due to an error in audit logging backend.', registers: [registry] });
  }
}

/** The policy and the webhook's kubeconfig, read at start before anything is bound or written. */
export interface AuditSetup {
  policy: AuditPolicy;
  options: AuditOptions;
  webhookConfig?: WebhookClientConfig;
}

/** --audit-policy-file read and validated (kube's messages), or undefined: no auditing. */
export function readAuditSetup(options: AuditOptions | undefined): AuditSetup | undefined {
  const errors = auditLogOptionErrors(options?.log);
  // validateGroupVersionString: kube 1.36 knows audit.k8s.io/v1 alone.
  if (options?.webhook?.configFile && options.webhook.version !== 'audit.k8s.io/v1') errors.push('invalid group version, allowed versions are ["audit.k8s.io/v1"]');
  if (errors.length) throw new Error(aggregateErrors(errors));
  if (!options?.policyFile) return undefined;
  const policy = loadAuditPolicy(options.policyFile);
  return { policy, options, webhookConfig: options.webhook ? loadWebhookKubeconfig(options.webhook.configFile) : undefined };
}

/** AuditLogOptions.Validate's checks of the rotation flags (when a log path is given). */
function auditLogOptionErrors(log: AuditLogOptions | undefined): string[] {
  if (!log?.path) return [];
  const errors: string[] = [];
  if (log.maxAgeDays < 0) errors.push(`--audit-log-maxage ${log.maxAgeDays} can't be a negative number`);
  if (log.maxBackups < 0) errors.push(`--audit-log-maxbackup ${log.maxBackups} can't be a negative number`);
  if (log.maxSizeMegabytes < 0) errors.push(`--audit-log-maxsize ${log.maxSizeMegabytes} can't be a negative number`);
  return errors;
}

export class Auditor {
  private readonly backends: AuditBackend[] = [];

  private readonly policy: AuditPolicy;

  constructor(
    setup: AuditSetup,
    private readonly metrics: AuditMetrics,
    log: (line: string) => void,
    userAgent: string,
  ) {
    const onError = (plugin: string, message: string, events: number) => {
      metrics.errors.labels(plugin).inc(events);
      log(`error: audit: ${plugin}: ${message} (${events} event${events === 1 ? '' : 's'} lost)`);
    };
    this.policy = setup.policy;
    const { log: logOptions, webhook } = setup.options;
    if (logOptions) this.backends.push(new LogBackend(logOptions, onError));
    if (webhook && setup.webhookConfig) this.backends.push(new WebhookBackend(webhook, setup.webhookConfig, onError, userAgent));
  }

  /** The policy's answer for a request, counted in apiserver_audit_level_total. */
  evaluate(attrs: AuditAttributes): RequestAuditConfig {
    const config = this.policy.evaluate(attrs);
    this.metrics.levels[config.level]++;
    return config;
  }

  /** A new event for a request audited at config's level (above None). */
  newEvent(config: RequestAuditConfig, src: EventSource, receivedMicros: number): AuditEvent {
    return new AuditEvent(config, src, receivedMicros);
  }

  /**
   * processAuditEvent: the event at `stage`, unless omitted, stamped and serialized once for every
   * backend. false when a blocking-strict backend failed; a promise only for a blocking webhook.
   */
  process(ev: AuditEvent, stage: AuditStage): boolean | Promise<boolean> {
    if (!ev.sends(stage)) return true;
    ev.stage = stage;
    ev.stageMicros = stage === 'RequestReceived' ? ev.requestReceivedMicros : nowMicros();
    this.metrics.events++;
    const json = ev.json();
    let ok = true;
    let pending: Promise<boolean>[] | undefined;
    for (const b of this.backends) {
      const r = b.processEvent(ev, json);
      if (r === false) ok = false;
      else if (r !== true) (pending ??= []).push(r);
    }
    if (!pending) return ok;
    if (ok && pending.length === 1) return pending[0];
    return Promise.all(pending).then((all) => ok && all.every(Boolean));
  }

  /** A request refused because its RequestReceived event could not be stored. */
  countRejected(): void {
    this.metrics.rejected.inc();
  }

  /** Sends what the backends buffer (the server's stop). */
  async shutdown(): Promise<void> {
    await Promise.all(this.backends.map((b) => b.shutdown()));
  }
}
