// The webhook authorizer, as kube's apiserver/plugin/pkg/authorizer/webhook (webhook.go, metrics
// aside) is one: each request's attributes become a SubjectAccessReview (authorization.k8s.io
// v1beta1 or v1, exactly as kube encodes it: spec.user/uid/groups — `group` in v1beta1 —/extra,
// resourceAttributes with version, subresource, name, namespace and, when the request has them,
// field and label selector requirements; or nonResourceAttributes), POSTed through server/webhook/
// (the kubeconfig client the token webhook uses) with kube's timeout and retry. Its status decides:
// allowed → allow, denied → deny (both → deny and kube's error), neither → no opinion, each with
// the webhook's reason. Decisions are kept (kube's LRUExpireCache of 8192, keyed on the v1 spec's
// JSON): allowed ones for authorizedTTL, the rest for unauthorizedTTL, unless that kind is not
// cached; requests whose own attributes are 10000 bytes or more are never kept. A cached decision
// answers at once; only a call makes the answer a promise. A call that fails is logged as kube logs
// it and decided by the failure policy (NoOpinion — the flags' — or Deny) with the error, which
// the chain turns into a 500 when nothing allows (kube's WithAuthorization).
//
// matchConditions (kube's authorization/cel): CEL over `request`, the v1 SubjectAccessReviewSpec,
// compiled in hearth's one CEL environment (registry/crd/cel, as authentication/jwt does); any
// false skips the webhook (no opinion), all true calls it, an evaluation error (and none false)
// is the failure policy's decision with kube's error. RulesFor is kube's: nothing, incomplete, and
// "webhook authorizer does not support user rule resolution".
import type { FieldRequirement, LabelRequirement } from '../validation/selectors.ts';
import type { AuthorizationAttributes, AuthorizationResult, Authorizer, AuthorizerAnswer, RulesResult } from './authorizer.ts';
import { aggregateErrors } from '../go/errors.ts';
import { WebhookClient, defaultRetryBackoff, type RetryBackoff } from '../webhook/client.ts';
import type { WebhookClientConfig } from '../webhook/kubeconfig.ts';
import { CelEvaluationError, CelTypes, compileExpression, jsonToCel, type CompiledExpression } from '../registry/crd/cel/index.ts';
import { goQuote } from '../go/strconv.ts';

export const SUBJECT_ACCESS_REVIEW_VERSIONS = ['v1', 'v1beta1'] as const;
export type SubjectAccessReviewVersion = (typeof SUBJECT_ACCESS_REVIEW_VERSIONS)[number];
/** kube-apiserver's default for --authorization-webhook-version. */
export const DEFAULT_AUTHORIZATION_WEBHOOK_VERSION: SubjectAccessReviewVersion = 'v1beta1';
/** --authorization-webhook-cache-authorized-ttl and the config's authorizedTTL default. */
export const DEFAULT_AUTHORIZED_TTL_MS = 5 * 60_000;
/** --authorization-webhook-cache-unauthorized-ttl and the config's unauthorizedTTL default. */
export const DEFAULT_UNAUTHORIZED_TTL_MS = 30_000;
/** The flags' webhook timeout (buildAuthorizationConfiguration sets 30 s). */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 30_000;
/** kube's responseCache size. */
const CACHE_SIZE = 8192;
/** kube's maxControlledAttrCacheSize. */
const MAX_CONTROLLED_ATTR_CACHE_SIZE = 10_000;
const BOTH_ALLOWED_AND_DENIED = 'webhook subject access review returned both allow and deny response';
const RULES_NOT_SUPPORTED = 'webhook authorizer does not support user rule resolution';

export type FailurePolicy = 'NoOpinion' | 'Deny';

/** A compiled matchCondition. */
export interface MatchCondition {
  expression: string;
  compiled: CompiledExpression;
}

/** One webhook authorizer as the flags or an AuthorizationConfiguration's webhook section give it. */
export interface WebhookAuthorizerSettings {
  /** The authorizer's name (`default` for the flags' one). */
  name: string;
  client: WebhookClientConfig;
  version: SubjectAccessReviewVersion;
  timeoutMs: number;
  /** How long decisions are kept; 0 keeps none (cacheAuthorizedRequests: false). */
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  failurePolicy: FailurePolicy;
  matchConditions: MatchCondition[];
}

export interface WebhookAuthorizerOptions {
  /** Where failed calls are reported. */
  log: (line: string) => void;
  userAgent?: string;
  /** The retry's backoff (kube's DefaultAuthWebhookRetryBackoff: 500 ms, ×1.5, jitter 0.2, 5 attempts). */
  retryBackoff?: RetryBackoff;
}

/** A webhook authorizer; close() ends its connections. */
export interface WebhookAuthorizer extends Authorizer {
  close(): void;
}

// ---- the SubjectAccessReview kube sends ----

type Json = Record<string, unknown>;

/** fieldSelectorToAuthorizationAPI: = (and ==) → In; != → NotIn. */
function fieldSelectorAttributes(requirements: readonly FieldRequirement[] | undefined): Json | undefined {
  if (!requirements?.length) return undefined;
  const out: Json[] = [];
  for (const r of requirements) {
    // (the field grammar has = and !=: == is = once parsed)
    out.push({ key: r.field, operator: r.op === '=' ? 'In' : 'NotIn', values: [r.value] });
  }
  return out.length ? { requirements: out } : undefined;
}

/** labelSelectorToAuthorizationAPI: In, NotIn, Exists, DoesNotExist (values only when there are some). */
function labelSelectorAttributes(requirements: readonly LabelRequirement[] | undefined): Json | undefined {
  if (!requirements?.length) return undefined;
  const out: Json[] = [];
  for (const r of requirements) {
    const op = r.op === '=' || r.op === '==' || r.op === 'in' ? 'In' : r.op === '!=' || r.op === 'notin' ? 'NotIn' : r.op === 'exists' ? 'Exists' : r.op === '!' ? 'DoesNotExist' : '';
    if (!op) continue;
    const req: Json = { key: r.key, operator: op };
    if (r.values.length) req.values = [...r.values];
    out.push(req);
  }
  return out.length ? { requirements: out } : undefined;
}

/** Go's encoding of a string field with omitempty. */
function put(o: Json, key: string, v: string): void {
  if (v !== '') o[key] = v;
}

/**
 * The v1 SubjectAccessReviewSpec kube builds from a request's attributes, with Go's field order
 * and omitempty (the cache key is its JSON, and the v1 body carries it as it is).
 */
export function subjectAccessReviewSpec(a: AuthorizationAttributes): Json {
  const spec: Json = {};
  if (a.isResourceRequest) {
    const ra: Json = {};
    put(ra, 'namespace', a.namespace);
    put(ra, 'verb', a.verb);
    put(ra, 'group', a.apiGroup);
    put(ra, 'version', a.apiVersion);
    put(ra, 'resource', a.resource);
    put(ra, 'subresource', a.subresource);
    put(ra, 'name', a.name);
    const fieldSelector = fieldSelectorAttributes(a.fieldSelectorRequirements);
    if (fieldSelector) ra.fieldSelector = fieldSelector;
    const labelSelector = labelSelectorAttributes(a.labelSelectorRequirements);
    if (labelSelector) ra.labelSelector = labelSelector;
    spec.resourceAttributes = ra;
  } else {
    const nra: Json = {};
    put(nra, 'path', a.path);
    put(nra, 'verb', a.verb);
    spec.nonResourceAttributes = nra;
  }
  put(spec, 'user', a.user.name);
  if (a.user.groups.length) spec.groups = [...a.user.groups];
  const extra = a.user.extra;
  // A map marshals with its keys sorted (Go's encoding/json); omitempty leaves out an empty one.
  if (extra && Object.keys(extra).length) spec.extra = Object.fromEntries(Object.keys(extra).sort().map((k) => [k, extra[k]]));
  put(spec, 'uid', a.user.uid ?? '');
  return spec;
}

/** The body POSTed: the version's SubjectAccessReview with only the spec set (v1beta1 names groups `group`). */
export function subjectAccessReviewBody(spec: Json, version: SubjectAccessReviewVersion): Json {
  let versioned = spec;
  if (version === 'v1beta1' && spec.groups !== undefined) {
    versioned = {};
    for (const [k, v] of Object.entries(spec)) versioned[k === 'groups' ? 'group' : k] = v;
  }
  return { kind: 'SubjectAccessReview', apiVersion: `authorization.k8s.io/${version}`, metadata: { creationTimestamp: null }, spec: versioned, status: { allowed: false } };
}

/** shouldCache: the requester-controlled attributes are small enough to keep. */
function shouldCache(a: AuthorizationAttributes): boolean {
  const size = a.namespace.length + a.verb.length + a.apiGroup.length + a.apiVersion.length + a.resource.length + a.subresource.length + a.name.length + a.path.length;
  return size < MAX_CONTROLLED_ATTR_CACHE_SIZE;
}

// ---- the answer ----

/** SubjectAccessReviewStatus as kube reads it. */
export interface ReviewStatus {
  allowed: boolean;
  denied: boolean;
  reason: string;
  evaluationError: string;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function jsonKind(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  return Array.isArray(v) ? 'array' : 'object';
}

/** The answer's status, decoded as client-go decodes it into the version's SubjectAccessReview. */
export function decodeReviewStatus(body: unknown, version: SubjectAccessReviewVersion): ReviewStatus {
  const apiVersion = `authorization.k8s.io/${version}`;
  if (!isObject(body)) throw new Error(`json: cannot unmarshal ${jsonKind(body)} into Go value of type ${version}.SubjectAccessReview`);
  const gotVersion = typeof body.apiVersion === 'string' && body.apiVersion !== '' ? body.apiVersion : apiVersion;
  const gotKind = typeof body.kind === 'string' && body.kind !== '' ? body.kind : 'SubjectAccessReview';
  if (gotVersion !== apiVersion || gotKind !== 'SubjectAccessReview') {
    const other = /^authorization\.k8s\.io\/(v1|v1beta1)$/.exec(gotVersion);
    if (other && gotKind === 'SubjectAccessReview') throw new Error(`converting (${other[1]}.SubjectAccessReview) to (${version}.SubjectAccessReview): unknown conversion`);
    throw new Error(`no kind ${goQuote(gotKind)} is registered for version ${goQuote(gotVersion)}`);
  }
  const status = body.status ?? {};
  if (!isObject(status)) throw new Error(`json: cannot unmarshal ${jsonKind(status)} into Go struct field SubjectAccessReview.status of type ${version}.SubjectAccessReviewStatus`);
  const field = <T>(key: string, goType: string, check: (v: unknown) => v is T, zero: T): T => {
    const v = status[key];
    if (v === undefined || v === null) return zero;
    if (!check(v)) throw new Error(`json: cannot unmarshal ${jsonKind(v)} into Go struct field SubjectAccessReviewStatus.status.${key} of type ${goType}`);
    return v;
  };
  const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
  const isString = (v: unknown): v is string => typeof v === 'string';
  return {
    allowed: field('allowed', 'bool', isBool, false),
    denied: field('denied', 'bool', isBool, false),
    reason: field('reason', 'string', isString, ''),
    evaluationError: field('evaluationError', 'string', isString, ''),
  };
}

/** Authorize's switch on the status. */
function decisionOf(status: ReviewStatus): AuthorizationResult {
  if (status.allowed && status.denied) return { decision: 'deny', reason: status.reason, error: BOTH_ALLOWED_AND_DENIED };
  if (status.denied) return { decision: 'deny', reason: status.reason };
  if (status.allowed) return { decision: 'allow', reason: status.reason };
  return { decision: 'noopinion', reason: status.reason };
}

// ---- matchConditions ----

const S = CelTypes.string;
const selectorRequirement = CelTypes.objectOf({ key: S, operator: S, values: CelTypes.listOf(S) });
const selectorAttributes = CelTypes.objectOf({ rawSelector: S, requirements: CelTypes.listOf(selectorRequirement) });
/** kube's buildRequestType: `request`, a kubernetes.SubjectAccessReviewSpec (AuthorizeWithSelectors on). */
const REQUEST_VARIABLE = {
  request: CelTypes.objectOf({
    resourceAttributes: CelTypes.objectOf({ namespace: S, verb: S, group: S, version: S, resource: S, subresource: S, name: S, fieldSelector: selectorAttributes, labelSelector: selectorAttributes }),
    nonResourceAttributes: CelTypes.objectOf({ path: S, verb: S }),
    user: S,
    groups: CelTypes.listOf(S),
    extra: CelTypes.mapOf(S, CelTypes.listOf(S)),
    uid: S,
  }),
};

/** compileMatchConditionsExpression: the condition, or kube's detail for the field error ("compilation failed: …", "must evaluate to bool but got …"). */
export function compileMatchCondition(expression: string): { condition: MatchCondition } | { error: string } {
  const r = compileExpression(expression, REQUEST_VARIABLE);
  if ('error' in r) return { error: `compilation failed: ${r.error}` };
  if (r.compiled.resultType !== 'bool') return { error: `must evaluate to bool but got ${r.compiled.resultType}` };
  return { condition: { expression, compiled: r.compiled } };
}

/** convertObjectToUnstructured: every user and string attribute, even empty ones; extra {} when none. */
function celRequest(spec: Json, a: AuthorizationAttributes): unknown {
  const request: Json = { user: a.user.name, groups: [...a.user.groups], uid: a.user.uid ?? '', extra: a.user.extra ?? {} };
  if (a.isResourceRequest) {
    const ra: Json = { namespace: a.namespace, verb: a.verb, group: a.apiGroup, version: a.apiVersion, resource: a.resource, subresource: a.subresource, name: a.name };
    const specRa = spec.resourceAttributes as Json;
    if (specRa.fieldSelector) ra.fieldSelector = specRa.fieldSelector;
    if (specRa.labelSelector) ra.labelSelector = specRa.labelSelector;
    request.resourceAttributes = ra;
  } else request.nonResourceAttributes = { verb: a.verb, path: a.path };
  return jsonToCel(request);
}

/** CELMatcher.Eval: false at the first condition that is false; else the errors, aggregated; else true. */
export function evaluateMatchConditions(conditions: readonly MatchCondition[], spec: Json, a: AuthorizationAttributes): { matches: boolean; error?: string } {
  const vars = { request: celRequest(spec, a) };
  const errors: string[] = [];
  for (const c of conditions) {
    let v: unknown;
    try {
      v = c.compiled.evaluate(vars);
    } catch (e) {
      if (!(e instanceof CelEvaluationError)) throw e;
      errors.push(`cel evaluation error: expression '${c.expression}' resulted in error: ${e.message}`);
      continue;
    }
    if (typeof v !== 'boolean') {
      errors.push(`cel evaluation error: expression '${c.expression}' eval result type should be bool but got ${jsonKind(v)}`);
      continue;
    }
    if (!v) return { matches: false };
  }
  return errors.length ? { matches: false, error: aggregateErrors(errors) } : { matches: true };
}

// ---- the authorizer ----

/** kube's LRUExpireCache: the least recently used entry goes first; an expired one is gone when read. */
class DecisionCache {
  private readonly entries = new Map<string, { status: ReviewStatus; expires: number }>();

  get(key: string): ReviewStatus | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    if (Date.now() >= e.expires) return undefined;
    this.entries.set(key, e);
    return e.status;
  }

  add(key: string, status: ReviewStatus, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { status, expires: Date.now() + ttlMs });
    if (this.entries.size > CACHE_SIZE) this.entries.delete(this.entries.keys().next().value as string);
  }
}

export function webhookAuthorizer(settings: WebhookAuthorizerSettings, opts: WebhookAuthorizerOptions): WebhookAuthorizer {
  const client = new WebhookClient(settings.client, { timeoutMs: settings.timeoutMs, userAgent: opts.userAgent, retryBackoff: opts.retryBackoff ?? defaultRetryBackoff() });
  const cache = new DecisionCache();
  const onError = settings.failurePolicy === 'Deny' ? 'deny' : 'noopinion';

  const call = async (spec: Json, key: string, a: AuthorizationAttributes): Promise<AuthorizationResult> => {
    let status: ReviewStatus;
    try {
      const answer = await client.post(subjectAccessReviewBody(spec, settings.version));
      status = decodeReviewStatus(answer.body, settings.version);
    } catch (e) {
      // An outage or a misconfiguration: kube logs it and decides by the failure policy, with the error.
      const message = (e as Error).message;
      opts.log(`Failed to make webhook authorizer request: ${message}`);
      return { decision: onError, reason: '', error: message };
    }
    if (shouldCache(a)) cache.add(key, status, status.allowed ? settings.authorizedTtlMs : settings.unauthorizedTtlMs);
    return decisionOf(status);
  };

  return {
    name: settings.name,
    authorize(a): AuthorizerAnswer | Promise<AuthorizerAnswer> {
      const spec = subjectAccessReviewSpec(a);
      if (settings.matchConditions.length) {
        const m = evaluateMatchConditions(settings.matchConditions, spec, a);
        if (m.error) return { decision: onError, reason: '', error: m.error };
        if (!m.matches) return 'noopinion';
      }
      const key = JSON.stringify(spec);
      const cached = cache.get(key);
      if (cached) return decisionOf(cached);
      return call(spec, key, a);
    },
    rulesFor: (): RulesResult => ({ resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: RULES_NOT_SUPPORTED }),
    close: () => client.close(),
  };
}
