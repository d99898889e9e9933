// Reading hearth's log in tests: a server started with `log` gets formatted lines (klog's text
// format by default: server/logging/logger.ts); logMessage gives back the line a component handed
// its `log` — the quoted message, with a W or E line's `warning: ` or `error: ` prefix — so tests
// that look for a component's words keep reading those words.
import { unquoteExtend } from '../../server/go/strconv.ts';

/** klog's header: severity, MMDD, hh:mm:ss.uuuuuu, the pid right-aligned, the source, `] `. */
export const KLOG_HEADER = /^([IWEF])(\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{6}) +(\d+) ([^\]\s]+)\] /;

/** The quoted message at the start of s (Go's %q), unquoted; undefined when s does not start with one. */
export function leadingQuoted(s: string): { value: string; rest: string } | undefined {
  if (s[0] !== '"') return undefined;
  for (let i = 1; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '"') {
      const value = unquoteExtend(s.slice(0, i + 1));
      return value === undefined ? undefined : { value, rest: s.slice(i + 1) };
    }
  }
  return undefined;
}

/** The message of one text-format line (prefixed `warning: `/`error: ` for W/E lines); a line in no klog shape as it is. */
export function logMessage(line: string): string {
  const header = KLOG_HEADER.exec(line);
  if (!header) return line;
  const msg = leadingQuoted(line.slice(header[0].length));
  if (!msg) return line;
  return (header[1] === 'W' ? 'warning: ' : header[1] === 'E' ? 'error: ' : '') + msg.value;
}
