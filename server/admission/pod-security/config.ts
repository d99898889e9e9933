// The PodSecurity plugin's configuration (pod-security.admission.config.k8s.io
// PodSecurityConfiguration), as --admission-control-config-file gives it: kube's
// pod-security-admission/admission/api (v1 types and defaults, load, validation). Read and
// checked once at start; a bad one stops the server with kube's messages.
import { goQuote } from '../../go/strconv.ts';
import { duplicateError, fieldErrorsText, invalidError, requiredError, type FieldError } from '../../validation/field.ts';
import { isDNS1123Label, isDNS1123Subdomain } from '../../validation/names.ts';
import { parseLevel, parseVersion, type Policy } from './api.ts';

export const POD_SECURITY_CONFIG_GROUP = 'pod-security.admission.config.k8s.io';
const SERVED_VERSIONS = ['v1', 'v1beta1'];

/** A configuration that decodes but fails kube's validation (kube's ValidateConfiguration at initialization). */
export class InvalidPodSecurityConfiguration extends Error {}

export interface PodSecurityConfiguration {
  defaults: Policy;
  exemptions: { usernames: Set<string>; namespaces: Set<string>; runtimeClasses: Set<string> };
}

/** No configuration: every mode privileged:latest, nothing exempt (kube's defaulted empty config). */
export function defaultConfiguration(): PodSecurityConfiguration {
  return parsePodSecurityConfiguration(undefined);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function stringField(o: Record<string, unknown>, key: string, where: string): string {
  const v = o[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new Error(`${where}.${key}: expected a string, got ${JSON.stringify(v)}`);
  return v;
}

function stringList(o: Record<string, unknown>, key: string, where: string): string[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) throw new Error(`${where}.${key}: expected a list of strings, got ${JSON.stringify(v)}`);
  return v as string[];
}

/**
 * Decodes and validates a PodSecurityConfiguration (the parsed JSON or YAML of the plugin's
 * `configuration`); throws an Error with kube's text when it is not one or is invalid.
 */
export function parsePodSecurityConfiguration(raw: unknown): PodSecurityConfiguration {
  const obj = raw === undefined || raw === null ? { apiVersion: `${POD_SECURITY_CONFIG_GROUP}/v1`, kind: 'PodSecurityConfiguration' } : raw;
  if (!isObject(obj)) throw new Error(`couldn't get version/kind; json parse error: expected an object, got ${JSON.stringify(obj)}`);
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const kind = typeof obj.kind === 'string' ? obj.kind : '';
  if (!apiVersion || !kind) throw new Error(`Object 'Kind' is missing in '${JSON.stringify(obj)}'`);
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  if (group !== POD_SECURITY_CONFIG_GROUP || !SERVED_VERSIONS.includes(version) || kind !== 'PodSecurityConfiguration') {
    throw new Error(`no kind ${goQuote(kind)} is registered for version ${goQuote(apiVersion)} in scheme "pkg/runtime/scheme.go:100"`);
  }
  const defaultsRaw = isObject(obj.defaults) ? obj.defaults : {};
  const exemptionsRaw = isObject(obj.exemptions) ? obj.exemptions : {};
  // v1 defaulting: an unset level is privileged, an unset version latest.
  const d = (key: string, fallback: string): string => stringField(defaultsRaw, key, 'defaults') || fallback;
  const values = {
    enforce: d('enforce', 'privileged'),
    'enforce-version': d('enforce-version', 'latest'),
    warn: d('warn', 'privileged'),
    'warn-version': d('warn-version', 'latest'),
    audit: d('audit', 'privileged'),
    'audit-version': d('audit-version', 'latest'),
  };
  const usernames = stringList(exemptionsRaw, 'usernames', 'exemptions');
  const namespaces = stringList(exemptionsRaw, 'namespaces', 'exemptions');
  const runtimeClasses = stringList(exemptionsRaw, 'runtimeClasses', 'exemptions');

  // validation.ValidatePodSecurityConfiguration, in its order.
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(values)) {
    const error = key.endsWith('-version') ? parseVersion(value).error : parseLevel(value).error;
    if (error) errors.push(invalidError(`defaults.${key}`, goQuote(value), error));
  }
  const uniqueNames = (list: string[], field: string, problems: (s: string) => string[]): void => {
    const seen = new Set<string>();
    list.forEach((s, i) => {
      const errs = problems(s);
      if (errs.length) errors.push(invalidError(`${field}[${i}]`, goQuote(s), errs.join(', ')));
      else if (seen.has(s)) errors.push(duplicateError(`${field}[${i}]`, goQuote(s)));
      else seen.add(s);
    });
  };
  uniqueNames(namespaces, 'exemptions.namespaces', isDNS1123Label);
  uniqueNames(runtimeClasses, 'exemptions.runtimeClasses', isDNS1123Subdomain);
  const seenUsers = new Set<string>();
  usernames.forEach((u, i) => {
    if (u === '') errors.push(requiredError(`exemptions.usernames[${i}]`));
    else if (seenUsers.has(u)) errors.push(duplicateError(`exemptions.usernames[${i}]`, goQuote(u)));
    else seenUsers.add(u);
  });
  if (errors.length) throw new InvalidPodSecurityConfiguration(fieldErrorsText(errors));

  const lv = (level: string, version: string) => ({ level: parseLevel(level).level, version: parseVersion(version).version });
  return {
    defaults: {
      enforce: lv(values.enforce, values['enforce-version']),
      audit: lv(values.audit, values['audit-version']),
      warn: lv(values.warn, values['warn-version']),
    },
    exemptions: { usernames: new Set(usernames), namespaces: new Set(namespaces), runtimeClasses: new Set(runtimeClasses) },
  };
}
