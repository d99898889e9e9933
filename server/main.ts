// hearth's command line: flags named as kube-apiserver names them where one exists, and the
// data-directory subcommands (backup, restore, snapshots: cli/ops.ts).
// `npm start` also sets node's memory options (package.json; why: bench/bench-kit.ts startCommand).
import { resolve } from 'node:path';
import { parseDuration } from './storage/log/compactor.ts';
import { parseGoDuration } from './go/time.ts';
import { parseServiceClusterIPRange, parseServiceNodePortRange } from './registry/kinds/core/services/ranges.ts';
import { DEFAULT_SNAPSHOT_RETENTION } from './storage/backup/snapshot-schedule.ts';
import type { Http2Implementation } from './http/listener.ts';
import { controllerSelectionErrors } from './controllers/selection.ts';
import { servedKubernetesVersion } from './schema/catalog.ts';
import { DEFAULT_FLOW_CONTROL_OPTIONS, type FlowControlOptions } from './flowcontrol/options.ts';
import { DEFAULT_AUDIT_LOG_OPTIONS, DEFAULT_AUDIT_WEBHOOK_OPTIONS, type AuditLogOptions, type AuditWebhookOptions } from './audit/options.ts';
import { DEFAULT_LOGGING_OPTIONS, type LoggingOptions } from './logging/options.ts';

/** The data-directory subcommands (cli/ops.ts). */
const OPS_COMMANDS = ['backup', 'restore', 'snapshots'];
/** --http2-implementation's values (http/listener.ts, which a subcommand does not load). */
const HTTP2_IMPLEMENTATIONS: readonly Http2Implementation[] = ['hearth', 'node'];

interface Flags {
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

const USAGE = [
  'usage: npm start --',
  '    [--data-dir DIR]',
  '    [--secure-port PORT]',
  '    [--bind-address ADDR]',
  '    [--tls-san NAME_OR_IP]...',
  '    [--anonymous-auth=false]',
  '    [--token-auth-file FILE]',
  '    [--authentication-token-webhook-config-file FILE]',
  '    [--authentication-token-webhook-version v1beta1|v1]',
  '    [--authentication-token-webhook-cache-ttl 2m]',
  '    [--client-ca-file FILE]',
  '    [--authorization-mode Node,RBAC,...]',
  '    [--authorization-webhook-config-file FILE]',
  '    [--authorization-webhook-version v1beta1|v1]',
  '    [--authorization-webhook-cache-authorized-ttl 5m]',
  '    [--authorization-webhook-cache-unauthorized-ttl 30s]',
  '    [--authorization-config FILE]',
  '    [--authentication-config FILE]',
  '    [--oidc-issuer-url URL --oidc-client-id ID [--oidc-ca-file FILE] [--oidc-username-claim sub] [--oidc-username-prefix P] [--oidc-groups-claim C] [--oidc-groups-prefix P] [--oidc-signing-algs RS256,...] [--oidc-required-claim K=V]...]',
  '    [--requestheader-client-ca-file FILE]',
  '    [--requestheader-allowed-names CN,...]',
  '    [--requestheader-username-headers H,...]',
  '    [--requestheader-uid-headers H,...]',
  '    [--requestheader-group-headers H,...]',
  '    [--requestheader-extra-headers-prefix P,...]',
  '    [--enable-bootstrap-token-auth=false]',
  '    [--compaction-interval 5m]',
  '    [--event-ttl 1h]',
  '    [--controllers \'*\']',
  '    [--enable-admission-plugins NAME,...]',
  '    [--disable-admission-plugins NAME,...]',
  '    [--admission-control-config-file FILE]',
  '    [--default-not-ready-toleration-seconds 300]',
  '    [--default-unreachable-toleration-seconds 300]',
  '    [--service-cluster-ip-range 10.96.0.0/12[,fd00::/108]]',
  '    [--service-node-port-range 30000-32767]',
  '    [--snapshot-interval 12h]',
  '    [--snapshot-retention 5]',
  '    [--http2-implementation hearth|node]',
  '    [--service-account-issuer URL]...',
  '    [--service-account-signing-key-file FILE]',
  '    [--service-account-key-file FILE]...',
  '    [--api-audiences A,B]',
  '    [--service-account-jwks-uri URL]',
  '    [--service-account-max-token-expiration 24h]',
  '    [--service-account-extend-token-expiration=false]',
  '    [--legacy-service-account-token-clean-up-period 8760h]',
  '    [--enable-priority-and-fairness=false]',
  '    [--max-requests-inflight 400]',
  '    [--max-mutating-requests-inflight 200]',
  '    [--request-timeout 1m0s]',
  '    [--audit-policy-file FILE]',
  '    [--audit-log-path FILE|-] [--audit-log-maxage DAYS] [--audit-log-maxbackup N] [--audit-log-maxsize MB] [--audit-log-format json|legacy] [--audit-log-mode blocking|batch|blocking-strict]',
  '    [--audit-webhook-config-file FILE] [--audit-webhook-mode batch|blocking|blocking-strict] [--audit-webhook-batch-max-size 400] [--audit-webhook-batch-max-wait 30s] [--audit-webhook-batch-buffer-size 10000] [--audit-webhook-initial-backoff 10s] [--audit-webhook-version audit.k8s.io/v1]',
  '    [-v 0] [--log-format text|json]',
  '    [--version]',
  '    [--initialize]',
  '   or: npm run backup|restore|snapshots -- --help',
].join('\n');

function parseFlags(argv: string[]): Flags {
  const flags: Flags = { dataDir: './data', securePort: 6443, bindAddress: '127.0.0.1', tlsSans: [], anonymousAuth: true, enableBootstrapTokenAuth: true, oidc: {}, compactionIntervalMs: 5 * 60_000, eventTtlMs: 60 * 60_000, initialize: false, snapshotIntervalMs: 0, snapshotRetention: DEFAULT_SNAPSHOT_RETENTION, http2Implementation: 'hearth', serviceAccountIssuers: [], serviceAccountKeyFiles: [], apiAudiences: [], serviceAccountMaxTokenExpirationSeconds: 0, serviceAccountExtendTokenExpiration: true, flowControl: { ...DEFAULT_FLOW_CONTROL_OPTIONS }, auditLog: {}, auditWebhook: {}, logging: { ...DEFAULT_LOGGING_OPTIONS } };
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let value: string | undefined;
    const eq = arg.indexOf('=');
    if (eq > 0) {
      value = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    const take = () => {
      if (value !== undefined) return value;
      const v = argv[++i];
      if (v === undefined) fail(`flag ${arg} needs a value`);
      return v;
    };
    // pflag's string slices: comma-separated, a repeated flag adds to the list, "" is an empty list.
    const takeList = (current: string[] | undefined) => {
      const v = take();
      return [...(current ?? []), ...(v === '' ? [] : v.split(','))];
    };
    const takeDuration = () => {
      try {
        return parseDuration(take());
      } catch (e) {
        fail((e as Error).message);
      }
    };
    // A Go int flag: pflag's words for what strconv.ParseInt refuses.
    const takeInt = () => {
      const v = take();
      if (!/^[+-]?\d+$/.test(v)) fail(`invalid argument ${JSON.stringify(v)} for "${arg}" flag: strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
      return Number(v);
    };
    // A Go duration flag, as pflag reads it, in milliseconds.
    const takeGoDuration = () => {
      const v = take();
      const ns = parseGoDuration(v);
      if (typeof ns === 'string') fail(`invalid argument ${JSON.stringify(v)} for "${arg}" flag: ${ns}`);
      return ns / 1e6;
    };
    const takeOneOf = <T extends string>(allowed: readonly T[]): T => {
      const v = take();
      if (!(allowed as readonly string[]).includes(v)) fail(`invalid argument ${JSON.stringify(v)} for "${arg}" flag: must be one of ${allowed.join(', ')}`);
      return v as T;
    };
    switch (arg) {
      case '--data-dir': flags.dataDir = take(); break;
      case '--secure-port': {
        const p = Number(take());
        if (!Number.isInteger(p) || p < 0 || p > 65535) fail(`--secure-port must be a port number`);
        flags.securePort = p;
        break;
      }
      case '--bind-address': flags.bindAddress = take(); break;
      case '--tls-san': flags.tlsSans.push(take()); break;
      case '--anonymous-auth': flags.anonymousAuth = (value ?? 'true') !== 'false'; flags.anonymousAuthSet = true; break;
      case '--token-auth-file': flags.tokenAuthFile = take(); break;
      case '--authentication-token-webhook-config-file': flags.authenticationTokenWebhookConfigFile = take(); break;
      case '--authentication-token-webhook-version': flags.authenticationTokenWebhookVersion = take(); break;
      case '--authentication-token-webhook-cache-ttl': {
        // A Go duration, as pflag reads it.
        const v = take();
        const ns = parseGoDuration(v);
        if (typeof ns === 'string') fail(`invalid argument ${JSON.stringify(v)} for "--authentication-token-webhook-cache-ttl" flag: ${ns}`);
        flags.authenticationTokenWebhookCacheTtlMs = Math.max(0, ns / 1e6);
        break;
      }
      case '--client-ca-file': flags.clientCaFile = take(); break;
      case '--enable-bootstrap-token-auth': flags.enableBootstrapTokenAuth = (value ?? 'true') !== 'false'; break;
      case '--requestheader-client-ca-file': flags.requestHeaderClientCaFile = take(); break;
      case '--requestheader-allowed-names': flags.requestHeaderAllowedNames = takeList(flags.requestHeaderAllowedNames); break;
      case '--requestheader-username-headers': flags.requestHeaderUsernameHeaders = takeList(flags.requestHeaderUsernameHeaders); break;
      case '--requestheader-uid-headers': flags.requestHeaderUidHeaders = takeList(flags.requestHeaderUidHeaders); break;
      case '--requestheader-group-headers': flags.requestHeaderGroupHeaders = takeList(flags.requestHeaderGroupHeaders); break;
      case '--requestheader-extra-headers-prefix': flags.requestHeaderExtraHeadersPrefix = takeList(flags.requestHeaderExtraHeadersPrefix); break;
      case '--authentication-config': flags.authenticationConfigFile = resolve(take()); break;
      case '--oidc-issuer-url': flags.oidc.issuerURL = take(); break;
      case '--oidc-client-id': flags.oidc.clientID = take(); break;
      case '--oidc-ca-file': flags.oidc.caFile = take(); break;
      case '--oidc-username-claim': flags.oidc.usernameClaim = take(); break;
      case '--oidc-username-prefix': flags.oidc.usernamePrefix = take(); break;
      case '--oidc-groups-claim': flags.oidc.groupsClaim = take(); break;
      case '--oidc-groups-prefix': flags.oidc.groupsPrefix = take(); break;
      // pflag's StringSlice: the first use replaces the default, later ones append.
      case '--oidc-signing-algs': (flags.oidc.signingAlgs ??= []).push(...take().split(',').map((a) => a.trim())); break;
      case '--oidc-required-claim': {
        // cliflag's MapStringStringNoSplit: one key=value a use, repeatable.
        const v = take();
        const sep = v.indexOf('=');
        if (sep < 0) fail(`invalid argument ${JSON.stringify(v)} for "--oidc-required-claim" flag: malformed pair, expect string=string`);
        (flags.oidc.requiredClaims ??= {})[v.slice(0, sep).trim()] = v.slice(sep + 1).trim();
        break;
      }
      // (pflag's string slice: values split at commas; kube checks them at start: server.ts.)
      case '--authorization-config': flags.authorizationConfigFile = take(); break;
      case '--authorization-mode': flags.authorizationModes = [...(flags.authorizationModes ?? []), ...take().split(',').filter((m) => m !== '')]; break;
      case '--authorization-webhook-config-file': flags.authorizationWebhookConfigFile = take(); break;
      case '--authorization-webhook-version': flags.authorizationWebhookVersion = take(); break;
      case '--authorization-webhook-cache-authorized-ttl':
      case '--authorization-webhook-cache-unauthorized-ttl': {
        // Go durations, as pflag reads them.
        const v = take();
        const ns = parseGoDuration(v);
        if (typeof ns === 'string') fail(`invalid argument ${JSON.stringify(v)} for "${arg}" flag: ${ns}`);
        if (arg === '--authorization-webhook-cache-authorized-ttl') flags.authorizationWebhookCacheAuthorizedTtlMs = Math.max(0, ns / 1e6);
        else flags.authorizationWebhookCacheUnauthorizedTtlMs = Math.max(0, ns / 1e6);
        break;
      }
      case '--initialize': flags.initialize = (value ?? 'true') !== 'false'; break;
      case '--service-cluster-ip-range': flags.serviceClusterIPRange = take(); break;
      case '--service-node-port-range': flags.serviceNodePortRange = take(); break;
      case '--compaction-interval': flags.compactionIntervalMs = takeDuration(); break;
      case '--event-ttl': flags.eventTtlMs = takeDuration(); break;
      case '--enable-admission-plugins': flags.enableAdmissionPlugins = take().split(',').map((c) => c.trim()).filter((c) => c !== ''); break;
      case '--disable-admission-plugins': flags.disableAdmissionPlugins = take().split(',').map((c) => c.trim()).filter((c) => c !== ''); break;
      case '--admission-control-config-file': flags.admissionControlConfigFile = take(); break;
      case '--controllers': {
        flags.controllers = take().split(',').map((c) => c.trim()).filter((c) => c !== '');
        const errs = controllerSelectionErrors(flags.controllers);
        if (errs.length) fail(`--controllers: ${errs.join(', ')}`);
        break;
      }
      case '--snapshot-interval': flags.snapshotIntervalMs = takeDuration(); break;
      case '--default-not-ready-toleration-seconds':
      case '--default-unreachable-toleration-seconds': {
        // A Go int64 flag: pflag's words for what strconv.ParseInt refuses.
        const v = take();
        if (!/^[+-]?\d+$/.test(v)) fail(`invalid argument ${JSON.stringify(v)} for "${arg}" flag: strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
        if (arg === '--default-not-ready-toleration-seconds') flags.defaultNotReadyTolerationSeconds = Number(v);
        else flags.defaultUnreachableTolerationSeconds = Number(v);
        break;
      }
      case '--snapshot-retention': {
        const n = Number(take());
        if (!Number.isInteger(n) || n < 1) fail('--snapshot-retention must be a whole number of at least 1');
        flags.snapshotRetention = n;
        break;
      }
      case '--http2-implementation': {
        // hearth's own HTTP/2 (the default: about 3× lower watch delivery latency than node:http2
        // at 1,000 watchers), or Node's node:http2 to fall back on. kube-apiserver has no such
        // flag (Go's GODEBUG=http2server=0 turns its HTTP/2 off); the name follows its --http2-* ones.
        const v = take();
        if (!(HTTP2_IMPLEMENTATIONS as readonly string[]).includes(v)) fail(`--http2-implementation must be one of ${HTTP2_IMPLEMENTATIONS.join(', ')}`);
        flags.http2Implementation = v as Http2Implementation;
        break;
      }
      case '--service-account-issuer': {
        // kube-apiserver's checks of the flag's values.
        const issuer = take();
        if (issuer === '') fail('service-account-issuer should not be an empty string');
        if (flags.serviceAccountIssuers.includes(issuer)) fail(`service-account-issuer ${JSON.stringify(issuer)} is already specified`);
        flags.serviceAccountIssuers.push(issuer);
        break;
      }
      case '--service-account-signing-key-file': flags.serviceAccountSigningKeyFile = resolve(take()); break;
      case '--service-account-key-file': flags.serviceAccountKeyFiles.push(resolve(take())); break;
      case '--api-audiences': flags.apiAudiences.push(...take().split(',').filter(Boolean)); break;
      case '--service-account-jwks-uri': {
        const v = take();
        let parsed: URL;
        try {
          parsed = new URL(v);
        } catch (e) {
          fail(`service-account-jwks-uri must be a valid URL: ${(e as Error).message}`);
        }
        if (parsed.protocol !== 'https:') fail(`service-account-jwks-uri requires https scheme, parsed as: ${v}`);
        flags.serviceAccountJwksUri = v;
        break;
      }
      case '--legacy-service-account-token-clean-up-period': {
        const raw = take();
        let ms = 0;
        try {
          ms = parseDuration(raw);
        } catch (e) {
          fail((e as Error).message);
        }
        // (kube-controller-manager's cleaner refuses to start with none)
        if (!(ms > 0)) fail(`invalid CleanUpPeriod: ${raw}`);
        flags.legacyServiceAccountTokenCleanUpPeriodMs = ms;
        break;
      }
      case '--service-account-extend-token-expiration': flags.serviceAccountExtendTokenExpiration = (value ?? 'true') !== 'false'; break;
      case '--service-account-max-token-expiration': {
        const seconds = Math.floor(takeDuration() / 1000);
        // kube-apiserver's bounds for the flag (0 leaves tokens uncapped).
        if (seconds !== 0 && (seconds < 3600 || seconds > 2 ** 32)) fail('the service-account-max-token-expiration must be between 1 hour and 2^32 seconds');
        flags.serviceAccountMaxTokenExpirationSeconds = seconds;
        break;
      }
      case '--enable-priority-and-fairness': flags.flowControl.enablePriorityAndFairness = (value ?? 'true') !== 'false'; break;
      case '--max-requests-inflight': flags.flowControl.maxRequestsInflight = takeInt(); break;
      case '--max-mutating-requests-inflight': flags.flowControl.maxMutatingRequestsInflight = takeInt(); break;
      case '--request-timeout': flags.flowControl.requestTimeoutMs = takeGoDuration(); break;
      case '--audit-policy-file': flags.auditPolicyFile = resolve(take()); break;
      case '--audit-log-path': { const v = take(); flags.auditLog.path = v === '-' ? v : resolve(v); break; }
      case '--audit-log-maxage': flags.auditLog.maxAgeDays = takeInt(); break;
      case '--audit-log-maxbackup': flags.auditLog.maxBackups = takeInt(); break;
      case '--audit-log-maxsize': flags.auditLog.maxSizeMegabytes = takeInt(); break;
      case '--audit-log-format': flags.auditLog.format = takeOneOf(['json', 'legacy'] as const); break;
      case '--audit-log-mode': flags.auditLog.mode = takeOneOf(['blocking', 'batch', 'blocking-strict'] as const); break;
      case '--audit-webhook-config-file': flags.auditWebhook.configFile = resolve(take()); break;
      case '--audit-webhook-mode': flags.auditWebhook.mode = takeOneOf(['blocking', 'batch', 'blocking-strict'] as const); break;
      case '--audit-webhook-batch-max-size': flags.auditWebhook.batchMaxSize = takeInt(); break;
      case '--audit-webhook-batch-max-wait': flags.auditWebhook.batchMaxWaitMs = takeGoDuration(); break;
      case '--audit-webhook-batch-buffer-size': flags.auditWebhook.batchBufferSize = takeInt(); break;
      case '--audit-webhook-initial-backoff': flags.auditWebhook.initialBackoffMs = takeGoDuration(); break;
      case '--audit-webhook-version': flags.auditWebhook.version = take(); break;
      case '-v':
      case '--v': flags.logging.verbosity = takeInt(); break;
      case '--log-format': flags.logging.format = takeOneOf(['text', 'json'] as const); break;
      case '--version':
        // (kube components print their version this way: `Kubernetes v1.36.0`)
        console.log(`Kubernetes ${servedKubernetesVersion()}`);
        return process.exit(0);
      case '-h':
      case '--help':
        console.log(USAGE);
        return process.exit(0);
      default:
        fail(`unknown flag: ${argv[i]}`);
    }
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
  console.error(`hearth: ${msg}\n${USAGE}`);
  process.exit(2);
}

// Loaded on demand: a subcommand (often run beside a busy server) loads none of the server's modules.
if (OPS_COMMANDS.includes(process.argv[2])) {
  const { runOpsCommand } = await import('./cli/ops.ts');
  process.exit(await runOpsCommand(process.argv[2], process.argv.slice(3)));
}
const { startServer } = await import('./server.ts');
const flags = parseFlags(process.argv.slice(2));
const dataDir = resolve(flags.dataDir);
try {
  const server = await startServer({
    dataDir,
    securePort: flags.securePort,
    bindAddress: flags.bindAddress,
    tlsSans: flags.tlsSans,
    anonymousAuth: flags.anonymousAuthSet ? flags.anonymousAuth : undefined,
    tokenAuthFile: flags.tokenAuthFile,
    authenticationTokenWebhookConfigFile: flags.authenticationTokenWebhookConfigFile,
    authenticationTokenWebhookVersion: flags.authenticationTokenWebhookVersion,
    authenticationTokenWebhookCacheTtlMs: flags.authenticationTokenWebhookCacheTtlMs,
    clientCaFile: flags.clientCaFile,
    enableBootstrapTokenAuth: flags.enableBootstrapTokenAuth,
    requestHeaderClientCaFile: flags.requestHeaderClientCaFile,
    requestHeaderAllowedNames: flags.requestHeaderAllowedNames,
    requestHeaderUsernameHeaders: flags.requestHeaderUsernameHeaders,
    requestHeaderUidHeaders: flags.requestHeaderUidHeaders,
    requestHeaderGroupHeaders: flags.requestHeaderGroupHeaders,
    requestHeaderExtraHeadersPrefix: flags.requestHeaderExtraHeadersPrefix,
    authenticationConfigFile: flags.authenticationConfigFile,
    oidc: flags.oidc,
    authorizationModes: flags.authorizationModes,
    authorizationConfigFile: flags.authorizationConfigFile,
    authorizationWebhookConfigFile: flags.authorizationWebhookConfigFile,
    authorizationWebhookVersion: flags.authorizationWebhookVersion,
    authorizationWebhookCacheAuthorizedTtlMs: flags.authorizationWebhookCacheAuthorizedTtlMs,
    authorizationWebhookCacheUnauthorizedTtlMs: flags.authorizationWebhookCacheUnauthorizedTtlMs,
    compactionIntervalMs: flags.compactionIntervalMs,
    eventTtlMs: flags.eventTtlMs,
    controllers: flags.controllers,
    enableAdmissionPlugins: flags.enableAdmissionPlugins,
    disableAdmissionPlugins: flags.disableAdmissionPlugins,
    admissionControlConfigFile: flags.admissionControlConfigFile,
    defaultNotReadyTolerationSeconds: flags.defaultNotReadyTolerationSeconds,
    defaultUnreachableTolerationSeconds: flags.defaultUnreachableTolerationSeconds,
    serviceClusterIPRange: flags.serviceClusterIPRange,
    serviceNodePortRange: flags.serviceNodePortRange,
    initialize: flags.initialize,
    snapshotIntervalMs: flags.snapshotIntervalMs,
    snapshotRetention: flags.snapshotRetention,
    http2Implementation: flags.http2Implementation,
    serviceAccountIssuers: flags.serviceAccountIssuers,
    serviceAccountSigningKeyFile: flags.serviceAccountSigningKeyFile,
    serviceAccountKeyFiles: flags.serviceAccountKeyFiles,
    serviceAccountJwksUri: flags.serviceAccountJwksUri,
    apiAudiences: flags.apiAudiences,
    serviceAccountMaxTokenExpirationSeconds: flags.serviceAccountMaxTokenExpirationSeconds,
    serviceAccountExtendTokenExpiration: flags.serviceAccountExtendTokenExpiration,
    legacyServiceAccountTokenCleanUpPeriodMs: flags.legacyServiceAccountTokenCleanUpPeriodMs,
    flowControl: flags.flowControl,
    audit: {
      policyFile: flags.auditPolicyFile,
      log: flags.auditLog.path === undefined ? undefined : { ...DEFAULT_AUDIT_LOG_OPTIONS, ...flags.auditLog, path: flags.auditLog.path },
      webhook: flags.auditWebhook.configFile === undefined ? undefined : { ...DEFAULT_AUDIT_WEBHOOK_OPTIONS, ...flags.auditWebhook, configFile: flags.auditWebhook.configFile },
    },
    logging: flags.logging,
  });
  const stop = (signal: string) => {
    console.log(`hearth: ${signal} received, shutting down`);
    server.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // Only once a signal shuts down cleanly: whoever waits for this line may stop the server at once.
  console.log(`export KUBECONFIG=${server.kubeconfigPath}; kubectl get namespaces`);
} catch (e) {
  console.error(`hearth: ${(e as Error).message}`);
  process.exit(1);
}
