// The Warning headers of one response, recorded as kube-apiserver's warning recorder records
// them (k8s.io/apiserver/pkg/endpoints/filters/warning.go): each text once, looked up in a set;
// at most 4096 runes of warning text in all. The warning that would go past that switches the
// recorder to truncating: every warning recorded so far and from then on is cut to 256 runes,
// and once the total reaches 4096 runes the rest are dropped. kube adds no warning saying so
// (it logs "exceeded max warning header size, truncating"), and neither does this.
//
// A body with 16,000 unknown fields makes 16,000 warnings: recording one costs a set lookup and,
// once truncating, nothing; the header array is handed to the response once per batch.
import type Koa from 'koa';
import { goQuote } from '../go/strconv.ts';

/** kube's truncateAtTotalRunes. */
export const WARNING_TOTAL_RUNES = 4 * 1024;
/** kube's truncateItemRunes: what each warning is cut to once the total is exceeded. */
export const WARNING_ITEM_RUNES = 256;

export class WarningRecorder {
  private readonly recorded = new Set<string>();
  /** Every distinct text recorded, for replaying them truncated. */
  private readonly ordered: string[] = [];
  /** Runes of warning text in `headers`. */
  private written = 0;
  private truncating = false;
  /** The Warning header values, in the order recorded. */
  readonly headers: string[] = [];

  /** AddWarning with an empty agent ("-"), as kube's handlers add theirs. */
  add(text: string): void {
    if (text.length === 0) return;
    if (this.truncating && this.written >= WARNING_TOTAL_RUNES) return;
    if (this.recorded.has(text)) return;
    this.recorded.add(text);
    this.ordered.push(text);
    let runes = runeCount(text);
    let shown = text;
    if (this.truncating && runes > WARNING_ITEM_RUNES) {
      shown = truncateRunes(text);
      runes = WARNING_ITEM_RUNES;
    }
    const header = warningHeader(shown);
    if (header === undefined) return;
    if (this.truncating || this.written + runes <= WARNING_TOTAL_RUNES) {
      this.written += runes;
      this.headers.push(header);
      return;
    }
    // Over the limit: start again with every warning so far cut to its item length.
    this.truncating = true;
    this.written = 0;
    this.headers.length = 0;
    for (const t of this.ordered) {
      const n = runeCount(t);
      const cut = n > WARNING_ITEM_RUNES ? truncateRunes(t) : t;
      const h = warningHeader(cut);
      if (h === undefined) continue;
      this.written += Math.min(n, WARNING_ITEM_RUNES);
      this.headers.push(h);
    }
  }
}

/** Records warnings for the response (`Warning: 299 - "text"`), kube's way; the header is set once per call. */
export function addWarnings(ctx: Koa.ParameterizedContext<{ warnings?: WarningRecorder }>, warnings: Iterable<string>): void {
  const recorder = (ctx.state.warnings ??= new WarningRecorder());
  const before = recorder.headers.length;
  for (const w of warnings) recorder.add(w);
  if (recorder.headers.length === 0 && before === 0) return;
  ctx.res.setHeader('Warning', recorder.headers.slice());
}

/**
 * net.NewWarningHeader(299, "-", text): the text Go-quoted; undefined for text kube refuses to
 * send (invalid UTF-8 — a lone surrogate here — or a control character).
 */
function warningHeader(text: string): string | undefined {
  if (CONTROL_OR_SURROGATE.test(text)) return undefined;
  return `299 - ${goQuote(text)}`;
}

/** unicode.IsControl (C0, DEL, C1), and a lone surrogate, which is no valid UTF-8. */
// eslint-disable-next-line no-control-regex -- control characters are what this looks for
const CONTROL_OR_SURROGATE = /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** utf8.RuneCountInString: code points, not UTF-16 units. */
function runeCount(s: string): number {
  let n = s.length;
  // Only strings with a surrogate pair count fewer runes than units.
  if (!SURROGATE.test(s)) return n;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

const SURROGATE = /[\ud800-\udbff]/;

/** string([]rune(text)[:256]). */
function truncateRunes(s: string): string {
  let out = '';
  let n = 0;
  for (const ch of s) {
    if (n++ === WARNING_ITEM_RUNES) break;
    out += ch;
  }
  return out;
}
