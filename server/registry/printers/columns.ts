// What every built-in printer shares: kube's duration.HumanDuration and ages, the small cell
// formatters of kubectl's printers (labels, label selectors, container lists, host:port, "+ N
// more..."), and the column definitions most kinds repeat (Name, Age, Containers, Images, Selector).
import type { TableColumnDefinition, TablePrinter } from '../../schema/types.ts';

// ---------------------------------------------------------------------------
// humanDuration
// ---------------------------------------------------------------------------

export const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * Kubernetes' duration.HumanDuration: a short age with 2-3 significant figures.
 * Up to 1s in the future counts as "0s"; further in the future is "<invalid>".
 */
export function humanDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '<invalid>';
  const seconds = Math.trunc(ms / SECOND);
  if (seconds < -1) return '<invalid>';
  if (seconds <= 0) return '0s';
  if (seconds < 120) return `${seconds}s`;

  const minutes = Math.trunc(ms / MINUTE);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;

  const hours = Math.trunc(ms / HOUR);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;

  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;

  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) {
    const dy = days % 365;
    return dy === 0 ? `${years}y` : `${years}y${dy}d`;
  }
  return `${years}y`;
}

// ---------------------------------------------------------------------------
// small helpers
// ---------------------------------------------------------------------------

/** Milliseconds since epoch for an RFC3339 timestamp, or undefined when unset/unparseable. */
export function parseTime(v: unknown): number | undefined {
  if (typeof v !== 'string' || v === '') return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}

/** Age of a timestamp as kube prints it ("<unknown>" when unset). */
export function since(v: unknown, now: number): string {
  const t = parseTime(v);
  return t === undefined ? '<unknown>' : humanDuration(now - t);
}

export function age(obj: any, now: number): string {
  return since(obj?.metadata?.creationTimestamp, now);
}

export function nameOf(obj: any): string {
  return str(obj?.metadata?.name);
}

export function str(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
}

export function int(v: unknown, dflt = 0): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : dflt;
}

export function arr(v: unknown): any[] {
  return Array.isArray(v) ? v : [];
}

export function countKeys(v: unknown): number {
  return v && typeof v === 'object' && !Array.isArray(v) ? Object.keys(v).length : 0;
}

/** Quantity as printed (stored quantities are already canonical strings); unset is "0". */
export function quantity(v: unknown): string {
  if (v === undefined || v === null || v === '') return '0';
  return String(v);
}

export function intOrString(v: unknown): string {
  return typeof v === 'number' ? String(v) : str(v);
}

export function boolPtr(v: unknown): string {
  if (typeof v !== 'boolean') return '<unset>';
  return v ? 'True' : 'False';
}

/** labels.FormatLabels: sorted "k=v" pairs, "<none>" when empty. */
export function formatLabels(m: unknown): string {
  if (!m || typeof m !== 'object') return '<none>';
  const keys = Object.keys(m as Record<string, unknown>).sort();
  if (keys.length === 0) return '<none>';
  return keys.map((k) => `${k}=${str((m as Record<string, unknown>)[k])}`).join(',');
}

/**
 * String form of a metav1.LabelSelector after conversion to a labels.Selector.
 * Returns "" for nil/empty selectors and null when the selector is invalid.
 */
export function selectorString(sel: any): string | null {
  if (!sel || typeof sel !== 'object') return '';
  const reqs: { key: string; text: string }[] = [];
  const ml = sel.matchLabels;
  if (ml && typeof ml === 'object') {
    for (const k of Object.keys(ml)) reqs.push({ key: k, text: `${k}=${str(ml[k])}` });
  }
  for (const e of arr(sel.matchExpressions)) {
    const key = str(e?.key);
    const values = arr(e?.values).map(str);
    const uniq = [...new Set(values)].sort();
    switch (e?.operator) {
      case 'In':
        if (uniq.length === 0) return null;
        reqs.push({ key, text: `${key} in (${uniq.join(',')})` });
        break;
      case 'NotIn':
        if (uniq.length === 0) return null;
        reqs.push({ key, text: `${key} notin (${uniq.join(',')})` });
        break;
      case 'Exists':
        if (values.length > 0) return null;
        reqs.push({ key, text: key });
        break;
      case 'DoesNotExist':
        if (values.length > 0) return null;
        reqs.push({ key, text: `!${key}` });
        break;
      default:
        return null;
    }
  }
  reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return reqs.map((r) => r.text).join(',');
}

/** metav1.FormatLabelSelector: "<none>" when empty, "<error>" when invalid. */
export function formatLabelSelector(sel: any): string {
  const s = selectorString(sel);
  if (s === null) return '<error>';
  return s === '' ? '<none>' : s;
}

/** Container names and images, each comma-joined. */
export function containerCells(containers: unknown): [string, string] {
  const list = arr(containers);
  return [list.map((c) => str(c?.name)).join(','), list.map((c) => str(c?.image)).join(',')];
}

export function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Up to `max` items, then " + N more..."; `empty` when there are none. */
export function listWithMore(list: string[], total: number, max: number, empty: string): string {
  const shown = list.slice(0, max).join(',');
  if (total > max) return `${shown} + ${total - max} more...`;
  return shown === '' ? empty : shown;
}

export function conditionStatus(conditions: unknown, type: string): string | undefined {
  for (const c of arr(conditions)) if (c?.type === type) return str(c?.status);
  return undefined;
}

// ---------------------------------------------------------------------------
// column helpers
// ---------------------------------------------------------------------------

export function col(name: string, type: string, description: string, priority = 0, format = ''): TableColumnDefinition {
  return { name, type, format, description, priority };
}

export const NAME_DESC = 'Name must be unique within a namespace.';
export const AGE_DESC = 'CreationTimestamp is a timestamp representing the server time when this object was created.';

export const nameCol = (): TableColumnDefinition => col('Name', 'string', NAME_DESC, 0, 'name');
export const ageCol = (): TableColumnDefinition => col('Age', 'string', AGE_DESC);
export const containersCol = (p = 1) => col('Containers', 'string', 'Names of each container in the template.', p);
export const imagesCol = (p = 1) => col('Images', 'string', 'Images referenced by each container in the template.', p);
export const selectorCol = (desc = 'Label selector for the controlled pods.') => col('Selector', 'string', desc, 1);

export function printer(columns: TableColumnDefinition[], cells: (obj: any, now: number) => unknown[]): TablePrinter {
  return { columns, cells };
}
