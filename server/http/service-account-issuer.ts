// Service-account issuer discovery, as kube's pkg/routes/openidmetadata.go serves it: the OIDC
// provider configuration at /.well-known/openid-configuration (application/json) and the JSON Web
// Key Set at /openid/v1/jwks (application/jwk-set+json), both `Cache-Control: public,
// max-age=3600`, so that a system outside the cluster can verify service-account tokens offline.
// kube installs them only for an https issuer; so does hearth. Who may read them is the
// authorizer's (public info: authenticated users).
import type Router from '@koa/router';
import { JWKS_PATH, OPENID_CONFIG_PATH, type ServiceAccountTokens } from '../authentication/service-account-token.ts';
import type { RequestState } from './state.ts';

export interface ServiceAccountIssuerDiscovery {
  tokens: ServiceAccountTokens;
  /** The JWKS URL the configuration names (kube: --service-account-jwks-uri, else the server's address). */
  jwksUri(): string;
}

/** kube's cacheControlTemplate with the static key getter's 3600 s. */
const CACHE_CONTROL = 'public, max-age=3600';

export function registerServiceAccountIssuerRoutes(router: Router<RequestState>, discovery: ServiceAccountIssuerDiscovery): void {
  if (!discovery.tokens.issuer.startsWith('https://')) return;
  let config: Buffer | undefined;
  let keyset: Promise<Buffer> | undefined;
  router.get(OPENID_CONFIG_PATH, (ctx) => {
    config ??= discovery.tokens.openIDConfiguration(discovery.jwksUri());
    ctx.set('Cache-Control', CACHE_CONTROL);
    ctx.set('Content-Type', 'application/json');
    ctx.body = config;
  });
  router.get(JWKS_PATH, async (ctx) => {
    keyset ??= discovery.tokens.jwks();
    const body = await keyset;
    ctx.set('Cache-Control', CACHE_CONTROL);
    ctx.set('Content-Type', 'application/jwk-set+json');
    ctx.body = body;
  });
}
