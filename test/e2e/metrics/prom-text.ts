// A small reader of the Prometheus text format (0.0.4) /metrics answers in: each sample's name,
// labels and value, and the HELP and TYPE of each family, for tests to find exact counts.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  help: Map<string, string>;
  type: Map<string, string>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Exposition {
  const out: Exposition = { samples: [], help: new Map(), type: new Map() };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# HELP ')) {
      const rest = line.slice(7);
      const sp = rest.indexOf(' ');
      out.help.set(rest.slice(0, sp), rest.slice(sp + 1));
      continue;
    }
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice(7).split(' ');
      out.type.set(name, type);
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]] = l[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    out.samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

/** The samples of this name whose labels include all of `labels`. */
export function find(e: Exposition, name: string, labels: Record<string, string> = {}): Sample[] {
  return e.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The one sample of this name with exactly these labels (all of them), or undefined. */
export function exact(e: Exposition, name: string, labels: Record<string, string>): Sample | undefined {
  const keys = Object.keys(labels);
  const found = e.samples.filter((s) => s.name === name && Object.keys(s.labels).length === keys.length && keys.every((k) => s.labels[k] === labels[k]));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0];
}

/** The value of that sample, 0 when there is none. */
export function valueOf(e: Exposition, name: string, labels: Record<string, string>): number {
  return exact(e, name, labels)?.value ?? 0;
}
