// What every verb handler is given: the request, the resource it names and the services it
// calls. index.ts routes a request to its handler; the handlers import this, never index.ts.
import type { ResourceCatalog } from '../../schema/catalog.ts';
import type { ResourceInfo } from '../../schema/types.ts';
import type { TypeModel } from '../../schema/model.ts';
import type { GenericStore } from '../../registry/store.ts';
import type { RequestInfo } from '../request-info.ts';
import type { HttpContext } from '../state.ts';
import type { WatchHub } from '../../registry/watch/index.ts';
import type { TokenAuthenticator } from '../../authentication/token.ts';
import type { ServiceAccountTokens } from '../../authentication/service-account-token.ts';
import type { Authorizer } from '../../authorization/authorizer.ts';
import type { WatchMetrics } from '../../metrics/watch.ts';

export interface ResourceHandlerDeps {
  catalog: ResourceCatalog;
  store: GenericStore;
  model: TypeModel;
  watch: WatchHub;
  /** What TokenReview authenticates tokens with (none: every review is unauthenticated). */
  tokenReviewer?: TokenReviewer;
  /** The TokenRequest API's issuer and limits (serviceaccounts/token); absent, it answers 400. */
  tokenRequest?: TokenRequestConfig;
  /** The authorizer chain the access reviews ask (none: every review is refused). */
  authorizers?: readonly Authorizer[];
  /** apiserver_watch_events_total and apiserver_watch_events_sizes (none: watches are not metered). */
  watchMetrics?: WatchMetrics;
}

/** What TokenReview runs a token through: the token authenticators and --api-audiences. */
export interface TokenReviewer {
  authenticators: readonly TokenAuthenticator[];
  apiAudiences: readonly string[];
}

/** What the TokenRequest API is configured with (kube-apiserver's flags). */
export interface TokenRequestConfig {
  tokens: ServiceAccountTokens;
  /** --service-account-max-token-expiration in seconds; 0: no cap. */
  maxExpirationSeconds: number;
  /** --service-account-extend-token-expiration. */
  extendExpiration: boolean;
}

export interface ResourceRequest {
  ctx: HttpContext;
  /** The resource the URL names, in the version it names. */
  info: ResourceInfo;
  ri: RequestInfo;
  /** The object's namespace: the request's for a namespaced kind, "" for a cluster-scoped one. */
  ns: string;
  deps: ResourceHandlerDeps;
}

/** Answers one verb: writes the response or throws an ApiError. */
export type VerbHandler = (req: ResourceRequest) => Promise<void> | void;
