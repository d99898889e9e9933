// Pod Security levels, versions and the namespace labels that choose them: kube's
// staging/src/k8s.io/pod-security-admission/api (constants.go, helpers.go). A namespace's policy is
// three level:version pairs (enforce, audit, warn) read from its labels over the configured defaults.
import { invalidError, type FieldError } from '../../validation/field.ts';
import { goQuote } from '../../go/strconv.ts';

export type Level = 'privileged' | 'baseline' | 'restricted';
const VALID_LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted'];

/** A policy version: "latest" or v1.<minor> (kube has one major version). */
export type Version = number; // the minor; LATEST for "latest"
export const LATEST: Version = Number.POSITIVE_INFINITY;

export interface LevelVersion {
  level: Level;
  version: Version;
}

export interface Policy {
  enforce: LevelVersion;
  audit: LevelVersion;
  warn: LevelVersion;
}

export const ENFORCE_LEVEL_LABEL = 'pod-security.kubernetes.io/enforce';
export const ENFORCE_VERSION_LABEL = 'pod-security.kubernetes.io/enforce-version';
export const AUDIT_LEVEL_LABEL = 'pod-security.kubernetes.io/audit';
export const AUDIT_VERSION_LABEL = 'pod-security.kubernetes.io/audit-version';
export const WARN_LEVEL_LABEL = 'pod-security.kubernetes.io/warn';
export const WARN_VERSION_LABEL = 'pod-security.kubernetes.io/warn-version';

/** Audit annotation keys (kube's api.EnforcedPolicyAnnotationKey …), prefixed by the plugin's audit annotations with "pod-security.kubernetes.io/". */
export const AUDIT_ANNOTATION_PREFIX = 'pod-security.kubernetes.io/';
export const ENFORCED_POLICY_ANNOTATION = 'enforce-policy';
export const AUDIT_VIOLATIONS_ANNOTATION = 'audit-violations';
export const EXEMPT_ANNOTATION = 'exempt';

export function versionString(v: Version): string {
  return v === LATEST ? 'latest' : `v1.${v}`;
}

export function levelVersionString(lv: LevelVersion): string {
  return `${lv.level}:${versionString(lv.version)}`;
}

export function sameLevelVersion(a: LevelVersion, b: LevelVersion): boolean {
  return a.level === b.level && a.version === b.version;
}

/** api.ParseLevel: an unknown level reads as restricted, with kube's error. */
export function parseLevel(level: string): { level: Level; error?: string } {
  if ((VALID_LEVELS as readonly string[]).includes(level)) return { level: level as Level };
  return { level: 'restricted', error: `must be one of ${VALID_LEVELS.join(', ')}` };
}

const VERSION_RE = /^v1\.([0-9]|[1-9][0-9]*)$/;

/** api.ParseVersion: "latest" or "v1.x"; anything else reads as latest, with kube's error. */
export function parseVersion(version: string): { version: Version; error?: string } {
  if (version === 'latest') return { version: LATEST };
  const m = VERSION_RE.exec(version);
  if (!m) return { version: LATEST, error: 'must be "latest" or "v1.x"' };
  const minor = Number(m[1]);
  // Go's strconv.Atoi fails past int64; such a version is as unparseable there.
  if (!Number.isSafeInteger(minor)) return { version: LATEST, error: 'must be "latest" or "v1.x"' };
  return { version: minor };
}

/** api.CompareLevels: -1 when a is less strict than b, 0 equal, 1 stricter. */
export function compareLevels(a: Level, b: Level): number {
  if (a === b) return 0;
  if (a === 'privileged') return -1;
  if (a === 'restricted') return 1;
  return b === 'privileged' ? 1 : -1;
}

export function fullyPrivileged(p: Policy): boolean {
  return p.enforce.level === 'privileged' && p.audit.level === 'privileged' && p.warn.level === 'privileged';
}

/** api.Policy.Equivalent: the same, counting every privileged level:version as one. */
export function equivalentPolicies(a: Policy, b: Policy): boolean {
  const eq = (x: LevelVersion, y: LevelVersion): boolean => (x.level === 'privileged' && y.level === 'privileged') || sameLevelVersion(x, y);
  return eq(a.enforce, b.enforce) && eq(a.audit, b.audit) && eq(a.warn, b.warn);
}

function labelError(label: string, value: string, error: string): FieldError {
  return invalidError(`metadata.labels[${label}]`, goQuote(value), error);
}

/**
 * api.PolicyToEvaluate: the namespace's labels over the defaults. A valid policy always comes back;
 * an unparseable enforce level reads as restricted, an unparseable audit or warn level as
 * privileged (fail open), an unparseable version as latest; each bad label is one field error.
 */
export function policyToEvaluate(labels: Readonly<Record<string, string>> | undefined, defaults: Policy): { policy: Policy; errors: FieldError[] } {
  const policy: Policy = { enforce: { ...defaults.enforce }, audit: { ...defaults.audit }, warn: { ...defaults.warn } };
  const errors: FieldError[] = [];
  if (!labels) return { policy, errors };
  const level = (label: string, mode: keyof Policy, failOpen: boolean): void => {
    const value = labels[label];
    if (value === undefined) return;
    const r = parseLevel(value);
    policy[mode].level = r.error && failOpen ? 'privileged' : r.level;
    if (r.error) errors.push(labelError(label, value, r.error));
  };
  const version = (label: string, mode: keyof Policy): void => {
    const value = labels[label];
    if (value === undefined) return;
    const r = parseVersion(value);
    policy[mode].version = r.version;
    if (r.error) errors.push(labelError(label, value, r.error));
  };
  level(ENFORCE_LEVEL_LABEL, 'enforce', false);
  version(ENFORCE_VERSION_LABEL, 'enforce');
  level(AUDIT_LEVEL_LABEL, 'audit', true);
  version(AUDIT_VERSION_LABEL, 'audit');
  level(WARN_LEVEL_LABEL, 'warn', true);
  version(WARN_VERSION_LABEL, 'warn');
  return { policy, errors };
}
