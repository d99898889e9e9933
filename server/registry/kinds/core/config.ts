// ConfigMaps and Secrets as kube validates them (ValidateConfigMap, ValidateSecret and their
// updates): keys are config keys, data and binaryData do not share a key, the whole stays within
// 1 MiB, a Secret's type asks for the keys it names, the type never changes, and an object marked
// immutable keeps its data. A Secret's stringData is merged into data while decoding
// (secretDefaults below); Secrets offer their type to field selectors.
import { stringField, type KindFields, type Strategy, type Obj } from '../../strategy.ts';
import { deepEqual, isPlainObject } from '../../../util/json.ts';
import { configKeyErrors } from '../../../validation/names.ts';
import { goQuote } from '../../../go/strconv.ts';
import { forbiddenError, invalidError, requiredError, tooLongError, type FieldError } from '../../../validation/field.ts';
import { CORE, setZero, type Defaulters } from '../../defaulting.ts';

/** core.MaxSecretSize, the limit for ConfigMaps too. */
const MAX_SIZE = 1024 * 1024;
const IMMUTABLE = 'field is immutable when `immutable` is set';
/** The keys of a data map, sorted (Go ranges over maps in random order; one order for all). */
const keysOf = (m: unknown): string[] => (isPlainObject(m) ? Object.keys(m).sort() : []);

function checkKeys(errs: FieldError[], field: string, m: unknown): void {
  for (const k of keysOf(m)) for (const msg of configKeyErrors(k)) errs.push(invalidError(`${field}[${k}]`, goQuote(k), msg));
}

/** Bytes a value holds: text as UTF-8, base64 ([]byte fields) as decoded. */
const textBytes = (v: unknown): number => (typeof v === 'string' ? Buffer.byteLength(v, 'utf8') : 0);
const base64Bytes = (v: unknown): number => (typeof v === 'string' ? Buffer.byteLength(v, 'base64') : 0);

function validateConfigMap(cm: Obj): FieldError[] {
  const errs: FieldError[] = [];
  checkKeys(errs, 'data', cm.data);
  const binary = isPlainObject(cm.binaryData) ? cm.binaryData : {};
  for (const k of keysOf(cm.data)) if (k in binary) errs.push(invalidError(`data[${k}]`, goQuote(k), 'duplicate of key present in binaryData'));
  checkKeys(errs, 'binaryData', cm.binaryData);
  let size = 0;
  for (const k of keysOf(cm.data)) size += textBytes(cm.data[k]);
  for (const k of keysOf(binary)) size += base64Bytes(binary[k]);
  if (size > MAX_SIZE) errs.push(tooLongError('', MAX_SIZE));
  return errs;
}

/** The keys each Secret type requires (ValidateSecret's switch). */
function typeErrors(errs: FieldError[], secret: Obj): void {
  const data: Obj = isPlainObject(secret.data) ? secret.data : {};
  const has = (k: string) => Object.hasOwn(data, k);
  switch (secret.type) {
    case 'kubernetes.io/service-account-token': {
      const name = isPlainObject(secret.metadata?.annotations) ? secret.metadata.annotations['kubernetes.io/service-account.name'] : undefined;
      if (!name) errs.push(requiredError('metadata.annotations[kubernetes.io/service-account.name]'));
      break;
    }
    case 'kubernetes.io/dockercfg':
      if (!has('.dockercfg')) errs.push(requiredError('data[.dockercfg]'));
      break;
    case 'kubernetes.io/dockerconfigjson':
      if (!has('.dockerconfigjson')) errs.push(requiredError('data[.dockerconfigjson]'));
      break;
    case 'kubernetes.io/basic-auth':
      if (!has('username') && !has('password')) errs.push(requiredError('data[username]'), requiredError('data[password]'));
      break;
    case 'kubernetes.io/ssh-auth':
      if (base64Bytes(data['ssh-privatekey']) === 0) errs.push(requiredError('data[ssh-privatekey]'));
      break;
    case 'kubernetes.io/tls':
      if (!has('tls.crt')) errs.push(requiredError('data[tls.crt]'));
      if (!has('tls.key')) errs.push(requiredError('data[tls.key]'));
      break;
  }
}

function validateSecret(secret: Obj): FieldError[] {
  const errs: FieldError[] = [];
  checkKeys(errs, 'data', secret.data);
  let size = 0;
  for (const k of keysOf(secret.data)) size += base64Bytes(secret.data[k]);
  if (size > MAX_SIZE) errs.push(tooLongError('data', MAX_SIZE));
  typeErrors(errs, secret);
  return errs;
}

/** What `immutable: true` on the stored object freezes. */
function immutableErrors(obj: Obj, old: Obj, fields: string[]): FieldError[] {
  if (old.immutable !== true) return [];
  const errs: FieldError[] = [];
  if (obj.immutable !== true) errs.push(forbiddenError('immutable', IMMUTABLE));
  for (const f of fields) if (!deepEqual(obj[f] ?? {}, old[f] ?? {})) errs.push(forbiddenError(f, IMMUTABLE));
  return errs;
}

export const configMapStrategy: Strategy = {
  validate: validateConfigMap,
  validateUpdate: (cm, old) => [...immutableErrors(cm, old, ['data', 'binaryData']), ...validateConfigMap(cm)],
};

export const secretStrategy: Strategy = {
  validate: validateSecret,
  validateUpdate(secret, old) {
    const errs: FieldError[] = [];
    if (secret.type !== old.type) errs.push(invalidError('type', goQuote(String(secret.type ?? '')), 'field is immutable'));
    errs.push(...immutableErrors(secret, old, ['data']), ...validateSecret(secret));
    return errs;
  },
};

/**
 * Not a default but the v1 → internal conversion, which kube runs while decoding every write:
 * stringData is write-only, each entry replacing the data key of its name (as base64).
 */
function secret(s: Obj): void {
  if (isPlainObject(s.stringData)) {
    const data = isPlainObject(s.data) ? s.data : (s.data = {});
    for (const [k, v] of Object.entries(s.stringData)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
  }
  delete s.stringData;
  setZero(s, 'type', 'Opaque');
}

/** Secrets, by definition. */
export const secretDefaults: Defaulters = {
  [`${CORE}Secret`]: secret,
};

/** Secrets' fields for field selectors. */
export const secretFieldSet: KindFields = { accepted: ['type', 'metadata.namespace', 'metadata.name'], fields: (o) => ({ type: stringField(o?.type) }) };
