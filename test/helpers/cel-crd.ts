// A namespaced CRD with one served version whose spec schema is given, for tests of CEL rules
// (and any test that needs such a CRD).
import assert from 'node:assert/strict';
import type { TestServer } from './server.ts';

export type Rule = { rule: string; message?: string; messageExpression?: string; optionalOldSelf?: boolean };

/** A string schema of the given maxLength (CEL costs are sized from it), with rules if any. */
export const str = (maxLength: number, ...rules: Rule[]) => ({ type: 'string', maxLength, ...(rules.length ? { 'x-kubernetes-validations': rules } : {}) });

/** `<plural>.<group>`, version v1, `spec` as the schema of .spec and `rootRules` on the root. */
export function ruleCrd(group: string, plural: string, kind: string, spec: Record<string, unknown>, rootRules: Rule[] = []) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec }, ...(rootRules.length ? { 'x-kubernetes-validations': rootRules } : {}) } },
        },
      ],
    },
  };
}

/**
 * Creates a ruleCrd on the server and waits until its resource is served; returns the resource's
 * path in namespace default.
 */
export async function installRuleCrd(s: TestServer, crd: ReturnType<typeof ruleCrd>): Promise<string> {
  const r = await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd });
  assert.equal(r.status, 201, r.text);
  const path = `/apis/${crd.spec.group}/v1/namespaces/default/${crd.spec.names.plural}`;
  for (let i = 0; i < 50 && (await s.request('GET', path)).status !== 200; i++) await new Promise((res) => setTimeout(res, 20));
  return path;
}
