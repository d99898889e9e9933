// admission/policy/: ValidatingAdmissionPolicy and MutatingAdmissionPolicy (kube's
// admission/plugin/policy: generic, validating, mutating, and admission/plugin/cel), the two
// plugins server.ts registers, built here from what it passes:
//   cel.ts          the policies' CEL variables and activation (lazy `variables`)
//   source.ts       policies and bindings in memory from the commit stream, compiled per generation
//   matcher.ts      matchConstraints and matchResources over the shared admission/matching.ts
//   params.ts       a binding's params (paramRef) of any kind
//   validator.ts    one validating policy compiled and evaluated
//   validating.ts   the validating plugin: actions Deny/Warn/Audit
//   mutating.ts     the mutating plugin: ApplyConfiguration and JSONPatch
//   typechecking.ts the type checking the status controller writes back
//   strategies.ts   the policy kinds' validation, registered with this folder's compiler
// Imports the registry's selectors, apply merge and JSON patch, schema/, errors.ts, the CEL index
// and the ground floor; never http/ or the store (server.ts passes what is read, structurally).
import type { ResourceCatalog } from '../../schema/catalog.ts';
import type { ResourceInfo, TypeNode } from '../../schema/types.ts';
import { equivalentResourcesIn } from '../matching.ts';
import type { AdmissionAttributes, AdmissionPlugin } from '../types.ts';
import { authorize, type Authorizer } from '../../authorization/authorizer.ts';
import type { AuthzCheckAttributes, AuthzCheckResult } from '../../registry/crd/cel/index.ts';
import { policyMatcher } from './matcher.ts';
import { compileMutatingPolicy, mutatingAdmissionPolicy, type CompiledMutatingPolicy } from './mutating.ts';
import type { ParamKindResolver } from './params.ts';
import { PolicySource, type CommittedChange } from './source.ts';
import { typeCheckPolicy, type ExpressionWarning } from './typechecking.ts';
import { validatingAdmissionPolicy, type PolicyLookups } from './validating.ts';
import { compileValidatingPolicy, type CompiledValidatingPolicy } from './validator.ts';
import './strategies.ts';

type Obj = Record<string, unknown>;

/** What the plugins read of the server (server.ts's admission plugin context, structurally). */
export interface PolicyPluginContext {
  store: {
    tryGet(info: ResourceInfo, ns: string, name: string): Obj | undefined;
    listCurrent(info: ResourceInfo, ns: string | undefined): Obj[];
  };
  catalog: ResourceCatalog;
  eventLog: { onCommit(listener: (events: CommittedChange[]) => void): unknown };
  namespaces: { get(name: string): { labels?: Readonly<Record<string, string>> } | undefined };
  model: { definitions(): Record<string, unknown>; node(definition: string): TypeNode };
  /** The authorizer chain, for the policies' `authorizer`. */
  authorizers: readonly Authorizer[];
}

const GROUP = 'admissionregistration.k8s.io';

/** A policy kind's source, loaded from the store and fed by the commit stream. */
function sourceOf<C>(c: PolicyPluginContext, policies: string, bindings: string, compile: (p: Obj) => C): PolicySource<C> {
  const policyInfo = c.catalog.lookup(GROUP, 'v1', policies)!;
  const bindingInfo = c.catalog.lookup(GROUP, 'v1', bindings)!;
  const source = new PolicySource(`${policies}.${GROUP}`, `${bindings}.${GROUP}`, compile);
  source.load(c.store.listCurrent(policyInfo, undefined), c.store.listCurrent(bindingInfo, undefined));
  c.eventLog.onCommit((events) => source.onCommit(events));
  return source;
}

/** Params of any served kind, custom resources included, read from the store when a binding matches. */
function paramsOf(c: PolicyPluginContext): ParamKindResolver {
  return (apiVersion, kind) => {
    const slash = apiVersion.indexOf('/');
    const info = c.catalog.byKind(slash < 0 ? '' : apiVersion.slice(0, slash), slash < 0 ? apiVersion : apiVersion.slice(slash + 1), kind);
    if (!info) return undefined;
    return {
      namespaced: info.namespaced,
      get: (ns, name) => c.store.tryGet(info, ns, name),
      list: (ns) => c.store.listCurrent(info, ns),
    };
  };
}

function lookupsOf(c: PolicyPluginContext): PolicyLookups {
  const nsInfo = c.catalog.lookup('', 'v1', 'namespaces')!;
  return { namespace: (name) => c.store.tryGet(nsInfo, '', name), params: paramsOf(c), authorize: (attrs) => authorizeNow(c.authorizers, attrs) };
}

/**
 * One check through the chain. CEL runs synchronously: an authorizer that answers later (a
 * webhook) gives an errored Decision rather than a wait.
 */
export function authorizeNow(authorizers: readonly Authorizer[], attrs: AuthzCheckAttributes): AuthzCheckResult {
  const r = authorize(authorizers, { ...attrs, user: { ...attrs.user, groups: attrs.user.groups ?? [] } });
  if (r instanceof Promise) {
    r.catch(() => {});
    return { decision: 'noopinion', reason: '', error: 'the authorizer chain could not answer synchronously' };
  }
  return r;
}

function matcherOf(c: PolicyPluginContext) {
  return policyMatcher((name) => c.namespaces.get(name)?.labels, equivalentResourcesIn(c.catalog));
}

export function validatingAdmissionPolicyPlugin(c: PolicyPluginContext): AdmissionPlugin {
  const source = sourceOf<CompiledValidatingPolicy>(c, 'validatingadmissionpolicies', 'validatingadmissionpolicybindings', compileValidatingPolicy);
  return validatingAdmissionPolicy(source, matcherOf(c), lookupsOf(c));
}

export function mutatingAdmissionPolicyPlugin(c: PolicyPluginContext): AdmissionPlugin {
  const source = sourceOf<CompiledMutatingPolicy>(c, 'mutatingadmissionpolicies', 'mutatingadmissionpolicybindings', compileMutatingPolicy);
  const typeOf = (a: AdmissionAttributes): TypeNode | undefined => (a.info.definition ? c.model.node(a.info.definition) : a.info.custom?.typeNode());
  return mutatingAdmissionPolicy(source, matcherOf(c), { ...lookupsOf(c), typeOf });
}

/** The type checker the status controller runs (kube's TypeChecker over the served kinds' schemas). */
export function validatingAdmissionPolicyTypeChecker(catalog: ResourceCatalog, model: { definitions(): Record<string, unknown> }): (policy: Obj) => ExpressionWarning[] {
  return (policy) =>
    typeCheckPolicy(policy, {
      kindFor: (group, version, resource) => {
        const info = catalog.lookup(group, version, resource);
        return info && { gvk: { group, version, kind: info.kind }, definition: info.definition };
      },
      definitionOf: (apiVersion, kind) => {
        const slash = apiVersion.indexOf('/');
        return catalog.byKind(slash < 0 ? '' : apiVersion.slice(0, slash), slash < 0 ? apiVersion : apiVersion.slice(slash + 1), kind)?.definition;
      },
      definitions: () => model.definitions(),
    });
}
