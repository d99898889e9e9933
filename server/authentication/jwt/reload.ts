// --authentication-config's reload, as kube-apiserver's BuiltInAuthenticationOptions.ApplyTo does
// it (pkg/kubeapiserver/options/authentication.go): the file is read again when it changes (a
// watch of its folder) and at least every interval (kube's minute); new bytes are decoded and
// validated as at start, and the anonymous section may not change ("anonymous: Forbidden: changed
// from initial configuration file"). A file that fails to load or validate is logged and not
// retried until it changes again; one that is valid gets new JWT authenticators, which replace the
// old ones once every one of them has initialized (discovery done), within kube's
// UpdateAuthenticationConfigTimeout (a minute) — otherwise the update failed, is logged, and is
// tried again at the next check. Tokens go through the current authenticators in order (the first
// user wins; the first error is kept when nobody names one), as the server's token union does.
import { watch, readFileSync, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { AuthResult } from '../authenticator.ts';
import type { TokenAuthenticator } from '../token.ts';
import { ALL_VALID_SIGNING_ALGS, decodeAuthenticationConfig, validateAuthenticationConfiguration, type AnonymousConfig, type JwtAuthenticatorSpec } from './config.ts';
import { JwtAuthenticator, type JwtAuthenticatorOptions } from './jwt-authenticator.ts';
import { fieldErrorsText, forbiddenError } from '../../validation/field.ts';

/** kube's reload interval for the authentication configuration file. */
export const AUTHENTICATION_CONFIG_RELOAD_INTERVAL_MS = 60_000;
/** kube's UpdateAuthenticationConfigTimeout. */
export const UPDATE_AUTHENTICATION_CONFIG_TIMEOUT_MS = 60_000;

export interface JwtReloadOptions extends JwtAuthenticatorOptions {
  file: string;
  /** The JWT authenticators the server started with, and the anonymous section it read. */
  initial: { jwt: JwtAuthenticatorSpec[]; anonymous?: AnonymousConfig };
  /** The service-account issuers a JWT issuer may not be. */
  serviceAccountIssuers: readonly string[];
  intervalMs?: number;
  updateTimeoutMs?: number;
}

/** The JWT authenticators of an --authentication-config file, replaced when the file changes to a valid one. */
export class ReloadableJwtAuthenticators implements TokenAuthenticator {
  readonly name = 'jwt';
  private current: JwtAuthenticator[];
  private tracked: string;
  private watcher?: FSWatcher;
  private interval?: NodeJS.Timeout;
  private pendingCheck?: NodeJS.Timeout;
  private checking = false;
  private closed = false;

  constructor(private readonly opts: JwtReloadOptions) {
    this.current = opts.initial.jwt.map((spec) => new JwtAuthenticator(spec, opts));
    this.tracked = readFileSync(opts.file, 'utf8');
  }

  /** Starts the authenticators' discovery, the watch and the periodic check. */
  start(): void {
    for (const jwt of this.current) jwt.start();
    const file = this.opts.file;
    try {
      this.watcher = watch(dirname(file), (_event, name) => {
        if (name !== null && name !== basename(file)) return;
        clearTimeout(this.pendingCheck);
        this.pendingCheck = setTimeout(() => void this.checkFile(), 50);
        this.pendingCheck.unref();
      });
      this.watcher.on('error', (e) => this.opts.log(`watching authentication config file: ${e.message}`));
      this.watcher.unref();
    } catch (e) {
      this.opts.log(`watching authentication config file: ${(e as Error).message}`);
    }
    this.interval = setInterval(() => void this.checkFile(), this.opts.intervalMs ?? AUTHENTICATION_CONFIG_RELOAD_INTERVAL_MS);
    this.interval.unref();
  }

  async authenticateToken(token: string, audiences?: readonly string[]): Promise<AuthResult> {
    let error: AuthResult;
    for (const jwt of this.current) {
      const r = await jwt.authenticateToken(token, audiences);
      if (r && 'user' in r) return r;
      if (r && !error) error = r;
    }
    return error;
  }

  /** One look at the file (kube's WatchUntil callback; one at a time, as its mutex makes it). */
  async checkFile(): Promise<void> {
    if (this.checking || this.closed) return;
    this.checking = true;
    try {
      await this.check();
    } finally {
      this.checking = false;
    }
  }

  private async check(): Promise<void> {
    const { log } = this.opts;
    let data: string;
    try {
      data = readFileSync(this.opts.file, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      log(`failed to read authentication config file: open ${this.opts.file}: ${code === 'ENOENT' ? 'no such file or directory' : (e as Error).message}`);
      return;
    }
    if (data === this.tracked) return;
    let specs: JwtAuthenticatorSpec[];
    try {
      if (data.length === 0) throw new Error('empty config data');
      const config = decodeAuthenticationConfig(data);
      const { specs: validated, errors } = validateAuthenticationConfiguration(config, this.opts.serviceAccountIssuers, ALL_VALID_SIGNING_ALGS);
      if (!isDeepStrictEqual(config.anonymous, this.opts.initial.anonymous)) errors.push(forbiddenError('anonymous', 'changed from initial configuration file'));
      if (errors.length) {
        // Not semantically valid, and never will be: not tried again until the file changes.
        this.tracked = data;
        log(`failed to validate authentication config: ${fieldErrorsText(errors)}`);
        return;
      }
      specs = validated;
    } catch (e) {
      this.tracked = data;
      log(`failed to load authentication config: ${(e as Error).message}`);
      return;
    }
    const next = specs.map((spec) => new JwtAuthenticator(spec, this.opts));
    for (const jwt of next) jwt.start();
    const deadline = Date.now() + (this.opts.updateTimeoutMs ?? UPDATE_AUTHENTICATION_CONFIG_TIMEOUT_MS);
    while (!next.every((jwt) => jwt.initialized)) {
      if (this.closed || Date.now() >= deadline) {
        for (const jwt of next) jwt.close();
        // Could still resolve (an issuer coming up): tried again at the next check.
        if (!this.closed) log('failed to update authentication config: context deadline exceeded');
        return;
      }
      await new Promise((r) => setTimeout(r, 100).unref());
    }
    const old = this.current;
    this.current = next;
    this.tracked = data;
    for (const jwt of old) jwt.close();
    log('reloaded authentication config');
  }

  /** Stops watching and the authenticators' discovery. */
  close(): void {
    this.closed = true;
    this.watcher?.close();
    clearInterval(this.interval);
    clearTimeout(this.pendingCheck);
    for (const jwt of this.current) jwt.close();
  }
}
