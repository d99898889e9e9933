// AdmissionReview: what kube-apiserver sends a webhook and how it checks the answer, as kube's
// admission/plugin/webhook/request (CreateV1AdmissionReview / CreateV1beta1AdmissionReview,
// VerifyAdmissionResponse) and webhook/errors (ToStatusErr) do.
import type { GroupVersionKind, GroupVersionResource } from '../matching.ts';
import { randomUUID } from 'node:crypto';
import { ApiError, qualifiedResource, type StatusDetails } from '../../errors.ts';
import type { UserInfo } from '../../authentication/user.ts';

export type ReviewVersion = 'v1' | 'v1beta1';

/** The first of a webhook's admissionReviewVersions hearth speaks (kube's ClientManager picks so). */
export function reviewVersionOf(versions: unknown): ReviewVersion | undefined {
  return (Array.isArray(versions) ? versions : []).find((v): v is ReviewVersion => v === 'v1' || v === 'v1beta1');
}


export interface ReviewRequestFields {
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource: string;
  requestKind: GroupVersionKind;
  requestResource: GroupVersionResource;
  requestSubResource: string;
  name: string;
  namespace: string;
  operation: string;
  user: UserInfo;
  object: unknown;
  oldObject: unknown;
  dryRun: boolean;
  options: unknown;
}

/** authenticationv1.UserInfo as JSON: empty members left out. */
function userInfoJson(u: UserInfo): Record<string, unknown> {
  const out: Record<string, unknown> = { username: u.name };
  if (u.uid) out.uid = u.uid;
  if (u.groups?.length) out.groups = u.groups;
  const extra = u.extra ?? {};
  if (Object.keys(extra).length) out.extra = extra;
  return out;
}

/** The AdmissionRequest, as the webhook and matchConditions' `request` see it (Go's field order). */
export function admissionRequest(uid: string, f: ReviewRequestFields): Record<string, unknown> {
  const r: Record<string, unknown> = { uid, kind: f.kind, resource: f.resource };
  if (f.subResource) r.subResource = f.subResource;
  r.requestKind = f.requestKind;
  r.requestResource = f.requestResource;
  if (f.requestSubResource) r.requestSubResource = f.requestSubResource;
  if (f.name) r.name = f.name;
  if (f.namespace) r.namespace = f.namespace;
  r.operation = f.operation;
  r.userInfo = userInfoJson(f.user);
  // RawExtension fields: an absent object is written as null.
  r.object = f.object ?? null;
  r.oldObject = f.oldObject ?? null;
  r.dryRun = f.dryRun;
  r.options = f.options ?? null;
  return r;
}

/** The review POSTed to the webhook, and the uid its answer must carry. */
export function createReview(version: ReviewVersion, f: ReviewRequestFields): { uid: string; review: Record<string, unknown> } {
  const uid = randomUUID();
  return { uid, review: { kind: 'AdmissionReview', apiVersion: `admission.k8s.io/${version}`, request: admissionRequest(uid, f) } };
}

/** What VerifyAdmissionResponse keeps of an answer. */
export interface VerifiedResponse {
  allowed: boolean;
  /** The JSON patch's operations (decoded from base64), when one was sent. */
  patch?: Buffer;
  patchType?: string;
  result?: Record<string, unknown>;
  auditAnnotations: Record<string, string>;
  warnings: string[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** VerifyAdmissionResponse: the answer, or the error text kube wraps in "received invalid webhook response: ". */
export function verifyResponse(version: ReviewVersion, uid: string, mutating: boolean, body: unknown): VerifiedResponse | string {
  if (!isObject(body)) return 'webhook response was absent';
  const response = body.response;
  if (!isObject(response)) return 'webhook response was absent';
  let patch: Buffer | undefined;
  let patchType: string | undefined;
  const patchText = typeof response.patch === 'string' ? response.patch : '';
  if (version === 'v1') {
    const got = typeof response.uid === 'string' ? response.uid : '';
    if (got !== uid) return `expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(got)}`;
    const gv = `${typeof body.apiVersion === 'string' ? body.apiVersion : ''}`;
    const kind = typeof body.kind === 'string' ? body.kind : '';
    if (gv !== 'admission.k8s.io/v1' || kind !== 'AdmissionReview') {
      const [g, v] = gv.includes('/') ? gv.split('/', 2) : ['', gv];
      return `expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${g}/${v}, Kind=${kind}`;
    }
    const hasPatchType = response.patchType !== undefined && response.patchType !== null;
    if (mutating) {
      if (patchText && !hasPatchType) return 'webhook returned response.patch but not response.patchType';
      if (!patchText && hasPatchType) return 'webhook returned response.patchType but not response.patch';
      if (hasPatchType) {
        patchType = String(response.patchType);
        if (patchType === '') return `webhook returned invalid response.patchType of ""`;
      }
    } else {
      if (patchText) return 'validating webhook may not return response.patch';
      if (hasPatchType) return 'validating webhook may not return response.patchType';
    }
  } else if (mutating && patchText) {
    // v1beta1 never checked the patch type: kube pins it to the one it supports.
    patchType = 'JSONPatch';
  }
  if (mutating && patchText) patch = Buffer.from(patchText, 'base64');
  const auditAnnotations: Record<string, string> = {};
  if (isObject(response.auditAnnotations)) for (const [k, v] of Object.entries(response.auditAnnotations)) if (typeof v === 'string') auditAnnotations[k] = v;
  const warnings = Array.isArray(response.warnings) ? response.warnings.filter((w): w is string => typeof w === 'string') : [];
  return { allowed: response.allowed === true, patch, patchType, result: isObject(response.status) ? response.status : undefined, auditAnnotations, warnings };
}

/** webhookerrors.ToStatusErr: a denial as the client sees it, the webhook's code and reason kept. */
export function denialError(webhookName: string, resource: { group: string; resource: string }, name: string, result: Record<string, unknown> | undefined): ApiError {
  const r = result ?? {};
  const code = typeof r.code === 'number' && r.code !== 0 ? r.code : 403;
  const deniedBy = `admission webhook ${JSON.stringify(webhookName)} denied the request`;
  const message = typeof r.message === 'string' && r.message ? `${deniedBy}: ${r.message}` : typeof r.reason === 'string' && r.reason ? `${deniedBy}: ${r.reason}` : `${deniedBy} without explanation`;
  const shownName = name || 'Unknown';
  let details: StatusDetails;
  if (isObject(r.details)) details = r.details as StatusDetails;
  else if (code === 500) details = { causes: [{ message }] };
  else details = { name: shownName, group: resource.group || undefined, kind: resource.resource };
  const prefix = code === 500 ? 'Internal error occurred' : `${qualifiedResource(resource.group, resource.resource)} ${JSON.stringify(shownName)} is forbidden`;
  const reason = typeof r.reason === 'string' && r.reason ? r.reason : code === 500 ? 'InternalError' : 'Forbidden';
  return new ApiError(code, reason, `${prefix}: ${message}`, details);
}
