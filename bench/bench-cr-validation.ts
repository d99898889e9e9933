// node --import tsx bench/bench-cr-validation.ts [--rounds N] [--calls N]
// In-process CPU cost of the custom-resource stages a create/update pays, for the bench Widget
// (test/fixtures/crds/bench-widgets.yaml: ~200 properties, 5 CEL rules): prune, applyDefaults,
// validate (schema + embedded/list-type checks + CEL) on create and on an update, and the
// duplicate-key check of the request body (with the JSON.parse result, as the server calls it, and
// the full scan it falls back to). Reference paths run next to their fast paths: CEL rules with
// planned programs only, list-type checks without the pairwise check. Each figure is
// process CPU µs per call (process.cpuUsage, user+system), the median of several rounds after a
// warm-up; every call gets a fresh clone of benchWidget(i) (cloning is outside the timed part).
// Process CPU rather than wall-clock: the machine is shared, CPU time is much less noisy.
import { spawnSync } from 'node:child_process';
import { customResourceInfos } from '../server/registry/crd/runtime.ts';
import { compileVersionSchema } from '../server/registry/crd/schema-validator.ts';
import { evaluateRules } from '../server/registry/crd/cel/index.ts';
import { validateListSetsAndMaps } from '../server/registry/crd/schema-validator.ts';
import { duplicateJsonFields } from '../server/http/duplicate-fields.ts';
import { benchWidgetsCRD, benchWidget } from '../test/fixtures/crds/generate.ts';

// V8 compiles optimized code and collects garbage on other threads, which process CPU counts too,
// billing it to whatever stage runs at that moment; run single-threaded so each stage pays its own.
if (!process.execArgv.includes('--single-threaded')) {
  const r = spawnSync(process.execPath, ['--single-threaded', ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

const arg = (name: string, d: number): number => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : d;
};
const ROUNDS = arg('--rounds', 25);
const PER_ROUND = arg('--calls', 200);
const WARMUP_ROUNDS = 4;

const crd = benchWidgetsCRD();
const [info] = customResourceInfos(crd);
const cr = info.custom!;
const compiled = cr.compiled();
const rules = cr.rules()!;
const anyCompiled = compiled as any;

const cpuMicros = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** CPU µs per call of fn(input) with inputs made fresh for every call by make(i). */
function measure<T>(make: (i: number) => T, fn: (x: T) => void): number {
  const per: number[] = [];
  let serial = 0;
  for (let r = 0; r < WARMUP_ROUNDS + ROUNDS; r++) {
    const inputs: T[] = [];
    for (let i = 0; i < PER_ROUND; i++) inputs.push(make(serial++));
    const t0 = cpuMicros();
    for (const x of inputs) fn(x);
    const t1 = cpuMicros();
    if (r >= WARMUP_ROUNDS) per.push((t1 - t0) / PER_ROUND);
  }
  return median(per);
}

const fresh = (i: number): any => benchWidget(i);
/** What the store hands to validation: pruned and defaulted. */
const prepared = (i: number): any => {
  const o = benchWidget(i);
  compiled.prune(o);
  compiled.applyDefaults(o);
  return o;
};
const update = (i: number): { obj: any; old: any } => {
  const old = prepared(i);
  const obj = structuredClone(old);
  obj.spec.replicas = 4;
  return { obj, old };
};

/** A request body: its JSON text and what JSON.parse made of it. */
const jsonBody = (i: number): { text: string; parsed: unknown } => {
  const text = JSON.stringify(benchWidget(i));
  return { text, parsed: JSON.parse(text) };
};

const results: [string, number][] = [];
const run = (name: string, us: number) => {
  results.push([name, us]);
  console.log(`${name.padEnd(44)} ${us.toFixed(1).padStart(8)} µs`);
};

const stages: [string, (i: number) => any, (x: any) => void][] = [
  ['prune', fresh, (o) => compiled.prune(o)],
  ['applyDefaults (after prune)', (i) => { const o = fresh(i); compiled.prune(o); return o; }, (o) => compiled.applyDefaults(o)],
  ['applyDefaults (already defaulted: reads)', prepared, (o) => compiled.applyDefaults(o)],
  typeof anyCompiled.pruneAndDefault === 'function'
    ? ['pruneAndDefault (one walk)', fresh, (o) => anyCompiled.pruneAndDefault(o)]
    : ['prune + applyDefaults', fresh, (o) => { compiled.prune(o); compiled.applyDefaults(o); }],
  ['schema validate (compiled.validate)', prepared, (o) => compiled.validate(o, {})],
  ['CEL evaluateRules (create)', prepared, (o) => evaluateRules(rules, o, undefined)],
  ['list-type checks', prepared, (o) => validateListSetsAndMaps(compiled.schema, o, '')],
  ['list-type checks (reference)', prepared, (o) => validateListSetsAndMaps(compiled.schema, o, '', true)],
  ['duplicateJsonFields (text + parsed)', jsonBody, (b) => duplicateJsonFields(b.text, b.parsed)],
  ['duplicateJsonFields (full scan)', jsonBody, (b) => duplicateJsonFields(b.text)],
  ['custom.validate(obj, undefined)  [create]', prepared, (o) => { if (cr.validate(o, undefined).length) throw new Error('unexpected errors'); }],
  ['custom.validate(new, old)        [update]', update, (u) => { if (cr.validate(u.obj, u.old).length) throw new Error('unexpected errors'); }],
];

console.log(`custom-resource validation stages, bench Widget — node ${process.version}; CPU µs per call, median of ${ROUNDS} rounds × ${PER_ROUND} calls`);
// A whole unreported pass first: optimizing the big generated validator takes V8 a lot of CPU on
// a background thread (and not at once), which process CPU would bill to whatever runs then.
for (const [, make, fn] of stages) measure(make, fn);
for (const [name, make, fn] of stages) run(name, measure(make, fn));

// Compiling a schema of this size (paid once per CRD schema): a distinct schema each time.
{
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const s = structuredClone(crd.spec.versions[0].schema.openAPIV3Schema);
    s.properties.spec.properties[`extra${i}${process.pid}`] = { type: 'string', maxLength: 10 + i };
    const t0 = cpuMicros();
    compileVersionSchema(s);
    times.push(cpuMicros() - t0);
  }
  run('compileVersionSchema (fresh schema, µs)', median(times));
}
