// admission.NewForbidden for the LimitRanger and ResourceQuota plugins: `<resource> "<name>" is
// forbidden: <why>`, the name the request's, or the object's, or "Unknown". kube's admission
// runs before a generateName is expanded, so an object made from generateName is named by its
// prefix; hearth has generated it already, and a name that is the prefix and five more
// characters is taken for one (as service-account.ts does).
import type { AdmissionAttributes } from '../types.ts';
import { forbidden, type ApiError } from '../../errors.ts';

export function refuse(a: AdmissionAttributes, message: string): ApiError {
  const meta = (a.object as { metadata?: { name?: unknown; generateName?: unknown } } | undefined)?.metadata;
  const generateName = typeof meta?.generateName === 'string' ? meta.generateName : '';
  let name = a.name || (typeof meta?.name === 'string' ? meta.name : '');
  if (generateName && (!name || (name.startsWith(generateName) && name.length === generateName.length + 5))) name = generateName;
  return forbidden(a.info.group, a.info.resource, name || 'Unknown', message);
}

/** utilerrors.NewAggregate(errs).Error(): one message as it is, several (each once) in brackets. */
export function aggregate(messages: string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`;
}
