// Object metadata validation (ValidateObjectMeta and its parts): names, generateName,
// namespace, labels, annotations, label selectors, finalizers, owner references and managed
// fields, worded the way kube-apiserver words its field errors.
import { goStringSlice } from '../go/fmt.ts';
import { goQuote } from '../go/strconv.ts';
import { goTime } from '../go/time.ts';
import { isPlainObject } from '../util/json.ts';
import { forbiddenError as forbidden, invalidError as invalid, requiredError as required, tooLongError as tooLong, type FieldError } from './field.ts';
import { isDNS1123Label, isQualifiedName, isValidLabelValue, validateName, type NameRule } from './names.ts';

const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');
const invalidString = (field: string, value: string, detail: string): FieldError => invalid(field, goQuote(value), detail);
// Not go/strconv's goIsPrint: a lone surrogate counts as unprintable here.
const NON_PRINT = /[\p{C}\p{Z}]/u;

// ---------------------------------------------------------------------------------------------
// Pieces of ObjectMeta.

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export function validateLabels(labels: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!isPlainObject(labels)) return errs;
  for (const k of Object.keys(labels)) {
    for (const msg of isQualifiedName(k)) errs.push(invalidString(field, k, msg));
    const v = labels[k];
    if (typeof v !== 'string') continue; // type errors belong to schema validation
    for (const msg of isValidLabelValue(v)) errs.push(invalidString(field, v, msg));
  }
  return errs;
}

/**
 * metav1validation.ValidateLabelSelector: matchLabels as labels, and each requirement's operator,
 * values (required for In/NotIn, forbidden for Exists/DoesNotExist, each a label value) and key.
 */
export function validateLabelSelector(selector: unknown, field: string): FieldError[] {
  if (!isPlainObject(selector)) return [];
  const errs = validateLabels(selector.matchLabels, `${field}.matchLabels`);
  const expressions: unknown[] = Array.isArray(selector.matchExpressions) ? selector.matchExpressions : [];
  expressions.forEach((e, i) => {
    const r: Record<string, unknown> = isPlainObject(e) ? e : {};
    const at = `${field}.matchExpressions[${i}]`;
    const values: unknown[] = Array.isArray(r.values) ? r.values : [];
    const operator = typeof r.operator === 'string' ? r.operator : '';
    if (operator === 'In' || operator === 'NotIn') {
      if (values.length === 0) errs.push(required(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (operator === 'Exists' || operator === 'DoesNotExist') {
      if (values.length > 0) errs.push(forbidden(`${at}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    } else {
      errs.push(invalidString(`${at}.operator`, operator, 'not a valid selector operator'));
    }
    const key = typeof r.key === 'string' ? r.key : '';
    for (const msg of isQualifiedName(key)) errs.push(invalidString(`${at}.key`, key, msg));
    values.forEach((v, j) => {
      if (typeof v === 'string') for (const msg of isValidLabelValue(v)) errs.push(invalidString(`${at}.values[${j}]`, v, msg));
    });
  });
  return errs;
}

export const TotalAnnotationSizeLimitB = 256 * 1024;

export function validateAnnotations(annotations: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!isPlainObject(annotations)) return errs;
  let total = 0;
  for (const k of Object.keys(annotations)) {
    // Annotation keys follow the label-key rule, case-insensitively.
    for (const msg of isQualifiedName(k.toLowerCase())) errs.push(invalidString(field, k, msg));
    const v = annotations[k];
    total += utf8(k) + (typeof v === 'string' ? utf8(v) : 0);
  }
  if (total > TotalAnnotationSizeLimitB) errs.push(tooLong(field, TotalAnnotationSizeLimitB));
  return errs;
}

export const FinalizerOrphanDependents = 'orphan';
export const FinalizerDeleteDependents = 'foregroundDeletion';

export function validateFinalizers(finalizers: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!Array.isArray(finalizers)) return errs;
  let orphan = false;
  let foreground = false;
  for (const f of finalizers) {
    if (typeof f !== 'string') continue;
    for (const msg of isQualifiedName(f)) errs.push(invalidString(field, f, msg));
    if (f === FinalizerOrphanDependents) orphan = true;
    if (f === FinalizerDeleteDependents) foreground = true;
  }
  if (orphan && foreground) {
    errs.push(
      invalid(
        field,
        goStringSlice(finalizers.filter((f): f is string => typeof f === 'string')),
        `finalizer ${FinalizerOrphanDependents} and ${FinalizerDeleteDependents} cannot be both set`,
      ),
    );
  }
  return errs;
}

/** schema.ParseGroupVersion: "" → {"",""}, "v1" → {"","v1"}, "g/v" → {g,v}; more slashes is an error. */
export function parseGroupVersion(apiVersion: string): { group: string; version: string } | null {
  const slashes = apiVersion.split('/').length - 1;
  if (slashes === 0) return { group: '', version: apiVersion };
  if (slashes === 1) {
    const i = apiVersion.indexOf('/');
    return { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
  }
  return null;
}

function goBoolPtr(v: unknown): string {
  // A set pointer prints as an address in kube; the address carries no meaning, so a fixed one stands in.
  return typeof v === 'boolean' ? '(*bool)(0xc000000000)' : '(*bool)(nil)';
}

function goOwnerReference(ref: Record<string, unknown>): string {
  return (
    `v1.OwnerReference{APIVersion:${goQuote(str(ref.apiVersion))}, Kind:${goQuote(str(ref.kind))}, ` +
    `Name:${goQuote(str(ref.name))}, UID:${goQuote(str(ref.uid))}, ` +
    `Controller:${goBoolPtr(ref.controller)}, BlockOwnerDeletion:${goBoolPtr(ref.blockOwnerDeletion)}}`
  );
}

const BANNED_OWNERS = new Set(['/v1, Kind=Event']);

export function validateOwnerReferences(ownerReferences: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!Array.isArray(ownerReferences)) return errs;
  let firstController = '';
  for (const raw of ownerReferences) {
    const ref = isPlainObject(raw) ? raw : {};
    const apiVersion = str(ref.apiVersion);
    const kind = str(ref.kind);
    const gv = parseGroupVersion(apiVersion);
    const group = gv?.group ?? '';
    const version = gv?.version ?? '';
    if (version.length === 0) errs.push(invalidString(`${field}.apiVersion`, apiVersion, 'version must not be empty'));
    if (kind.length === 0) errs.push(invalidString(`${field}.kind`, kind, 'must not be empty'));
    if (str(ref.name).length === 0) errs.push(invalidString(`${field}.name`, str(ref.name), 'must not be empty'));
    if (str(ref.uid).length === 0) errs.push(invalidString(`${field}.uid`, str(ref.uid), 'must not be empty'));
    const gvk = `${group}/${version}, Kind=${kind}`;
    if (BANNED_OWNERS.has(gvk)) errs.push(invalid(field, goOwnerReference(ref), `${gvk} is disallowed from being an owner`));
    if (ref.controller === true) {
      const cur = `${kind}/${str(ref.name)}`;
      if (firstController !== '') {
        const all = `[]v1.OwnerReference{${ownerReferences.map((r) => goOwnerReference(isPlainObject(r) ? r : {})).join(', ')}}`;
        errs.push(invalid(field, all, `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${cur}`));
      } else {
        firstController = cur;
      }
    }
  }
  return errs;
}

const FieldManagerMaxLength = 128;

export function validateManagedFields(managedFields: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!Array.isArray(managedFields)) return errs;
  managedFields.forEach((raw, i) => {
    const e = isPlainObject(raw) ? raw : {};
    const p = `${field}[${i}]`;
    const op = str(e.operation);
    if (op !== 'Apply' && op !== 'Update') errs.push(invalidString(`${p}.operation`, op, 'must be `Apply` or `Update`'));
    const ft = str(e.fieldsType);
    if (ft.length > 0 && ft !== 'FieldsV1') errs.push(invalidString(`${p}.fieldsType`, ft, 'must be `FieldsV1`'));
    const manager = str(e.manager);
    if (utf8(manager) > FieldManagerMaxLength) errs.push(tooLong(`${p}.manager`, FieldManagerMaxLength));
    let pos = 0;
    for (const ch of manager) {
      if (ch !== ' ' && NON_PRINT.test(ch)) {
        const cp = ch.codePointAt(0)!;
        const u = 'U+' + cp.toString(16).toUpperCase().padStart(4, '0');
        errs.push(invalidString(`${p}.manager`, manager, `invalid character ${u} (at position ${pos})`));
      }
      pos += utf8(ch);
    }
    if (utf8(str(e.subresource)) > 256) errs.push(tooLong(`${p}.subresource`, 256));
  });
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Whole ObjectMeta.

/**
 * ValidateObjectMeta: the checks kube-apiserver runs on the metadata of an object being written.
 * Expects name generation to have happened (the store fills name from generateName first).
 * `isCreate` false skips the generateName check (kube checks it where the name is made).
 */
export function validateObjectMeta(meta: unknown, opts: { namespaced: boolean; nameRule: NameRule; isCreate: boolean }): FieldError[] {
  const errs: FieldError[] = [];
  const m = isPlainObject(meta) ? meta : {};
  const generateName = str(m.generateName);
  const name = str(m.name);
  const namespace = str(m.namespace);
  if (opts.isCreate && generateName.length > 0) {
    for (const msg of validateName(generateName, opts.nameRule, true)) errs.push(invalidString('metadata.generateName', generateName, msg));
  }
  if (name.length === 0) errs.push(required('metadata.name', 'name or generateName is required'));
  else for (const msg of validateName(name, opts.nameRule, false)) errs.push(invalidString('metadata.name', name, msg));

  if (opts.namespaced) {
    if (namespace.length === 0) errs.push(required('metadata.namespace'));
    else for (const msg of isDNS1123Label(namespace)) errs.push(invalidString('metadata.namespace', namespace, msg));
  } else if (namespace.length > 0) {
    errs.push(forbidden('metadata.namespace', 'not allowed on this type'));
  }

  if (typeof m.generation === 'number' && m.generation < 0) {
    errs.push(invalid('metadata.generation', String(m.generation), 'must be greater than or equal to 0'));
  }
  errs.push(...validateLabels(m.labels, 'metadata.labels'));
  errs.push(...validateAnnotations(m.annotations, 'metadata.annotations'));
  errs.push(...validateOwnerReferences(m.ownerReferences, 'metadata.ownerReferences'));
  errs.push(...validateFinalizers(m.finalizers, 'metadata.finalizers'));
  errs.push(...validateManagedFields(m.managedFields, 'metadata.managedFields'));
  return errs;
}

function sameTime(a: unknown, b: unknown): boolean {
  const sa = str(a);
  const sb = str(b);
  if (sa === sb) return true;
  if (!sa || !sb) return false;
  const ta = Date.parse(sa);
  const tb = Date.parse(sb);
  return !Number.isNaN(ta) && ta === tb;
}

/**
 * The update-only part of ValidateObjectMetaUpdate: no new finalizers once deletion started,
 * resourceVersion required, generation not decremented, and name, namespace, uid,
 * creationTimestamp, deletionTimestamp, deletionGracePeriodSeconds immutable.
 * Labels, annotations, owner references, finalizer names and managed fields are checked by
 * validateObjectMeta, which the caller runs on updates too; they are not repeated here.
 */
export function validateObjectMetaUpdate(newMeta: unknown, oldMeta: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const n = isPlainObject(newMeta) ? newMeta : {};
  const o = isPlainObject(oldMeta) ? oldMeta : {};
  const immutable = 'field is immutable';

  if (o.deletionTimestamp != null) {
    const oldF = new Set(Array.isArray(o.finalizers) ? o.finalizers : []);
    const extra = [...new Set(Array.isArray(n.finalizers) ? (n.finalizers as unknown[]) : [])]
      .filter((f): f is string => typeof f === 'string' && !oldF.has(f))
      .sort();
    if (extra.length) {
      errs.push(forbidden('metadata.finalizers', `no new finalizers can be added if the object is being deleted, found new finalizers ${goStringSlice(extra)}`));
    }
  }
  const rv = str(n.resourceVersion);
  if (rv.length === 0) errs.push(invalidString('metadata.resourceVersion', rv, 'must be specified for an update'));

  const gen = typeof n.generation === 'number' ? n.generation : 0;
  const oldGen = typeof o.generation === 'number' ? o.generation : 0;
  if (gen < oldGen) errs.push(invalid('metadata.generation', String(gen), 'must not be decremented'));

  if (str(n.name) !== str(o.name)) errs.push(invalidString('metadata.name', str(n.name), immutable));
  if (str(n.namespace) !== str(o.namespace)) errs.push(invalidString('metadata.namespace', str(n.namespace), immutable));
  if (str(n.uid) !== str(o.uid)) errs.push(invalidString('metadata.uid', str(n.uid), immutable));
  if (!sameTime(n.creationTimestamp, o.creationTimestamp)) errs.push(invalid('metadata.creationTimestamp', goTime(n.creationTimestamp), immutable));
  if ((n.deletionTimestamp == null) !== (o.deletionTimestamp == null) || !sameTime(n.deletionTimestamp, o.deletionTimestamp)) {
    errs.push(invalid('metadata.deletionTimestamp', n.deletionTimestamp == null ? 'null' : goTime(n.deletionTimestamp), immutable));
  }
  const dg = n.deletionGracePeriodSeconds ?? null;
  const odg = o.deletionGracePeriodSeconds ?? null;
  if (dg !== odg) errs.push(invalid('metadata.deletionGracePeriodSeconds', dg === null ? 'null' : String(dg), immutable));
  return errs;
}
