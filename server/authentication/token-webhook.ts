// Webhook token authentication (--authentication-token-webhook-config-file), as kube's
// plugin/pkg/authenticator/token/webhook does it and pkg/kubeapiserver/authenticator wires it: a
// bearer token no other authenticator knows is POSTed to the webhook named by a kubeconfig as a
// TokenReview (authentication.k8s.io/v1beta1 by default, v1 with
// --authentication-token-webhook-version=v1), with spec.audiences when the request has audiences
// (an API request has the API server's own, as kube's WithAuthentication puts them in its
// context); the answer's status names the user (username, uid, groups, extra) or refuses.
//
// Audiences as kube checks them: the answer's status.audiences, else the API server's implicit
// ones, must intersect the audiences asked for, or the token is not this authenticator's. A call
// that fails (the webhook down, a non-2xx or unreadable answer) is an error — 401 for the request —
// logged as kube logs it; a refusal with status.error is an error too, with the webhook's text
// (which only a TokenReview's status shows; the request itself gets kube's bare "Unauthorized").
//
// Answers are cached for --authentication-token-webhook-cache-ttl (default 2m), users and
// refusals without an error alike; errors are not cached (kube: tokencache.New(webhook, false,
// ttl, ttl)). See token-cache.ts for the keys and the shared in-flight calls.
import { CachedTokenAuthenticator } from './token-cache.ts';
import type { AuthResult } from './authenticator.ts';
import type { TokenAuthenticator } from './token.ts';
import type { UserInfo } from './user.ts';
import { loadWebhookKubeconfig, type WebhookClientConfig } from '../webhook/kubeconfig.ts';
import { WebhookClient, type RetryBackoff } from '../webhook/client.ts';
import { goQuote } from '../go/strconv.ts';

export const TOKEN_WEBHOOK_VERSIONS = ['v1', 'v1beta1'] as const;
export type TokenReviewVersion = (typeof TOKEN_WEBHOOK_VERSIONS)[number];
/** kube-apiserver's default for --authentication-token-webhook-version. */
export const DEFAULT_TOKEN_WEBHOOK_VERSION: TokenReviewVersion = 'v1beta1';
/** kube-apiserver's default for --authentication-token-webhook-cache-ttl. */
export const DEFAULT_TOKEN_WEBHOOK_CACHE_TTL_MS = 2 * 60_000;
/** kube's sharedLookupTimeout: one lookup, retries included, ends after this long. */
const SHARED_LOOKUP_TIMEOUT_MS = 30_000;

export interface TokenWebhookOptions {
  /** --authentication-token-webhook-config-file. */
  configFile: string;
  /** --authentication-token-webhook-version (default v1beta1). */
  version?: string;
  /** --authentication-token-webhook-cache-ttl (default 2m; 0 caches nothing). */
  cacheTtlMs?: number;
  /** The API server's audiences (--api-audiences). */
  implicitAudiences: readonly string[];
  /** Where failed calls are reported. */
  log: (line: string) => void;
  /** The User-Agent of calls to the webhook. */
  userAgent?: string;
  /** The retry's backoff (default kube's: 500 ms, ×1.5, jitter 0.2, 5 attempts); tests shorten it. */
  retryBackoff?: RetryBackoff;
}

/** What the flags name, checked at start: kube's errors for a kubeconfig or version it refuses. */
export interface TokenWebhookConfig {
  client: WebhookClientConfig;
  version: TokenReviewVersion;
}

/** Reads and checks the flags' kubeconfig and version, in kube's order and words (the kubeconfig first). */
export function loadTokenWebhookConfig(configFile: string, version: string = DEFAULT_TOKEN_WEBHOOK_VERSION): TokenWebhookConfig {
  const client = loadWebhookKubeconfig(configFile);
  if (!(TOKEN_WEBHOOK_VERSIONS as readonly string[]).includes(version)) {
    throw new Error(`unsupported authentication webhook version ${goQuote(version)}, supported versions are "v1", "v1beta1"`);
  }
  return { client, version: version as TokenReviewVersion };
}

/** The webhook token authenticator, its cache in front; close() ends its connections. */
export interface TokenWebhookAuthenticator extends TokenAuthenticator {
  close(): void;
}

export function tokenWebhookAuthenticator(config: TokenWebhookConfig, opts: Omit<TokenWebhookOptions, 'configFile' | 'version'>): TokenWebhookAuthenticator {
  const client = new WebhookClient(config.client, { userAgent: opts.userAgent, retryBackoff: opts.retryBackoff });
  const webhook = new WebhookTokenReviewer(client, config.version, opts.implicitAudiences, opts.log);
  const ttl = opts.cacheTtlMs ?? DEFAULT_TOKEN_WEBHOOK_CACHE_TTL_MS;
  const cached = new CachedTokenAuthenticator(webhook, { successTtlMs: ttl, failureTtlMs: ttl, cacheErrors: false });
  return {
    name: 'webhook',
    authenticateToken(token, audiences) {
      // The audiences the request carries: its own, else the API server's (keyed as kube keys them).
      return cached.authenticateToken(token, audiences?.length ? audiences : opts.implicitAudiences);
    },
    close: () => client.close(),
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** encoding/json's type error for a field of the answer. */
class AnswerDecodeError extends Error {}

function jsonKind(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  return Array.isArray(v) ? 'array' : 'object';
}

function typeError(v: unknown, struct: string, field: string, goType: string): AnswerDecodeError {
  return new AnswerDecodeError(`json: cannot unmarshal ${jsonKind(v)} into Go struct field ${struct}.${field} of type ${goType}`);
}

function optString(o: Record<string, unknown>, key: string, struct: string, field: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw typeError(v, struct, `${field}.${key}`, 'string');
  return v;
}

/** A []string (or ExtraValue) field; a map's value is named by the map's field alone, as the decoder kube uses names it. */
function optStrings(o: Record<string, unknown>, key: string, struct: string, field: string, goType = '[]string', inMap = false): string[] | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  const at = inMap ? field : `${field}.${key}`;
  if (!Array.isArray(v)) throw typeError(v, struct, at, goType);
  return v.map((item) => {
    if (typeof item !== 'string') throw typeError(item, struct, at, 'string');
    return item;
  });
}

/** The status of a TokenReview the webhook answered, decoded as client-go decodes it into the version's type. */
interface ReviewStatus {
  authenticated: boolean;
  user: UserInfo;
  audiences?: string[];
  error?: string;
}

function decodeAnswer(body: unknown, version: TokenReviewVersion): ReviewStatus {
  const apiVersion = `authentication.k8s.io/${version}`;
  if (!isObject(body)) throw new AnswerDecodeError(`json: cannot unmarshal ${jsonKind(body)} into Go value of type ${version}.TokenReview`);
  const gotVersion = typeof body.apiVersion === 'string' && body.apiVersion !== '' ? body.apiVersion : apiVersion;
  const gotKind = typeof body.kind === 'string' && body.kind !== '' ? body.kind : 'TokenReview';
  if (gotVersion !== apiVersion || gotKind !== 'TokenReview') {
    // Another version of TokenReview decodes but does not convert; anything else is unknown.
    const other = /^authentication\.k8s\.io\/(v1|v1beta1)$/.exec(gotVersion);
    if (other && gotKind === 'TokenReview') throw new AnswerDecodeError(`converting (${other[1]}.TokenReview) to (${version}.TokenReview): unknown conversion`);
    throw new AnswerDecodeError(`no kind ${goQuote(gotKind)} is registered for version ${goQuote(gotVersion)}`);
  }
  const status = body.status ?? {};
  if (!isObject(status)) throw typeError(status, 'TokenReview', 'status', `${version}.TokenReviewStatus`);
  const authenticated = status.authenticated ?? false;
  if (typeof authenticated !== 'boolean') throw typeError(authenticated, 'TokenReviewStatus', 'status.authenticated', 'bool');
  const userJson = status.user ?? {};
  if (!isObject(userJson)) throw typeError(userJson, 'TokenReviewStatus', 'status.user', `${version}.UserInfo`);
  const user: UserInfo = {
    name: optString(userJson, 'username', 'UserInfo', 'status.user') ?? '',
    groups: optStrings(userJson, 'groups', 'UserInfo', 'status.user') ?? [],
  };
  const uid = optString(userJson, 'uid', 'UserInfo', 'status.user');
  if (uid) user.uid = uid;
  const extraJson = userJson.extra;
  if (extraJson !== undefined && extraJson !== null) {
    if (!isObject(extraJson)) throw typeError(extraJson, 'UserInfo', 'status.user.extra', `map[string]${version}.ExtraValue`);
    // fromEntries defines each key as the answer's own (a "__proto__" key stays a key).
    user.extra = Object.fromEntries(Object.keys(extraJson).map((key) => [key, optStrings(extraJson, key, 'UserInfo', 'status.user.extra', `${version}.ExtraValue`, true) ?? []]));
  }
  const out: ReviewStatus = { authenticated, user };
  const audiences = optStrings(status, 'audiences', 'TokenReviewStatus', 'status');
  if (audiences) out.audiences = audiences;
  const error = optString(status, 'error', 'TokenReviewStatus', 'status');
  if (error) out.error = error;
  return out;
}

/** kube's WebhookTokenAuthenticator (no cache): one TokenReview per call. */
class WebhookTokenReviewer implements TokenAuthenticator {
  readonly name = 'webhook';

  constructor(
    private readonly client: WebhookClient,
    private readonly version: TokenReviewVersion,
    private readonly implicitAudiences: readonly string[],
    private readonly log: (line: string) => void,
  ) {}

  async authenticateToken(token: string, audiences?: readonly string[]): Promise<AuthResult> {
    const wantAudiences = audiences ?? [];
    const checkAudiences = wantAudiences.length > 0;
    // Go's encoding of the version's TokenReview with only the spec set.
    const spec: Record<string, unknown> = { token };
    if (checkAudiences) spec.audiences = [...wantAudiences];
    const review = { kind: 'TokenReview', apiVersion: `authentication.k8s.io/${this.version}`, metadata: { creationTimestamp: null }, spec, status: { user: {} } };
    let status: ReviewStatus;
    try {
      const answer = await this.client.post(review, Date.now() + SHARED_LOOKUP_TIMEOUT_MS);
      status = decodeAnswer(answer.body, this.version);
    } catch (e) {
      // An outage or a misconfiguration, not a bad token: kube logs it for the operator.
      const message = (e as Error).message;
      this.log(`Failed to make webhook authenticator request: ${message}`);
      return { error: message };
    }
    let granted: string[] | undefined;
    if (checkAudiences) {
      const got = status.audiences?.length ? status.audiences : this.implicitAudiences;
      granted = wantAudiences.filter((a) => got.includes(a));
      if (granted.length === 0) return undefined;
    }
    if (!status.authenticated) return status.error ? { error: status.error } : undefined;
    return granted ? { user: status.user, audiences: granted } : { user: status.user };
  }
}
