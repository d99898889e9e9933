// authorization.k8s.io/v1 access reviews: create-only resources that are never stored, asking
// the server's authorizer chain a question (kube's pkg/registry/authorization/{subjectaccessreview,
// localsubjectaccessreview,selfsubjectaccessreview,selfsubjectrulesreview}/rest.go, their
// validation in pkg/apis/authorization/validation, and registry/authorization/util's
// AuthorizationAttributesFrom; the validation is kube's newest, on the v1 types, with the
// union of the two attribute kinds checked at `spec`). SubjectAccessReview asks about any user, LocalSubjectAccessReview
// the same within its namespace, SelfSubjectAccessReview about the caller, and
// SelfSubjectRulesReview lists what the caller may do in a namespace (`kubectl auth can-i --list`).
import { badRequest, invalid } from '../../errors.ts';
import { isPlainObject } from '../../util/json.ts';
import { goQuote } from '../../go/strconv.ts';
import { goStringSlice } from '../../go/fmt.ts';
import { forbiddenError, invalidError, requiredError, type FieldError } from '../../validation/field.ts';
import { isQualifiedName, isValidLabelValue } from '../../validation/names.ts';
import { newLabelRequirement, parseFieldRequirements, parseLabelRequirements, type FieldRequirement, type LabelOp, type LabelRequirement } from '../../validation/selectors.ts';
import type { ResourceInfo } from '../../schema/types.ts';
import { authorize, rulesFor, type AuthorizationAttributes, type Authorizer } from '../../authorization/authorizer.ts';
import type { UserInfo } from '../../authentication/user.ts';
import { readObjectBody } from './body.ts';
import { requestContext } from './options.ts';
import { respondObject } from './shape.ts';
import type { ResourceRequest } from './request.ts';

const GROUP = 'authorization.k8s.io';
const API_VERSION = `${GROUP}/v1`;

type Obj = Record<string, unknown>;

const ACCESS_REVIEWS: [resource: string, kind: string, namespaced: boolean][] = [
  ['localsubjectaccessreviews', 'LocalSubjectAccessReview', true],
  ['selfsubjectaccessreviews', 'SelfSubjectAccessReview', false],
  ['selfsubjectrulesreviews', 'SelfSubjectRulesReview', false],
  ['subjectaccessreviews', 'SubjectAccessReview', false],
];

/** The catalog entries of the access reviews (kube's discovery: verbs [create]). */
export function accessReviewResources(): ResourceInfo[] {
  return ACCESS_REVIEWS.map(([resource, kind, namespaced]) => ({
    group: GROUP,
    version: 'v1',
    resource,
    kind,
    listKind: `${kind}List`,
    singularName: kind.toLowerCase(),
    namespaced,
    verbs: ['create'],
    definition: `io.k8s.api.authorization.v1.${kind}`,
  }));
}

/** Whether a catalog entry is one of the access reviews. */
export function isAccessReview(info: ResourceInfo): boolean {
  return info.group === GROUP && ACCESS_REVIEWS.some(([resource]) => resource === info.resource);
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);
const objectOrUndefined = (v: unknown): Obj | undefined => (isPlainObject(v) ? v : undefined);

/** The body's apiVersion and kind, as the generic create checks them. */
function checkKind(body: unknown, kind: string): Obj {
  if (!isPlainObject(body)) throw badRequest('the body of the request was not a JSON object');
  if (body.apiVersion !== undefined && body.apiVersion !== API_VERSION) throw badRequest(`the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${API_VERSION})`);
  if (body.kind !== undefined && body.kind !== kind) throw badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (${kind})`);
  return body;
}

/** Go's GoString of a metav1.Time as %#v prints it (decoded times are Local; the zero time is UTC). */
function goTimeGoString(v: unknown): string {
  const t = typeof v === 'string' ? new Date(v) : undefined;
  if (!t || Number.isNaN(t.getTime())) return 'time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)';
  const month = t.toLocaleString('en-US', { month: 'long', timeZone: 'UTC' });
  return `time.Date(${t.getUTCFullYear()}, time.${month}, ${t.getUTCDate()}, ${t.getUTCHours()}, ${t.getUTCMinutes()}, ${t.getUTCSeconds()}, 0, time.Local)`;
}

function goStringMap(v: unknown): string {
  if (!isPlainObject(v)) return 'map[string]string(nil)';
  const keys = Object.keys(v).sort();
  return `map[string]string{${keys.map((k) => `${goQuote(k)}:${goQuote(str(v[k]))}`).join(', ')}}`;
}

/** %#v of the ObjectMeta the "must be empty" errors carry (its common fields; pointers as nil or not). */
function goObjectMeta(m: Obj): string {
  const fields = [
    `Name:${goQuote(str(m.name))}`,
    `GenerateName:${goQuote(str(m.generateName))}`,
    `Namespace:${goQuote(str(m.namespace))}`,
    `SelfLink:${goQuote(str(m.selfLink))}`,
    `UID:${goQuote(str(m.uid))}`,
    `ResourceVersion:${goQuote(str(m.resourceVersion))}`,
    `Generation:${typeof m.generation === 'number' ? m.generation : 0}`,
    `CreationTimestamp:${goTimeGoString(m.creationTimestamp)}`,
    `DeletionTimestamp:${m.deletionTimestamp ? goTimeGoString(m.deletionTimestamp) : '<nil>'}`,
    `DeletionGracePeriodSeconds:${typeof m.deletionGracePeriodSeconds === 'number' ? '(*int64)(0xc000000000)' : '(*int64)(nil)'}`,
    `Labels:${goStringMap(m.labels)}`,
    `Annotations:${goStringMap(m.annotations)}`,
    `OwnerReferences:${Array.isArray(m.ownerReferences) && m.ownerReferences.length ? `[]v1.OwnerReference{...}` : '[]v1.OwnerReference(nil)'}`,
    `Finalizers:${goStringSlice(Array.isArray(m.finalizers) && m.finalizers.length ? strings(m.finalizers) : null)}`,
    `ManagedFields:${Array.isArray(m.managedFields) && m.managedFields.length ? '[]v1.ManagedFieldsEntry{...}' : '[]v1.ManagedFieldsEntry(nil)'}`,
  ];
  return `v1.ObjectMeta{${fields.join(', ')}}`;
}

/** Whether ObjectMeta is empty but for the fields named (kube compares it with metav1.ObjectMeta{}). */
function metadataEmpty(m: Obj, except: string[]): boolean {
  return Object.entries(m).every(([k, v]) => except.includes(k) || v === null || v === undefined || v === '' || v === 0 || (Array.isArray(v) && v.length === 0) || (isPlainObject(v) && Object.keys(v).length === 0));
}

/** The bad value of the union and "disallowed" errors: the NonResourceAttributes pointer (nil: null; else %#v). */
function goNonResourceAttributes(n: Obj | undefined): string {
  if (!n) return 'null';
  return `v1.NonResourceAttributes{Path:${goQuote(str(n.path))}, Verb:${goQuote(str(n.verb))}}`;
}

/** metav1validation.ValidateFieldSelectorRequirement, unknown operators allowed (newer clients' ones). */
function fieldRequirementErrors(r: Obj, at: string): FieldError[] {
  const errs: FieldError[] = [];
  if (str(r.key) === '') errs.push(requiredError(`${at}.key`, 'must be specified'));
  const values = Array.isArray(r.values) ? r.values : [];
  const operator = str(r.operator);
  if ((operator === 'In' || operator === 'NotIn') && values.length === 0) errs.push(requiredError(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
  if ((operator === 'Exists' || operator === 'DoesNotExist') && values.length > 0) errs.push(forbiddenError(`${at}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
  return errs;
}

/** metav1validation.ValidateLabelSelectorRequirement, unknown operators allowed: also the key and values as label parts. */
function labelRequirementErrors(r: Obj, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const values = strings(r.values);
  const operator = str(r.operator);
  if ((operator === 'In' || operator === 'NotIn') && values.length === 0) errs.push(requiredError(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
  if ((operator === 'Exists' || operator === 'DoesNotExist') && values.length > 0) errs.push(forbiddenError(`${at}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
  for (const msg of isQualifiedName(str(r.key))) errs.push(invalidError(`${at}.key`, goQuote(str(r.key)), msg));
  values.forEach((v, i) => {
    for (const msg of isValidLabelValue(v)) errs.push(invalidError(`${at}.values[${i}]`, goQuote(v), msg));
  });
  return errs;
}

/** validateFieldSelectorAttributes / validateLabelSelectorAttributes: a raw selector or requirements, not both. */
function selectorErrors(selector: unknown, at: string, requirementErrors: (r: Obj, at: string) => FieldError[]): FieldError[] {
  if (!isPlainObject(selector)) return [];
  const errs: FieldError[] = [];
  const raw = str(selector.rawSelector);
  const requirements = Array.isArray(selector.requirements) ? selector.requirements : [];
  if (raw && requirements.length) errs.push(invalidError(`${at}.rawSelector`, goQuote(raw), 'may not specified at the same time as requirements'));
  if (!raw && !requirements.length) errs.push(requiredError(`${at}.requirements`, `when ${at} is specified, requirements or rawSelector is required`));
  requirements.forEach((r: unknown, i: number) => errs.push(...requirementErrors(isPlainObject(r) ? r : {}, `${at}.requirements[${i}]`)));
  return errs;
}

/** ValidateSubjectAccessReviewSpec / ValidateSelfSubjectAccessReviewSpec. */
function specErrors(spec: Obj, withUser: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const resource = objectOrUndefined(spec.resourceAttributes);
  const nonResource = objectOrUndefined(spec.nonResourceAttributes);
  if (!resource === !nonResource) errs.push(invalidError('spec', goNonResourceAttributes(nonResource), 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  if (withUser && str(spec.user) === '' && strings(spec.groups).length === 0) errs.push(invalidError('spec.user', goQuote(str(spec.user)), 'at least one of user or group must be specified'));
  if (resource) {
    errs.push(...selectorErrors(resource.fieldSelector, 'spec.resourceAttributes.fieldSelector', fieldRequirementErrors));
    errs.push(...selectorErrors(resource.labelSelector, 'spec.resourceAttributes.labelSelector', labelRequirementErrors));
  }
  return errs;
}

/** kube's ResourceAttributesFrom / NonResourceAttributesFrom: the question a spec asks about a user. */
function attributesFrom(user: UserInfo, spec: Obj): AuthorizationAttributes {
  const r = objectOrUndefined(spec.resourceAttributes);
  if (r) {
    return {
      user,
      verb: str(r.verb),
      isResourceRequest: true,
      path: '',
      apiGroup: str(r.group),
      // An empty version matches every version.
      apiVersion: str(r.version) || '*',
      resource: str(r.resource),
      subresource: str(r.subresource),
      namespace: str(r.namespace),
      name: str(r.name),
      ...selectorAttributes(r),
    };
  }
  const n = objectOrUndefined(spec.nonResourceAttributes) ?? {};
  return { user, verb: str(n.verb), isResourceRequest: false, path: str(n.path), apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '' };
}

const LABEL_SELECTOR_OPS: Record<string, LabelOp> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/**
 * kube's labelSelectorAsSelector of ResourceAttributesFrom: the requirements that are valid, and
 * an error when some are not (dropping a requirement only broadens the question).
 */
function labelRequirementsOf(list: unknown[]): { requirements: LabelRequirement[]; error?: string } {
  const requirements: LabelRequirement[] = [];
  const errors: string[] = [];
  for (const raw of list) {
    const r = isPlainObject(raw) ? raw : {};
    const op = Object.hasOwn(LABEL_SELECTOR_OPS, str(r.operator)) ? LABEL_SELECTOR_OPS[str(r.operator)] : undefined;
    if (!op) {
      errors.push(`${goQuote(str(r.operator))} is not a valid label selector operator`);
      continue;
    }
    const values = strings(r.values);
    const { req, err } = newLabelRequirement(str(r.key), op, values.length ? values : null, null);
    if (err) errors.push(err);
    else requirements.push(req);
  }
  return errors.length ? { requirements, error: errors.join(', ') } : { requirements };
}

/** fieldSelectorAsSelector: In and NotIn of one value are `=` and `!=`; the rest is an error. */
function fieldRequirementsOf(list: unknown[]): { requirements: FieldRequirement[]; error?: string } {
  const requirements: FieldRequirement[] = [];
  const errors: string[] = [];
  for (const raw of list) {
    const r = isPlainObject(raw) ? raw : {};
    const values = strings(r.values);
    const operator = str(r.operator);
    if (values.length > 1) errors.push('fieldSelectors do not yet support multiple values');
    else if (operator === 'In' || operator === 'NotIn') {
      if (values.length !== 1) errors.push(`fieldSelectors ${operator === 'In' ? 'in' : 'not in'} must have one value`);
      else requirements.push({ field: str(r.key), op: operator === 'In' ? '=' : '!=', value: values[0] });
    } else if (operator === 'Exists' || operator === 'DoesNotExist') errors.push(`fieldSelectors do not yet support ${operator}`);
    else errors.push(`${goQuote(operator)} is not a valid field selector operator`);
  }
  return errors.length ? { requirements, error: errors.join(', ') } : { requirements };
}

/**
 * ResourceAttributesFrom's selectors (AuthorizeWithSelectors): a rawSelector parsed as a request's
 * query is, or the requirements converted; what did not parse is kept as the parsing error.
 */
function selectorAttributes(r: Obj): Partial<AuthorizationAttributes> {
  const out: Partial<AuthorizationAttributes> = {};
  const field = objectOrUndefined(r.fieldSelector);
  if (field) {
    const raw = str(field.rawSelector);
    if (raw) {
      try {
        out.fieldSelectorRequirements = parseFieldRequirements(raw);
      } catch (e) {
        out.fieldSelectorParsingError = (e as Error).message;
      }
    }
    if (Array.isArray(field.requirements) && field.requirements.length) {
      const { requirements, error } = fieldRequirementsOf(field.requirements);
      out.fieldSelectorRequirements = requirements;
      out.fieldSelectorParsingError = error;
    }
  }
  const label = objectOrUndefined(r.labelSelector);
  if (label) {
    const raw = str(label.rawSelector);
    if (raw) {
      try {
        out.labelSelectorRequirements = parseLabelRequirements(raw);
      } catch (e) {
        out.labelSelectorParsingError = (e as Error).message;
      }
    }
    if (Array.isArray(label.requirements) && label.requirements.length) {
      const { requirements, error } = labelRequirementsOf(label.requirements);
      out.labelSelectorRequirements = requirements;
      out.labelSelectorParsingError = error;
    }
  }
  return out;
}

/**
 * BuildEvaluationError's selector part: a review whose selector did not (wholly) parse says it
 * was (partially) ignored.
 */
function selectorEvaluationErrors(a: AuthorizationAttributes): string[] {
  const out: string[] = [];
  if (a.fieldSelectorParsingError !== undefined) out.push(`spec.resourceAttributes.fieldSelector ${a.fieldSelectorRequirements?.length ? 'partially ' : ''}ignored due to parse error`);
  if (a.labelSelectorParsingError !== undefined) out.push(`spec.resourceAttributes.labelSelector ${a.labelSelectorRequirements?.length ? 'partially ' : ''}ignored due to parse error`);
  return out;
}

/** The user a SubjectAccessReview's spec names, as given (nothing added: kube's AuthorizationAttributesFrom). */
function userFromSpec(spec: Obj): UserInfo {
  const extra: Record<string, string[]> = {};
  if (isPlainObject(spec.extra)) for (const [k, v] of Object.entries(spec.extra)) extra[k] = strings(v);
  const user: UserInfo = { name: str(spec.user), groups: strings(spec.groups), extra };
  if (str(spec.uid)) user.uid = str(spec.uid);
  return user;
}

/** SubjectAccessReviewStatus: allowed always, the rest when set (an authorizer's error is evaluationError). */
async function decide(authorizers: readonly Authorizer[], attrs: AuthorizationAttributes): Promise<Obj> {
  const { decision, reason, error } = await authorize(authorizers, attrs);
  const status: Obj = { allowed: decision === 'allow' };
  if (decision === 'deny') status.denied = true;
  if (reason) status.reason = reason;
  // kube's BuildEvaluationError: the authorizers' error, then the selectors' parse errors.
  const evaluationErrors = [...(error ? [error] : []), ...selectorEvaluationErrors(attrs)];
  if (evaluationErrors.length) status.evaluationError = evaluationErrors.join('; ');
  return status;
}

/** The metadata a review answers with: what it was sent (kube echoes the decoded object), creationTimestamp null. */
function echoedMetadata(body: Obj): Obj {
  const metadata = isPlainObject(body.metadata) ? { ...body.metadata } : {};
  if (metadata.creationTimestamp === undefined) metadata.creationTimestamp = null;
  return metadata;
}

/** The handlers of the four reviews, each asking `authorizers` (the server's chain). */
export function accessReviewHandlers(authorizers: readonly Authorizer[]): Map<string, (req: ResourceRequest) => Promise<void>> {
  const read = async ({ ctx, info, deps }: ResourceRequest) => {
    const rc = requestContext(ctx, 'CreateOptions');
    const body = checkKind(await readObjectBody(ctx, info, info.definition, rc, deps.model), info.kind);
    return { rc, body, spec: isPlainObject(body.spec) ? body.spec : {}, metadata: isPlainObject(body.metadata) ? body.metadata : {} };
  };

  const subjectAccessReview = async (req: ResourceRequest) => {
    const { rc, body, spec, metadata } = await read(req);
    const errs = specErrors(spec, true);
    if (!metadataEmpty(metadata, ['managedFields'])) errs.push(invalidError('metadata', goObjectMeta(metadata), 'must be empty'));
    if (errs.length) throw invalid(GROUP, req.info.kind, '', errs);
    const status = await decide(authorizers, attributesFrom(userFromSpec(spec), spec));
    return respondObject(req.ctx, req.info, { kind: req.info.kind, apiVersion: API_VERSION, metadata: echoedMetadata(body), spec, status }, 201, rc);
  };

  const localSubjectAccessReview = async (req: ResourceRequest) => {
    const { rc, body, spec, metadata } = await read(req);
    // The generic create's namespace check first: an object without one takes the request's.
    const objectNamespace = str(metadata.namespace);
    if (objectNamespace && objectNamespace !== req.ns) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    const namespace = req.ns;
    const errs = specErrors(spec, true);
    if (!metadataEmpty(metadata, ['namespace', 'managedFields'])) errs.push(invalidError('metadata', goObjectMeta({ ...metadata, namespace }), 'must be empty except for namespace'));
    const resource = objectOrUndefined(spec.resourceAttributes);
    if (resource && str(resource.namespace) !== namespace) errs.push(invalidError('spec.resourceAttributes.namespace', goQuote(str(resource.namespace)), 'must match metadata.namespace'));
    const nonResource = objectOrUndefined(spec.nonResourceAttributes);
    if (nonResource) errs.push(invalidError('spec.nonResourceAttributes', goNonResourceAttributes(nonResource), 'disallowed on this kind of request'));
    if (errs.length) throw invalid(GROUP, req.info.kind, '', errs);
    const status = await decide(authorizers, attributesFrom(userFromSpec(spec), spec));
    const out = { kind: req.info.kind, apiVersion: API_VERSION, metadata: { ...echoedMetadata(body), namespace } as Obj, spec, status };
    return respondObject(req.ctx, req.info, out, 201, rc);
  };

  const selfSubjectAccessReview = async (req: ResourceRequest) => {
    const { rc, body, spec, metadata } = await read(req);
    const errs = specErrors(spec, false);
    if (!metadataEmpty(metadata, ['managedFields'])) errs.push(invalidError('metadata', goObjectMeta(metadata), 'must be empty'));
    if (errs.length) throw invalid(GROUP, req.info.kind, '', errs);
    const status = await decide(authorizers, attributesFrom(req.ctx.state.user, spec));
    return respondObject(req.ctx, req.info, { kind: req.info.kind, apiVersion: API_VERSION, metadata: echoedMetadata(body), spec, status }, 201, rc);
  };

  const selfSubjectRulesReview = async (req: ResourceRequest) => {
    const { rc, spec } = await read(req);
    const namespace = str(spec.namespace);
    if (namespace === '') throw badRequest('no namespace on request');
    const r = rulesFor(authorizers, req.ctx.state.user, namespace);
    // ResourceRule and NonResourceRule leave out empty lists but verbs.
    const status: Obj = {
      resourceRules: r.resourceRules.map((x) => {
        const rule: Obj = { verbs: x.verbs };
        if (x.apiGroups.length) rule.apiGroups = x.apiGroups;
        if (x.resources.length) rule.resources = x.resources;
        if (x.resourceNames.length) rule.resourceNames = x.resourceNames;
        return rule;
      }),
      nonResourceRules: r.nonResourceRules.map((x) => (x.nonResourceURLs.length ? { verbs: x.verbs, nonResourceURLs: x.nonResourceURLs } : { verbs: x.verbs })),
      incomplete: r.incomplete,
    };
    if (r.evaluationError) status.evaluationError = r.evaluationError;
    // kube answers with a new review: the status alone, the spec left empty.
    return respondObject(req.ctx, req.info, { kind: req.info.kind, apiVersion: API_VERSION, metadata: { creationTimestamp: null } as Obj, spec: {}, status }, 201, rc);
  };

  return new Map([
    ['subjectaccessreviews', subjectAccessReview],
    ['localsubjectaccessreviews', localSubjectAccessReview],
    ['selfsubjectaccessreviews', selfSubjectAccessReview],
    ['selfsubjectrulesreviews', selfSubjectRulesReview],
  ]);
}
