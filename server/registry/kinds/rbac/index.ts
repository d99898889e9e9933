// RoleBindings and ClusterRoleBindings as kube validates them (ValidateRoleBinding,
// ValidateClusterRoleBinding and their updates): a roleRef to a Role or ClusterRole of
// rbac.authorization.k8s.io that never changes once written, and subjects of the three kinds.
// Also the bindings' and subjects' apiGroup defaults.
import type { Obj, Strategy } from '../../strategy.ts';
import { isPlainObject } from '../../../util/json.ts';
import { isDNS1123Subdomain, isPathSegmentName } from '../../../validation/names.ts';
import { goQuote } from '../../../go/strconv.ts';
import { invalidError, notSupportedError, requiredError, type FieldError } from '../../../validation/field.ts';
import { setZero, zero, type Defaulters } from '../../defaulting.ts';

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The internal rbac.RoleRef as %#v prints it. */
const goRoleRef = (r: Obj): string => `rbac.RoleRef{APIGroup:${goQuote(str(r.apiGroup))}, Kind:${goQuote(str(r.kind))}, Name:${goQuote(str(r.name))}}`;

function subjectErrors(errs: FieldError[], subject: Obj, namespaced: boolean, at: string): void {
  const name = str(subject.name);
  const apiGroup = str(subject.apiGroup);
  if (subject.name === '') errs.push(requiredError(`${at}.name`));
  switch (subject.kind) {
    case undefined:
      break;
    case 'ServiceAccount':
      if (name !== '') for (const m of isDNS1123Subdomain(name)) errs.push(invalidError(`${at}.name`, goQuote(name), m));
      if (apiGroup !== '') errs.push(notSupportedError(`${at}.apiGroup`, goQuote(apiGroup), ['']));
      if (!namespaced && str(subject.namespace) === '') errs.push(requiredError(`${at}.namespace`));
      break;
    case 'User':
    case 'Group':
      if (apiGroup !== RBAC_GROUP) errs.push(notSupportedError(`${at}.apiGroup`, goQuote(apiGroup), [RBAC_GROUP]));
      break;
    default:
      errs.push(notSupportedError(`${at}.kind`, goQuote(str(subject.kind)), ['ServiceAccount', 'User', 'Group']));
  }
}

function bindingErrors(binding: Obj, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  // (Absent fields are the schema walk's Required values.)
  const ref: Obj = isPlainObject(binding.roleRef) ? binding.roleRef : {};
  if (ref.apiGroup !== undefined && str(ref.apiGroup) !== RBAC_GROUP) errs.push(notSupportedError('roleRef.apiGroup', goQuote(str(ref.apiGroup)), [RBAC_GROUP]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (ref.kind !== undefined && !kinds.includes(str(ref.kind))) errs.push(notSupportedError('roleRef.kind', goQuote(str(ref.kind)), kinds));
  const name = str(ref.name);
  if (ref.name === '') errs.push(requiredError('roleRef.name'));
  else if (name !== '') for (const m of isPathSegmentName(name)) errs.push(invalidError('roleRef.name', goQuote(name), m));
  (Array.isArray(binding.subjects) ? binding.subjects : []).forEach((s: unknown, i: number) => subjectErrors(errs, isPlainObject(s) ? s : {}, namespaced, `subjects[${i}]`));
  return errs;
}

function roleRefUpdate(binding: Obj, old: Obj): FieldError[] {
  const ref: Obj = isPlainObject(binding.roleRef) ? binding.roleRef : {};
  const before: Obj = isPlainObject(old.roleRef) ? old.roleRef : {};
  const same = ['apiGroup', 'kind', 'name'].every((k) => str(ref[k]) === str(before[k]));
  return same ? [] : [invalidError('roleRef', goRoleRef(ref), 'cannot change roleRef')];
}

function bindingStrategy(namespaced: boolean): Strategy {
  return {
    validate: (b) => bindingErrors(b, namespaced),
    validateUpdate: (b, old) => [...bindingErrors(b, namespaced), ...roleRefUpdate(b, old)],
  };
}

export const roleBindingStrategy = bindingStrategy(true);
export const clusterRoleBindingStrategy = bindingStrategy(false);

/** Role bindings and their subjects, by definition. */
export const rbacDefaults: Defaulters = {
  'io.k8s.api.rbac.v1.RoleBinding': (b) => {
    if (isPlainObject(b.roleRef)) setZero(b.roleRef, 'apiGroup', 'rbac.authorization.k8s.io');
  },
  'io.k8s.api.rbac.v1.ClusterRoleBinding': (b) => {
    if (isPlainObject(b.roleRef)) setZero(b.roleRef, 'apiGroup', 'rbac.authorization.k8s.io');
  },
  // (a ServiceAccount's is "", which its omitempty tag leaves out)
  'io.k8s.api.rbac.v1.Subject': (s) => {
    if (zero(s.apiGroup) && (s.kind === 'User' || s.kind === 'Group')) s.apiGroup = 'rbac.authorization.k8s.io';
  },
};
