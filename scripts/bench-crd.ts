// npm run bench:crd [-- --quick]
// CustomResourceDefinition benchmarks against a hearth in its own process on loopback:
//   1. durable creates/s of a custom resource whose schema has ~200 properties and 5 CEL rules
//      (test/fixtures/crds/bench-widgets.yaml), 16 keep-alive clients, in turns with ConfigMap
//      creates on the same server, as a ratio
//   2. time from POST of a CRD to its resource being served (first 200 on a list of it), median
//      and worst of several CRDs of that size
//   3. server start time (spawn → listening) with 100 such CRDs installed, next to an empty file
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LeanConnection } from './bench-client.ts';
import { startHearth, stopHearth, request, createNamespace, configMap, percentile, rateOf, ratesInTurns, type Server } from './bench-kit.ts';
import { benchWidgetsCRD, benchWidget } from '../test/fixtures/crds/generate.ts';

const quick = process.argv.includes('--quick');
const COMMAND = `node --import tsx scripts/bench-crd.ts${quick ? ' --quick' : ''}`;
const CONCURRENCY = 16;
const CREATE_SECONDS = quick ? 3 : 10;
const WARMUP_SECONDS = quick ? 2 : 5;
/** Widget and ConfigMap creates take turns in this many slices each (CREATE_SECONDS in all for each). */
const ROUNDS = quick ? 3 : 5;
const ESTABLISH_SAMPLES = quick ? 5 : 20;
const START_CRDS = 100;
const START_SAMPLES = quick ? 1 : 3;

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** The bench CRD under another plural/kind, so many of them can be installed side by side. */
function crdNamed(i: number): any {
  const crd = structuredClone(benchWidgetsCRD());
  const plural = `widgets${i}`;
  crd.metadata.name = `${plural}.${crd.spec.group}`;
  crd.spec.names = { plural, singular: `widget${i}`, kind: `Widget${i}`, listKind: `Widget${i}List` };
  // A schema of its own, so no compiled schema of an earlier CRD is reused.
  for (const v of crd.spec.versions) v.schema.openAPIV3Schema.properties.spec.properties[`field${i}`] = { type: 'string', maxLength: 10 + i };
  return crd;
}

function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

async function createRates(s: Server): Promise<{ widgets: { rate: number; cpuMs: number }; configMaps: { rate: number; cpuMs: number } }> {
  const r = await request(s, 'POST', CRDS, benchWidgetsCRD());
  if (r.status !== 201) throw new Error(`CRD create: ${r.status} ${r.body}`);
  await createNamespace(s, 'bench');
  const widgetPath = '/apis/bench.hearth.test/v1/namespaces/bench/widgets';
  let serial = 0;
  const widget = async (conn: LeanConnection) => {
    const w = benchWidget(serial++);
    const c = await request(s, 'POST', widgetPath, w, conn);
    if (c.status !== 201) throw new Error(`widget create: ${c.status} ${c.body}`);
  };
  const cm = async (conn: LeanConnection) => {
    const c = await request(s, 'POST', '/api/v1/namespaces/bench/configmaps', configMap('bench', `cm-${serial++}`), conn);
    if (c.status !== 201) throw new Error(`configmap create: ${c.status} ${c.body}`);
  };
  await rateOf(s, WARMUP_SECONDS, widget);
  await rateOf(s, WARMUP_SECONDS, cm);
  // In turns (ROUNDS slices of each), so the ratio compares the requests, not two moments.
  const { widgets, configMaps } = await ratesInTurns(s, ROUNDS, CREATE_SECONDS / ROUNDS, { widgets: widget, configMaps: cm });
  return { widgets, configMaps };
}

/** ms from sending a CRD create until a list of the new resource answers 200. */
async function establishTimes(s: Server): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < ESTABLISH_SAMPLES; i++) {
    const crd = crdNamed(1000 + i);
    const started = performance.now();
    const r = await request(s, 'POST', CRDS, crd);
    if (r.status !== 201) throw new Error(`CRD create: ${r.status} ${r.body}`);
    for (;;) {
      const l = await request(s, 'GET', `/apis/${crd.spec.group}/v1/namespaces/bench/${crd.spec.names.plural}`);
      if (l.status === 200) break;
      if (performance.now() - started > 10_000) throw new Error(`CRD ${crd.metadata.name} not served after 10 s`);
    }
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

/** ms from spawning the server until it prints its URL (listening, bootstrap done). */
async function startTime(dataDir: string): Promise<number> {
  const started = performance.now();
  const s = await startHearth(dataDir, { connections: 1 });
  const ms = performance.now() - started;
  await stopHearth(s);
  return ms;
}

async function main() {
  console.log(`hearth CRD benchmark${quick ? ' (quick)' : ''} — node ${process.version}, loopback`);
  const dir = tempDir('hearth-bench-crd-');
  try {
    const s = await startHearth(dir, { connections: CONCURRENCY });
    const rates = await createRates(s);
    console.log(`custom resource creates/s (~200 properties, 5 CEL rules, ${CONCURRENCY} clients, ${ROUNDS} slices of ${CREATE_SECONDS / ROUNDS} s): ${rates.widgets.rate.toFixed(0)} (server CPU ${rates.widgets.cpuMs.toFixed(3)} ms each)`);
    console.log(`ConfigMap creates/s, same server, in turns with them: ${rates.configMaps.rate.toFixed(0)} (server CPU ${rates.configMaps.cpuMs.toFixed(3)} ms each) → ratio ${(rates.widgets.rate / rates.configMaps.rate).toFixed(2)}`);
    const est = await establishTimes(s);
    console.log(`CRD create → served (${est.length} CRDs of ~200 properties): median ${percentile(est, 50).toFixed(1)} ms, worst ${est[est.length - 1].toFixed(1)} ms`);
    await stopHearth(s);

    const empty = tempDir('hearth-bench-crd-empty-');
    const full = tempDir('hearth-bench-crd-full-');
    try {
      await startTime(empty); // first start makes the PKI; not measured
      const fill = await startHearth(full, { connections: 1 });
      for (let i = 0; i < START_CRDS; i++) {
        const r = await request(fill, 'POST', CRDS, crdNamed(i));
        if (r.status !== 201) throw new Error(`CRD create: ${r.status} ${r.body}`);
      }
      await stopHearth(fill);
      const e: number[] = [];
      const f: number[] = [];
      for (let i = 0; i < START_SAMPLES; i++) {
        e.push(await startTime(empty));
        f.push(await startTime(full));
      }
      e.sort((a, b) => a - b);
      f.sort((a, b) => a - b);
      console.log(`server start, ${START_CRDS} CRDs installed: ${percentile(f, 50).toFixed(0)} ms; empty data file: ${percentile(e, 50).toFixed(0)} ms (median of ${START_SAMPLES}, spawn of the built bundle npm start runs → listening)`);
    } finally {
      rmSync(empty, { recursive: true, force: true });
      rmSync(full, { recursive: true, force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`command: ${COMMAND}`);
}

await main();
