// Go's time package as kube-apiserver's clients meet it: RFC 3339 times (time.Parse and
// Format with time.RFC3339, which metav1.Time uses), time.Time.String, and durations
// (time.ParseDuration and Duration.String).
import { goQuote } from './strconv.ts';

// ---------------------------------------------------------------------------------------------
// Calendar.

const isLeap = (y: number): boolean => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The days of a month (1 to 12) of the proleptic Gregorian calendar. */
export function daysIn(year: number, month: number): number {
  return month === 2 && isLeap(year) ? 29 : DAYS_IN_MONTH[month - 1];
}

// ---------------------------------------------------------------------------------------------
// RFC 3339.

/** The zero time.Time (0001-01-01T00:00:00Z) in epoch milliseconds. */
export const ZERO_TIME = -62_135_596_800_000;

// Go accepts a one-digit hour and a fractional second (after "." or ",") here, requires
// upper-case T and Z, and range-checks every field.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

export interface ParsedTime {
  /** Epoch milliseconds of the time's whole second, its offset applied. */
  ms: number;
  /** The digits of its fractional second, as written ("" for none). */
  fraction: string;
}

/** time.Parse(time.RFC3339, s); undefined where Go returns an error. */
export function parseRFC3339(s: string): ParsedTime | undefined {
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number);
  if (month < 1 || month > 12) return undefined;
  if (day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (m[8]) {
    const oh = Number(m[9]);
    const om = Number(m[10]);
    // Go's range test uses > because offsets of 24h or 60m do get written
    if (oh > 24 || om > 60) return undefined;
    offsetMinutes = (m[8] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute - offsetMinutes, second, 0);
  return { ms: d.getTime(), fraction: m[7] ?? '' };
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** t.UTC().Format(time.RFC3339) for epoch milliseconds: whole seconds, "Z", as metav1.Time writes. */
export function formatRFC3339(ms: number): string {
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) throw new RangeError('Invalid time value');
  const y = d.getUTCFullYear();
  const year = y < 0 ? `-${pad(-y, 4)}` : pad(y, 4);
  return `${year}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}Z`;
}

/**
 * A metav1.Time or MicroTime text as Go prints the time (time.Time.String in UTC):
 * "2024-01-02 03:04:05.5 +0000 UTC"; the zero time when unset, the text quoted when it is no time.
 */
export function goTime(v: unknown): string {
  const s = typeof v === 'string' ? v : '';
  const d = s ? new Date(s) : new Date(Date.UTC(1, 0, 1));
  if (s && Number.isNaN(d.getTime())) return goQuote(s);
  if (!s) d.setUTCFullYear(1);
  // The text's own fraction: a MicroTime has microseconds, which a Date drops.
  const digits = /\.(\d+)/.exec(s)?.[1]?.replace(/0+$/, '') ?? '';
  const frac = digits ? `.${digits}` : '';
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${frac} +0000 UTC`;
}

// ---------------------------------------------------------------------------------------------
// Durations.

/** Nanoseconds per unit. */
const DURATION_UNITS = new Map([['ns', 1], ['us', 1e3], ['µs', 1e3], ['μs', 1e3], ['ms', 1e6], ['s', 1e9], ['m', 6e10], ['h', 3.6e12]]);

/**
 * time.ParseDuration: [-+]? then (number unit)+, or "0". Returns the nanoseconds (a float, so
 * exact to about a microsecond over days), or Go's error text.
 */
export function parseGoDuration(s: string): number | string {
  const invalid = `time: invalid duration ${goTimeQuote(s)}`;
  const sign = s[0] === '-' ? -1 : 1;
  let i = s[0] === '-' || s[0] === '+' ? 1 : 0;
  if (s.slice(i) === '0') return 0;
  if (i === s.length) return invalid;
  const digit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
  let total = 0;
  while (i < s.length) {
    const start = i;
    while (digit(s[i])) i++;
    let numeric = i > start;
    if (s[i] === '.') {
      const frac = ++i;
      while (digit(s[i])) i++;
      numeric ||= i > frac;
    }
    if (!numeric) return invalid;
    const amount = Number(s.slice(start, i)) || 0;
    const unitStart = i;
    while (i < s.length && s[i] !== '.' && !digit(s[i])) i++;
    if (i === unitStart) return `time: missing unit in duration ${goTimeQuote(s)}`;
    const unit = s.slice(unitStart, i);
    const ns = DURATION_UNITS.get(unit);
    if (ns === undefined) return `time: unknown unit ${goTimeQuote(unit)} in duration ${goTimeQuote(s)}`;
    // More than an int64 of nanoseconds is invalid too.
    total += amount * ns;
    if (total > 2 ** 63) return invalid;
  }
  return sign * total;
}

/** The time package's quote: printable ASCII as it is (with " and \ escaped), every other byte as \xNN. */
function goTimeQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c >= 0x80 || c < 0x20) {
      for (const b of Buffer.from(ch, 'utf8')) out += `\\x${b.toString(16).padStart(2, '0')}`;
    } else {
      out += ch === '"' || ch === '\\' ? `\\${ch}` : ch;
    }
  }
  return `${out}"`;
}

/** Go's time.Duration.String() for a whole number of milliseconds. */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = ((ms % 60_000) / 1000).toFixed(3).replace(/\.?0+$/, '');
  return (h ? `${h}h` : '') + (h || m ? `${m}m` : '') + `${s}s`;
}
