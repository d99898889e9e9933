// Defaulting for every built-in resource, as a hook the generic store calls rather than a
// registered Strategy: one strategy per resource is allowed, and defaulting must compose with
// the ones that exist (namespaces.ts). The store calls the returned function on create (after
// the status reset, before prepareForCreate) and on update (on the desired object, before
// prepareUpdate, so generation and no-op detection compare defaulted with defaulted), the way
// kube-apiserver defaults while decoding the request body.
import { applyDefaults, hasDefaults } from '../defaulting.ts';

const hooks = new Map<string, ((obj: any) => void) | undefined>();

/** The defaulting function for objects of this OpenAPI definition, or undefined when it has no defaults. */
export function defaultsFor(definition: string): ((obj: any) => void) | undefined {
  if (hooks.has(definition)) return hooks.get(definition);
  const hook = hasDefaults(definition) ? (obj: any) => applyDefaults(definition, obj) : undefined;
  hooks.set(definition, hook);
  return hook;
}
