// node --import tsx scripts/gen-struct-order.ts [RAW.json ...]
//
// Writes schemas/struct-order.json: for each struct definition of schemas/definitions.json, its
// JSON field names in the order the Go struct declares them, which is the order encoding/json
// (and so kube-apiserver) writes them in. The OpenAPI document lists properties sorted, so the
// order comes from the Go types (types.go) of k8s.io/api, apimachinery, apiextensions-apiserver
// and kube-aggregator, as read into scripts/go-struct-fields.json (the default RAW):
// { "<definition>": [jsonName | { "inline": "<Go type>" }, ...] } per struct, in declaration
// order. Embedded (inline) structs are expanded where they are embedded, as encoding/json
// promotes their fields. Facts only: field names and their order.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

type RawField = string | { inline: string };
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const CORE = 'io.k8s.api.core.v1';
/** Go package qualifiers the API types use for another package's types. */
const QUALIFIERS: Record<string, string> = { metav1: META, v1: CORE, corev1: CORE, apiv1: CORE };

const files = process.argv.length > 2 ? process.argv.slice(2) : [join(ROOT, 'scripts/go-struct-fields.json')];
const raw: Record<string, RawField[]> = {};
for (const f of files) Object.assign(raw, JSON.parse(readFileSync(f, 'utf8')));
const definitions = JSON.parse(readFileSync(join(ROOT, 'schemas/definitions.json'), 'utf8')) as { definitions?: Record<string, any> } & Record<string, any>;
const defs: Record<string, any> = definitions.definitions ?? definitions;

function resolveInline(owner: string, goType: string): string | undefined {
  const pkg = owner.slice(0, owner.lastIndexOf('.'));
  const dot = goType.indexOf('.');
  const name = `${dot < 0 ? pkg : QUALIFIERS[goType.slice(0, dot)] ?? ''}.${goType.slice(dot + 1)}`;
  return raw[name] ? name : undefined;
}

const problems: string[] = [];
function expand(def: string, seen: string[] = []): string[] {
  if (seen.includes(def)) throw new Error(`inline cycle: ${[...seen, def].join(' → ')}`);
  const out: string[] = [];
  for (const f of raw[def]) {
    if (typeof f === 'string') out.push(f);
    else {
      const target = resolveInline(def, f.inline);
      if (target) out.push(...expand(target, [...seen, def]));
      else problems.push(`${def}: inline ${f.inline} not found`);
    }
  }
  return out;
}

const out: Record<string, string[]> = {};
for (const [name, schema] of Object.entries(defs).sort(([a], [b]) => (a < b ? -1 : 1))) {
  const props = schema?.properties ? Object.keys(schema.properties) : [];
  if (props.length < 2 || !raw[name]) continue;
  const order = expand(name);
  const missing = props.filter((p) => !order.includes(p));
  if (missing.length) problems.push(`${name}: no Go field for ${missing.join(', ')} (written after the known ones)`);
  // Only the fields the schema has: what the Go type has besides is never served.
  out[name] = order.filter((p) => props.includes(p));
}
const structs = Object.values(defs).filter((s) => s?.properties && Object.keys(s.properties).length >= 2).length;
writeFileSync(
  join(ROOT, 'schemas/struct-order.json'),
  JSON.stringify({ note: 'JSON field names of each struct definition in Go struct declaration order (embedded structs expanded in place): the order encoding/json writes them in. From the Go types of k8s.io/api, apimachinery, apiextensions-apiserver and kube-aggregator; scripts/gen-struct-order.ts.', definitions: out }, null, 1) + '\n',
);
console.log(`${Object.keys(out).length} of ${structs} struct definitions ordered`);
for (const p of problems) console.log(`  ${p}`);
