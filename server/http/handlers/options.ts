// A write's options from its query (and a delete's from its body too), validated as
// kube-apiserver validates Create/Update/Patch/DeleteOptions: the RequestContext the store
// takes (user, dry run, field manager, field validation) or one 422 naming every problem.
import type { FieldError } from '../../schema/types.ts';
import type { TypeModel } from '../../schema/model.ts';
import type { RequestContext, FieldValidation, DeleteOptions } from '../../registry/store.ts';
import { badRequest, invalid } from '../../errors.ts';
import { invalidError, notSupportedError } from '../../validation/field.ts';
import { goIsPrint, goQuote, goRuneU } from '../../go/strconv.ts';
import { goJsonTypeError } from '../../schema/go-decode.ts';
import { int64Param, queryFlag, queryOf } from '../request-info.ts';
import { readBody, decodeAs, bodyEncoding, mediaTypeOf } from '../negotiation.ts';
import type { HttpContext } from '../state.ts';

type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';
const FIELD_VALIDATIONS: readonly string[] = ['', 'Ignore', 'Strict', 'Warn'];
const MAX_FIELD_MANAGER_LENGTH = 128;

/**
 * The write options of the query, validated as kube-apiserver validates its Create/Update/
 * PatchOptions: every problem in one 422 Invalid naming the options kind (`leading`: the
 * verb's own, which kube lists first). DeleteOptions take neither fieldManager nor
 * fieldValidation. A dryRun other than All is a 400 BadRequest, as this project's issue asks.
 */
export function requestContext(ctx: HttpContext, kind: OptionsKind, leading: FieldError[] = []): RequestContext {
  const q = queryOf(ctx);
  const dry = q.getAll('dryRun');
  for (const d of dry) if (d !== 'All') throw badRequest(`dryRun: Unsupported value: "${d}": supported values: "All"`);
  const takesWriteOptions = kind !== 'DeleteOptions';
  const given = takesWriteOptions ? q.get('fieldManager') : null;
  const fv = (takesWriteOptions ? q.get('fieldValidation') : null) ?? '';
  const errs = [...leading];
  if (given) errs.push(...fieldManagerErrors(given));
  if (!FIELD_VALIDATIONS.includes(fv)) errs.push(notSupportedError('fieldValidation', goQuote(fv), [...FIELD_VALIDATIONS]));
  if (errs.length) throw invalid('meta.k8s.io', kind, '', errs);
  // Admission's audit annotations go straight into the request's audit event, when it has one.
  return { user: ctx.state.user, dryRun: dry.length > 0, fieldValidation: (fv || 'Warn') as FieldValidation, warnings: [], fieldManager: fieldManagerOf(ctx, given), fieldManagerParam: given || undefined, fieldValidationParam: fv || undefined, auditAnnotations: ctx.state.audit?.annotationRecord() };
}

/** force is a pointer in kube: absent → undefined, else its boolean parameter reading (queryFlag). */
export function forceOf(ctx: HttpContext): boolean | undefined {
  const v = queryOf(ctx).get('force');
  return v === null ? undefined : queryFlag(v);
}

/** The field manager a write is recorded under: the parameter, else derived from the User-Agent. */
function fieldManagerOf(ctx: HttpContext, given: string | null): string {
  if (given !== null && given !== '') return given;
  const ua = ctx.get('user-agent');
  let manager = managerByUserAgent.get(ua);
  if (manager === undefined) {
    // The User-Agent up to its first "/", as kube-apiserver derives it.
    manager = ua.split('/')[0].replace(/[^\x20-\x7e]/g, '').slice(0, MAX_FIELD_MANAGER_LENGTH) || 'unknown';
    // Clients send the same few User-Agents over and over; a bounded cache of their managers.
    if (managerByUserAgent.size < 1000) managerByUserAgent.set(ua, manager);
  }
  return manager;
}

const managerByUserAgent = new Map<string, string>();

/** kube's ValidateFieldManager: at most 128 bytes, every character printable (one cause per character). */
function fieldManagerErrors(given: string): FieldError[] {
  const errs: FieldError[] = [];
  if (Buffer.byteLength(given) > MAX_FIELD_MANAGER_LENGTH) {
    errs.push({ reason: 'FieldValueTooLong', field: 'fieldManager', message: `Too long: may not be more than ${MAX_FIELD_MANAGER_LENGTH} bytes` });
  }
  let at = 0; // Go ranges over a string by byte offset
  for (const ch of given) {
    if (!goIsPrint(ch)) errs.push(invalidError('fieldManager', goQuote(given), `invalid character ${goRuneU(ch.codePointAt(0)!)} (at position ${at})`));
    at += Buffer.byteLength(ch);
  }
  return errs;
}

const DELETE_OPTIONS = 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions';
const PROPAGATION_POLICIES: readonly string[] = ['Foreground', 'Background', 'Orphan'];

/** A DeleteOptions body as far as it is read here (it is held to the Go type first). */
interface DeleteOptionsBody {
  preconditions?: DeleteOptions['preconditions'];
  propagationPolicy?: unknown;
  orphanDependents?: unknown;
  gracePeriodSeconds?: unknown;
  dryRun?: unknown;
  ignoreStoreReadErrorWithClusterBreakingPotential?: unknown;
}

/**
 * DeleteOptions come from the body (if any) and from query parameters; `problems` are what kube's
 * ValidateDeleteOptions finds in them (for requestContext's 422).
 */
export async function deleteOptions(ctx: HttpContext, model: TypeModel): Promise<{ opts: DeleteOptions; problems: FieldError[] }> {
  const q = queryOf(ctx);
  const raw = await readBody(ctx.req);
  let body: DeleteOptionsBody = {};
  if (raw.length > 0) {
    const enc = bodyEncoding(mediaTypeOf(ctx.get('content-type')) || 'application/json') ?? 'json';
    const decoded = decodeAs(raw, enc, DELETE_OPTIONS) ?? {};
    if (typeof decoded !== 'object' || Array.isArray(decoded)) throw badRequest('the body of the request was not a DeleteOptions object');
    // Decoded into the Go type, as every body: `dryRun: "All"` (not a list) is refused, never read as no dry run.
    const typeError = goJsonTypeError(model.node(DELETE_OPTIONS), decoded as Record<string, unknown>);
    if (typeError) throw badRequest(typeError);
    body = decoded as DeleteOptionsBody;
  }
  const opts: DeleteOptions = {};
  if (body.preconditions) opts.preconditions = body.preconditions;
  const policy: unknown = q.get('propagationPolicy') ?? body.propagationPolicy ?? undefined;
  const orphanParam = q.get('orphanDependents');
  const orphan: unknown = orphanParam !== null ? queryFlag(orphanParam) : body.orphanDependents ?? undefined;
  const problems: FieldError[] = [];
  if (orphan !== undefined && policy !== undefined) problems.push(invalidError('propagationPolicy', goQuote(String(policy)), 'orphanDependents and deletionPropagation cannot be both set'));
  if (policy !== undefined && !PROPAGATION_POLICIES.includes(String(policy))) problems.push(notSupportedError('propagationPolicy', goQuote(String(policy)), [...PROPAGATION_POLICIES, 'nil']));
  opts.propagationPolicy = policy !== undefined ? String(policy) : orphan === true ? 'Orphan' : undefined;
  const gp = int64Param(q, 'gracePeriodSeconds') ?? body.gracePeriodSeconds;
  if (gp !== undefined && gp !== null) {
    if (!Number.isInteger(gp)) throw badRequest(`invalid gracePeriodSeconds: ${JSON.stringify(gp)}`);
    opts.gracePeriodSeconds = gp as number;
  }
  if (q.getAll('dryRun').length === 0 && Array.isArray(body.dryRun) && body.dryRun.length) {
    for (const d of body.dryRun) if (d !== 'All') throw badRequest(`dryRun: Unsupported value: "${d}": supported values: "All"`);
    queryOf(ctx).set('dryRun', 'All');
  }
  const unsafeParam = q.get('ignoreStoreReadErrorWithClusterBreakingPotential');
  if (unsafeParam !== null ? queryFlag(unsafeParam) : body.ignoreStoreReadErrorWithClusterBreakingPotential === true) {
    // ValidateIgnoreStoreReadError: the unsafe delete takes none of a normal delete's options.
    const together = (what: string) => problems.push(invalidError('ignoreStoreReadErrorWithClusterBreakingPotential', 'true', `cannot be set together with .${what}`));
    if (q.getAll('dryRun').length) together('dryRun');
    if (policy !== undefined) together('propagationPolicy');
    if (orphan !== undefined) together('orphanDependents');
    if (opts.gracePeriodSeconds !== undefined) together('gracePeriodSeconds');
    if (opts.preconditions) together('preconditions');
    opts.ignoreStoreReadErrorWithClusterBreakingPotential = true;
  }
  return { opts, problems };
}
