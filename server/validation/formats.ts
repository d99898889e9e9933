// The string formats of OpenAPI schemas that apiextensions-apiserver validates (go-openapi's
// strfmt registry: names compared without '-'; others are ignored), shared by the CRD schema
// validator and CEL's format library.
import { isIP, isIPv4, isIPv6 } from 'node:net';
import { daysIn } from '../go/time.ts';

const HEX = /^[0-9a-fA-F]+$/;

function isDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (mo < 1 || mo > 12 || d < 1) return false;
  return d <= daysIn(y, mo);
}

/** strfmt's date-time check: a full-date, "t", hh:mm:ss[.frac](z|±hh:mm), case-insensitively. */
function isDateTime(str: string): boolean {
  if (str.length < 4) return false;
  const parts = str.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0])) return false;
  const m = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/.exec(parts[1]);
  if (!m) return false;
  return Number(m[1]) <= 23 && Number(m[2]) <= 59 && Number(m[3]) <= 59;
}

const GO_DURATION = /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/;
const WORD_DURATION = /^\s*(\d+)\s*(ns|nanoseconds?|us|µs|microseconds?|ms|milliseconds?|s|seconds?|m|minutes?|h|hours?|d|days?|w|weeks?)\s*$/i;
const isDuration = (s: string): boolean => s === '0' || GO_DURATION.test(s) || WORD_DURATION.test(s);

function isHostname(s: string): boolean {
  if (s.length === 0 || s.length > 255) return false;
  const labels = s.split('.');
  const labelRe = /^[\p{L}\p{S}0-9]([\p{L}\p{S}0-9-]{0,61}[\p{L}\p{S}0-9])?$/u;
  for (const l of labels) if (!labelRe.test(l)) return false;
  if (labels.length > 1 && !/^[\p{L}0-9-]{2,63}$/u.test(labels[labels.length - 1])) return false;
  return true;
}

function isURI(s: string): boolean {
  // Go's url.Parse refuses ASCII control characters.
  // eslint-disable-next-line no-control-regex
  if (s.length === 0 || /[\x00-\x1f\x7f]/.test(s)) return false;
  if (s.startsWith('/')) return true;
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):(.*)$/.exec(s);
  if (!m) return false;
  const rest = m[2];
  if (rest.startsWith('//')) {
    const authority = rest.slice(2).split(/[/?]/, 1)[0];
    const host = authority.includes('@') ? authority.slice(authority.lastIndexOf('@') + 1) : authority;
    if (/\s/.test(host)) return false;
  }
  return true;
}

function isEmail(s: string): boolean {
  const addr = /^[^<>]*<([^<>]+)>$/.exec(s)?.[1] ?? s;
  return /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/.test(addr);
}

function isCIDRString(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const ip = s.slice(0, slash);
  const bits = s.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits)) return false;
  const fam = isIP(ip);
  if (fam === 0 || ip.includes('%')) return false;
  return Number(bits) <= (fam === 4 ? 32 : 128);
}

function isMAC(s: string): boolean {
  if (/^([0-9a-fA-F]{2}[:-]){5,19}[0-9a-fA-F]{2}$/.test(s)) {
    const sep = s[2];
    const n = s.split(sep).length;
    return (n === 6 || n === 8 || n === 20) && s.split(sep).every((p) => p.length === 2);
  }
  if (/^([0-9a-fA-F]{4}\.){2,9}[0-9a-fA-F]{4}$/.test(s)) {
    const n = s.split('.').length * 2;
    return n === 6 || n === 8 || n === 20;
  }
  return false;
}

function isbn10(s: string): boolean {
  const d = s.replace(/[\s-]/g, '');
  if (!/^[0-9]{9}[0-9X]$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += (d[i] === 'X' ? 10 : Number(d[i])) * (10 - i);
  return sum % 11 === 0;
}
function isbn13(s: string): boolean {
  const d = s.replace(/[\s-]/g, '');
  if (!/^[0-9]{13}$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(d[i]) * (i % 2 === 0 ? 1 : 3);
  return (10 - (sum % 10)) % 10 === Number(d[12]);
}
function isCreditCard(s: string): boolean {
  const d = s.replace(/[^0-9]/g, '');
  if (!/^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < d.length; i++) {
    let n = Number(d[d.length - 1 - i]);
    if (i % 2 === 1) {
      n *= 2;
      if (n > 9) n -= 9;
    }
    sum += n;
  }
  return sum % 10 === 0;
}
const BYTE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const RGB_PART = '\\s*(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])\\s*';
const RGB = new RegExp(`^rgb\\(${RGB_PART},${RGB_PART},${RGB_PART}\\)$`);

/** Format checks keyed by the format name with '-' removed, as apiextensions normalizes it. */
export const FORMAT_CHECKS: Record<string, (s: string) => boolean> = {
  bsonobjectid: (s) => s.length === 24 && HEX.test(s),
  uri: isURI,
  email: isEmail,
  hostname: isHostname,
  ipv4: (s) => isIPv4(s) || (isIPv6(s) && s.includes('.') && !s.includes('%')),
  ipv6: (s) => isIPv6(s) && !s.includes('%'),
  cidr: isCIDRString,
  mac: isMAC,
  uuid: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s),
  uuid3: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s),
  uuid4: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(s),
  uuid5: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(s),
  isbn: (s) => isbn10(s) || isbn13(s),
  isbn10,
  isbn13,
  creditcard: isCreditCard,
  ssn: (s) => /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(s),
  hexcolor: (s) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s),
  rgbcolor: (s) => RGB.test(s),
  byte: (s) => BYTE.test(s.replace(/[\r\n]/g, '')),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime,
};

/** Whether kube validates `format` (int32, int64, float, double and unknown names are ignored). */
export function isSupportedFormat(format: unknown): format is string {
  return typeof format === 'string' && format.length > 0 && Object.prototype.hasOwnProperty.call(FORMAT_CHECKS, format.replaceAll('-', ''));
}
