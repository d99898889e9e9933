// The params of one binding (kube's policy/generic/policy_dispatcher.go CollectParams): the object
// paramRef names, or those its selector selects, of the policy's paramKind — any kind the server
// serves, custom resources included — read through the lookup server.ts passes; with
// parameterNotFoundAction Deny, none found is an error.
import { labelSelectorFromObject } from '../../registry/selectors.ts';

type Obj = Record<string, unknown>;

/** Where the objects of one paramKind are read (server.ts: the store, by the kind's resource). */
export interface ParamKindSource {
  namespaced: boolean;
  get(namespace: string, name: string): Obj | undefined;
  list(namespace: string | undefined): Obj[];
}

/** The paramKind's objects, or undefined when the server serves no such kind. */
export type ParamKindResolver = (apiVersion: string, kind: string) => ParamKindSource | undefined;

export class ParamsError extends Error {}

/** ParamKind's String() as Go's generated code prints it. */
function paramKindString(pk: Obj): string {
  return `&ParamKind{APIVersion:${String(pk.apiVersion ?? '')},Kind:${String(pk.kind ?? '')},}`;
}

/**
 * The params to evaluate the policy with for this binding: [null] when the policy has no
 * paramKind or the binding no paramRef; [] when none was found and the action is Allow.
 */
export function collectParams(paramKind: Obj | undefined, paramRef: Obj | undefined, requestNamespace: string, resolve: ParamKindResolver): (Obj | null)[] {
  if (!paramKind || !paramRef) return [null];
  const source = resolve(String(paramKind.apiVersion ?? ''), String(paramKind.kind ?? ''));
  if (!source) throw new ParamsError(`paramKind kind \`${paramKindString(paramKind)}\` not known`);
  const refNamespace = typeof paramRef.namespace === 'string' ? paramRef.namespace : '';
  let namespace: string | undefined;
  if (source.namespaced) {
    namespace = refNamespace || requestNamespace;
    if (!namespace) throw new ParamsError('cannot use namespaced paramRef in policy binding that matches cluster-scoped resources');
  } else if (refNamespace) {
    throw new ParamsError('paramRef.namespace must not be provided for a cluster-scoped `paramKind`');
  }
  let params: Obj[];
  const name = typeof paramRef.name === 'string' ? paramRef.name : '';
  if (name) {
    if (paramRef.selector !== undefined && paramRef.selector !== null) throw new ParamsError('paramRef.name and paramRef.selector are mutually exclusive');
    const found = source.get(namespace ?? '', name);
    params = found ? [found] : [];
  } else if (paramRef.selector !== undefined && paramRef.selector !== null) {
    let selector;
    try {
      selector = labelSelectorFromObject(paramRef.selector);
    } catch (e) {
      throw new ParamsError(e instanceof Error ? e.message : String(e));
    }
    params = source.list(namespace).filter((o) => selector.matches(((o.metadata as Obj | undefined)?.labels ?? {}) as Record<string, string>));
  } else {
    throw new ParamsError('one of name or selector must be provided');
  }
  if (!params.length && paramRef.parameterNotFoundAction === 'Deny') throw new ParamsError('no params found for policy binding with `Deny` parameterNotFoundAction');
  return params;
}
