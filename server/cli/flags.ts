// hearth's command line: every flag in one table (FLAGS) that both parsing and `--help` read,
// named as kube-apiserver names them where one exists; `--help` is laid out as kube components'
// (sections of pflag's FlagUsages: `--name type   meaning (default x)`). main.ts starts the server
// with what parseFlags returns.
import { resolve } from 'node:path';
import { parseDuration } from '../storage/log/compactor.ts';
import { goDuration, parseGoDuration } from '../go/time.ts';
import { DEFAULT_SERVICE_CLUSTER_IP_RANGE, DEFAULT_SERVICE_NODE_PORT_RANGE, parseServiceClusterIPRange, parseServiceNodePortRange } from '../registry/kinds/core/services/ranges.ts';
import { DEFAULT_AUTHORIZATION_MODES } from '../authorization/modes.ts';
import { DEFAULT_SERVICE_ACCOUNT_ISSUER } from '../authentication/service-account-token.ts';
import { DEFAULT_SNAPSHOT_RETENTION } from '../storage/backup/snapshot-schedule.ts';
import type { Http2Implementation } from '../http/listener.ts';
import { controllerSelectionErrors } from '../controllers/selection.ts';
import { servedKubernetesVersion } from '../schema/catalog.ts';
import { DEFAULT_FLOW_CONTROL_OPTIONS, type FlowControlOptions } from '../flowcontrol/options.ts';
import { DEFAULT_AUDIT_LOG_OPTIONS, DEFAULT_AUDIT_WEBHOOK_OPTIONS, type AuditLogOptions, type AuditWebhookOptions } from '../audit/options.ts';
import { DEFAULT_LOGGING_OPTIONS, type LoggingOptions } from '../logging/options.ts';

/** The data-directory subcommands (cli/ops.ts). */
export const OPS_COMMANDS = ['backup', 'restore', 'snapshots'];
/** --http2-implementation's values (http/listener.ts, which a subcommand does not load). */
const HTTP2_IMPLEMENTATIONS: readonly Http2Implementation[] = ['hearth', 'node'];

export interface Flags {
  dataDir: string;
  securePort: number;
  bindAddress: string;
  tlsSans: string[];
  anonymousAuth: boolean;
  /** Whether --anonymous-auth was given (kube refuses it beside the config file's anonymous section). */
  anonymousAuthSet?: boolean;
  tokenAuthFile?: string;
  authenticationTokenWebhookConfigFile?: string;
  authenticationTokenWebhookVersion?: string;
  authenticationTokenWebhookCacheTtlMs?: number;
  clientCaFile?: string;
  enableBootstrapTokenAuth: boolean;
  /** kube's --requestheader-* flags (the authenticating proxy). */
  requestHeaderClientCaFile?: string;
  requestHeaderAllowedNames?: string[];
  requestHeaderUsernameHeaders?: string[];
  requestHeaderUidHeaders?: string[];
  requestHeaderGroupHeaders?: string[];
  requestHeaderExtraHeadersPrefix?: string[];
  authenticationConfigFile?: string;
  /** The --oidc-* flags given (kube's OIDCAuthenticationOptions). */
  oidc: { issuerURL?: string; clientID?: string; caFile?: string; usernameClaim?: string; usernamePrefix?: string; groupsClaim?: string; groupsPrefix?: string; signingAlgs?: string[]; requiredClaims?: Record<string, string> };
  /** kube-apiserver's --authorization-mode (a comma list; repeated flags add to it). */
  authorizationModes?: string[];
  /** kube-apiserver's --authorization-config (an AuthorizationConfiguration file). */
  authorizationConfigFile?: string;
  /** kube-apiserver's --authorization-webhook-config-file, -version, -cache-authorized-ttl, -cache-unauthorized-ttl. */
  authorizationWebhookConfigFile?: string;
  authorizationWebhookVersion?: string;
  authorizationWebhookCacheAuthorizedTtlMs?: number;
  authorizationWebhookCacheUnauthorizedTtlMs?: number;
  compactionIntervalMs: number;
  eventTtlMs: number;
  /** kube-apiserver's --enable-admission-plugins. */
  enableAdmissionPlugins?: string[];
  /** kube-apiserver's --disable-admission-plugins. */
  disableAdmissionPlugins?: string[];
  /** kube-apiserver's --admission-control-config-file. */
  admissionControlConfigFile?: string;
  /** kube-apiserver's --default-not-ready-toleration-seconds and --default-unreachable-toleration-seconds (DefaultTolerationSeconds). */
  defaultNotReadyTolerationSeconds?: number;
  defaultUnreachableTolerationSeconds?: number;
  /** kube-controller-manager's --controllers, for the in-process controllers it names. */
  controllers?: string[];
  serviceClusterIPRange?: string;
  serviceNodePortRange?: string;
  initialize: boolean;
  snapshotIntervalMs: number;
  snapshotRetention: number;
  http2Implementation: Http2Implementation;
  serviceAccountIssuers: string[];
  serviceAccountSigningKeyFile?: string;
  serviceAccountKeyFiles: string[];
  serviceAccountJwksUri?: string;
  apiAudiences: string[];
  serviceAccountMaxTokenExpirationSeconds: number;
  serviceAccountExtendTokenExpiration: boolean;
  /** kube-controller-manager's --legacy-service-account-token-clean-up-period. */
  legacyServiceAccountTokenCleanUpPeriodMs?: number;
  flowControl: FlowControlOptions;
  auditPolicyFile?: string;
  /** The --audit-log-* flags (a log is written only when --audit-log-path is given). */
  auditLog: Partial<AuditLogOptions>;
  /** The --audit-webhook-* flags (a webhook is called only when --audit-webhook-config-file is given). */
  auditWebhook: Partial<AuditWebhookOptions>;
  logging: LoggingOptions;
}

/**
 * One occurrence of a flag on the command line: its value (`--flag=value`, else the next word),
 * read as pflag reads the flag's type, with pflag's words for what it refuses.
 */
class FlagValue {
  constructor(
    /** The flag as written (`--secure-port`, `-v`). */
    readonly name: string,
    /** What followed `=`, if anything. */
    readonly inline: string | undefined,
    /** Takes the next word of the command line. */
    private readonly next: () => string | undefined,
  ) {}

  string(): string {
    if (this.inline !== undefined) return this.inline;
    const v = this.next();
    if (v === undefined) fail(`flag ${this.name} needs a value`);
    return v;
  }

  /** A bool flag: `--flag` or `--flag=true|false` (never the next word). */
  bool(): boolean {
    return (this.inline ?? 'true') !== 'false';
  }

  /** pflag's string slices: comma-separated, a repeated flag adds to the list, "" is an empty list. */
  list(current: string[] | undefined): string[] {
    const v = this.string();
    return [...(current ?? []), ...(v === '' ? [] : v.split(','))];
  }

  /** hearth's durations (compactor.ts parseDuration: Go's syntax or plain seconds), in milliseconds. */
  duration(): number {
    try {
      return parseDuration(this.string());
    } catch (e) {
      fail((e as Error).message);
    }
  }

  /** A Go int flag: pflag's words for what strconv.ParseInt refuses. */
  int(): number {
    const v = this.string();
    if (!/^[+-]?\d+$/.test(v)) fail(`invalid argument ${JSON.stringify(v)} for "${this.name}" flag: strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
    return Number(v);
  }

  /** A Go duration flag, as pflag reads it, in milliseconds. */
  goDuration(): number {
    const v = this.string();
    const ns = parseGoDuration(v);
    if (typeof ns === 'string') fail(`invalid argument ${JSON.stringify(v)} for "${this.name}" flag: ${ns}`);
    return ns / 1e6;
  }

  oneOf<T extends string>(allowed: readonly T[]): T {
    const v = this.string();
    if (!(allowed as readonly string[]).includes(v)) fail(`invalid argument ${JSON.stringify(v)} for "${this.name}" flag: must be one of ${allowed.join(', ')}`);
    return v as T;
  }
}

/**
 * A flag: how `--help` shows it (pflag's FlagUsages: name, value type, meaning, default) and what
 * it sets. `type` is pflag's word for the value ('' for a bool); `default` is shown as pflag
 * shows a non-zero default (strings quoted, durations as Go prints them), '' when there is none.
 */
export interface FlagSpec {
  name: string;
  /** Other spellings (`--v` for `-v`, `-h` for `--help`). */
  aliases?: string[];
  type: string;
  default: string;
  usage: string;
  /** kube's section of `--help` the flag belongs in. */
  section: string;
  parse(value: FlagValue, flags: Flags): void;
}

const S_GENERIC = 'Generic flags';
const S_STORAGE = 'Storage flags';
const S_SERVING = 'Secure serving flags';
const S_AUTHN = 'Authentication flags';
const S_AUTHZ = 'Authorization flags';
const S_ADMISSION = 'Admission flags';
const S_AUDIT = 'Auditing flags';
const S_SA = 'Service account flags';
const S_CONTROLLERS = 'Controller flags';
const S_LOGS = 'Logs flags';
const S_GLOBAL = 'Global flags';

const quoted = (s: string) => JSON.stringify(s);
const INITIAL_FLAGS = (): Flags => ({ dataDir: './data', securePort: 6443, bindAddress: '127.0.0.1', tlsSans: [], anonymousAuth: true, enableBootstrapTokenAuth: true, oidc: {}, compactionIntervalMs: 5 * 60_000, eventTtlMs: 60 * 60_000, initialize: false, snapshotIntervalMs: 0, snapshotRetention: DEFAULT_SNAPSHOT_RETENTION, http2Implementation: 'hearth', serviceAccountIssuers: [], serviceAccountKeyFiles: [], apiAudiences: [], serviceAccountMaxTokenExpirationSeconds: 0, serviceAccountExtendTokenExpiration: true, flowControl: { ...DEFAULT_FLOW_CONTROL_OPTIONS }, auditLog: {}, auditWebhook: {}, logging: { ...DEFAULT_LOGGING_OPTIONS } });
const D = INITIAL_FLAGS();
const FC = DEFAULT_FLOW_CONTROL_OPTIONS;
const AL = DEFAULT_AUDIT_LOG_OPTIONS;
const AW = DEFAULT_AUDIT_WEBHOOK_OPTIONS;

/** Every flag hearth takes: parseFlags reads them from here, and `--help` lists them from here. */
export const FLAGS: readonly FlagSpec[] = [
  // Storage
  { name: '--data-dir', type: 'string', default: quoted(D.dataDir), section: S_STORAGE, usage: 'The directory of the cluster: the SQLite store, pki/, admin.kubeconfig and snapshots/.', parse: (v, f) => void (f.dataDir = v.string()) },
  { name: '--initialize', type: '', default: '', section: S_STORAGE, usage: 'Create an empty store even though the data directory already holds a cluster\'s credentials.', parse: (v, f) => void (f.initialize = v.bool()) },
  { name: '--compaction-interval', type: 'duration', default: goDuration(D.compactionIntervalMs), section: S_STORAGE, usage: 'The interval of compaction requests: history older than about one interval is removed (0 disables).', parse: (v, f) => void (f.compactionIntervalMs = v.duration()) },
  { name: '--snapshot-interval', type: 'duration', default: '', section: S_STORAGE, usage: 'How often a snapshot of the store is written into DATA_DIR/snapshots/ (0 takes none).', parse: (v, f) => void (f.snapshotIntervalMs = v.duration()) },
  {
    name: '--snapshot-retention', type: 'int', default: String(D.snapshotRetention), section: S_STORAGE, usage: 'How many scheduled snapshots are kept.',
    parse: (v, f) => {
      const n = Number(v.string());
      if (!Number.isInteger(n) || n < 1) fail('--snapshot-retention must be a whole number of at least 1');
      f.snapshotRetention = n;
    },
  },
  { name: '--event-ttl', type: 'duration', default: goDuration(D.eventTtlMs), section: S_STORAGE, usage: 'Amount of time to retain events (0 keeps them).', parse: (v, f) => void (f.eventTtlMs = v.duration()) },
  // Secure serving
  {
    name: '--secure-port', type: 'int', default: String(D.securePort), section: S_SERVING, usage: 'The port on which to serve HTTPS with authentication and authorization (0 picks a free one).',
    parse: (v, f) => {
      const p = Number(v.string());
      if (!Number.isInteger(p) || p < 0 || p > 65535) fail(`--secure-port must be a port number`);
      f.securePort = p;
    },
  },
  { name: '--bind-address', type: 'string', default: quoted(D.bindAddress), section: S_SERVING, usage: 'The IP address on which to listen for the --secure-port port (0.0.0.0 or :: for all interfaces).', parse: (v, f) => void (f.bindAddress = v.string()) },
  { name: '--tls-san', type: 'stringArray', default: '', section: S_SERVING, usage: 'An extra DNS name or IP address for the serving certificate (repeatable).', parse: (v, f) => void f.tlsSans.push(v.string()) },
  {
    // hearth's own HTTP/2 (the default: about 3× lower watch delivery latency than node:http2
    // at 1,000 watchers), or Node's node:http2 to fall back on. kube-apiserver has no such
    // flag (Go's GODEBUG=http2server=0 turns its HTTP/2 off); the name follows its --http2-* ones.
    name: '--http2-implementation', type: 'string', default: quoted(D.http2Implementation), section: S_SERVING, usage: `Which HTTP/2 serves h2 connections: ${HTTP2_IMPLEMENTATIONS.join(' or ')}.`,
    parse: (v, f) => {
      const impl = v.string();
      if (!(HTTP2_IMPLEMENTATIONS as readonly string[]).includes(impl)) fail(`--http2-implementation must be one of ${HTTP2_IMPLEMENTATIONS.join(', ')}`);
      f.http2Implementation = impl as Http2Implementation;
    },
  },
  // Generic (kube-apiserver's section for the request limits and service ranges)
  { name: '--enable-priority-and-fairness', type: '', default: String(FC.enablePriorityAndFairness), section: S_GENERIC, usage: 'API Priority and Fairness: requests are classified by FlowSchemas and share the concurrency limit by priority level, queued fairly; false applies the two max-inflight limits instead.', parse: (v, f) => void (f.flowControl.enablePriorityAndFairness = v.bool()) },
  { name: '--max-requests-inflight', type: 'int', default: String(FC.maxRequestsInflight), section: S_GENERIC, usage: 'The maximum number of non-mutating requests in flight at a given time (with priority and fairness: part of the server\'s total concurrency limit).', parse: (v, f) => void (f.flowControl.maxRequestsInflight = v.int()) },
  { name: '--max-mutating-requests-inflight', type: 'int', default: String(FC.maxMutatingRequestsInflight), section: S_GENERIC, usage: 'The maximum number of mutating requests in flight at a given time (with priority and fairness: the rest of the total concurrency limit).', parse: (v, f) => void (f.flowControl.maxMutatingRequestsInflight = v.int()) },
  { name: '--request-timeout', type: 'duration', default: goDuration(FC.requestTimeoutMs), section: S_GENERIC, usage: 'How long a handler must keep a request open before timing it out (not long-running requests such as watches).', parse: (v, f) => void (f.flowControl.requestTimeoutMs = v.goDuration()) },
  { name: '--service-cluster-ip-range', type: 'string', default: quoted(DEFAULT_SERVICE_CLUSTER_IP_RANGE), section: S_GENERIC, usage: 'A CIDR (or two, comma-separated, one per IP family) from which to assign service cluster IPs.', parse: (v, f) => void (f.serviceClusterIPRange = v.string()) },
  { name: '--service-node-port-range', type: 'portRange', default: DEFAULT_SERVICE_NODE_PORT_RANGE, section: S_GENERIC, usage: 'A port range to reserve for services with NodePort visibility (inclusive at both ends).', parse: (v, f) => void (f.serviceNodePortRange = v.string()) },
  // Authentication
  { name: '--anonymous-auth', type: '', default: 'true', section: S_AUTHN, usage: 'Enables anonymous requests: requests not rejected by another authentication method are treated as system:anonymous.', parse: (v, f) => void ((f.anonymousAuth = v.bool()), (f.anonymousAuthSet = true)) },
  { name: '--token-auth-file', type: 'string', default: '', section: S_AUTHN, usage: 'If set, the file that will be used to secure the secure port of the API server via token authentication (CSV: token,user,uid,"group1,group2").', parse: (v, f) => void (f.tokenAuthFile = v.string()) },
  { name: '--client-ca-file', type: 'string', default: '', section: S_AUTHN, usage: 'Any request presenting a client certificate signed by one of the authorities in this bundle is authenticated (besides hearth\'s own CA).', parse: (v, f) => void (f.clientCaFile = v.string()) },
  { name: '--enable-bootstrap-token-auth', type: '', default: String(D.enableBootstrapTokenAuth), section: S_AUTHN, usage: 'Enable to allow secrets of type bootstrap.kubernetes.io/token in kube-system to be used for TLS bootstrapping authentication.', parse: (v, f) => void (f.enableBootstrapTokenAuth = v.bool()) },
  { name: '--authentication-token-webhook-config-file', type: 'string', default: '', section: S_AUTHN, usage: 'File with webhook configuration for token authentication in kubeconfig format.', parse: (v, f) => void (f.authenticationTokenWebhookConfigFile = v.string()) },
  { name: '--authentication-token-webhook-version', type: 'string', default: quoted('v1beta1'), section: S_AUTHN, usage: 'The API version of the authentication.k8s.io TokenReview to send to and expect from the webhook.', parse: (v, f) => void (f.authenticationTokenWebhookVersion = v.string()) },
  { name: '--authentication-token-webhook-cache-ttl', type: 'duration', default: '2m0s', section: S_AUTHN, usage: 'The duration to cache responses from the webhook token authenticator.', parse: (v, f) => void (f.authenticationTokenWebhookCacheTtlMs = Math.max(0, v.goDuration())) },
  { name: '--authentication-config', type: 'string', default: '', section: S_AUTHN, usage: 'File with Authentication Configuration to configure the JWT token authenticator or the anonymous authenticator (reloaded when it changes).', parse: (v, f) => void (f.authenticationConfigFile = resolve(v.string())) },
  { name: '--oidc-issuer-url', type: 'string', default: '', section: S_AUTHN, usage: 'The URL of the OpenID issuer, only HTTPS scheme will be accepted; if set, it verifies the OpenID Connect ID Token.', parse: (v, f) => void (f.oidc.issuerURL = v.string()) },
  { name: '--oidc-client-id', type: 'string', default: '', section: S_AUTHN, usage: 'The client ID for the OpenID Connect client, must be set if oidc-issuer-url is set.', parse: (v, f) => void (f.oidc.clientID = v.string()) },
  { name: '--oidc-ca-file', type: 'string', default: '', section: S_AUTHN, usage: 'If set, the OpenID server\'s certificate will be verified by one of the authorities in the oidc-ca-file, otherwise the host\'s root CAs.', parse: (v, f) => void (f.oidc.caFile = v.string()) },
  { name: '--oidc-username-claim', type: 'string', default: quoted('sub'), section: S_AUTHN, usage: 'The OpenID claim to use as the user name.', parse: (v, f) => void (f.oidc.usernameClaim = v.string()) },
  { name: '--oidc-username-prefix', type: 'string', default: '', section: S_AUTHN, usage: 'If provided, all usernames will be prefixed with this value ("-" disables prefixing).', parse: (v, f) => void (f.oidc.usernamePrefix = v.string()) },
  { name: '--oidc-groups-claim', type: 'string', default: '', section: S_AUTHN, usage: 'If provided, the name of a custom OpenID Connect claim for specifying user groups.', parse: (v, f) => void (f.oidc.groupsClaim = v.string()) },
  { name: '--oidc-groups-prefix', type: 'string', default: '', section: S_AUTHN, usage: 'If provided, all groups will be prefixed with this value to prevent conflicts with other authentication strategies.', parse: (v, f) => void (f.oidc.groupsPrefix = v.string()) },
  // pflag's StringSlice: the first use replaces the default, later ones append.
  { name: '--oidc-signing-algs', type: 'strings', default: '[RS256]', section: S_AUTHN, usage: 'Comma-separated list of allowed JOSE asymmetric signing algorithms.', parse: (v, f) => void (f.oidc.signingAlgs ??= []).push(...v.string().split(',').map((a) => a.trim())) },
  {
    name: '--oidc-required-claim', type: 'mapStringString', default: '', section: S_AUTHN, usage: 'A key=value pair that describes a required claim in the ID Token (repeatable).',
    parse: (v, f) => {
      // cliflag's MapStringStringNoSplit: one key=value a use, repeatable.
      const kv = v.string();
      const sep = kv.indexOf('=');
      if (sep < 0) fail(`invalid argument ${JSON.stringify(kv)} for "--oidc-required-claim" flag: malformed pair, expect string=string`);
      (f.oidc.requiredClaims ??= {})[kv.slice(0, sep).trim()] = kv.slice(sep + 1).trim();
    },
  },
  { name: '--requestheader-client-ca-file', type: 'string', default: '', section: S_AUTHN, usage: 'Root certificate bundle to use to verify client certificates on incoming requests before trusting usernames in headers specified by --requestheader-username-headers.', parse: (v, f) => void (f.requestHeaderClientCaFile = v.string()) },
  { name: '--requestheader-allowed-names', type: 'strings', default: '', section: S_AUTHN, usage: 'List of client certificate common names to allow to provide usernames in headers (empty: any certificate the CA verifies).', parse: (v, f) => void (f.requestHeaderAllowedNames = v.list(f.requestHeaderAllowedNames)) },
  { name: '--requestheader-username-headers', type: 'strings', default: '', section: S_AUTHN, usage: 'List of request headers to inspect for usernames. X-Remote-User is common.', parse: (v, f) => void (f.requestHeaderUsernameHeaders = v.list(f.requestHeaderUsernameHeaders)) },
  { name: '--requestheader-uid-headers', type: 'strings', default: '', section: S_AUTHN, usage: 'List of request headers to inspect for UIDs. X-Remote-Uid is suggested.', parse: (v, f) => void (f.requestHeaderUidHeaders = v.list(f.requestHeaderUidHeaders)) },
  { name: '--requestheader-group-headers', type: 'strings', default: '', section: S_AUTHN, usage: 'List of request headers to inspect for groups. X-Remote-Group is suggested.', parse: (v, f) => void (f.requestHeaderGroupHeaders = v.list(f.requestHeaderGroupHeaders)) },
  { name: '--requestheader-extra-headers-prefix', type: 'strings', default: '', section: S_AUTHN, usage: 'List of request header prefixes to inspect. X-Remote-Extra- is suggested.', parse: (v, f) => void (f.requestHeaderExtraHeadersPrefix = v.list(f.requestHeaderExtraHeadersPrefix)) },
  // Authorization (pflag's string slice: values split at commas; kube checks them at start: server.ts)
  { name: '--authorization-mode', type: 'strings', default: `[${DEFAULT_AUTHORIZATION_MODES.join(',')}]`, section: S_AUTHZ, usage: 'Ordered list of plug-ins to do authorization on secure port (after system:masters); repeated flags add to it.', parse: (v, f) => void (f.authorizationModes = [...(f.authorizationModes ?? []), ...v.string().split(',').filter((m) => m !== '')]) },
  { name: '--authorization-config', type: 'string', default: '', section: S_AUTHZ, usage: 'File with Authorization Configuration to configure the authorizer chain (not with --authorization-mode; reloaded when it changes).', parse: (v, f) => void (f.authorizationConfigFile = v.string()) },
  { name: '--authorization-webhook-config-file', type: 'string', default: '', section: S_AUTHZ, usage: 'File with webhook configuration in kubeconfig format, used with --authorization-mode=Webhook.', parse: (v, f) => void (f.authorizationWebhookConfigFile = v.string()) },
  { name: '--authorization-webhook-version', type: 'string', default: quoted('v1beta1'), section: S_AUTHZ, usage: 'The API version of the authorization.k8s.io SubjectAccessReview to send to and expect from the webhook.', parse: (v, f) => void (f.authorizationWebhookVersion = v.string()) },
  { name: '--authorization-webhook-cache-authorized-ttl', type: 'duration', default: '5m0s', section: S_AUTHZ, usage: 'The duration to cache \'authorized\' responses from the webhook authorizer.', parse: (v, f) => void (f.authorizationWebhookCacheAuthorizedTtlMs = Math.max(0, v.goDuration())) },
  { name: '--authorization-webhook-cache-unauthorized-ttl', type: 'duration', default: '30s', section: S_AUTHZ, usage: 'The duration to cache \'unauthorized\' responses from the webhook authorizer.', parse: (v, f) => void (f.authorizationWebhookCacheUnauthorizedTtlMs = Math.max(0, v.goDuration())) },
  // Admission
  { name: '--enable-admission-plugins', type: 'strings', default: '', section: S_ADMISSION, usage: 'Admission plugins that should be enabled in addition to default enabled ones.', parse: (v, f) => void (f.enableAdmissionPlugins = v.string().split(',').map((c) => c.trim()).filter((c) => c !== '')) },
  { name: '--disable-admission-plugins', type: 'strings', default: '', section: S_ADMISSION, usage: 'Admission plugins that should be disabled although they are in the default enabled plugins list.', parse: (v, f) => void (f.disableAdmissionPlugins = v.string().split(',').map((c) => c.trim()).filter((c) => c !== '')) },
  { name: '--admission-control-config-file', type: 'string', default: '', section: S_ADMISSION, usage: 'File with admission control configuration.', parse: (v, f) => void (f.admissionControlConfigFile = v.string()) },
  { name: '--default-not-ready-toleration-seconds', type: 'int', default: '300', section: S_ADMISSION, usage: 'Indicates the tolerationSeconds of the toleration for notReady:NoExecute that is added by default to every pod that does not already have such a toleration.', parse: (v, f) => void (f.defaultNotReadyTolerationSeconds = v.int()) },
  { name: '--default-unreachable-toleration-seconds', type: 'int', default: '300', section: S_ADMISSION, usage: 'Indicates the tolerationSeconds of the toleration for unreachable:NoExecute that is added by default to every pod that does not already have such a toleration.', parse: (v, f) => void (f.defaultUnreachableTolerationSeconds = v.int()) },
  // Auditing
  { name: '--audit-policy-file', type: 'string', default: '', section: S_AUDIT, usage: 'Path to the file that defines the audit policy configuration.', parse: (v, f) => void (f.auditPolicyFile = resolve(v.string())) },
  {
    name: '--audit-log-path', type: 'string', default: '', section: S_AUDIT, usage: 'If set, all requests coming to the apiserver will be logged to this file. \'-\' means standard out.',
    parse: (v, f) => {
      const path = v.string();
      f.auditLog.path = path === '-' ? path : resolve(path);
    },
  },
  { name: '--audit-log-maxage', type: 'int', default: '', section: S_AUDIT, usage: 'The maximum number of days to retain old audit log files based on the timestamp encoded in their filename.', parse: (v, f) => void (f.auditLog.maxAgeDays = v.int()) },
  { name: '--audit-log-maxbackup', type: 'int', default: '', section: S_AUDIT, usage: 'The maximum number of old audit log files to retain (0: no limit).', parse: (v, f) => void (f.auditLog.maxBackups = v.int()) },
  { name: '--audit-log-maxsize', type: 'int', default: '', section: S_AUDIT, usage: 'The maximum size in megabytes of the audit log file before it gets rotated.', parse: (v, f) => void (f.auditLog.maxSizeMegabytes = v.int()) },
  { name: '--audit-log-format', type: 'string', default: quoted(AL.format), section: S_AUDIT, usage: 'Format of saved audits: "legacy" (1 line of text per event) or "json" (structured json).', parse: (v, f) => void (f.auditLog.format = v.oneOf(['json', 'legacy'] as const)) },
  { name: '--audit-log-mode', type: 'string', default: quoted(AL.mode), section: S_AUDIT, usage: 'Strategy for sending audit events: blocking, batch or blocking-strict.', parse: (v, f) => void (f.auditLog.mode = v.oneOf(['blocking', 'batch', 'blocking-strict'] as const)) },
  { name: '--audit-webhook-config-file', type: 'string', default: '', section: S_AUDIT, usage: 'Path to a kubeconfig formatted file that defines the audit webhook configuration.', parse: (v, f) => void (f.auditWebhook.configFile = resolve(v.string())) },
  { name: '--audit-webhook-mode', type: 'string', default: quoted(AW.mode), section: S_AUDIT, usage: 'Strategy for sending audit events to the webhook: blocking, batch or blocking-strict.', parse: (v, f) => void (f.auditWebhook.mode = v.oneOf(['blocking', 'batch', 'blocking-strict'] as const)) },
  { name: '--audit-webhook-batch-max-size', type: 'int', default: String(AW.batchMaxSize), section: S_AUDIT, usage: 'The maximum size of a batch (batch mode).', parse: (v, f) => void (f.auditWebhook.batchMaxSize = v.int()) },
  { name: '--audit-webhook-batch-max-wait', type: 'duration', default: goDuration(AW.batchMaxWaitMs), section: S_AUDIT, usage: 'The amount of time to wait before force writing the batch that hadn\'t reached the max size (batch mode).', parse: (v, f) => void (f.auditWebhook.batchMaxWaitMs = v.goDuration()) },
  { name: '--audit-webhook-batch-buffer-size', type: 'int', default: String(AW.batchBufferSize), section: S_AUDIT, usage: 'The size of the buffer to store events before batching and writing (batch mode).', parse: (v, f) => void (f.auditWebhook.batchBufferSize = v.int()) },
  { name: '--audit-webhook-initial-backoff', type: 'duration', default: goDuration(AW.initialBackoffMs), section: S_AUDIT, usage: 'The amount of time to wait before retrying the first failed request.', parse: (v, f) => void (f.auditWebhook.initialBackoffMs = v.goDuration()) },
  { name: '--audit-webhook-version', type: 'string', default: quoted(AW.version), section: S_AUDIT, usage: 'API group and version used for serializing audit events written to webhook.', parse: (v, f) => void (f.auditWebhook.version = v.string()) },
  // Service accounts
  {
    name: '--service-account-issuer', type: 'stringArray', default: quoted(DEFAULT_SERVICE_ACCOUNT_ISSUER), section: S_SA, usage: 'Identifier of the service account token issuer (repeatable: the first issues tokens, all are accepted).',
    parse: (v, f) => {
      // kube-apiserver's checks of the flag's values.
      const issuer = v.string();
      if (issuer === '') fail('service-account-issuer should not be an empty string');
      if (f.serviceAccountIssuers.includes(issuer)) fail(`service-account-issuer ${JSON.stringify(issuer)} is already specified`);
      f.serviceAccountIssuers.push(issuer);
    },
  },
  { name: '--service-account-signing-key-file', type: 'string', default: quoted('DATA_DIR/pki/sa.key'), section: S_SA, usage: 'Path to the file that contains the current private key of the service account token issuer (generated at first start).', parse: (v, f) => void (f.serviceAccountSigningKeyFile = resolve(v.string())) },
  { name: '--service-account-key-file', type: 'stringArray', default: '', section: S_SA, usage: 'File containing PEM-encoded public keys (or private ones) used to verify ServiceAccount tokens (repeatable; default: the signing key).', parse: (v, f) => void f.serviceAccountKeyFiles.push(resolve(v.string())) },
  { name: '--api-audiences', type: 'strings', default: '', section: S_SA, usage: 'Identifiers of the API: tokens without an audience of these are refused (default: the issuers).', parse: (v, f) => void f.apiAudiences.push(...v.string().split(',').filter(Boolean)) },
  {
    name: '--service-account-jwks-uri', type: 'string', default: '', section: S_SA, usage: 'Overrides the URI for the JSON Web Key Set in the discovery doc served at /.well-known/openid-configuration.',
    parse: (v, f) => {
      const uri = v.string();
      let parsed: URL;
      try {
        parsed = new URL(uri);
      } catch (e) {
        fail(`service-account-jwks-uri must be a valid URL: ${(e as Error).message}`);
      }
      if (parsed.protocol !== 'https:') fail(`service-account-jwks-uri requires https scheme, parsed as: ${uri}`);
      f.serviceAccountJwksUri = uri;
    },
  },
  {
    name: '--service-account-max-token-expiration', type: 'duration', default: '', section: S_SA, usage: 'The maximum validity duration of a token created by the service account token issuer (between 1h and 2^32 s; 0: no cap).',
    parse: (v, f) => {
      const seconds = Math.floor(v.duration() / 1000);
      // kube-apiserver's bounds for the flag (0 leaves tokens uncapped).
      if (seconds !== 0 && (seconds < 3600 || seconds > 2 ** 32)) fail('the service-account-max-token-expiration must be between 1 hour and 2^32 seconds');
      f.serviceAccountMaxTokenExpirationSeconds = seconds;
    },
  },
  { name: '--service-account-extend-token-expiration', type: '', default: String(D.serviceAccountExtendTokenExpiration), section: S_SA, usage: 'Turns on projected service account expiration extension during token generation (to a year for the default 1h tokens).', parse: (v, f) => void (f.serviceAccountExtendTokenExpiration = v.bool()) },
  {
    name: '--legacy-service-account-token-clean-up-period', type: 'duration', default: '8760h0m0s', section: S_SA, usage: 'The period of time since the last usage of a legacy service account token before it can be deleted (kube-controller-manager\'s).',
    parse: (v, f) => {
      const raw = v.string();
      let ms = 0;
      try {
        ms = parseDuration(raw);
      } catch (e) {
        fail((e as Error).message);
      }
      // (kube-controller-manager's cleaner refuses to start with none)
      if (!(ms > 0)) fail(`invalid CleanUpPeriod: ${raw}`);
      f.legacyServiceAccountTokenCleanUpPeriodMs = ms;
    },
  },
  // Controllers
  {
    name: '--controllers', type: 'strings', default: '[*]', section: S_CONTROLLERS, usage: 'kube-controller-manager\'s list of controllers to enable (\'*\' all on by default, \'foo\' on, \'-foo\' off) for the ones hearth runs in process.',
    parse: (v, f) => {
      f.controllers = v.string().split(',').map((c) => c.trim()).filter((c) => c !== '');
      const errs = controllerSelectionErrors(f.controllers);
      if (errs.length) fail(`--controllers: ${errs.join(', ')}`);
    },
  },
  // Logs
  { name: '-v', aliases: ['--v'], type: 'Level', default: '', section: S_LOGS, usage: 'number for the log level verbosity (2: one line per request)', parse: (v, f) => void (f.logging.verbosity = v.int()) },
  { name: '--log-format', type: 'string', default: quoted(DEFAULT_LOGGING_OPTIONS.format), section: S_LOGS, usage: 'Sets the log format. Permitted formats: "json", "text".', parse: (v, f) => void (f.logging.format = v.oneOf(['text', 'json'] as const)) },
  // Global
  {
    name: '--version', type: '', default: '', section: S_GLOBAL, usage: 'Print version information and quit.',
    parse: () => {
      // (kube components print their version this way: `Kubernetes v1.36.0`)
      console.log(`Kubernetes ${servedKubernetesVersion()}`);
      return process.exit(0);
    },
  },
  {
    name: '--help', aliases: ['-h'], type: '', default: '', section: S_GLOBAL, usage: 'help for hearth',
    parse: () => {
      console.log(helpText());
      return process.exit(0);
    },
  },
];

const FLAGS_BY_NAME = new Map<string, FlagSpec>(FLAGS.flatMap((spec) => [spec.name, ...(spec.aliases ?? [])].map((n) => [n, spec] as const)));

/**
 * `--help`: kube-apiserver's layout (a line of what it is, Usage, then the flags by section), each
 * flag as pflag's FlagUsages writes it: `      --name type   meaning (default x)`.
 */
export function helpText(): string {
  const left = (spec: FlagSpec) => {
    const all = [spec.name, ...(spec.aliases ?? [])];
    const short = all.find((n) => !n.startsWith('--'));
    const long = all.find((n) => n.startsWith('--'));
    const names = short ? `  ${short}, ${long}` : `      ${long}`;
    return spec.type ? `${names} ${spec.type}` : names;
  };
  // kube-apiserver's order of its sections, hearth's own among them.
  const sections = [S_GENERIC, S_STORAGE, S_SERVING, S_AUDIT, S_AUTHN, S_AUTHZ, S_SA, S_ADMISSION, S_CONTROLLERS, S_LOGS, S_GLOBAL];
  const out = [
    'hearth serves the Kubernetes API (kube-apiserver\'s, with the controllers of its cluster) from one SQLite file.',
    '',
    'Usage:',
    '  npm start -- [flags]',
    '  npm run backup|restore|snapshots -- --help',
  ];
  for (const section of sections) {
    out.push('', `${section}:`, '');
    // (each section is a pflag FlagSet of kube's: its meanings start in one column)
    const specs = FLAGS.filter((f) => f.section === section);
    const width = Math.max(...specs.map((spec) => left(spec).length));
    for (const spec of specs) {
      const defaulted = spec.default ? ` (default ${spec.default})` : '';
      out.push(`${left(spec).padEnd(width)}   ${spec.usage}${defaulted}`);
    }
  }
  return out.join('\n');
}

export function parseFlags(argv: string[]): Flags {
  const flags = INITIAL_FLAGS();
  for (let i = 0; i < argv.length; i++) {
    let name = argv[i];
    let inline: string | undefined;
    const eq = name.indexOf('=');
    if (eq > 0) {
      inline = name.slice(eq + 1);
      name = name.slice(0, eq);
    }
    const spec = FLAGS_BY_NAME.get(name);
    if (!spec) fail(`unknown flag: ${argv[i]}`);
    spec.parse(new FlagValue(name, inline, () => argv[++i]), flags);
  }
  checkServiceRanges(flags);
  return flags;
}

/** The service ranges are checked at start, as kube-apiserver checks them, before anything is written. */
function checkServiceRanges(flags: Flags): void {
  const { serviceClusterIPRange: ips, serviceNodePortRange: ports } = flags;
  try {
    if (ips !== undefined) parseServiceClusterIPRange(ips);
  } catch (e) {
    fail((e as Error).message);
  }
  try {
    if (ports !== undefined) parseServiceNodePortRange(ports);
  } catch (e) {
    // (pflag's wording for a value its type refuses)
    fail(`invalid argument ${JSON.stringify(ports)} for "--service-node-port-range" flag: ${(e as Error).message}`);
  }
}

function fail(msg: string): never {
  console.error(`hearth: ${msg}\nRun 'npm start -- --help' for the flags.`);
  process.exit(2);
}

