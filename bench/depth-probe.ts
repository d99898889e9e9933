// How deep a value each of hearth's recursive walkers survives on Node's default stack, each
// measured from a fresh stack by bisection: the figures MAX_BODY_DEPTH (server/util/json-depth.ts)
// is chosen against. A request runs them some hundred frames down, so the limit keeps well under
// the smallest. `node --import tsx bench/depth-probe.ts` (about a minute; --quick: a few walkers).
import YAML from 'yaml';
import { encode } from '../server/http/negotiation.ts';
import { kubeYaml, KUBE_YAML } from '../server/go/yaml.ts';
import { noDuplicateKeys } from '../server/http/duplicate-fields.ts';
import { applyMergePatch, applyStrategicMergePatch } from '../server/registry/patch/index.ts';
import { apply as applyEngine, update as recordUpdate } from '../server/registry/apply/index.ts';
import { UNTYPED } from '../server/registry/apply/index.ts';
import { cloneJSON, deepEqual } from '../server/util/json.ts';
import { MAX_BODY_DEPTH } from '../server/util/json-depth.ts';

/** {x: {x: ... {x: 1}}}, `depth` objects deep. */
function nested(depth: number): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let o = root;
  for (let i = 1; i < depth; i++) o = (o.x = {}) as Record<string, unknown>;
  o.x = 1;
  return root;
}

/** The deepest value `walk` survives, by bisection between 1 and `hi`. */
function deepest(walk: (depth: number) => unknown, hi = 20000): number {
  let lo = 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    try {
      walk(mid);
      lo = mid;
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      hi = mid - 1;
    }
  }
  return lo;
}

const opts = { manager: 'probe', apiVersion: 'example.com/v1', now: '2026-01-01T00:00:00Z' };

const walkers: Record<string, (d: number) => unknown> = {
  'JSON.stringify': (d) => JSON.stringify(nested(d)),
  'YAML out (kubeYaml)': (d) => kubeYaml(nested(d)),
  'YAML in (yaml library)': (d) => {
    // The library reports a stack overflow as a document error.
    const doc = YAML.parseDocument(`a: ${'{x: '.repeat(d)}1${'}'.repeat(d)}`, KUBE_YAML);
    if (doc.errors.length) throw new RangeError(doc.errors[0].message);
    return doc.toJS();
  },
  'CBOR out (cbor-x)': (d) => encode(nested(d), 'cbor'),
  structuredClone: (d) => structuredClone(nested(d)),
  cloneJSON: (d) => cloneJSON(nested(d)),
  deepEqual: (d) => deepEqual(nested(d), nested(d)),
  'duplicate fields': (d) => noDuplicateKeys(JSON.stringify(nested(Math.min(d, 4000))), nested(d)),
  'merge patch': (d) => applyMergePatch(nested(d), nested(d)),
  'strategic merge patch': (d) => applyStrategicMergePatch(nested(d), nested(d), undefined),
  // (it never throws: on a failure it records nothing)
  'managed fields (create)': (d) => {
    if (recordUpdate(UNTYPED, undefined, nested(d), opts).length === 0) throw new RangeError('nothing recorded');
  },
  'server-side apply': (d) => applyEngine(UNTYPED, undefined, nested(d), { ...opts, force: false }),
  'apply merge copy': (d) => cloneJSON(nested(d)),
};

const quick = process.argv.includes('--quick');
const names = Object.keys(walkers).slice(0, quick ? 3 : undefined);
console.log(`MAX_BODY_DEPTH = ${MAX_BODY_DEPTH}; deepest value each walker survives from a fresh stack (Node ${process.version}):`);
for (const name of names) console.log(`  ${String(deepest(walkers[name], quick ? 5000 : 20000)).padStart(6)}  ${name}`);
