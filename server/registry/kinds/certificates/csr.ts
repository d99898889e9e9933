// CertificateSigningRequests (certificates.k8s.io/v1), as kube's
// pkg/registry/certificates/certificates/strategy.go and pkg/apis/certificates/validation have
// them: on create the requester (never the body) fills spec.username, uid, groups and extra and
// the status starts empty; the main resource changes only metadata; /status changes the
// certificate and the conditions other than Approved and Denied; /approval changes only the
// conditions. Approved and Denied exclude each other, and once set no condition of those types
// (nor Failed) may go. spec.request must be a PEM CERTIFICATE REQUEST whose signature verifies.
import { goByteSlice, goNumber } from '../../../go/fmt.ts';
import { goQuote } from '../../../go/strconv.ts';
import { childPath, duplicateError, forbiddenError, indexPath, invalidError, notSupportedError, requiredError, tooLongError, type FieldError } from '../../../validation/field.ts';
import { DNS1123LabelMaxLength, DNS1123SubdomainMaxLength, isDNS1123Label, isDNS1123Subdomain } from '../../../validation/names.ts';
import { nowTimestamp } from '../../now.ts';
import type { Obj, Strategy } from '../../strategy.ts';
import { certificateError, certificateRequestError } from '../../../util/pkcs10.ts';

const APPROVED = 'Approved';
const DENIED = 'Denied';
const FAILED = 'Failed';
/** Condition types whose status may only be True. */
const TRUE_ONLY_TYPES = new Set([APPROVED, DENIED, FAILED]);
const TRUE_ONLY = ['True'];
const ALL_STATUSES = ['False', 'True', 'Unknown'];
/** kube's LegacyUnknownSignerName: not allowed through certificates.k8s.io/v1. */
export const LEGACY_UNKNOWN_SIGNER = 'kubernetes.io/legacy-unknown';

/** Every certificates.k8s.io KeyUsage, sorted (sets.String's List()). */
export const KEY_USAGES: readonly string[] = [
  'any',
  'cert sign',
  'client auth',
  'code signing',
  'content commitment',
  'crl sign',
  'data encipherment',
  'decipher only',
  'digital signature',
  'email protection',
  'encipher only',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'key agreement',
  'key encipherment',
  'microsoft sgc',
  'netscape sgc',
  'ocsp signing',
  's/mime',
  'server auth',
  'signing',
  'timestamping',
];
const KEY_USAGE_SET = new Set(KEY_USAGES);

type Condition = Obj;

function conditionsOf(csr: Obj): Condition[] {
  const c = csr?.status?.conditions;
  return Array.isArray(c) ? c : [];
}

/** A []byte field (base64 in JSON) as its bytes; undefined for nil. */
function bytesOf(v: unknown): Buffer | undefined {
  if (typeof v === 'string') return Buffer.from(v, 'base64');
  if (Array.isArray(v)) return Buffer.from(v as number[]);
  return undefined;
}

function sameBytes(a: unknown, b: unknown): boolean {
  const x = bytesOf(a) ?? Buffer.alloc(0);
  const y = bytesOf(b) ?? Buffer.alloc(0);
  return x.equals(y);
}

// ---------------------------------------------------------------------------------------------
// Validation (pkg/apis/certificates/validation)

/** The compatibility allowances getValidationOptions gives an update, and what each subresource may change. */
interface Options {
  allowSettingApprovalConditions: boolean;
  allowSettingCertificate: boolean;
  allowBothApprovedAndDenied: boolean;
  allowLegacySignerName: boolean;
  allowDuplicateConditionTypes: boolean;
  allowEmptyConditionType: boolean;
  allowArbitraryCertificate: boolean;
  allowUnknownUsages: boolean;
  allowDuplicateUsages: boolean;
}

function usagesOf(csr: Obj): unknown[] {
  const u = csr?.spec?.usages;
  return Array.isArray(u) ? u : [];
}

function hasDuplicates(values: unknown[]): boolean {
  return new Set(values).size !== values.length;
}

function validationOptions(csr: Obj, old: Obj | undefined): Options {
  const oldConditions = old ? conditionsOf(old) : [];
  const oldTypes = oldConditions.map((c) => c?.type);
  return {
    allowSettingApprovalConditions: false,
    allowSettingCertificate: false,
    allowBothApprovedAndDenied: oldTypes.includes(APPROVED) && oldTypes.includes(DENIED),
    allowLegacySignerName: old?.spec?.signerName === LEGACY_UNKNOWN_SIGNER,
    allowDuplicateConditionTypes: !!old && hasDuplicates(oldTypes),
    allowEmptyConditionType: !!old && oldTypes.some((t) => !t),
    allowArbitraryCertificate:
      !!old && (sameBytes(csr?.status?.certificate, old?.status?.certificate) || certificateError(bytesOf(old?.status?.certificate) ?? Buffer.alloc(0)) !== undefined),
    allowUnknownUsages: !!old && usagesOf(old).some((u) => !KEY_USAGE_SET.has(u as string)),
    allowDuplicateUsages: !!old && hasDuplicates(usagesOf(old)),
  };
}

/** apivalidation.ValidateSignerName. */
export function validateSignerName(field: string, signerName: string): FieldError[] {
  if (signerName === '') return [requiredError(field)];
  const segments = signerName.split('/');
  if (segments.length !== 2) {
    return [invalidError(field, goQuote(signerName), "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  }
  const errs: FieldError[] = [];
  const [domain, path] = segments as [string, string];
  if (Buffer.byteLength(domain) > DNS1123SubdomainMaxLength) errs.push(tooLongError(field, DNS1123SubdomainMaxLength));
  const domainLabels = domain.split('.');
  for (const label of domainLabels) {
    const labelErrs = isDNS1123Label(label);
    if (labelErrs.length) {
      for (const e of labelErrs) errs.push(invalidError(field, goQuote(domain), `validating label ${goQuote(label)}: ${e}`));
      break;
    }
  }
  if (domainLabels.length < 2) errs.push(invalidError(field, goQuote(domain), 'should be a domain with at least two segments separated by dots'));
  for (const label of path.split('.')) {
    const labelErrs = isDNS1123Subdomain(label);
    if (labelErrs.length) {
      for (const e of labelErrs) errs.push(invalidError(field, goQuote(path), `validating label ${goQuote(label)}: ${e}`));
      break;
    }
  }
  const maxSignerName = DNS1123SubdomainMaxLength + (DNS1123SubdomainMaxLength + DNS1123LabelMaxLength + 1) + 1;
  if (Buffer.byteLength(signerName) > maxSignerName) errs.push(tooLongError(field, maxSignerName));
  return errs;
}

/** A value of a string-kinded Go field (KeyUsage, RequestConditionType) as %#v prints it. */
function goStringValue(v: unknown): string {
  return typeof v === 'string' ? goQuote(v) : goQuote(String(v ?? ''));
}

function validateConditions(csr: Obj, opts: Options): FieldError[] {
  const errs: FieldError[] = [];
  const base = 'status.conditions';
  const seen = new Set<unknown>();
  let hasApproved = false;
  let hasDenied = false;
  conditionsOf(csr).forEach((c, i) => {
    const at = indexPath(base, i);
    const type = typeof c?.type === 'string' ? c.type : '';
    const status = typeof c?.status === 'string' ? c.status : '';
    if (!opts.allowEmptyConditionType && type === '') errs.push(requiredError(childPath(at, 'type')));
    const allowed = TRUE_ONLY_TYPES.has(type) ? TRUE_ONLY : ALL_STATUSES;
    if (status === '') errs.push(requiredError(childPath(at, 'status')));
    else if (!allowed.includes(status)) errs.push(notSupportedError(childPath(at, 'status'), goStringValue(status), allowed));
    if (!opts.allowBothApprovedAndDenied) {
      if (type === APPROVED) {
        hasApproved = true;
        if (hasDenied) errs.push(invalidError(childPath(at, 'type'), goStringValue(type), 'Approved and Denied conditions are mutually exclusive'));
      } else if (type === DENIED) {
        hasDenied = true;
        if (hasApproved) errs.push(invalidError(childPath(at, 'type'), goStringValue(type), 'Approved and Denied conditions are mutually exclusive'));
      }
    }
    if (!opts.allowDuplicateConditionTypes) {
      if (seen.has(type)) errs.push(duplicateError(childPath(at, 'type'), goStringValue(type)));
      seen.add(type);
    }
  });
  return errs;
}

/** validateCertificateSigningRequest (ObjectMeta is the store's). */
function validateCsr(csr: Obj, opts: Options): FieldError[] {
  const errs: FieldError[] = [];
  const spec: Obj = csr?.spec && typeof csr.spec === 'object' ? csr.spec : {};
  const request = bytesOf(spec.request);
  const requestError = certificateRequestError(request ?? Buffer.alloc(0));
  if (requestError) errs.push(invalidError('spec.request', goByteSlice(request), requestError));
  const usages = usagesOf(csr);
  if (usages.length === 0) errs.push(requiredError('spec.usages'));
  if (!opts.allowUnknownUsages) {
    usages.forEach((u, i) => {
      if (!KEY_USAGE_SET.has(u as string)) errs.push(notSupportedError(indexPath('spec.usages', i), goStringValue(u), [...KEY_USAGES]));
    });
  }
  if (!opts.allowDuplicateUsages) {
    const seen = new Set<unknown>();
    usages.forEach((u, i) => {
      if (seen.has(u)) errs.push(duplicateError(indexPath('spec.usages', i), goStringValue(u)));
      seen.add(u);
    });
  }
  const signerName = typeof spec.signerName === 'string' ? spec.signerName : '';
  if (!opts.allowLegacySignerName && signerName === LEGACY_UNKNOWN_SIGNER) {
    errs.push(invalidError('spec.signerName', goQuote(signerName), 'the legacy signerName is not allowed via this API version'));
  } else {
    errs.push(...validateSignerName('spec.signerName', signerName));
  }
  if (typeof spec.expirationSeconds === 'number' && spec.expirationSeconds < 600) {
    errs.push(invalidError('spec.expirationSeconds', goNumber(spec.expirationSeconds), 'may not specify a duration less than 600 seconds (10 minutes)'));
  }
  errs.push(...validateConditions(csr, opts));
  if (!opts.allowArbitraryCertificate) {
    const certErr = certificateError(bytesOf(csr?.status?.certificate) ?? Buffer.alloc(0));
    if (certErr) errs.push(invalidError('status.certificate', goQuote('<certificate data>'), certErr));
  }
  return errs;
}

/** The conditions of one type, in order. */
function conditionsOfType(csr: Obj, type: string): Condition[] {
  return conditionsOf(csr).filter((c) => c?.type === type);
}

/** validateCertificateSigningRequestUpdate (ObjectMeta's update rules are the store's). */
function validateCsrUpdate(csr: Obj, old: Obj, opts: Options): FieldError[] {
  const errs = validateCsr(csr, opts);
  for (const type of [APPROVED, DENIED, FAILED]) {
    if (conditionsOfType(csr, type).length < conditionsOfType(old, type).length) {
      errs.push(forbiddenError('status.conditions', `updates may not remove a condition of type ${goQuote(type)}`));
    }
  }
  if (!opts.allowSettingApprovalConditions) {
    for (const type of [APPROVED, DENIED]) {
      const before = conditionsOfType(old, type);
      const after = conditionsOfType(csr, type);
      if (after.length > before.length) errs.push(forbiddenError('status.conditions', `updates may not add a condition of type ${goQuote(type)}`));
      else if (after.length === before.length && JSON.stringify(after) !== JSON.stringify(before)) {
        // kube appends a go-cmp diff of the two lists here; hearth names the type only.
        errs.push(forbiddenError('status.conditions', `updates may not modify a condition of type ${goQuote(type)}`));
      }
    }
  }
  if (!sameBytes(csr?.status?.certificate, old?.status?.certificate)) {
    if (!opts.allowSettingCertificate) errs.push(forbiddenError('status.certificate', 'updates may not set certificate content'));
    else if ((bytesOf(old?.status?.certificate)?.length ?? 0) > 0) errs.push(forbiddenError('status.certificate', 'updates may not modify existing certificate content'));
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Strategy (pkg/registry/certificates/certificates/strategy.go)

/** populateConditionTimestamps: lastUpdateTime now where unset; lastTransitionTime kept from an old condition of the same type and status, else now. */
function populateConditionTimestamps(csr: Obj, old: Obj): void {
  const now = nowTimestamp();
  for (const c of conditionsOf(csr)) {
    if (!c || typeof c !== 'object') continue;
    if (!c.lastUpdateTime) c.lastUpdateTime = now;
    if (!c.lastTransitionTime) {
      const same = conditionsOf(old).find((o) => o?.type === c.type && o?.status === c.status && o?.lastTransitionTime);
      c.lastTransitionTime = same ? same.lastTransitionTime : now;
    }
  }
}

/** preserveConditionInstances: a /status write keeps the stored conditions of this type where it has as many. */
function preserveConditionInstances(csr: Obj, old: Obj, type: string): void {
  const oldIndices = conditionsOf(old).flatMap((c, i) => (c?.type === type ? [i] : []));
  const newIndices = conditionsOf(csr).flatMap((c, i) => (c?.type === type ? [i] : []));
  if (oldIndices.length !== newIndices.length) return;
  oldIndices.forEach((oldIndex, i) => {
    csr.status.conditions[newIndices[i]!] = structuredClone(old.status.conditions[oldIndex]);
  });
}

export const certificateSigningRequestStrategy: Strategy = {
  reportsRequired: true,
  prepareForCreate(obj, requester) {
    const spec: Obj = obj.spec && typeof obj.spec === 'object' ? obj.spec : (obj.spec = {});
    delete spec.username;
    delete spec.uid;
    delete spec.groups;
    delete spec.extra;
    if (requester?.name) spec.username = requester.name;
    if (requester?.uid) spec.uid = requester.uid;
    if (requester?.groups.length) spec.groups = [...requester.groups];
    const extra = requester?.extra ?? {};
    if (Object.keys(extra).length) spec.extra = Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, [...v]]));
    // Users cannot create pre-approved requests.
    obj.status = {};
  },
  prepareForUpdate(obj, old) {
    // Immutable after creation but through the subresources.
    if (old.spec === undefined) delete obj.spec;
    else obj.spec = structuredClone(old.spec);
    if (old.status === undefined) delete obj.status;
    else obj.status = structuredClone(old.status);
  },
  prepareForStatusUpdate(obj, old) {
    // (the generic status write already kept spec)
    if (!obj.status || typeof obj.status !== 'object') return;
    if (Array.isArray(obj.status.conditions)) {
      preserveConditionInstances(obj, old, APPROVED);
      preserveConditionInstances(obj, old, DENIED);
    }
    populateConditionTimestamps(obj, old);
  },
  subresourceUpdate: {
    approval(body, old) {
      // Only the conditions change.
      const conditions = body?.status?.conditions;
      const before = { status: { conditions: conditionsOf(old) } };
      if (conditions === undefined || conditions === null) {
        if (old.status) delete old.status.conditions;
      } else {
        old.status = { ...(old.status ?? {}), conditions: structuredClone(conditions) };
        populateConditionTimestamps(old, before);
      }
      return old; // (a copy of the stored object)
    },
  },
  validate(obj) {
    return validateCsr(obj, validationOptions(obj, undefined));
  },
  validateUpdate(obj, old, subresource) {
    const opts = validationOptions(obj, old);
    if (subresource === 'status') opts.allowSettingCertificate = true;
    if (subresource === 'approval') opts.allowSettingApprovalConditions = true;
    return validateCsrUpdate(obj, old, opts);
  },
};
