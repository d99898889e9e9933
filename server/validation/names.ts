// Names as apimachinery validates them: DNS-1123 labels and subdomains, DNS-1035 labels,
// qualified names (label and annotation keys), label values, config keys and REST path
// segments, each returning kube's bare error texts (callers attach the field and bad value);
// the name rules a kind can pick for metadata.name, and generateName's random suffix.
import { randomInt } from 'node:crypto';

// ---------------------------------------------------------------------------------------------
// String formats (apimachinery util/validation and api/validate/content).

const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');

export function maxLenError(length: number): string {
  return `must be no more than ${length} bytes`;
}
export function emptyError(): string {
  return 'must be non-empty';
}
export function regexError(msg: string, re: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${re}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${re}')`;
}

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123LabelErrMsg = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const dns1123LabelRe = new RegExp(`^${dns1123LabelFmt}$`);
const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const dns1123SubdomainErrMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const dns1123SubdomainRe = new RegExp(`^${dns1123SubdomainFmt}$`);
const dns1035LabelFmt = '[a-z]([-a-z0-9]*[a-z0-9])?';
const dns1035LabelErrMsg = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const dns1035LabelRe = new RegExp(`^${dns1035LabelFmt}$`);
const labelKeyFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const labelKeyErrMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const labelKeyRe = new RegExp(`^${labelKeyFmt}$`);
const labelValueFmt = `(${labelKeyFmt})?`;
const labelValueErrMsg = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const labelValueRe = new RegExp(`^${labelValueFmt}$`);

export const DNS1123LabelMaxLength = 63;
export const DNS1123SubdomainMaxLength = 253;
export const DNS1035LabelMaxLength = 63;
export const LabelValueMaxLength = 63;
const labelKeyNameMaxLength = 63;

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (utf8(value) > DNS1123LabelMaxLength) errs.push(maxLenError(DNS1123LabelMaxLength));
  if (!dns1123LabelRe.test(value)) {
    // A valid subdomain that is not a valid label can only be failing on its dots.
    if (dns1123SubdomainRe.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(dns1123LabelErrMsg, dns1123LabelFmt, 'my-name', '123-abc'));
  }
  return errs;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (utf8(value) > DNS1123SubdomainMaxLength) errs.push(maxLenError(DNS1123SubdomainMaxLength));
  if (!dns1123SubdomainRe.test(value)) errs.push(regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, 'example.com'));
  return errs;
}

export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (utf8(value) > DNS1035LabelMaxLength) errs.push(maxLenError(DNS1035LabelMaxLength));
  if (!dns1035LabelRe.test(value)) errs.push(regexError(dns1035LabelErrMsg, dns1035LabelFmt, 'my-name', 'abc-123'));
  return errs;
}

/** A label key (a "qualified name"): optional DNS-subdomain prefix and '/', then a name of at most 63. */
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

/** validation.IsConfigMapKey. */
export function configKeyErrors(key: string): string[] {
  const errs: string[] = [];
  if (key.length > DNS1123SubdomainMaxLength) errs.push(maxLenError(DNS1123SubdomainMaxLength));
  if (!CONFIG_KEY.test(key)) errs.push(regexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", '[-._a-zA-Z0-9]+', 'key.name', 'KEY_NAME', 'key-name'));
  if (key === '.') errs.push("must not be '.'");
  else if (key === '..') errs.push("must not be '..'");
  else if (key.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

export function isQualifiedName(value: string): string[] {
  // Label and annotation keys recur on every write: the valid ones are remembered (bounded).
  if (VALID_QUALIFIED_NAMES.has(value)) return [];
  const errs = qualifiedNameErrors(value);
  if (errs.length === 0) {
    if (VALID_QUALIFIED_NAMES.size >= 10_000) VALID_QUALIFIED_NAMES.clear();
    VALID_QUALIFIED_NAMES.add(value);
  }
  return errs;
}
const VALID_QUALIFIED_NAMES = new Set<string>();

/** validation.IsQualifiedName: an optional DNS subdomain prefix and "/", then a name part. */
function qualifiedNameErrors(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0];
  } else if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (prefix.length === 0) errs.push('prefix part ' + emptyError());
    else for (const m of isDNS1123Subdomain(prefix)) errs.push('prefix part ' + m);
  } else {
    return [
      'a valid label key ' +
        regexError(labelKeyErrMsg, labelKeyFmt, 'MyName', 'my.name', '123-abc') +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push('name part ' + emptyError());
  else if (utf8(name) > labelKeyNameMaxLength) errs.push('name part ' + maxLenError(labelKeyNameMaxLength));
  if (!labelKeyRe.test(name)) errs.push('name part ' + regexError(labelKeyErrMsg, labelKeyFmt, 'MyName', 'my.name', '123-abc'));
  return errs;
}

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (utf8(value) > LabelValueMaxLength) errs.push(maxLenError(LabelValueMaxLength));
  if (!labelValueRe.test(value)) errs.push(regexError(labelValueErrMsg, labelValueFmt, 'MyValue', 'my_value', '12345'));
  return errs;
}

/** Names used as one segment of a REST path: not "." or "..", no "/" or "%". */
export function isPathSegmentName(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  return isPathSegmentPrefix(name);
}
export function isPathSegmentPrefix(name: string): string[] {
  const errs: string[] = [];
  if (name.includes('/')) errs.push("may not contain '/'");
  if (name.includes('%')) errs.push("may not contain '%'");
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Names.

export type NameRule =
  | 'dns1123Subdomain' // most kinds
  | 'dns1123Label' // namespaces
  | 'dns1035Label' // services
  | 'pathSegment' // generic path-safe names
  | 'rbacPathSegment' // RBAC roles/bindings: path-safe, generateName checked as a full name
  | 'none'; // CertificateSigningRequests: any name

/** A generateName prefix may end in '-': kube masks it (quirk kept: it drops two chars, appends one). */
function maskTrailingDash(name: string): string {
  if (name.length > 1 && name.endsWith('-')) return name.slice(0, -2) + 'a';
  return name;
}

/** The error texts kube's name validator for `rule` gives; `prefix` is true for generateName. */
export function validateName(name: string, rule: NameRule, prefix = false): string[] {
  switch (rule) {
    case 'dns1123Subdomain':
      return isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
    case 'dns1123Label':
      return isDNS1123Label(prefix ? maskTrailingDash(name) : name);
    case 'dns1035Label':
      return isDNS1035Label(prefix ? maskTrailingDash(name) : name);
    case 'pathSegment':
      return prefix ? isPathSegmentPrefix(name) : isPathSegmentName(name);
    case 'rbacPathSegment':
      return isPathSegmentName(name);
    case 'none':
      return [];
  }
}

// names.SimpleNameGenerator: 5 random characters from utilrand's alphabet after a prefix
// truncated to 63 - 5 bytes.
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const MAX_NAME_LENGTH = 63;
const RANDOM_LENGTH = 5;
export const MaxGeneratedNameLength = MAX_NAME_LENGTH - RANDOM_LENGTH;

export function generateNameFrom(prefix: string): string {
  let base = prefix;
  if (utf8(base) > MaxGeneratedNameLength) base = Buffer.from(base, 'utf8').subarray(0, MaxGeneratedNameLength).toString('utf8');
  let suffix = '';
  for (let i = 0; i < RANDOM_LENGTH; i++) suffix += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)];
  return base + suffix;
}
