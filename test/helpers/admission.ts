// AdmissionAttributes for unit tests of admission plugins: what the store would build, with the
// warnings and audit annotations a plugin adds kept where a test can read them.
import type { AdmissionAttributes } from '../../server/admission/types.ts';
import type { ResourceInfo } from '../../server/schema/types.ts';
import type { UserInfo } from '../../server/authentication/user.ts';

export interface TestAttributes extends AdmissionAttributes {
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

export function admissionAttributes(a: {
  operation: AdmissionAttributes['operation'];
  info: ResourceInfo;
  name: string;
  namespace?: string;
  subresource?: string;
  object?: unknown;
  oldObject?: unknown;
  user: UserInfo;
  dryRun?: boolean;
}): TestAttributes {
  const warnings: string[] = [];
  const auditAnnotations: Record<string, string> = {};
  const optionsKind = a.operation === 'CREATE' ? 'CreateOptions' : a.operation === 'UPDATE' ? 'UpdateOptions' : 'DeleteOptions';
  return {
    operation: a.operation,
    info: a.info,
    subresource: a.subresource ?? '',
    namespace: a.info.namespaced ? (a.namespace ?? '') : '',
    name: a.name,
    object: a.object,
    oldObject: a.oldObject,
    user: a.user,
    dryRun: a.dryRun ?? false,
    kind: { group: a.info.group, version: a.info.version, kind: a.info.kind },
    options: { kind: optionsKind, apiVersion: 'meta.k8s.io/v1' },
    warn: (m) => warnings.push(m),
    addAuditAnnotation: (k, v) => {
      auditAnnotations[k] = v;
    },
    warnings,
    auditAnnotations,
  };
}
