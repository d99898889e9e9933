// Duplicate fields in request bodies. JSON.parse keeps the last of two equal keys silently;
// kube-apiserver reports them (a warning, or 400 with fieldValidation=Strict). One linear scan of
// the text finds them, with the path kube prints: "metadata.name", "spec.containers[0].image".
import YAML from 'yaml';

/** Paths of keys that appear twice in the same JSON object. Assumes text is valid JSON. */
export function duplicateJsonFields(text: string): string[] {
  // Cheap exit: most bodies cannot have a duplicate if every key is distinct text; still scan,
  // but only objects with more than one key do any bookkeeping.
  const out: string[] = [];
  interface Frame {
    kind: 'object' | 'array';
    path: string;
    keys?: Set<string>;
    index: number;
    /** The key whose value comes next (objects). */
    pendingKey?: string;
  }
  const stack: Frame[] = [];
  let i = 0;
  const n = text.length;
  const childPath = (f: Frame | undefined): string => {
    if (!f) return '';
    if (f.kind === 'array') return `${f.path}[${f.index}]`;
    const k = f.pendingKey ?? '';
    return f.path ? `${f.path}.${k}` : k;
  };
  const readString = (): string => {
    // text[i] === '"'
    let j = i + 1;
    let hasEscape = false;
    while (j < n) {
      const c = text.charCodeAt(j);
      if (c === 92 /* \ */) {
        hasEscape = true;
        j += 2;
        continue;
      }
      if (c === 34 /* " */) break;
      j++;
    }
    const raw = text.slice(i, j + 1);
    i = j + 1;
    return hasEscape ? (JSON.parse(raw) as string) : raw.slice(1, -1);
  };
  // Whether the next string token is an object key.
  let expectKey = false;
  while (i < n) {
    const c = text[i];
    switch (c) {
      case '{': {
        const parent = stack[stack.length - 1];
        stack.push({ kind: 'object', path: childPath(parent), index: 0, keys: new Set() });
        expectKey = true;
        i++;
        break;
      }
      case '[': {
        const parent = stack[stack.length - 1];
        stack.push({ kind: 'array', path: childPath(parent), index: 0 });
        expectKey = false;
        i++;
        break;
      }
      case '}':
      case ']':
        stack.pop();
        i++;
        break;
      case ',': {
        const top = stack[stack.length - 1];
        if (top?.kind === 'array') top.index++;
        expectKey = top?.kind === 'object';
        i++;
        break;
      }
      case '"': {
        const s = readString();
        const top = stack[stack.length - 1];
        if (expectKey && top?.kind === 'object') {
          if (top.keys!.has(s)) out.push(top.path ? `${top.path}.${s}` : s);
          else top.keys!.add(s);
          top.pendingKey = s;
          expectKey = false;
        }
        break;
      }
      default:
        i++;
    }
  }
  return out;
}

/** Paths of keys that appear twice in the same YAML mapping (first document). */
export function duplicateYamlFields(text: string): string[] {
  const out: string[] = [];
  const doc = YAML.parseDocument(text, { uniqueKeys: false });
  const walk = (node: unknown, path: string) => {
    if (YAML.isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const key = String(YAML.isScalar(pair.key) ? pair.key.value : pair.key);
        const p = path ? `${path}.${key}` : key;
        if (seen.has(key)) out.push(p);
        seen.add(key);
        walk(pair.value, p);
      }
    } else if (YAML.isSeq(node)) {
      node.items.forEach((item, idx) => walk(item, `${path}[${idx}]`));
    }
  };
  walk(doc.contents, '');
  return out;
}
