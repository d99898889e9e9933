// The authorizer chain from its configuration, and --authorization-config's reload, as kube's
// pkg/kubeapiserver/authorizer/reload.go (reloadableAuthorizerResolver) does them: the chain is
// system:masters, then each configured authorizer in order (RBAC and the built-in modes as
// modes.ts has them, each webhook its own WebhookAuthorizer with its own cache). With a file, the
// server answers through a ReloadableAuthorizer holding the current chain: the file is read again
// when it changes (a watch of its folder, so an editor's rename is seen too) and at least every
// interval (kube's minute); new bytes that load and validate to another configuration — keeping
// every non-webhook type the server started with, and adding none of RBAC/Node/ABAC it did not —
// replace the chain at once (webhook caches start empty);
// anything else is logged as kube logs it ("reloading authorization config") and the old chain
// stays. Requests already being decided finish with the chain they started with.
import { watch, readFileSync, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { AuthorizationAttributes, Authorizer, AuthorizerAnswer, RulesResult } from './authorizer.ts';
import { authorize, rulesFor, systemMastersAuthorizer } from './authorizer.ts';
import type { UserInfo } from '../authentication/user.ts';
import { authorizerChain } from './modes.ts';
import { buildAuthorizerConfigs, validateAuthorizationConfigData, type AuthorizerConfig, type ValidatedAuthorizationConfig } from './config.ts';
import type { WebhookAuthorizer, WebhookAuthorizerSettings } from './webhook.ts';

/** kube's reloadInterval. */
export const AUTHORIZATION_CONFIG_RELOAD_INTERVAL_MS = 60_000;
/** How long a replaced chain's webhooks keep their connections for the requests still using them. */
const RETIRED_WEBHOOK_GRACE_MS = 60_000;

/** What a chain is built from beyond its configuration. */
export interface ChainParts {
  rbac: Authorizer;
  /** The Node authorizer, when the configuration names Node at start. */
  node?: Authorizer;
  webhook: (settings: WebhookAuthorizerSettings) => WebhookAuthorizer;
}

/** A chain and the webhooks in it (closed when the chain is retired). */
export interface BuiltChain {
  authorizers: Authorizer[];
  webhooks: WebhookAuthorizer[];
}

/** newForConfig: system:masters, then each authorizer in order. */
export function buildAuthorizerChain(config: readonly AuthorizerConfig[], parts: ChainParts): BuiltChain {
  const authorizers: Authorizer[] = [systemMastersAuthorizer];
  const webhooks: WebhookAuthorizer[] = [];
  for (const a of config) {
    if (a.webhook) {
      const w = parts.webhook(a.webhook);
      webhooks.push(w);
      authorizers.push(w);
    } else {
      // The built-in modes as --authorization-mode builds them (after its system:masters).
      authorizers.push(...authorizerChain([a.type], parts.rbac, parts.node).slice(1));
    }
  }
  return { authorizers, webhooks };
}

/** Types a reload may not add when the server did not start with them (their state is built at start). */
const STARTUP_ONLY_TYPES = ['RBAC', 'Node', 'ABAC'];

export interface ReloadOptions {
  file: string;
  /** The file's text at start, its canonical form and the authorizers it gave. */
  initial: { data: string; canonical: string; authorizers: AuthorizerConfig[] };
  parts: ChainParts;
  log: (line: string) => void;
  /** How often the file is read regardless of the watch (kube: a minute). */
  intervalMs?: number;
}

/** The chain of an --authorization-config file, replaced when the file changes to a valid one. */
export class ReloadableAuthorizer implements Authorizer {
  readonly name = 'reloadable';
  private current: BuiltChain;
  private lastData: string;
  private lastConfig: string;
  private readonly requireNonWebhookTypes: ReadonlySet<string>;
  private readonly retired = new Set<{ chain: BuiltChain; timer: NodeJS.Timeout }>();
  private watcher?: FSWatcher;
  private interval?: NodeJS.Timeout;
  private pendingCheck?: NodeJS.Timeout;

  constructor(private readonly opts: ReloadOptions) {
    this.current = buildAuthorizerChain(opts.initial.authorizers, opts.parts);
    this.lastData = opts.initial.data;
    this.lastConfig = opts.initial.canonical;
    this.requireNonWebhookTypes = new Set(opts.initial.authorizers.filter((a) => a.type !== 'Webhook').map((a) => a.type));
  }

  authorize(a: AuthorizationAttributes): AuthorizerAnswer | Promise<AuthorizerAnswer> {
    return authorize(this.current.authorizers, a);
  }

  rulesFor(user: UserInfo, namespace: string): RulesResult {
    return rulesFor(this.current.authorizers, user, namespace);
  }

  /** Watches the file's folder and reads the file every interval. */
  start(): void {
    const file = this.opts.file;
    try {
      this.watcher = watch(dirname(file), (_event, name) => {
        if (name !== null && name !== basename(file)) return;
        // Several events come for one write: look once they settle.
        clearTimeout(this.pendingCheck);
        this.pendingCheck = setTimeout(() => this.checkFile(), 50);
        this.pendingCheck.unref();
      });
      this.watcher.on('error', (e) => this.opts.log(`watching authorization config file: ${e.message}`));
      // Neither the watch nor the timer keeps the process alive (stop() ends both).
      this.watcher.unref();
    } catch (e) {
      this.opts.log(`watching authorization config file: ${(e as Error).message}`);
    }
    this.interval = setInterval(() => this.checkFile(), this.opts.intervalMs ?? AUTHORIZATION_CONFIG_RELOAD_INTERVAL_MS);
    this.interval.unref();
  }

  /** checkFile: new bytes that make a valid configuration replace the chain; else the old one stays. */
  checkFile(): void {
    const { log } = this.opts;
    let data: string;
    try {
      data = readFileSync(this.opts.file, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      log(`reloading authorization config: open ${this.opts.file}: ${code === 'ENOENT' ? 'no such file or directory' : (e as Error).message}`);
      return;
    }
    if (data === this.lastData) return;
    log('found new authorization config data');
    this.lastData = data;
    let validated: ValidatedAuthorizationConfig;
    try {
      validated = validateAuthorizationConfigData(data, this.requireNonWebhookTypes);
    } catch (e) {
      log(`reloading authorization config: ${(e as Error).message}`);
      return;
    }
    // Other bytes, the same configuration (kube's reflect.DeepEqual): nothing to rebuild.
    if (validated.canonical === this.lastConfig) return;
    log('found new authorization config');
    this.lastConfig = validated.canonical;
    let next: BuiltChain;
    try {
      const authorizers = buildAuthorizerConfigs(validated);
      for (const a of authorizers) {
        if (STARTUP_ONLY_TYPES.includes(a.type) && !this.requireNonWebhookTypes.has(a.type)) throw new Error(`authorizer type ${a.type} is not allowed if it was not enabled at initial server startup`);
      }
      next = buildAuthorizerChain(authorizers, this.opts.parts);
    } catch (e) {
      log(`reloading authorization config: ${(e as Error).message}`);
      return;
    }
    const old = this.current;
    this.current = next;
    if (old.webhooks.length) {
      const entry = { chain: old, timer: setTimeout(() => this.retire(entry), RETIRED_WEBHOOK_GRACE_MS) };
      entry.timer.unref();
      this.retired.add(entry);
    }
    log('reloaded authz config');
  }

  private retire(entry: { chain: BuiltChain; timer: NodeJS.Timeout }): void {
    clearTimeout(entry.timer);
    this.retired.delete(entry);
    for (const w of entry.chain.webhooks) w.close();
  }

  /** Stops watching and closes every webhook's connections. */
  stop(): void {
    this.watcher?.close();
    clearInterval(this.interval);
    clearTimeout(this.pendingCheck);
    for (const entry of [...this.retired]) this.retire(entry);
    for (const w of this.current.webhooks) w.close();
  }
}
