// admission.NewForbidden (k8s.io/apiserver/pkg/admission/errors.go), shared by the built-in
// plugins: `<resource> "<name>" is forbidden: <reason>`, the name from the request, else the
// object's name or generateName (names are generated after admission), else "Unknown".
import type { AdmissionAttributes } from './types.ts';
import { forbidden, type ApiError } from '../errors.ts';

export function newForbidden(a: AdmissionAttributes, reason: string): ApiError {
  let name = a.name;
  if (!name) {
    const meta = (a.object as { metadata?: { name?: unknown; generateName?: unknown } } | undefined)?.metadata;
    name = (typeof meta?.name === 'string' && meta.name) || (typeof meta?.generateName === 'string' && meta.generateName) || 'Unknown';
  }
  return forbidden(a.info.group, a.info.resource, name, reason);
}

export type Json = Record<string, unknown>;
export const rec = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
export const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');
