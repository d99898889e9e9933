// A namespaced CRD with one served version whose spec schema is given, for tests of CEL rules.

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
