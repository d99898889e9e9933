// hearth's entry point: the data-directory subcommands (backup, restore, snapshots: cli/ops.ts),
// else the server with the flags cli/flags.ts parses. What scripts wait for goes to stdout (the
// URL served and the KUBECONFIG line); hearth's log goes to stderr, as kube components log.
// `npm start` also sets node's memory options (package.json; why: bench/bench-kit.ts startCommand).
import { resolve } from 'node:path';
import { DEFAULT_AUDIT_LOG_OPTIONS, DEFAULT_AUDIT_WEBHOOK_OPTIONS } from './audit/options.ts';
import { OPS_COMMANDS, parseFlags } from './cli/flags.ts';
import { newLogger, setProcessLogger } from './logging/logger.ts';
import { servedKubernetesVersion } from './schema/catalog.ts';

// Loaded on demand: a subcommand (often run beside a busy server) loads none of the server's modules.
if (OPS_COMMANDS.includes(process.argv[2])) {
  const { runOpsCommand } = await import('./cli/ops.ts');
  process.exit(await runOpsCommand(process.argv[2], process.argv.slice(3)));
}
const { startServer } = await import('./server.ts');
const flags = parseFlags(process.argv.slice(2));
const logger = newLogger(flags.logging);
// (one process, one log: what is logged without a server's logger is written in the same format)
setProcessLogger(logger);
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
    logger.info('Received a signal: shutting down', 'signal', signal);
    server.close().then(
      () => process.exit(0),
      (e: unknown) => {
        logger.error(e, 'Shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // Only once a signal shuts down cleanly: whoever waits for these lines may stop the server at once.
  console.log(`hearth serving the Kubernetes ${servedKubernetesVersion()} API at ${server.url}`);
  console.log(`export KUBECONFIG=${server.kubeconfigPath}; kubectl get namespaces`);
} catch (e) {
  // (what refused the start, alone on stderr: kube's words, which tests and operators read whole)
  console.error(`hearth: ${(e as Error).message}`);
  process.exit(1);
}
