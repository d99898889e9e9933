// The MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins, as kube's
// admission/plugin/webhook/{generic,mutating,validating} dispatch them:
//
// - Which webhooks apply (generic.Webhook.ShouldCallHook): the namespace and object selectors,
//   the rules (at the request's resource, then with matchPolicy Equivalent at its equivalents),
//   then the match conditions. Kube's own admissionregistration objects are never sent to
//   webhooks (IsExemptAdmissionConfigurationResource). This is synchronous and reads only memory,
//   so a request no webhook applies to costs no promise.
// - Mutating webhooks are called one after another, each JSONPatch applied to the object before
//   the next is asked; with reinvocationPolicy IfNeeded, a webhook called before a later one
//   changed the object is called once more (round 1), as kube's webhookReinvokeContext decides.
//   Audit annotations `mutation.webhook.admission.k8s.io/round_{r}_index_{i}` (and `patch.`,
//   `failed-open.`) are added as kube adds them.
// - Validating webhooks are called all at once; the first error to arrive is the answer (kube's
//   error channel order).
// - failurePolicy decides about calls that fail (ErrCallingWebhook): Fail answers
//   `Internal error occurred: failed calling webhook "x": ...`, Ignore goes on. A denial is the
//   webhook's Status as ToStatusErr words it, whatever the policy. A dry run reaches only
//   webhooks without side effects (None, NoneOnDryRun); others refuse it with a 400.
import { ApiError, badRequest, forbidden, internalError } from '../../errors.ts';
import type { AdmissionMetrics, WebhookType } from '../../metrics/admission.ts';
import { semanticEqual } from '../../util/json.ts';
import { applyJsonPatch } from '../../registry/patch/index.ts';
import type { AdmissionAttributes, AdmissionPlugin } from '../types.ts';
import { matchingInvocation, namespaceSelectorMatches, objectSelectorMatches, requestResource, type EquivalentResource, type AdmissionRule, type GroupVersionKind, type GroupVersionResource } from '../matching.ts';
import { callWebhook, CallingWebhookError, type ServiceResolver } from './call.ts';
import { evaluateConditions } from './match-conditions.ts';
import { requestAuthorizer } from '../cel.ts';
import { registerAuthzCheck, type AuthzCheck } from '../../registry/crd/cel/index.ts';
import { admissionRequest, createReview, denialError, verifyResponse } from './review.ts';
import type { WebhookAccessor, WebhookConfigurationIndex } from './source.ts';

/** A webhook that applies, and at which resource and kind it is called (kube's WebhookInvocation). */
export interface Invocation {
  hook: WebhookAccessor;
  resource: GroupVersionResource;
  kind: GroupVersionKind;
}

/** Converts an object (the request's kind) to another version of it and back (Equivalent matching). */
export type ObjectConverter = (obj: unknown, attrs: AdmissionAttributes, to: GroupVersionKind) => Promise<unknown>;

export interface WebhookPluginDeps {
  index: WebhookConfigurationIndex;
  /** A namespace's labels from memory (undefined: no such namespace). */
  namespaceLabels: (name: string) => Readonly<Record<string, string>> | undefined;
  /** The request's resource in the other versions served (matchPolicy Equivalent). */
  equivalents: (attrs: AdmissionAttributes) => readonly EquivalentResource[];
  resolver: ServiceResolver;
  convert?: ObjectConverter;
  /** Drops what the kind does not have from a patched object and defaults it (kube decodes and defaults it). */
  decode?: (obj: Record<string, unknown>, attrs: AdmissionAttributes) => void;
  /** The authorizer chain's answer for match conditions' `authorizer` (registered once per deps: authorizeIdOf). */
  authorize?: AuthzCheck;
  /** The webhook metrics (apiserver_admission_webhook_*). */
  metrics?: AdmissionMetrics;
}

const authorizeIds = new WeakMap<WebhookPluginDeps, string>();
/** The CEL authorizer check of these deps, registered on first use. */
function authorizeIdOf(deps: WebhookPluginDeps): string | undefined {
  if (!deps.authorize) return undefined;
  let id = authorizeIds.get(deps);
  if (id === undefined) authorizeIds.set(deps, (id = registerAuthzCheck(deps.authorize)));
  return id;
}

const EXEMPT_KINDS = new Set(['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'MutatingAdmissionPolicy', 'MutatingAdmissionPolicyBinding']);

const requestKind = (attrs: AdmissionAttributes): GroupVersionKind => attrs.kind;

/** rules.IsExemptAdmissionConfigurationResource. */
function isExempt(attrs: AdmissionAttributes): boolean {
  const k = requestKind(attrs);
  return k.group === 'admissionregistration.k8s.io' && EXEMPT_KINDS.has(k.kind);
}

const sameKind = (a: GroupVersionKind, b: GroupVersionKind) => a.group === b.group && a.version === b.version && a.kind === b.kind;

/** The request as kube's CEL sees it (CreateAdmissionRequest). */
function celRequest(attrs: AdmissionAttributes, inv: Invocation): Record<string, unknown> {
  return admissionRequest('', reviewFields(attrs, inv, attrs.object, attrs.oldObject));
}

function reviewFields(attrs: AdmissionAttributes, inv: Invocation, object: unknown, oldObject: unknown) {
  return {
    kind: inv.kind,
    resource: inv.resource,
    subResource: attrs.subresource,
    requestKind: requestKind(attrs),
    requestResource: requestResource(attrs),
    requestSubResource: attrs.subresource,
    name: attrs.name,
    namespace: attrs.namespace,
    operation: attrs.operation,
    user: attrs.user,
    object,
    oldObject,
    dryRun: attrs.dryRun,
    options: attrs.options,
  };
}

/** ShouldCallHook: the invocation, none, or the ApiError that ends the request. */
function shouldCallHook(hook: WebhookAccessor, attrs: AdmissionAttributes, deps: WebhookPluginDeps): Invocation | undefined {
  // Selector errors matter only for a webhook whose rules match (kube checks them after).
  let namespaceError: unknown;
  let nsMatches = false;
  try {
    nsMatches = namespaceSelectorMatches(hook.namespaceSelector(), attrs, deps.namespaceLabels);
  } catch (e) {
    namespaceError = e;
  }
  if (!nsMatches && namespaceError === undefined) return undefined;
  let objectError: unknown;
  let objMatches = false;
  try {
    objMatches = objectSelectorMatches(hook.objectSelector(), attrs);
  } catch (e) {
    objectError = e;
  }
  if (!objMatches && objectError === undefined) return undefined;
  const matched = matchingInvocation(hook.rules as AdmissionRule[], attrs, hook.matchPolicy, deps.equivalents);
  if (!matched) return undefined;
  if (namespaceError !== undefined) throw namespaceError;
  if (objectError !== undefined) throw objectError;
  const inv: Invocation = { hook, resource: matched.resource, kind: matched.kind };
  if (hook.conditions.length) {
    // (the conditions see the object at the request's version; kube converts it first when the invocation's differs)
    const authorizeId = authorizeIdOf(deps);
    const authorizer = authorizeId === undefined ? undefined : requestAuthorizer(attrs, authorizeId);
    const m = evaluateConditions(hook.conditions, { object: attrs.object, oldObject: attrs.oldObject, request: celRequest(attrs, inv), authorizer }, hook.failurePolicy === 'Fail');
    if (m.error !== undefined) throw forbidden(attrs.info.group, attrs.info.resource, attrs.name, m.error);
    if (!m.matches) return undefined;
  }
  return inv;
}

/** Refuses a dry run to a webhook that may have side effects (both dispatchers' first check). */
function checkDryRun(hook: WebhookAccessor, attrs: AdmissionAttributes): void {
  if (!attrs.dryRun) return;
  if (hook.sideEffects === undefined) throw new CallingWebhookError(hook.name, 'Webhook SideEffects is nil', 400);
  if (hook.sideEffects !== 'None' && hook.sideEffects !== 'NoneOnDryRun') throw badRequest(`admission webhook ${JSON.stringify(hook.name)} does not support dry run`);
}

/** The object and old object at the invocation's version (converted when Equivalent matched another). */
async function versioned(attrs: AdmissionAttributes, inv: Invocation, convert: ObjectConverter | undefined): Promise<{ object: unknown; oldObject: unknown; converted: boolean }> {
  if (sameKind(inv.kind, requestKind(attrs))) return { object: attrs.object, oldObject: attrs.oldObject, converted: false };
  if (!convert) throw internalError(`unable to convert to ${inv.kind.group}/${inv.kind.version}, Kind=${inv.kind.kind}`);
  const object = attrs.object === undefined ? undefined : await convert(attrs.object, attrs, inv.kind);
  const oldObject = attrs.oldObject === undefined ? undefined : await convert(attrs.oldObject, attrs, inv.kind);
  return { object, oldObject, converted: true };
}

/** Denials by a webhook (kube's ErrWebhookRejection), told apart from other errors by the metrics. */
const denials = new WeakSet<object>();

/**
 * kube's dispatchers' metrics of one webhook call: ObserveWebhook (code 200 when it answered
 * allowed, its error's Status code otherwise, 0 for the API server's own errors),
 * ObserveWebhookRejection and ObserveWebhookFailOpen.
 */
function observeCall(deps: WebhookPluginDeps, hook: WebhookAccessor, type: WebhookType, attrs: AdmissionAttributes, start: number, error: unknown): void {
  const m = deps.metrics;
  if (!m) return;
  const seconds = (performance.now() - start) / 1000;
  const op = attrs.operation;
  if (error === undefined) return m.observeWebhook(hook.name, type, op, false, 200, seconds);
  if (error instanceof CallingWebhookError) {
    const failsOpen = hook.failurePolicy === 'Ignore';
    if (failsOpen) m.observeWebhookFailOpen(hook.name, type);
    else m.observeWebhookRejection(hook.name, type, op, 'calling_webhook_error', error.statusCode);
    return m.observeWebhook(hook.name, type, op, !failsOpen, error.statusCode, seconds);
  }
  if (error instanceof ApiError && denials.has(error)) {
    m.observeWebhookRejection(hook.name, type, op, 'no_error', error.code);
    return m.observeWebhook(hook.name, type, op, true, error.code, seconds);
  }
  m.observeWebhookRejection(hook.name, type, op, 'apiserver_internal_error', 0);
  m.observeWebhook(hook.name, type, op, true, 0, seconds);
}

/** Sends the review and checks the answer; the verified response (denials thrown). */
async function review(hook: WebhookAccessor, inv: Invocation, attrs: AdmissionAttributes, object: unknown, oldObject: unknown, mutating: boolean, resolver: ServiceResolver) {
  if (!hook.reviewVersion) throw new CallingWebhookError(hook.name, 'could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)', 400);
  const { uid, review } = createReview(hook.reviewVersion, reviewFields(attrs, inv, object, oldObject));
  const answer = await callWebhook(hook, review, resolver);
  const verified = verifyResponse(hook.reviewVersion, uid, mutating, answer);
  if (typeof verified === 'string') throw new CallingWebhookError(hook.name, `received invalid webhook response: ${verified}`);
  for (const [k, v] of Object.entries(verified.auditAnnotations)) attrs.addAuditAnnotation(`${hook.name}/${k}`, v);
  for (const w of verified.warnings) attrs.warn(w);
  if (!verified.allowed) {
    const denial = denialError(hook.name, attrs.info, attrs.name, verified.result);
    denials.add(denial);
    throw denial;
  }
  return verified;
}

/** Replaces the object's members with the patched ones: the store holds the same object. */
function replaceInPlace(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const k of Object.keys(target)) if (!(k in source)) delete target[k];
  Object.assign(target, source);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** callAttrMutatingHook: whether the webhook changed the object. */
async function callMutatingHook(inv: Invocation, attrs: AdmissionAttributes, round: number, index: number, deps: WebhookPluginDeps): Promise<boolean> {
  const hook = inv.hook;
  let changed = false;
  try {
    checkDryRun(hook, attrs);
    const v = await versioned(attrs, inv, deps.convert);
    const result = await review(hook, inv, attrs, v.object, v.oldObject, true, deps.resolver);
    if (!result.patch || result.patch.length === 0) return false;
    let operations: unknown;
    try {
      operations = JSON.parse(result.patch.toString('utf8'));
      if (!Array.isArray(operations)) throw new Error(`json: cannot unmarshal ${typeof operations} into Go value of type jsonpatch.Patch`);
    } catch (e) {
      throw new CallingWebhookError(hook.name, `received undecodable patch in webhook response: ${(e as Error).message}`);
    }
    if (operations.length === 0) return false;
    if (v.object === undefined) throw internalError(`admission webhook ${JSON.stringify(hook.name)} attempted to modify the object, which is not supported for this operation`);
    if (result.patchType !== 'JSONPatch') throw new CallingWebhookError(hook.name, `unsupported patch type ${JSON.stringify(result.patchType ?? '')}`);
    let patched: unknown;
    try {
      patched = applyJsonPatch(structuredClone(v.object), operations);
    } catch (e) {
      throw internalError(e instanceof Error ? e.message : String(e));
    }
    if (!isObject(patched)) throw internalError('the patched object is not an object');
    const back = v.converted ? await deps.convert!(patched, attrs, requestKind(attrs)) : patched;
    // Decoded into the kind again and defaulted, as kube does before it compares.
    if (isObject(back) && attrs.subresource === '') deps.decode?.(back, attrs);
    changed = !semanticEqual(attrs.object, back);
    attrs.addAuditAnnotation(`patch.webhook.admission.k8s.io/round_${round}_index_${index}`, JSON.stringify({ configuration: hook.configurationName, webhook: hook.name, patch: operations, patchType: 'JSONPatch' }));
    if (changed && isObject(attrs.object) && isObject(back)) replaceInPlace(attrs.object, back);
    return changed;
  } finally {
    attrs.addAuditAnnotation(`mutation.webhook.admission.k8s.io/round_${round}_index_${index}`, JSON.stringify({ configuration: hook.configurationName, webhook: hook.name, mutated: changed }));
  }
}

/** kube's webhookReinvokeContext. */
interface ReinvokeContext {
  /** Webhooks (IfNeeded) called since the object last changed. */
  previouslyInvoked: Set<string>;
  /** Webhooks to call again in round 1. */
  reinvoke: Set<string>;
}

async function dispatchMutating(attrs: AdmissionAttributes, hooks: readonly WebhookAccessor[], first: { index: number; inv: Invocation }, deps: WebhookPluginDeps): Promise<void> {
  const ctx: ReinvokeContext = { previouslyInvoked: new Set(), reinvoke: new Set() };
  let anyChange = false;
  for (let round = 0; round < 2; round++) {
    for (let i = round === 0 ? first.index : 0; i < hooks.length; i++) {
      const hook = hooks[i]!;
      const inv = round === 0 && i === first.index ? first.inv : shouldCallHook(hook, attrs, deps);
      if (!inv) continue;
      // A webhook is never called for the first time in round 1.
      if (round === 1 && !ctx.reinvoke.has(hook.uid)) continue;
      let changed = false;
      let error: unknown;
      const start = performance.now();
      try {
        changed = await callMutatingHook(inv, attrs, round, i, deps);
      } catch (e) {
        error = e;
      }
      observeCall(deps, hook, 'admit', attrs, start, error);
      if (changed) {
        for (const uid of ctx.previouslyInvoked) ctx.reinvoke.add(uid);
        ctx.previouslyInvoked.clear();
        anyChange = true;
      }
      if (hook.reinvocationPolicy === 'IfNeeded') ctx.previouslyInvoked.add(hook.uid);
      if (error === undefined) continue;
      if (error instanceof CallingWebhookError) {
        if (hook.failurePolicy === 'Ignore') {
          attrs.addAuditAnnotation(`failed-open.mutation.webhook.admission.k8s.io/round_${round}_index_${i}`, hook.name);
          continue;
        }
        throw internalError(error.message);
      }
      throw error;
    }
    if (round === 0 && !(anyChange && ctx.reinvoke.size > 0)) return;
  }
}

async function dispatchValidating(attrs: AdmissionAttributes, invocations: Invocation[], deps: WebhookPluginDeps): Promise<void> {
  const errors: unknown[] = [];
  await Promise.all(
    invocations.map(async (inv, idx) => {
      const hook = inv.hook;
      const start = performance.now();
      try {
        checkDryRun(hook, attrs);
        const v = await versioned(attrs, inv, deps.convert);
        await review(hook, inv, attrs, v.object, v.oldObject, false, deps.resolver);
        observeCall(deps, hook, 'validating', attrs, start, undefined);
      } catch (e) {
        observeCall(deps, hook, 'validating', attrs, start, e);
        if (e instanceof CallingWebhookError) {
          if (hook.failurePolicy === 'Ignore') {
            attrs.addAuditAnnotation(`failed-open.validating.webhook.admission.k8s.io/round_0_index_${idx}`, hook.name);
            return;
          }
          errors.push(internalError(e.message));
          return;
        }
        errors.push(e);
      }
    }),
  );
  if (errors.length) throw errors[0];
}

/** MutatingAdmissionWebhook. */
export function mutatingAdmissionWebhook(deps: WebhookPluginDeps): AdmissionPlugin {
  return {
    name: 'MutatingAdmissionWebhook',
    admit(attrs) {
      const hooks = deps.index.mutating.webhooks;
      if (hooks.length === 0 || isExempt(attrs)) return;
      for (let i = 0; i < hooks.length; i++) {
        const inv = shouldCallHook(hooks[i]!, attrs, deps);
        if (inv) return dispatchMutating(attrs, hooks, { index: i, inv }, deps);
      }
    },
  };
}

/** ValidatingAdmissionWebhook. */
export function validatingAdmissionWebhook(deps: WebhookPluginDeps): AdmissionPlugin {
  return {
    name: 'ValidatingAdmissionWebhook',
    validate(attrs) {
      const hooks = deps.index.validating.webhooks;
      if (hooks.length === 0 || isExempt(attrs)) return;
      const invocations: Invocation[] = [];
      for (const hook of hooks) {
        const inv = shouldCallHook(hook, attrs, deps);
        if (inv) invocations.push(inv);
      }
      if (invocations.length) return dispatchValidating(attrs, invocations, deps);
    },
  };
}
