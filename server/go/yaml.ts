// go-yaml v2 (gopkg.in/yaml.v2) as kube-apiserver uses it through sigs.k8s.io/yaml: YAML 1.1
// reading (KUBE_YAML, options for the `yaml` library) and writing (kubeYaml), with its key order.
import YAML from 'yaml';
import { compareStrings } from './strings.ts';

/**
 * go-yaml v2's floats, which the YAML 1.1 float pattern over-reads: `.`, `._` and `e5` are
 * strings there (a plain scalar starting with a letter is never a number, and `.` alone is no
 * float). A sign or digit start is read with underscores dropped, a `.` start as written.
 */
const GO_YAML_FLOAT = /^(?:\.[0-9]+(?:[eE][-+]?[0-9]+)?|(?=[-+]?[._]*[0-9])[-+]?(?:\.[0-9_]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?_*[0-9][0-9_]*)?)$/;
const FLOAT_TAG = 'tag:yaml.org,2002:float';

/** The YAML 1.1 tags with go-yaml v2's floats: its .inf/.nan tag kept, the others replaced by one. */
function goYamlTags(tags: YAML.Tags, keepTimestamps: boolean): YAML.Tags {
  const out: YAML.Tags = [];
  for (const t of tags) {
    if (typeof t === 'string') out.push(t);
    else if (t.tag === FLOAT_TAG && 'test' in t && t.test && !t.test.test('.inf')) {
      // The first of the number-like float tags (plain, exponent) becomes go-yaml's; the rest go.
      if (!out.some((o) => typeof o !== 'string' && o.tag === FLOAT_TAG && 'test' in o && o.test === GO_YAML_FLOAT)) {
        out.push({ ...t, format: undefined, test: GO_YAML_FLOAT, resolve: (s: string) => parseFloat(s.replace(/_/g, '')) } as YAML.ScalarTag);
      }
    } else if (keepTimestamps || !(t.tag === 'tag:yaml.org,2002:timestamp' || t.format === 'TIME')) out.push(t);
  }
  return out;
}

/**
 * YAML as kube reads it (go-yaml v2, YAML 1.1): `yes`, `on` and `y` are booleans, `0755` is
 * octal, `1_000` a number. go-yaml v2 reads timestamps into a map as strings and has no
 * sexagesimal numbers (`1:20`): those tags are left out.
 */
export const KUBE_YAML = {
  version: '1.1',
  customTags: (tags: YAML.Tags) => goYamlTags(tags, false),
} as const;

/**
 * Writing, go-yaml v2 quotes a string that would read back as something else, timestamps and
 * sexagesimal numbers included (kube's `creationTimestamp: "2026-…"`): those tags count here.
 */
const KUBE_YAML_OUT = { version: '1.1', customTags: (tags: YAML.Tags) => goYamlTags(tags, true) } as const;

/**
 * A value as kube-apiserver writes YAML (sigs.k8s.io/yaml: JSON to go-yaml v2): every map's keys
 * in go-yaml's order, block sequences not indented under their key, a string that would read
 * back as another type double-quoted, one that plain style cannot hold single-quoted, multi-line
 * strings literal. (go-yaml also folds long lines at 80 columns; they are left whole here.)
 */
export function kubeYaml(value: unknown): string {
  const doc = new YAML.Document(value, { ...KUBE_YAML_OUT, sortMapEntries: (a, b) => goYamlKeyOrder(String((a.key as YAML.Scalar)?.value ?? a.key), String((b.key as YAML.Scalar)?.value ?? b.key)) });
  const tags = doc.schema.tags;
  YAML.visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value !== 'string') return;
      const v = node.value;
      if (tags.some((t) => t.default && t.tag !== 'tag:yaml.org,2002:str' && 'test' in t && t.test?.test(v))) node.type = 'QUOTE_DOUBLE';
    },
  });
  return doc.toString({ lineWidth: 0, indentSeq: false, singleQuote: true, blockQuote: 'literal' });
}

const LETTER = /\p{L}/u;
const DIGIT = /[0-9]/;

/**
 * go-yaml v2's order of map keys (its keyList.Less): rune by rune; at the first difference,
 * letters by code point, a non-letter before a letter, and runs of digits by their numeric
 * value (`a2` before `a10`).
 */
export function goYamlKeyOrder(a: string, b: string): number {
  const ar = Array.from(a);
  const br = Array.from(b);
  for (let i = 0; i < ar.length && i < br.length; i++) {
    if (ar[i] === br[i]) continue;
    const al = LETTER.test(ar[i]);
    const bl = LETTER.test(br[i]);
    if (al && bl) return compareStrings(ar[i], br[i]);
    if (al || bl) return bl ? -1 : 1;
    let an = 0;
    let bn = 0;
    // Inside a number whose digits so far are not all zeros, a zero counts as a digit like any other.
    if (ar[i] === '0' || br[i] === '0') {
      for (let j = i - 1; j >= 0 && DIGIT.test(ar[j]); j--) {
        if (ar[j] !== '0') {
          an = 1;
          bn = 1;
          break;
        }
      }
    }
    let ai = i;
    let bi = i;
    for (; ai < ar.length && DIGIT.test(ar[ai]); ai++) an = an * 10 + Number(ar[ai]);
    for (; bi < br.length && DIGIT.test(br[bi]); bi++) bn = bn * 10 + Number(br[bi]);
    if (an !== bn) return an < bn ? -1 : 1;
    if (ai !== bi) return ai < bi ? -1 : 1;
    return compareStrings(ar[i], br[i]);
  }
  return ar.length - br.length;
}
