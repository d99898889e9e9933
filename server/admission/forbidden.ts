// kube's admission.NewForbidden (k8s.io/apiserver/pkg/admission/errors.go), for every plugin:
// `<resource> "<name>" is forbidden: <reason>`, named by the request, else by the object's name
// or, on a create from generateName (admission runs before the name is generated), its prefix,
// else "Unknown".
import type { AdmissionAttributes } from './types.ts';
import { forbidden, type ApiError } from '../errors.ts';

/** extractResourceName: the name an admission refusal gives the object. */
export function admissionObjectName(a: AdmissionAttributes): string {
  if (a.name) return a.name;
  const meta = (a.object as { metadata?: { name?: unknown; generateName?: unknown } } | undefined)?.metadata;
  if (typeof meta?.name === 'string' && meta.name) return meta.name;
  if (typeof meta?.generateName === 'string' && meta.generateName) return meta.generateName;
  return 'Unknown';
}

export function newForbidden(a: AdmissionAttributes, reason: string): ApiError {
  return forbidden(a.info.group, a.info.resource, admissionObjectName(a), reason);
}
