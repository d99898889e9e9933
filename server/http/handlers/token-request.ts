// POST serviceaccounts/{name}/token: a TokenRequest (authentication.k8s.io/v1), what `kubectl
// create token` posts, as kube's TokenREST (pkg/registry/core/serviceaccount/storage/token.go)
// answers it: the ServiceAccount must exist, spec defaults (audiences: the API audiences;
// expirationSeconds: 3600), kube's validation, the bound object (Pod, Secret or Node) looked up
// and its uid held against the reference, the --service-account-max-token-expiration cap (with
// kube's warning) and the pod-bound 3607 s extension; then the token
// (authentication/service-account-token.ts). Nothing is stored.
import { EXPIRATION_EXTENSION_SECONDS, WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS } from '../../authentication/service-account-token.ts';
import { badRequest, conflict, invalid } from '../../errors.ts';
import { canonicalOrder } from '../../registry/object-order.ts';
import { formatRFC3339 } from '../../go/time.ts';
import { isPlainObject } from '../../util/json.ts';
import { goValue, invalidError } from '../../validation/field.ts';
import { readObjectBody } from './body.ts';
import { requestContext } from './options.ts';
import { respondObject } from './shape.ts';
import type { ResourceRequest } from './request.ts';

const TOKEN_REQUEST = 'io.k8s.api.authentication.v1.TokenRequest';
const GROUP = 'authentication.k8s.io';
const KIND = 'TokenRequest';
/** v1's SetDefaults_TokenRequestSpec. */
const DEFAULT_EXPIRATION_SECONDS = 60 * 60;
/** kube's validation.MinTokenAgeSec and its upper bound, 2^32 seconds. */
const MIN_TOKEN_AGE_SECONDS = 10 * 60;
const MAX_TOKEN_AGE_SECONDS = 2 ** 32;

export async function createToken({ ctx, info, ns, ri, deps }: ResourceRequest): Promise<void> {
  const config = deps.tokenRequest;
  if (!config) throw badRequest('service account token issuance is not configured');
  const { store, catalog } = deps;
  const rc = requestContext(ctx, 'CreateOptions');
  const body = await readObjectBody(ctx, info, TOKEN_REQUEST, rc, deps.model);
  // Mutating admission runs before TokenREST.Create, on the request as it came.
  await store.admitSubresourceCreate(info, ns, ri.name, 'token', body, rc);
  const req: Record<string, unknown> = isPlainObject(body) ? body : {};
  const name = ri.name;
  const meta: Record<string, unknown> = isPlainObject(req.metadata) ? { ...req.metadata } : {};
  if (meta.name && meta.name !== name) throw invalid(GROUP, KIND, name, [invalidError('metadata.name', goValue(meta.name), 'must match the service account name if specified')]);
  if (meta.namespace && meta.namespace !== ns) throw invalid(GROUP, KIND, name, [invalidError('metadata.namespace', goValue(meta.namespace), 'must match the service account namespace if specified')]);

  const serviceAccount = store.get(info, ns, name);
  const spec: Record<string, unknown> = isPlainObject(req.spec) ? { ...req.spec } : {};
  const audiences: string[] = Array.isArray(spec.audiences) && spec.audiences.length ? spec.audiences.filter((a): a is string => typeof a === 'string') : [...config.tokens.apiAudiences];
  let expirationSeconds: number = typeof spec.expirationSeconds === 'number' ? spec.expirationSeconds : DEFAULT_EXPIRATION_SECONDS;
  const nowMs = Date.now();
  const now = Math.floor(nowMs / 1000);
  meta.name ||= name;
  meta.namespace ||= ns;
  meta.creationTimestamp = formatRFC3339(now * 1000);

  const errs = [];
  if (expirationSeconds < MIN_TOKEN_AGE_SECONDS) errs.push(invalidError('spec.expirationSeconds', goValue(expirationSeconds), 'may not specify a duration less than 10 minutes'));
  if (expirationSeconds > MAX_TOKEN_AGE_SECONDS) errs.push(invalidError('spec.expirationSeconds', goValue(expirationSeconds), 'may not specify a duration larger than 2^32 seconds'));
  if (errs.length) throw invalid(GROUP, KIND, '', errs);

  let pod: { name: string; uid: string } | undefined;
  let secret: { name: string; uid: string } | undefined;
  let node: { name: string; uid?: string } | undefined;
  const ref = isPlainObject(spec.boundObjectRef) ? (spec.boundObjectRef as Record<string, unknown>) : undefined;
  if (ref) {
    const refName = typeof ref.name === 'string' ? ref.name : '';
    const apiVersion = typeof ref.apiVersion === 'string' ? ref.apiVersion : '';
    const kind = typeof ref.kind === 'string' ? ref.kind : '';
    const slash = apiVersion.indexOf('/');
    const group = slash >= 0 ? apiVersion.slice(0, slash) : '';
    const version = slash >= 0 ? apiVersion.slice(slash + 1) : apiVersion;
    let uid: string;
    if (group === '' && kind === 'Pod') {
      const found = store.get(catalog.lookup('', 'v1', 'pods')!, ns, refName);
      const podSa = found.spec?.serviceAccountName ?? '';
      if (podSa !== name) throw badRequest(`cannot bind token for serviceaccount ${JSON.stringify(name)} to pod running with different serviceaccount name.`);
      uid = found.metadata.uid;
      pod = { name: refName, uid };
      const nodeName: unknown = found.spec?.nodeName;
      if (typeof nodeName === 'string' && nodeName) {
        // A node that is gone still leaves its name in the token (kube's ServiceAccountTokenPodNodeInfo).
        const n = store.tryGet(catalog.lookup('', 'v1', 'nodes')!, '', nodeName);
        node = n ? { name: nodeName, uid: n.metadata.uid } : { name: nodeName };
      }
    } else if (group === '' && kind === 'Node') {
      const found = store.get(catalog.lookup('', 'v1', 'nodes')!, '', refName);
      uid = found.metadata.uid;
      node = { name: refName, uid };
    } else if (group === '' && kind === 'Secret') {
      const found = store.get(catalog.lookup('', 'v1', 'secrets')!, ns, refName);
      uid = found.metadata.uid;
      secret = { name: refName, uid };
    } else {
      throw badRequest(`cannot bind token to object of type ${group}/${version}, Kind=${kind}`);
    }
    if (typeof ref.uid === 'string' && ref.uid && ref.uid !== uid) {
      throw conflict('', kind, refName, `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
    }
  }

  if (config.maxExpirationSeconds > 0 && expirationSeconds > config.maxExpirationSeconds) {
    rc.warnings.push(`requested expiration of ${expirationSeconds} seconds shortened to ${config.maxExpirationSeconds} seconds`);
    expirationSeconds = config.maxExpirationSeconds;
  }
  // Pod-bound tokens of the projected volume's 3607 s live a year but are reported stale after
  // 3607 s (kube's --service-account-extend-token-expiration, for a safe move to bound tokens).
  let lifetime = expirationSeconds;
  let warnAfterSeconds: number | undefined;
  if (config.extendExpiration && pod && expirationSeconds === WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS && audiences.every((a) => config.tokens.apiAudiences.includes(a))) {
    warnAfterSeconds = expirationSeconds;
    lifetime = EXPIRATION_EXTENSION_SECONDS;
  }

  const { token } = await config.tokens.issue({
    namespace: ns,
    serviceAccount: { name: serviceAccount.metadata.name, uid: serviceAccount.metadata.uid },
    pod,
    secret,
    node,
    audiences,
    expirationSeconds: lifetime,
    warnAfterSeconds,
    now,
  });
  const outSpec: Record<string, unknown> = { audiences, expirationSeconds };
  if (ref) outSpec.boundObjectRef = { kind: ref.kind, apiVersion: ref.apiVersion, name: ref.name, uid: ref.uid };
  const out = canonicalOrder({ metadata: meta, spec: outSpec, status: { token, expirationTimestamp: formatRFC3339((now + expirationSeconds) * 1000) } }, KIND, `${GROUP}/v1`);
  return respondObject(ctx, info, out, 201, rc, true);
}
