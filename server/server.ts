// Assembles and starts hearth: PKI, the SQLite file, the registry, controllers and the HTTPS
// listener. main.ts calls startServer with flags; tests call it with a temporary directory.
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openDatabase, type Db } from './storage/sqlite/database.ts';
import { checkStore } from './storage/sqlite/store-check.ts';
import { EventLog } from './storage/log/event-log.ts';
import { SqliteBackend } from './storage/sqlite/backend.ts';
import { Compactor } from './storage/log/compactor.ts';
import { ResourceCatalog, servedKubernetesVersion } from './schema/catalog.ts';
import { TypeModel } from './schema/model.ts';
import type { ResourceInfo } from './schema/types.ts';
import { AdmissionChain } from './admission/chain.ts';
import type { AdmissionPlugin } from './admission/types.ts';
import { enabledAdmissionPlugins } from './admission/plugins.ts';
import { NO_ADMISSION_CONFIG, readAdmissionConfiguration, type AdmissionConfig } from './admission/config.ts';
import { namespaceLifecycle } from './admission/namespace-lifecycle.ts';
import { certificateSubjectRestriction } from './admission/certificate-subject-restriction.ts';
import { priority, priorityClassView } from './admission/priority.ts';
import { defaultTolerationSeconds } from './admission/default-toleration-seconds.ts';
import { taintNodesByCondition } from './admission/taint-nodes-by-condition.ts';
import { defaultStorageClass, storageClassView } from './admission/default-storage-class.ts';
import { storageObjectInUseProtection } from './admission/storage-object-in-use-protection.ts';
import { persistentVolumeClaimResize } from './admission/persistent-volume-claim-resize.ts';
import { runtimeClass, runtimeClassView } from './admission/runtime-class.ts';
import { defaultIngressClass, ingressClassView } from './admission/default-ingress-class.ts';
import { certificateApproval, certificateSigning } from './admission/certificate-approval.ts';
import { alwaysPullImages } from './admission/always-pull-images.ts';
import { ClusterObjectIndex } from './registry/cluster-object-index.ts';
import { ensureSystemPriorityClasses } from './controllers/system-priority-classes.ts';
import { StorageProtectionController } from './controllers/storage-protection.ts';
import { nodeRestriction, REQUEST_TOKEN_AUDIENCE_VERB } from './admission/node-restriction.ts';
import { serviceAccountAdmission, type ServiceAccountRef } from './admission/service-account.ts';
import { mutatingAdmissionPolicyPlugin, validatingAdmissionPolicyPlugin, validatingAdmissionPolicyTypeChecker, authorizeNow } from './admission/policy/index.ts';
import { limitRanger, type LimitRangeView } from './admission/limit-ranger.ts';
import { resourceQuota, type QuotaView } from './admission/resource-quota/index.ts';
import { limitedResourcesOf } from './admission/resource-quota/config.ts';
import { NamespacedObjectIndex } from './registry/namespaced-object-index.ts';
import { podSecurityFromConfiguration } from './admission/pod-security/plugin.ts';
import { podTopologyLabels } from './admission/pod-topology-labels.ts';
import { GenericStore, type RequestContext } from './registry/store.ts';
import { NamespaceIndex } from './registry/namespace-index.ts';
import { createServiceStrategy, outOfRangeServiceReports } from './registry/kinds/core/services/strategy.ts';
import { formatIP, parseServiceClusterIPRange, parseServiceNodePortRange, type ServiceCIDR } from './registry/kinds/core/services/ranges.ts';
import './registry/crd/strategy.ts';
import { setContinueSecret } from './registry/continue-token.ts';
import { WatchHub } from './registry/watch/index.ts';
import { flushAll } from './http/h2/connection.ts';
import { buildApp } from './http/app.ts';
import { listen, bindPort, type BoundPort, type ConnectionLimits, type Http2Implementation, type RequestHandler } from './http/listener.ts';
import { lockDataDir, dataDirHolder, DataDirInUseError, type DataDirLock } from './storage/data-dir/lock.ts';
import { STORE_FILE } from './storage/data-dir/layout.ts';
import { SnapshotScheduler, DEFAULT_SNAPSHOT_RETENTION } from './storage/backup/snapshot-schedule.ts';
import { x509Authenticator } from './authentication/authenticator.ts';
import { bearerTokenAuthenticator, type TokenAuthenticator } from './authentication/token.ts';
import { cachedTokenAuthenticator } from './authentication/token-cache.ts';
import { readTokenFile, staticTokenAuthenticator } from './authentication/static-token.ts';
import { loadTokenWebhookConfig, tokenWebhookAuthenticator, type TokenWebhookConfig } from './authentication/token-webhook.ts';
import { authenticationSetup, type AuthenticationSetup, type OidcFlags } from './authentication/jwt/config.ts';
import { ReloadableJwtAuthenticators } from './authentication/jwt/reload.ts';
import { JwtAuthenticator, type JwtTiming } from './authentication/jwt/jwt-authenticator.ts';
import { readClientCaFile } from './pki/client-ca.ts';
import { bootstrapTokenAuthenticator, BootstrapTokenSecretCache, BOOTSTRAP_TOKEN_NAMESPACE } from './authentication/bootstrap-token.ts';
import { certificatesOverlap, loadRequestHeaderConfig, OVERLAPPING_CA_ERROR, requestHeaderAuthenticator, type RequestHeaderConfig, type RequestHeaderOptions } from './authentication/request-header.ts';
import { accessReviewResources, reviewResources } from './http/handlers/index.ts';
import type { UserInfo } from './authentication/user.ts';
import { DEFAULT_SERVICE_ACCOUNT_ISSUER, JWKS_PATH, ServiceAccountTokens, type TokenObjectResource } from './authentication/service-account-token.ts';
import { issueLegacyToken, LegacyServiceAccountTokens } from './authentication/legacy-service-account-token.ts';
import { loadServiceAccountKeys, type ServiceAccountKeys } from './pki/service-account-keys.ts';
import { authorize, type Authorizer } from './authorization/authorizer.ts';
import { aggregateErrors } from './go/errors.ts';
import { authorizationModeErrors, DEFAULT_AUTHORIZATION_MODES } from './authorization/modes.ts';
import { AUTHORIZATION_CONFIG_WITH_MODES, AuthorizerBuildError, authorizationWebhookFlagErrors, authorizersFromFlags, readAuthorizationConfig, type AuthorizerConfig } from './authorization/config.ts';
import { buildAuthorizerChain, ReloadableAuthorizer, type BuiltChain } from './authorization/reload.ts';
import { webhookAuthorizer } from './authorization/webhook.ts';
import { RbacPolicyIndex, type RbacKind } from './authorization/rbac/policy-index.ts';
import { rbacAuthorizer } from './authorization/rbac/authorizer.ts';
import { rbacEscalationCheck } from './authorization/rbac/escalation.ts';
import { NodeGraph } from './authorization/node/graph.ts';
import { applyGraphChange, type GraphResource } from './authorization/node/graph-populator.ts';
import { nodeAuthorizer } from './authorization/node/authorizer.ts';
import { qualifiedResourceOf } from './registry/store.ts';
import { ensurePki, type ServerPki } from './pki/certificates.ts';
import { serverUrlFor, writeAdminKubeconfig } from './pki/kubeconfig.ts';
import { NamespaceController } from './controllers/namespace.ts';
import { CrdController, type CustomResourceDefinition } from './controllers/crd.ts';
import { EventTtlController } from './controllers/event-ttl.ts';
import { CsrSigningController } from './controllers/csr-signer.ts';
import { CsrCleanerController } from './controllers/csr-cleaner.ts';
import { ServiceAccountsController } from './controllers/service-accounts.ts';
import { RootCaPublisher } from './controllers/root-ca-publisher.ts';
import { ServiceAccountTokensController } from './controllers/service-account-tokens.ts';
import { LegacyTokenStoreObjects, LegacyTokenTrackingController } from './controllers/legacy-token-tracking.ts';
import { LegacyTokenCleaner } from './controllers/legacy-token-cleaner.ts';
import { controllerEnabled, controllerSelectionErrors, LEGACY_TOKEN_CLEANER_CONTROLLER, ROOT_CA_PUBLISHER_CONTROLLER, SERVICE_ACCOUNT_CONTROLLER, SERVICE_ACCOUNT_TOKEN_CONTROLLER, BOOTSTRAP_SIGNER_CONTROLLER, TOKEN_CLEANER_CONTROLLER, CSR_APPROVING_CONTROLLER, CLUSTERROLE_AGGREGATION_CONTROLLER, RESOURCE_QUOTA_CONTROLLER, VALIDATING_ADMISSION_POLICY_STATUS_CONTROLLER, APF_CONFIGURATION_CONTROLLER } from './controllers/selection.ts';
import { BootstrapTokenCleaner } from './controllers/bootstrap-token-cleaner.ts';
import { BootstrapSigner } from './controllers/bootstrap-signer.ts';
import { ClusterAuthenticationTrustController } from './controllers/cluster-authentication-trust.ts';
import { CsrApprovingController } from './controllers/csr-approver.ts';
import { BOOTSTRAP_ROLES_HOOK, RbacBootstrap } from './controllers/rbac-bootstrap.ts';
import { ClusterRoleAggregationController } from './controllers/clusterrole-aggregation.ts';
import { ValidatingAdmissionPolicyStatusController } from './controllers/validating-admission-policy-status.ts';
import { ResourceQuotaController } from './controllers/resource-quota.ts';
import { controllerWriteContext } from './controllers/queue-controller.ts';
import { FlowControlConfig } from './flowcontrol/config/index.ts';
import { ApfConfigurationController, APF_CONFIG_PRODUCER_HOOK } from './controllers/apf-configuration.ts';
import { newFlowControl } from './flowcontrol/dispatch/index.ts';
import { ApiError } from './errors.ts';
import { crdDefinitions } from './registry/crd/crd-openapi.ts';
import { forgetConverter } from './registry/crd/conversion.ts';
import { LOOPBACK_USER } from './authentication/user.ts';
import { WebhookConfigurationIndex, type WebhookKind } from './admission/webhook/source.ts';
import { mutatingAdmissionWebhook, validatingAdmissionWebhook, type WebhookPluginDeps } from './admission/webhook/plugin.ts';
import { matchConditionCompileError } from './admission/webhook/match-conditions.ts';
import { equivalentResourcesIn } from './admission/matching.ts';
import { internalError } from './errors.ts';
import { useMatchConditionCompiler } from './registry/kinds/admissionregistration/index.ts';
import { DEFAULT_FLOW_CONTROL_OPTIONS, flowControlOptionErrors, type FlowControlOptions } from './flowcontrol/options.ts';
import type { AuditOptions } from './audit/options.ts';
import type { LoggingOptions } from './logging/options.ts';
import { newMetricsRegistry } from './metrics/registry.ts';
import { AdmissionMetrics } from './metrics/admission.ts';
import { StorageMetrics } from './metrics/storage.ts';
import { sqliteStats } from './storage/sqlite/stats.ts';
import { Duration, newLogger, stderrSink, type Logger } from './logging/logger.ts';
import { statSync } from 'node:fs';
import { AuditMetrics, Auditor, readAuditSetup, type AuditSetup } from './audit/auditor.ts';

export interface ServerOptions {
  dataDir: string;
  /** 0 picks a free port. */
  securePort: number;
  bindAddress: string;
  /** Extra names/IPs for the serving certificate. */
  tlsSans?: string[];
  anonymousAuth?: boolean;
  /** kube's --token-auth-file: a CSV of static bearer tokens (token,user,uid,"group1,group2"). */
  tokenAuthFile?: string;
  /** kube's --authentication-token-webhook-config-file: a kubeconfig naming the TokenReview webhook. */
  authenticationTokenWebhookConfigFile?: string;
  /** --authentication-token-webhook-version: v1beta1 (kube's default) or v1. */
  authenticationTokenWebhookVersion?: string;
  /** --authentication-token-webhook-cache-ttl (default 2 minutes). */
  authenticationTokenWebhookCacheTtlMs?: number;
  /** kube's --client-ca-file: a PEM bundle of CAs whose client certificates are trusted besides hearth's own CA's. */
  clientCaFile?: string;
  /** kube's --enable-bootstrap-token-auth: bootstrap token Secrets in kube-system authenticate (hearth's default true; kube's false). */
  enableBootstrapTokenAuth?: boolean;
  /** kube's --requestheader-client-ca-file: the CAs an authenticating proxy's client certificate must chain to. */
  requestHeaderClientCaFile?: string;
  /** --requestheader-allowed-names: the proxy certificate CNs allowed (empty: any the CA signed). */
  requestHeaderAllowedNames?: string[];
  /** --requestheader-username-headers, --requestheader-uid-headers, --requestheader-group-headers, --requestheader-extra-headers-prefix (kube-apiserver's defaults: none). */
  requestHeaderUsernameHeaders?: string[];
  requestHeaderUidHeaders?: string[];
  requestHeaderGroupHeaders?: string[];
  requestHeaderExtraHeadersPrefix?: string[];
  /** kube's --authentication-config: an AuthenticationConfiguration file (JWT authenticators, anonymous). */
  authenticationConfigFile?: string;
  /** kube's --oidc-* flags (one JWT authenticator); exclusive with authenticationConfigFile. */
  oidc?: OidcFlags;
  /** Timing of the JWT authenticators' issuer fetches (tests shorten it). */
  jwtTiming?: JwtTiming;
  /** SQLite synchronous mode; "full" unless a benchmark asks otherwise. */
  synchronous?: 'full' | 'normal' | 'off';
  /** How often history is compacted (0 disables); default 5 minutes. */
  compactionIntervalMs?: number;
  /** How long an event lives after its last write (kube's --event-ttl; 0 keeps events); default 1 hour. */
  eventTtlMs?: number;
  /** How often finished CertificateSigningRequests are deleted (kube's CSR cleaner: hourly); tests shorten it. */
  csrCleanerIntervalMs?: number;
  /** How often the APF configuration objects are ensured again (kube's priority-and-fairness-config-producer: a minute); tests shorten it. */
  apfConfigMaintenanceIntervalMs?: number;
  /** How often the resource quota controller measures every quota again (kube-controller-manager's --resource-quota-sync-period, 5m). */
  resourceQuotaSyncPeriodMs?: number;
  /** kube's authenticator Config TokenSuccessCacheTTL (no flag; 10 s): how long the token union's successes are reused. Tests of revocation set 0 to see each authenticator's answer at once. */
  tokenSuccessCacheTtlMs?: number;
  /** Admission plugins switched on beyond the default set (kube-apiserver's --enable-admission-plugins). */
  enableAdmissionPlugins?: string[];
  /** Admission plugins switched off (kube-apiserver's --disable-admission-plugins). */
  disableAdmissionPlugins?: string[];
  /** kube-apiserver's --admission-control-config-file: an AdmissionConfiguration naming plugins' configurations. */
  admissionControlConfigFile?: string;
  /** kube-apiserver's --default-not-ready-toleration-seconds and --default-unreachable-toleration-seconds (DefaultTolerationSeconds; 300 each). */
  defaultNotReadyTolerationSeconds?: number;
  defaultUnreachableTolerationSeconds?: number;
  /** Which kube-controller-manager controllers run in-process (its --controllers: `*`, `name`, `-name`); default all. */
  controllers?: string[];
  /** Service cluster IP ranges (kube's --service-cluster-ip-range: a CIDR, or an IPv4 and an IPv6 one); default 10.96.0.0/12. */
  serviceClusterIPRange?: string;
  /** Service node-port range (kube's --service-node-port-range); default 30000-32767. */
  serviceNodePortRange?: string;
  /** Create an empty store even though the directory already holds a cluster's credentials (--initialize). */
  initialize?: boolean;
  /** How often a snapshot goes into DATA_DIR/snapshots/ (0, the default, takes none). */
  snapshotIntervalMs?: number;
  /** How many scheduled snapshots are kept (default 5, as k3s keeps). */
  snapshotRetention?: number;
  /** Where hearth's log lines go, formatted as --log-format says (default: stderr, as kube components log). */
  log?: (line: string) => void;
  /** Connection limits and timeouts other than the defaults (tests make them small). */
  connectionLimits?: Partial<ConnectionLimits>;
  /** Which HTTP/2 serves h2 connections (--http2-implementation): hearth's own (the default) or Node's node:http2. */
  http2Implementation?: Http2Implementation;
  /** --service-account-issuer: the first names the tokens issued, all are accepted (default kubeadm's https://kubernetes.default.svc.cluster.local). */
  serviceAccountIssuers?: string[];
  /** --service-account-signing-key-file (default DATA_DIR/pki/sa.key, generated at first start). */
  serviceAccountSigningKeyFile?: string;
  /** --service-account-key-file: the keys tokens verify with (default: the signing key). */
  serviceAccountKeyFiles?: string[];
  /** --api-audiences (default: the issuers). */
  apiAudiences?: string[];
  /** --service-account-jwks-uri: the JWKS URL the discovery document names (default: this server's /openid/v1/jwks). */
  serviceAccountJwksUri?: string;
  /** --service-account-max-token-expiration in seconds (0, the default: no cap). */
  serviceAccountMaxTokenExpirationSeconds?: number;
  /** --service-account-extend-token-expiration (default true). */
  serviceAccountExtendTokenExpiration?: boolean;
  /** kube-controller-manager's --legacy-service-account-token-clean-up-period (default a year). */
  legacyServiceAccountTokenCleanUpPeriodMs?: number;
  /** How often the legacy token cleaner looks (kube: daily); tests shorten it. */
  legacyTokenCleanerSyncIntervalMs?: number;
  /** --authorization-mode: the authorizers after system:masters, in order (default RBAC). */
  authorizationModes?: string[];
  /** --authorization-config: an AuthorizationConfiguration file naming them instead (not with authorizationModes). */
  authorizationConfigFile?: string;
  /** --authorization-webhook-config-file: the kubeconfig of the Webhook mode's authorizer. */
  authorizationWebhookConfigFile?: string;
  /** --authorization-webhook-version (default v1beta1). */
  authorizationWebhookVersion?: string;
  /** --authorization-webhook-cache-authorized-ttl (default 5m; 0 caches no allowed decision). */
  authorizationWebhookCacheAuthorizedTtlMs?: number;
  /** --authorization-webhook-cache-unauthorized-ttl (default 30s; 0 caches no other decision). */
  authorizationWebhookCacheUnauthorizedTtlMs?: number;
  /** How often --authorization-config is read again besides its watch (kube: a minute); tests shorten it. */
  authorizationConfigReloadIntervalMs?: number;
  /** How often --authentication-config is read again besides its watch (kube: a minute); tests shorten it. */
  authenticationConfigReloadIntervalMs?: number;
  /** API Priority and Fairness and the in-flight limits (--enable-priority-and-fairness, --max-requests-inflight, --max-mutating-requests-inflight, --request-timeout). */
  flowControl?: FlowControlOptions;
  /** Audit logging (--audit-policy-file, --audit-log-*, --audit-webhook-*). */
  audit?: AuditOptions;
  /** Logging (-v, --log-format). */
  logging?: LoggingOptions;
}

export interface RunningServer {
  url: string;
  port: number;
  dataDir: string;
  kubeconfigPath: string;
  pki: ServerPki;
  store: GenericStore;
  catalog: ResourceCatalog;
  /** The storage layer (tests reach below the API with it: a full disk). */
  eventLog: EventLog;
  close(): Promise<void>;
}

interface ServiceRanges {
  serviceCIDRs: ServiceCIDR[];
  nodePortRange: ReturnType<typeof parseServiceNodePortRange>;
}

/** What the authentication flags name, read before anything is bound or written. */
interface AuthenticationFiles {
  staticTokens?: Map<string, UserInfo>;
  clientCaPem?: string;
  tokenWebhook?: TokenWebhookConfig;
  requestHeader?: RequestHeaderConfig;
  /** JWT authenticators (--authentication-config or --oidc-*) and the file's anonymous section. */
  structured: AuthenticationSetup;
}

const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];
/** What an admission plugin's factory may use: the registry and the lookups kept in memory. */
interface AdmissionPluginContext {
  store: GenericStore;
  catalog: ResourceCatalog;
  eventLog: EventLog;
  namespaces: NamespaceIndex;
  /** The served kinds' schemas (admission policies merge and type by them). */
  model: TypeModel;
  /** The authorizer chain (for plugins that ask it, as kube's do through their authorizer). */
  authorizers: readonly Authorizer[];
  /** --admission-control-config-file's plugin configurations. */
  admissionConfig: AdmissionConfig;
  opts: ServerOptions;
  log: (line: string) => void;
  /** The audiences bound service-account tokens are issued for (read at request time: set up after admission). */
  apiAudiences: () => readonly string[];
  /** apiserver_admission_webhook_* (the webhook plugins'). */
  admissionMetrics: AdmissionMetrics;
}

/**
 * The admission plugins hearth has, by kube's names: each one's factory. The order they run in is
 * kube's (admission/plugins.ts), not this record's; which run, the flags' (with kube's defaults).
 */
const admissionPluginFactories: Partial<Record<string, (c: AdmissionPluginContext) => AdmissionPlugin>> = {
  NamespaceLifecycle: (c) => namespaceLifecycle((name) => c.namespaces.get(name)),
  // ServiceAccounts kept from the commit stream: every pod create reads its own twice.
  ServiceAccount: (c) => {
    const serviceAccounts = new NamespacedObjectIndex<ServiceAccountRef>(c.eventLog, 'serviceaccounts', c.store.listReadable(c.catalog.lookup('', 'v1', 'serviceaccounts')!, undefined));
    return serviceAccountAdmission((ns, name) => serviceAccounts.get(ns, name));
  },
  // NodeRestriction (on by default, as kubeadm enables it) asks the chain about token audiences.
  NodeRestriction: (c) =>
    nodeRestriction({
      get: (kind, ns, name) => c.store.tryGet(c.catalog.lookup(kind === 'csidrivers' ? 'storage.k8s.io' : '', 'v1', kind)!, ns, name),
      mayRequestAudience: (user, namespace, name, audience) => {
        const answer = authorize(c.authorizers, { user, verb: REQUEST_TOKEN_AUDIENCE_VERB, isResourceRequest: true, path: '', apiGroup: '', apiVersion: '', resource: audience, subresource: '', namespace, name });
        return answer instanceof Promise ? answer.then((r) => r.decision === 'allow') : answer.decision === 'allow';
      },
      apiAudiences: c.apiAudiences,
    }),
  CertificateSubjectRestriction: () => certificateSubjectRestriction(),
  // LimitRanger and ResourceQuota read LimitRanges and ResourceQuotas kept from the commit stream.
  LimitRanger: (c) => {
    const limitRanges = new NamespacedObjectIndex<LimitRangeView>(c.eventLog, 'limitranges', c.store.listReadable(c.catalog.lookup('', 'v1', 'limitranges')!, undefined));
    return limitRanger((ns) => limitRanges.in(ns));
  },
  ResourceQuota: (c) => {
    const quotaInfo = c.catalog.lookup('', 'v1', 'resourcequotas')!;
    const quotas = new NamespacedObjectIndex<QuotaView>(c.eventLog, 'resourcequotas', c.store.listReadable(quotaInfo, undefined));
    const limited = limitedResourcesOf(c.admissionConfig.configurationOf('ResourceQuota'));
    return resourceQuota({ quotasIn: (ns) => quotas.in(ns), writeUsed: (q, used) => writeQuotaUsed(c.store, quotaInfo, q, used), limited });
  },
  MutatingAdmissionPolicy: (c) => mutatingAdmissionPolicyPlugin(c),
  ValidatingAdmissionPolicy: (c) => validatingAdmissionPolicyPlugin(c),
  // kube's small built-in plugins; the classes they read are kept in memory from the commit stream.
  TaintNodesByCondition: () => taintNodesByCondition(),
  AlwaysPullImages: () => alwaysPullImages(),
  Priority: (c) => {
    const classes = ClusterObjectIndex.of(c.eventLog, c.store, c.catalog.lookup('scheduling.k8s.io', 'v1', 'priorityclasses')!, priorityClassView);
    return priority({ priorityClass: (name) => classes.get(name), priorityClasses: () => classes.values() });
  },
  DefaultTolerationSeconds: (c) => defaultTolerationSeconds({ notReadySeconds: c.opts.defaultNotReadyTolerationSeconds, unreachableSeconds: c.opts.defaultUnreachableTolerationSeconds }),
  DefaultStorageClass: (c) => {
    const classes = ClusterObjectIndex.of(c.eventLog, c.store, c.catalog.lookup('storage.k8s.io', 'v1', 'storageclasses')!, storageClassView);
    return defaultStorageClass(() => classes.values());
  },
  StorageObjectInUseProtection: () => storageObjectInUseProtection(),
  PersistentVolumeClaimResize: (c) => {
    const classes = ClusterObjectIndex.of(c.eventLog, c.store, c.catalog.lookup('storage.k8s.io', 'v1', 'storageclasses')!, storageClassView);
    return persistentVolumeClaimResize((name) => classes.get(name));
  },
  RuntimeClass: (c) => {
    const classes = ClusterObjectIndex.of(c.eventLog, c.store, c.catalog.lookup('node.k8s.io', 'v1', 'runtimeclasses')!, runtimeClassView);
    return runtimeClass((name) => classes.get(name));
  },
  DefaultIngressClass: (c) => {
    const classes = ClusterObjectIndex.of(c.eventLog, c.store, c.catalog.lookup('networking.k8s.io', 'v1', 'ingressclasses')!, ingressClassView);
    return defaultIngressClass(() => classes.values());
  },
  // The `approve` and `sign` verbs on certificates.k8s.io's `signers`, asked of the authorizer chain.
  CertificateApproval: (c) => certificateApproval((user, verb, name) => mayUseSigner(c.authorizers, user, verb, name)),
  CertificateSigning: (c) => certificateSigning((user, verb, name) => mayUseSigner(c.authorizers, user, verb, name)),
  PodSecurity: (c) => {
    const podsInfo = c.catalog.lookup('', 'v1', 'pods')!;
    return podSecurityFromConfiguration({ namespaceLabels: (name) => c.namespaces.get(name)?.labels, listPods: (ns) => c.store.listReadable(podsInfo, ns) }, c.admissionConfig.configurationOf('PodSecurity'));
  },
  MutatingAdmissionWebhook: (c) => mutatingAdmissionWebhook(admissionWebhookDeps(c)),
  ValidatingAdmissionWebhook: (c) => validatingAdmissionWebhook(admissionWebhookDeps(c)),
  PodTopologyLabels: (c) => {
    const nodesInfo = c.catalog.lookup('', 'v1', 'nodes')!;
    return podTopologyLabels((name) => c.store.tryGet(nodesInfo, '', name));
  },
};

/** Whether the authorizer chain allows `user` the verb on certificates.k8s.io's `signers` named `name` (kube's certificates/authorization). */
function mayUseSigner(authorizers: readonly Authorizer[], user: UserInfo, verb: string, name: string): boolean | Promise<boolean> {
  const answer = authorize(authorizers, { user, verb, isResourceRequest: true, path: '', apiGroup: 'certificates.k8s.io', apiVersion: '*', resource: 'signers', subresource: '', namespace: '', name });
  return answer instanceof Promise ? answer.then((r) => r.decision === 'allow') : answer.decision === 'allow';
}

// Webhook configurations' match conditions are checked in the CEL environment the webhook plugins evaluate them in.
useMatchConditionCompiler(matchConditionCompileError);

/** What both webhook plugins share: one index of the configurations, read from the commit stream. */
const webhookDepsByContext = new WeakMap<AdmissionPluginContext, WebhookPluginDeps>();
function admissionWebhookDeps(c: AdmissionPluginContext): WebhookPluginDeps {
  let deps = webhookDepsByContext.get(c);
  if (deps) return deps;
  const endpointsInfo = c.catalog.lookup('', 'v1', 'endpoints')!;
  deps = {
    index: admissionWebhookIndex(c.store, c.catalog, c.eventLog),
    namespaceLabels: (name) => c.namespaces.get(name)?.labels,
    equivalents: equivalentResourcesIn(c.catalog),
    resolver: { service: (ns, name) => c.store.services(ns, name), endpoints: (ns, name) => c.store.tryGet(endpointsInfo, ns, name) },
    convert: (obj, attrs, to) => {
      const target = attrs.subresource ? undefined : c.catalog.lookup(to.group, to.version, attrs.info.resource);
      if (!target) throw internalError(`unable to convert to ${to.group}/${to.version}, Kind=${to.kind}`);
      return c.store.convertToVersion(target, obj);
    },
    decode: (obj, attrs) => c.store.decodeAdmitted(attrs.info, obj),
    authorize: (attrs) => authorizeNow(c.authorizers, attrs),
    metrics: c.admissionMetrics,
  };
  webhookDepsByContext.set(c, deps);
  return deps;
}

/** Which admission plugins run (in kube's order) and their configurations. */
interface AdmissionSetup {
  plugins: string[];
  config: AdmissionConfig;
}

/** The admission plugins that run, in kube's order: what the flags ask, checked before anything starts. */
function admissionPluginNames(opts: ServerOptions): string[] {
  return enabledAdmissionPlugins(opts.enableAdmissionPlugins ?? [], opts.disableAdmissionPlugins ?? [], new Set(Object.keys(admissionPluginFactories)));
}

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  // Bad service ranges (or controller names) are refused before anything is bound or written.
  const unknownControllers = controllerSelectionErrors(opts.controllers ?? []);
  if (unknownControllers.length) throw new Error(`controllers: ${unknownControllers.join(', ')}`);
  // So are negative in-flight limits, and limits APF would have no seats from (kube's words).
  const flowControlErrors = flowControlOptionErrors({ ...DEFAULT_FLOW_CONTROL_OPTIONS, ...opts.flowControl });
  if (flowControlErrors.length) throw new Error(aggregateErrors(flowControlErrors));
  // So are admission plugins kube does not know or hearth does not have, and an unreadable configuration file.
  const admissionSetup: AdmissionSetup = {
    plugins: admissionPluginNames(opts),
    config: opts.admissionControlConfigFile !== undefined ? readAdmissionConfiguration(opts.admissionControlConfigFile) : NO_ADMISSION_CONFIG,
  };
  // kube-apiserver's checks of --authorization-mode (and its webhook flags) or --authorization-config,
  // the modes hearth does not have yet, and the webhooks' kubeconfigs.
  const authorization = authorizationSetup(opts);
  // The audit policy (kube's messages) and the audit webhook's kubeconfig.
  const audit = readAuditSetup(opts.audit);
  const ranges = { serviceCIDRs: parseServiceClusterIPRange(opts.serviceClusterIPRange), nodePortRange: parseServiceNodePortRange(opts.serviceNodePortRange) };
  // hearth's log (-v, --log-format), into opts.log's sink or stderr; `log` is what components take.
  const logger = newLogger(opts.logging, opts.log ?? stderrSink);
  const log = logger.lines();
  // So are token and CA files kube refuses (with kube's messages).
  const authFiles: AuthenticationFiles = {
    staticTokens: opts.tokenAuthFile !== undefined ? readTokenFile(opts.tokenAuthFile, (w) => log(`warning: ${w}`)) : undefined,
    clientCaPem: opts.clientCaFile !== undefined ? readClientCaFile(opts.clientCaFile) : undefined,
    tokenWebhook: opts.authenticationTokenWebhookConfigFile !== undefined ? loadTokenWebhookConfig(opts.authenticationTokenWebhookConfigFile, opts.authenticationTokenWebhookVersion) : undefined,
    structured: authenticationSetup({ configFile: opts.authenticationConfigFile, oidc: opts.oidc, anonymousFlagSet: opts.anonymousAuth !== undefined, serviceAccountIssuers: serviceAccountIssuersOf(opts) }),
  };
  authFiles.requestHeader = loadRequestHeaderConfig(requestHeaderOptions(opts), authFiles.clientCaPem, (w) => log(`warning: ${w}`));
  // The port first: a port that is taken fails before the data directory is created or touched.
  let bound: BoundPort;
  try {
    bound = await bindPort(opts.securePort, opts.bindAddress);
  } catch (e) {
    // Most often it is this directory's own server, already running: say that instead.
    const holder = dataDirHolder(opts.dataDir);
    if (holder) throw new DataDirInUseError(opts.dataDir, holder.pid);
    throw e;
  }
  let lock: DataDirLock;
  try {
    // Then the directory, before the store, the PKI or the kubeconfig: one server per directory.
    lock = lockDataDir(opts.dataDir);
  } catch (e) {
    await bound.close();
    throw e;
  }
  try {
    return await serve(opts, bound, lock, ranges, authFiles, authorization, admissionSetup, audit, logger);
  } catch (e) {
    await bound.close();
    lock.release();
    throw e;
  }
}

/** The authorizers the flags or --authorization-config name, read before anything is bound or written. */
type AuthorizationSetup = { file: string; initial: { data: string; canonical: string; authorizers: AuthorizerConfig[] } } | { authorizers: AuthorizerConfig[] };

function authorizationSetup(opts: ServerOptions): AuthorizationSetup {
  try {
    return readAuthorizationSetup(opts);
  } catch (e) {
    // kube-apiserver's words for what BuildAuthorizer refuses (its Validate's errors are bare).
    if (e instanceof AuthorizerBuildError) throw new Error(`invalid authorization config: ${e.message}`);
    throw e;
  }
}

function readAuthorizationSetup(opts: ServerOptions): AuthorizationSetup {
  const webhookFlags = { configFile: opts.authorizationWebhookConfigFile, version: opts.authorizationWebhookVersion, authorizedTtlMs: opts.authorizationWebhookCacheAuthorizedTtlMs, unauthorizedTtlMs: opts.authorizationWebhookCacheUnauthorizedTtlMs };
  if (opts.authorizationConfigFile !== undefined) {
    if (opts.authorizationModes !== undefined || Object.values(webhookFlags).some((v) => v !== undefined)) throw new Error(AUTHORIZATION_CONFIG_WITH_MODES);
    return { file: opts.authorizationConfigFile, initial: readAuthorizationConfig(opts.authorizationConfigFile) };
  }
  const modes = opts.authorizationModes ?? DEFAULT_AUTHORIZATION_MODES;
  const errors = [...authorizationModeErrors(modes), ...authorizationWebhookFlagErrors(modes, webhookFlags)];
  if (errors.length) throw new Error(aggregateErrors(errors));
  return { authorizers: authorizersFromFlags(modes, webhookFlags) };
}

async function serve(opts: ServerOptions, bound: BoundPort, lock: DataDirLock, ranges: ServiceRanges, authFiles: AuthenticationFiles, authorization: AuthorizationSetup, admissionSetup: AdmissionSetup, audit: AuditSetup | undefined, logger: Logger): Promise<RunningServer> {
  const log = logger.lines();
  logger.info('Starting hearth', 'version', servedKubernetesVersion(), 'dataDir', opts.dataDir, 'pid', process.pid);
  const { serviceCIDRs, nodePortRange } = ranges;
  const extraSans = [...(opts.tlsSans ?? [])];
  if (opts.bindAddress && opts.bindAddress !== '0.0.0.0' && opts.bindAddress !== '::') extraSans.push(opts.bindAddress);
  const dbFile = join(opts.dataDir, STORE_FILE);
  // Before the PKI: a directory with credentials but no store is refused, not given a new cluster.
  checkStore(dbFile, { initialize: opts.initialize, log });
  const pki = await ensurePki(opts.dataDir, { extraSans, log });
  // hearth's CA authenticates client certificates as --client-ca-file's do: kube's overlap check applies to it too.
  if (authFiles.requestHeader && !authFiles.requestHeader.allowedNames.length && certificatesOverlap(pki.caCertPem, authFiles.requestHeader.caPem)) throw new Error(OVERLAPPING_CA_ERROR);
  // Before the store opens: a key file that cannot be read fails the start with nothing running.
  const serviceAccountKeys = loadServiceAccountKeys(opts.dataDir, { signingKeyFile: opts.serviceAccountSigningKeyFile, keyFiles: opts.serviceAccountKeyFiles });

  // The server's Prometheus registry: every floor registers its metrics on it (served at /metrics).
  const metrics = newMetricsRegistry();
  // kube's audit metrics are registered whether or not a policy is given; the backends (and the log file) only with one.
  const auditMetrics = new AuditMetrics(metrics);
  const db = openDatabase(dbFile, { synchronous: opts.synchronous, log });
  setContinueSecret(persistentSecret(db, 'continue-token-key'));
  const storageMetrics = new StorageMetrics(metrics);
  storageMetrics.readFrom(sqliteStats(db, dbFile));
  const eventLog = new EventLog(new SqliteBackend(db, { file: dbFile, synchronous: opts.synchronous, logger }), { log, logger, metrics: storageMetrics });
  const schema = db.prepare('SELECT max(version) AS v FROM schema_migrations').get() as { v: number | null };
  logger.info('Store opened', 'file', dbFile, 'bytes', statSync(dbFile).size, 'schemaVersion', schema.v ?? 0, 'resourceVersion', eventLog.currentRv, 'compactedResourceVersion', eventLog.compactedRv);
  const catalog = ResourceCatalog.loadBuiltins();
  const auditor = audit && new Auditor(audit, auditMetrics, log, `kube-apiserver/${catalog.kubernetesVersion} (${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}) kubernetes/hearth`);
  // TokenReview and SelfSubjectReview: create-only, never stored, served by http/handlers/reviews.ts.
  for (const review of reviewResources()) catalog.add(review);
  // The access reviews (authorization.k8s.io): never stored either (http/handlers/access-reviews.ts).
  for (const review of accessReviewResources()) catalog.add(review);
  // Built-in definitions are shared; CRD schemas go into this server's overlay.
  const model = TypeModel.loadBuiltins().overlay();

  const admissionMetrics = new AdmissionMetrics(metrics);
  const admission = new AdmissionChain([], admissionMetrics);
  const store = new GenericStore(eventLog, model, admission);
  const nsInfo = catalog.lookup('', 'v1', 'namespaces')!;
  const servicesInfo = catalog.lookup('', 'v1', 'services')!;
  store.setStrategy('', 'services', createServiceStrategy(() => store.listCurrent(servicesInfo, undefined), { serviceCIDRs, nodePortRange }));
  const namespaces = new NamespaceIndex(eventLog, store.listReadable(nsInfo, undefined));
  // The authorizer chain, over the RBAC policy kept in memory; RBAC's escalation check runs last
  // in admission (kube's policybased RBAC storage: no admission plugin there, so never disabled).
  const rbacPolicy = rbacPolicyIndex(store, catalog, eventLog);
  // The Node authorizer decides from a graph of what each node's pods reference, kept as the RBAC
  // policy is; built when the configuration names Node (a reload may not add it, as in kube).
  const configured = 'file' in authorization ? authorization.initial.authorizers : authorization.authorizers;
  const nodeGraph = configured.some((a) => a.type === 'Node') ? nodeAuthorizerGraph(store, catalog, eventLog) : undefined;
  // Each webhook authorizer calls its webhook as kube-apiserver does; --authorization-config's chain is reloaded when its file changes.
  const chainParts = { rbac: rbacAuthorizer(rbacPolicy), node: nodeGraph && nodeAuthorizer(nodeGraph), webhook: (w: Parameters<typeof webhookAuthorizer>[0]) => webhookAuthorizer(w, { log, userAgent: `kube-apiserver/${catalog.kubernetesVersion} (${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}) kubernetes/hearth` }) };
  const reloadable = 'file' in authorization ? new ReloadableAuthorizer({ file: authorization.file, initial: authorization.initial, parts: chainParts, log, intervalMs: opts.authorizationConfigReloadIntervalMs }) : undefined;
  const staticChain: BuiltChain | undefined = 'file' in authorization ? undefined : buildAuthorizerChain(authorization.authorizers, chainParts);
  const authorizers = reloadable ? [reloadable] : staticChain!.authorizers;
  reloadable?.start();
  // Admission plugins in kube's order; the token issuer they read at request time is set up further down.
  const pluginContext: AdmissionPluginContext = { store, catalog, eventLog, namespaces, model, authorizers, admissionConfig: admissionSetup.config, opts, log, apiAudiences: () => serviceAccountTokens.apiAudiences, admissionMetrics };
  for (const name of admissionSetup.plugins) admission.add(admissionPluginFactories[name]!(pluginContext));
  admission.add(rbacEscalationCheck(rbacPolicy, authorizers));
  // A fan-out's HTTP/2 frames leave at its end, one TLS write per connection.
  const watch = new WatchHub(eventLog, store, flushAll);

  await bootstrapNamespaces(store, catalog);
  // system-node-critical and system-cluster-critical (kube's scheduling post-start hook).
  await ensureSystemPriorityClasses(store, catalog);
  const nsController = new NamespaceController(store, catalog, eventLog);
  nsController.start();
  // Every active namespace's identity: its `default` ServiceAccount and the cluster CA.
  const saController = controllerEnabled(opts.controllers, SERVICE_ACCOUNT_CONTROLLER) ? new ServiceAccountsController(store, catalog, eventLog) : undefined;
  saController?.start();
  // kube-apiserver's own: kube-system/extension-apiserver-authentication, written before the server is ready.
  const clientCaBundle = authFiles.clientCaPem ? `${pki.caCertPem.trimEnd()}\n${authFiles.clientCaPem}` : pki.caCertPem;
  const authenticationTrust = new ClusterAuthenticationTrustController(store, catalog, eventLog, { clientCaPem: clientCaBundle, requestHeader: authFiles.requestHeader }, undefined, log);
  await authenticationTrust.start();
  const rootCaPublisher = controllerEnabled(opts.controllers, ROOT_CA_PUBLISHER_CONTROLLER) ? new RootCaPublisher(store, catalog, eventLog, pki.caCertPem) : undefined;
  rootCaPublisher?.start();
  // Secrets of type kubernetes.io/service-account-token get their legacy token, CA and namespace.
  const tokensController = controllerEnabled(opts.controllers, SERVICE_ACCOUNT_TOKEN_CONTROLLER) ? new ServiceAccountTokensController(store, catalog, eventLog, pki.caCertPem, (sa, secret) => issueLegacyToken(serviceAccountKeys, sa, secret)) : undefined;
  tokensController?.start();
  const legacyTokenTracking = new LegacyTokenTrackingController(store, catalog, eventLog);
  legacyTokenTracking.start();
  // Auto-generated token Secrets unused for the clean-up period are marked invalid, then deleted.
  const legacyTokenCleaner = controllerEnabled(opts.controllers, LEGACY_TOKEN_CLEANER_CONTROLLER)
    ? new LegacyTokenCleaner(store, catalog, { cleanUpPeriodMs: opts.legacyServiceAccountTokenCleanUpPeriodMs, syncIntervalMs: opts.legacyTokenCleanerSyncIntervalMs, log })
    : undefined;
  legacyTokenCleaner?.start();
  // Bootstrap tokens: expired ones deleted; kube-public/cluster-info published (once the URL is known) and signed.
  const tokenCleaner = controllerEnabled(opts.controllers, TOKEN_CLEANER_CONTROLLER) ? new BootstrapTokenCleaner(store, catalog, eventLog) : undefined;
  tokenCleaner?.start();
  const bootstrapSigner = controllerEnabled(opts.controllers, BOOTSTRAP_SIGNER_CONTROLLER) ? new BootstrapSigner(store, catalog, eventLog, { caCertPem: pki.caCertPem, log }) : undefined;
  bootstrapSigner?.start();
  // admin, edit and view take their rules from the roles their aggregationRules select.
  const clusterRoleAggregation = controllerEnabled(opts.controllers, CLUSTERROLE_AGGREGATION_CONTROLLER) ? new ClusterRoleAggregationController(store, catalog, eventLog) : undefined;
  clusterRoleAggregation?.start();
  // Each ValidatingAdmissionPolicy's type checking written back to its status.
  const policyStatus = controllerEnabled(opts.controllers, VALIDATING_ADMISSION_POLICY_STATUS_CONTROLLER) ? new ValidatingAdmissionPolicyStatusController(store, catalog, eventLog, validatingAdmissionPolicyTypeChecker(catalog, model)) : undefined;
  policyStatus?.start();
  // Each ResourceQuota's status: hard from its spec, used measured from what is stored.
  const quotaInfo = catalog.lookup('', 'v1', 'resourcequotas')!;
  const quotaController = controllerEnabled(opts.controllers, RESOURCE_QUOTA_CONTROLLER)
    ? new ResourceQuotaController(store, catalog, eventLog, new NamespacedObjectIndex<QuotaView>(eventLog, 'resourcequotas', store.listReadable(quotaInfo, undefined)), opts.resourceQuotaSyncPeriodMs)
    : undefined;
  quotaController?.start();
  // Protected claims and volumes being deleted lose their finalizer once nothing uses them (StorageObjectInUseProtection's other half).
  const storageProtection = new StorageProtectionController(store, catalog, eventLog);
  storageProtection.start();
  // API Priority and Fairness: FlowSchemas and priority levels kept from the commit stream for
  // classification; kube's mandatory and suggested ones ensured before the server listens, then
  // every interval with each FlowSchema's Dangling condition (unless the controller is switched off).
  const apfEnabled = opts.flowControl?.enablePriorityAndFairness !== false;
  const flowControlConfig = apfEnabled ? FlowControlConfig.of(store, catalog, eventLog) : undefined;
  const apfConfiguration = apfEnabled ? new ApfConfigurationController(store, catalog, eventLog, { maintenanceIntervalMs: opts.apfConfigMaintenanceIntervalMs, log }) : undefined;
  if (apfConfiguration && controllerEnabled(opts.controllers, APF_CONFIGURATION_CONTROLLER)) await apfConfiguration.startAndEnsure();
  else await apfConfiguration?.ensure();
  // Flow control on the request path: APF's dispatcher over that configuration, or (APF off) the two max-inflight limits.
  const flowControl = newFlowControl({ config: flowControlConfig, options: opts.flowControl, metrics, eventLog, log });
  // kube's default RBAC policy, reconciled once the server listens (kube's rbac/bootstrap-roles post-start hook).
  const rbacBootstrap = new RbacBootstrap(store, catalog, log);
  // CRDs already in the file publish their schemas right after start, in the background (as
  // kube's OpenAPI controller does): building 100 definitions would double the start time.
  // Until then their objects are typed from the compiled schema (registry/crd/runtime.ts).
  let deferDefinitions = true;
  const deferred = new Set<string>();
  const publishDefinitions = (crd: CustomResourceDefinition, infos: ResourceInfo[]) => {
    const defs = crdDefinitions(crd);
    model.setDefinitions(crd.metadata.name, defs.definitions, defs.v2Definitions);
    for (const info of infos) info.definition = defs.byVersion[info.version]?.definition;
  };
  const crdController = new CrdController(store, catalog, eventLog, {
    onRegister(crd, infos) {
      if (deferDefinitions) deferred.add(crd.metadata.name);
      else publishDefinitions(crd, infos);
    },
    onUnregister(name) {
      model.removeDefinitions(name);
      forgetConverter(name);
    },
  });
  await crdController.start();
  deferDefinitions = false;
  const crdInfo = catalog.lookup('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!;
  const publishDeferred = () => {
    const [name] = deferred;
    if (name === undefined || closed) return;
    deferred.delete(name);
    const crd = store.tryGet(crdInfo, '', name);
    const infos = crdController.servedBy(name);
    // A CRD written since start was published by its own write.
    if (crd && infos.length && infos[0].definition === undefined) publishDefinitions(crd, infos);
    setImmediate(publishDeferred);
  };
  let closed = false;

  let ready = false;
  const compactor = new Compactor(
    eventLog,
    opts.compactionIntervalMs ?? 5 * 60_000,
    (r, ms) =>
      logger.info('Compacted', 'resourceVersion', r.compactedRv, 'eventsRemoved', r.removed, 'slices', r.slices, 'longestSlice', Duration.ofMillis(r.longestSliceMs), 'pagesReleased', r.pagesReleased, 'vacuumSlices', r.vacuumSlices, 'longestVacuumSlice', Duration.ofMillis(r.longestVacuumMs), 'duration', Duration.ofMillis(ms)),
    (e) => logger.error(e, 'Compaction failed'),
  );
  compactor.start();
  const eventTtlMs = opts.eventTtlMs ?? 60 * 60_000;
  const eventTtl = eventTtlMs > 0 ? new EventTtlController(store, catalog, eventLog, eventTtlMs) : undefined;
  eventTtl?.start();
  const csrSigner = new CsrSigningController(store, catalog, eventLog, pki);
  csrSigner.start();
  const csrApprover = controllerEnabled(opts.controllers, CSR_APPROVING_CONTROLLER) ? new CsrApprovingController(store, catalog, eventLog, authorizers) : undefined;
  csrApprover?.start();
  const csrCleaner = new CsrCleanerController(store, catalog, opts.csrCleanerIntervalMs, log);
  csrCleaner.start();
  const snapshots = new SnapshotScheduler(opts.dataDir, opts.snapshotIntervalMs ?? 0, opts.snapshotRetention ?? DEFAULT_SNAPSHOT_RETENTION, log);
  snapshots.start();
  const sqlite = sqliteCheck(db);
  // Token authenticators in kube's order (static tokens, service-account and bootstrap tokens, OIDC,
  // the webhook), each added as its issue part lands.
  const serviceAccountTokens = serviceAccountTokensFor(opts, serviceAccountKeys, store, catalog);
  // The API server's audiences (--api-audiences, else the issuers), which audience-agnostic tokens carry.
  const apiAudiences = serviceAccountTokens.apiAudiences;
  const tokenAuthenticators: TokenAuthenticator[] = [];
  if (authFiles.staticTokens) tokenAuthenticators.push(staticTokenAuthenticator(authFiles.staticTokens, apiAudiences));
  // Legacy (Secret-based) tokens before bound ones, as kube orders them.
  const legacyTokenObjects = new LegacyTokenStoreObjects(store, catalog, log);
  tokenAuthenticators.push(new LegacyServiceAccountTokens(serviceAccountKeys, apiAudiences, legacyTokenObjects));
  tokenAuthenticators.push(serviceAccountTokens);
  if (opts.enableBootstrapTokenAuth ?? true) {
    const bootstrapSecrets = new BootstrapTokenSecretCache(store.listReadable(catalog.lookup('', 'v1', 'secrets')!, BOOTSTRAP_TOKEN_NAMESPACE));
    eventLog.onCommit((events) => bootstrapSecrets.observe(events));
    tokenAuthenticators.push(bootstrapTokenAuthenticator({ lookup: bootstrapSecrets.lookup, implicitAudiences: apiAudiences }));
  }
  // --authentication-config's JWT authenticators are reloaded with its file (kube's); the --oidc-* flags' are fixed.
  const jwtAuthenticators: (TokenAuthenticator & { start(): void; close(): void })[] = opts.authenticationConfigFile
    ? [new ReloadableJwtAuthenticators({ file: opts.authenticationConfigFile, initial: authFiles.structured, serviceAccountIssuers: serviceAccountIssuersOf(opts), apiAudiences, log, timing: opts.jwtTiming, intervalMs: opts.authenticationConfigReloadIntervalMs })]
    : authFiles.structured.jwt.map((spec) => new JwtAuthenticator(spec, { apiAudiences, log, timing: opts.jwtTiming }));
  for (const jwt of jwtAuthenticators) jwt.start();
  tokenAuthenticators.push(...jwtAuthenticators);
  // The webhook stays last (kube's order): only tokens nobody else knows reach it.
  const tokenWebhook = authFiles.tokenWebhook && tokenWebhookAuthenticator(authFiles.tokenWebhook, { cacheTtlMs: opts.authenticationTokenWebhookCacheTtlMs, implicitAudiences: apiAudiences, log, userAgent: `kube-apiserver/${catalog.kubernetesVersion} (${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}) kubernetes/hearth` });
  if (tokenWebhook) tokenAuthenticators.push(tokenWebhook);
  // kube's token cache over the union (successes for 10 s): what bearer tokens and TokenReview ask.
  const cachedTokens = [cachedTokenAuthenticator(tokenAuthenticators, { ttlMs: opts.tokenSuccessCacheTtlMs })];
  let url = '';
  const app = buildApp({
    log: eventLog,
    metrics,
    flowControlConfig,
    logger,
    flowControl,
    catalog,
    model,
    store,
    watch,
    // kube's order: the authenticating proxy, client certificates, bearer tokens.
    authenticators: [
      ...(authFiles.requestHeader ? [requestHeaderAuthenticator(authFiles.requestHeader)] : []),
      x509Authenticator(authFiles.requestHeader ? clientCaBundle : undefined),
      bearerTokenAuthenticator(cachedTokens),
    ],
    authorizers,
    anonymous: authFiles.structured.anonymous?.enabled ?? opts.anonymousAuth ?? true,
    anonymousPaths: authFiles.structured.anonymous?.conditions?.length ? authFiles.structured.anonymous.conditions.map((c) => c.path) : undefined,
    tokenReviewer: { authenticators: cachedTokens, apiAudiences },
    health: {
      livez: [
        { name: 'ping', check: () => undefined },
        { name: 'log', check: () => undefined },
        { name: 'sqlite', check: sqlite },
        // (kube lists its post-start hooks in /livez too)
        { name: BOOTSTRAP_ROLES_HOOK, check: rbacBootstrap.healthCheck },
        ...(apfConfiguration ? [{ name: APF_CONFIG_PRODUCER_HOOK, check: apfConfiguration.healthCheck }] : []),
      ],
      readyz: [
        { name: 'ping', check: () => undefined },
        { name: 'log', check: () => undefined },
        { name: 'sqlite', check: sqlite },
        { name: 'poststarthook/bootstrap-namespaces', check: () => undefined },
        { name: BOOTSTRAP_ROLES_HOOK, check: rbacBootstrap.healthCheck },
        ...(apfConfiguration ? [{ name: APF_CONFIG_PRODUCER_HOOK, check: apfConfiguration.healthCheck }] : []),
        { name: 'shutdown', check: () => (ready ? undefined : 'not serving') },
      ],
    },
    serverAddress: `${opts.bindAddress}:${opts.securePort}`,
    tokenRequest: { tokens: serviceAccountTokens, maxExpirationSeconds: opts.serviceAccountMaxTokenExpirationSeconds ?? 0, extendExpiration: opts.serviceAccountExtendTokenExpiration ?? true },
    serviceAccountIssuer: { tokens: serviceAccountTokens, jwksUri: () => opts.serviceAccountJwksUri || url + JWKS_PATH },
    auditor,
  });

  // HTTP/2 with an HTTP/1.1 fallback, as kube-apiserver serves (server/http/listener.ts).
  // Each request first finishes a batch the writer has committed (EventLog.pollCommitted).
  const handle = app.callback() as unknown as RequestHandler;
  const listener = await listen((req, res) => {
    eventLog.pollCommitted();
    return handle(req, res);
  }, {
    key: pki.servingKeyPem,
    cert: pki.servingCertPem,
    // Client certificates verify against hearth's CA, the --client-ca-file bundle and the proxy's CA.
    ca: authFiles.requestHeader ? `${clientCaBundle.trimEnd()}\n${authFiles.requestHeader.caPem}` : clientCaBundle,
    bound,
    limits: opts.connectionLimits,
    http2Implementation: opts.http2Implementation,
  });
  const port = listener.port;
  // Until it is done /readyz says so; startServer resolves after it (a failure leaves the server unready, logged).
  await rbacBootstrap.run().catch((e: unknown) => log(`error: ${e instanceof Error ? e.message : String(e)}`));
  await bootstrapKubernetesService(store, catalog, opts.bindAddress, port, serviceCIDRs[0]);
  // Services stored under other ranges keep their values; kube's repair controllers report them.
  for (const line of outOfRangeServiceReports(store.listCurrent(servicesInfo, undefined), serviceCIDRs, nodePortRange)) log(line);
  url = serverUrlFor(opts.bindAddress, port);
  const kubeconfigPath = writeAdminKubeconfig(opts.dataDir, pki, url);
  await bootstrapSigner?.publishClusterInfo(url);
  ready = true;
  setImmediate(publishDeferred);
  logger.info('Controllers started', 'controllers', [nsController, authenticationTrust, saController, rootCaPublisher, tokensController, legacyTokenTracking, legacyTokenCleaner, tokenCleaner, bootstrapSigner, clusterRoleAggregation, policyStatus, quotaController, storageProtection, crdController, eventTtl, csrSigner, csrApprover, csrCleaner].filter((c) => c !== undefined).map((c) => c.constructor.name).join(','));
  // (kube-apiserver's secure serving says it so)
  logger.info(`Serving securely on ${opts.bindAddress.includes(':') ? `[${opts.bindAddress}]` : opts.bindAddress}:${port}`);
  log(`hearth serving the Kubernetes ${catalog.kubernetesVersion} API at ${url}`);

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    dataDir: opts.dataDir,
    kubeconfigPath,
    pki,
    store,
    catalog,
    eventLog,
    close() {
      closing ??= (async () => {
        ready = false;
        closed = true;
        logger.info('Shutting down: unready, stopping controllers, draining connections');
        for (const jwt of jwtAuthenticators) jwt.close();
        rbacBootstrap.stop();
        flowControl.stop();
        const controllersDone = Promise.all([nsController.stop(), authenticationTrust.stop(), saController?.stop(), rootCaPublisher?.stop(), clusterRoleAggregation?.stop(), quotaController?.stop(), policyStatus?.stop(), storageProtection.stop(), tokensController?.stop(), legacyTokenTracking.stop(), legacyTokenCleaner?.stop(), tokenCleaner?.stop(), bootstrapSigner?.stop(), crdController.stop(), eventTtl?.stop(), csrSigner.stop(), csrApprover?.stop(), csrCleaner.stop(), apfConfiguration?.stop()]);
        compactor.stop();
        await snapshots.stop();
        await listener.close();
        // What the audit backends buffer is sent (or written) once no request is left.
        await auditor?.shutdown();
        logger.info('Listener closed: connections drained');
        tokenWebhook?.close();
        reloadable?.stop();
        for (const w of staticChain?.webhooks ?? []) w.close();
        // What the controllers are doing finishes before the store goes (and legacy tokens' last-used labels).
        await controllersDone;
        await legacyTokenObjects.stop();
        // Let writes already queued commit before the file closes.
        await eventLog.close();
        checkpointOnStop(db, log);
        db.close();
        lock.release();
        logger.info('Store closed: shutdown complete', 'resourceVersion', eventLog.currentRv);
      })();
      return closing;
    },
  };
}

/** The --requestheader-* flags among the server's options. */
function requestHeaderOptions(opts: ServerOptions): RequestHeaderOptions {
  return {
    clientCaFile: opts.requestHeaderClientCaFile,
    allowedNames: opts.requestHeaderAllowedNames,
    usernameHeaders: opts.requestHeaderUsernameHeaders,
    uidHeaders: opts.requestHeaderUidHeaders,
    groupHeaders: opts.requestHeaderGroupHeaders,
    extraHeadersPrefix: opts.requestHeaderExtraHeadersPrefix,
  };
}

/** The service-account issuers, which JWT authenticators may not claim (kube's disallowed issuers). */
function serviceAccountIssuersOf(opts: ServerOptions): string[] {
  return opts.serviceAccountIssuers?.length ? opts.serviceAccountIssuers : [DEFAULT_SERVICE_ACCOUNT_ISSUER];
}

/** The service-account token issuer and authenticator, over the keys read (or generated into pki/) at start. */
function serviceAccountTokensFor(opts: ServerOptions, keys: ServiceAccountKeys, store: GenericStore, catalog: ResourceCatalog): ServiceAccountTokens {
  const issuers = opts.serviceAccountIssuers?.length ? opts.serviceAccountIssuers : [DEFAULT_SERVICE_ACCOUNT_ISSUER];
  const infos = {
    serviceaccounts: catalog.lookup('', 'v1', 'serviceaccounts')!,
    pods: catalog.lookup('', 'v1', 'pods')!,
    secrets: catalog.lookup('', 'v1', 'secrets')!,
    nodes: catalog.lookup('', 'v1', 'nodes')!,
  };
  const lookup = (resource: TokenObjectResource, ns: string, name: string) => (name ? store.tryGet(infos[resource], ns, name) : undefined);
  return new ServiceAccountTokens({ issuers, apiAudiences: opts.apiAudiences?.length ? opts.apiAudiences : issuers, keys }, lookup);
}

/**
 * The RBAC policy in memory: the four kinds as stored at start, then every committed change to
 * them (the commit stream reaches it before the next request is handled), so that no
 * authorization decision reads storage.
 */
function rbacPolicyIndex(store: GenericStore, catalog: ResourceCatalog, eventLog: EventLog): RbacPolicyIndex {
  const index = new RbacPolicyIndex();
  const kinds: [RbacKind, string][] = [['Role', 'roles'], ['ClusterRole', 'clusterroles'], ['RoleBinding', 'rolebindings'], ['ClusterRoleBinding', 'clusterrolebindings']];
  const kindOfResource = new Map<string, RbacKind>();
  for (const [kind, resource] of kinds) {
    const info = catalog.lookup('rbac.authorization.k8s.io', 'v1', resource)!;
    kindOfResource.set(qualifiedResourceOf(info), kind);
    for (const obj of store.listReadable(info, undefined)) index.upsert(kind, obj);
  }
  eventLog.onCommit((events) => {
    for (const e of events) {
      const kind = kindOfResource.get(e.key.res);
      if (kind === undefined) continue;
      if (e.type === 'DELETED') index.remove(kind, e.key.ns, e.key.name);
      else index.upsert(kind, e.object);
    }
  });
  return index;
}

/**
 * The admission webhooks in memory: both configuration kinds as stored at start, then every
 * committed change to them, so that admission never reads storage to learn which webhooks exist.
 */
function admissionWebhookIndex(store: GenericStore, catalog: ResourceCatalog, eventLog: EventLog): WebhookConfigurationIndex {
  const index = new WebhookConfigurationIndex();
  const kindOfResource = new Map<string, WebhookKind>();
  for (const [kind, resource] of [
    ['MutatingWebhookConfiguration', 'mutatingwebhookconfigurations'],
    ['ValidatingWebhookConfiguration', 'validatingwebhookconfigurations'],
  ] as const) {
    const info = catalog.lookup('admissionregistration.k8s.io', 'v1', resource)!;
    kindOfResource.set(qualifiedResourceOf(info), kind);
    for (const obj of store.listReadable(info, undefined)) index.upsert(kind, obj);
  }
  eventLog.onCommit((events) => {
    for (const e of events) {
      const kind = kindOfResource.get(e.key.res);
      if (kind === undefined) continue;
      if (e.type === 'DELETED') index.remove(kind, e.key.name);
      else index.upsert(kind, e.object);
    }
  });
  return index;
}

/**
 * The Node authorizer's graph: pods, PersistentVolumes, VolumeAttachments and ResourceSlices as
 * stored at start, then every committed change to them (graph-populator.ts), so that no
 * decision reads storage.
 */
function nodeAuthorizerGraph(store: GenericStore, catalog: ResourceCatalog, eventLog: EventLog): NodeGraph {
  const graph = new NodeGraph();
  const infos: [GraphResource, ResourceInfo][] = [
    ['pods', catalog.lookup('', 'v1', 'pods')!],
    ['persistentvolumes', catalog.lookup('', 'v1', 'persistentvolumes')!],
    ['volumeattachments.storage.k8s.io', catalog.lookup('storage.k8s.io', 'v1', 'volumeattachments')!],
    ['resourceslices.resource.k8s.io', catalog.lookup('resource.k8s.io', 'v1', 'resourceslices')!],
  ];
  const resourceOf = new Map<string, GraphResource>();
  for (const [resource, info] of infos) {
    resourceOf.set(qualifiedResourceOf(info), resource);
    for (const obj of store.listReadable(info, undefined)) applyGraphChange(graph, resource, false, obj);
  }
  eventLog.onCommit((events) => {
    for (const e of events) {
      const resource = resourceOf.get(e.key.res);
      if (resource !== undefined) applyGraphChange(graph, resource, e.type === 'DELETED', e.object, e.prevObject);
    }
  });
  return graph;
}

/**
 * ResourceQuota admission's charge: the quota's status.used, conditional on the quota as admission
 * read it (kube's quota evaluator's UpdateStatus through the loopback client); false when it
 * changed or went meanwhile.
 */
async function writeQuotaUsed(store: GenericStore, info: ResourceInfo, quota: QuotaView, used: Record<string, string>): Promise<boolean> {
  // (a copy: the quota is the committed object the index shares, and an update fills in its metadata)
  const body = { ...(JSON.parse(JSON.stringify(quota)) as QuotaView), status: { ...(quota.status ?? {}), used } };
  try {
    await store.update(info, quota.metadata.namespace ?? '', quota.metadata.name, body, controllerWriteContext('kube-apiserver'), 'status');
    return true;
  } catch (e) {
    if (e instanceof ApiError && (e.code === 409 || e.code === 404)) return false;
    throw e;
  }
}

async function bootstrapNamespaces(store: GenericStore, catalog: ResourceCatalog): Promise<void> {
  const info = catalog.lookup('', 'v1', 'namespaces')!;
  const ctx: RequestContext = { user: LOOPBACK_USER, dryRun: false, fieldValidation: 'Ignore', warnings: [] };
  for (const name of SYSTEM_NAMESPACES) {
    if (store.tryGet(info, '', name)) continue;
    await store.create(info, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, ctx);
  }
}

/**
 * The default/kubernetes Service (the primary service range's first address, port 443) with the
 * API server as its endpoint, as kube-apiserver keeps it. One made under another range keeps its address.
 */
async function bootstrapKubernetesService(store: GenericStore, catalog: ResourceCatalog, bindAddress: string, port: number, primary: ServiceCIDR): Promise<void> {
  const ctx: RequestContext = { user: LOOPBACK_USER, dryRun: false, fieldValidation: 'Ignore', warnings: [] };
  const services = catalog.lookup('', 'v1', 'services')!;
  if (!store.tryGet(services, 'default', 'kubernetes')) {
    await store.create(services, 'default', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'kubernetes', labels: { component: 'apiserver', provider: 'kubernetes' } },
      spec: { type: 'ClusterIP', clusterIP: formatIP(primary.first, primary.family), ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: port }], sessionAffinity: 'None' },
    }, ctx);
  }
  const address = bindAddress === '0.0.0.0' || bindAddress === '::' || !bindAddress ? '127.0.0.1' : bindAddress;
  const slices = catalog.lookup('discovery.k8s.io', 'v1', 'endpointslices')!;
  const slice = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'kubernetes', labels: { 'kubernetes.io/service-name': 'kubernetes', 'endpointslice.kubernetes.io/managed-by': 'endpointslicemirroring-controller.k8s.io' } },
    addressType: address.includes(':') ? 'IPv6' : 'IPv4',
    endpoints: [{ addresses: [address], conditions: { ready: true } }],
    ports: [{ name: 'https', port, protocol: 'TCP' }],
  };
  const current = store.tryGet(slices, 'default', 'kubernetes');
  if (!current) await store.create(slices, 'default', slice, ctx);
  else await store.update(slices, 'default', 'kubernetes', { ...slice, metadata: { ...current.metadata, labels: slice.metadata.labels } }, ctx);
}

/**
 * A clean stop leaves everything in hearth.db and an empty WAL, so that hearth.db and pki/ copied
 * from a stopped server are a complete backup. The storage threads are gone: this is the server's
 * last connection. A reader in another process (a backup) can keep part of the WAL in use.
 */
function checkpointOnStop(db: Db, log: (line: string) => void): void {
  try {
    const [r] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number; log: number; checkpointed: number }[];
    if (r.busy) log(`stopping: the WAL could not be emptied (another process is reading the store); the next start replays it`);
  } catch (e) {
    log(`stopping: WAL checkpoint failed: ${(e as Error).message}`);
  }
}

/** The sqlite health check: a query on the main connection (prepared once; probes come often). */
function sqliteCheck(db: Db): () => string | undefined {
  const ping = db.prepare('SELECT 1');
  return () => {
    try {
      ping.get();
      return undefined;
    } catch (e) {
      return (e as Error).message;
    }
  };
}

/** A random key generated once and kept in the data file. */
function persistentSecret(db: Db, name: string): Buffer {
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(name) as { value: string } | undefined;
  if (row) return Buffer.from(row.value, 'base64');
  const key = randomBytes(32);
  db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)').run(name, key.toString('base64'));
  return key;
}
