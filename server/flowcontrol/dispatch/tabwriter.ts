// Go's text/tabwriter as kube's debug dumps use it (NewWriter(w, 8, 0, 1, ' ', 0)): cells end at
// '\t'; each column is as wide as its widest cell plus one space, at least 8; a line's last cell
// is not aligned. Every line of a dump has the same cells, so one width per column serves.
const MIN_WIDTH = 8;
const PADDING = 1;

export function tabwrite(lines: readonly string[]): string {
  const rows = lines.map((l) => l.split('\t'));
  const widths: number[] = [];
  for (const cells of rows) {
    for (let j = 0; j < cells.length - 1; j++) widths[j] = Math.max(widths[j] ?? MIN_WIDTH, [...cells[j]].length + PADDING);
  }
  let out = '';
  for (const cells of rows) {
    for (let j = 0; j < cells.length - 1; j++) out += cells[j] + ' '.repeat(widths[j] - [...cells[j]].length);
    out += cells[cells.length - 1] + '\n';
  }
  return out;
}
