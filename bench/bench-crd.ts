// npm run bench:crd [-- --quick] [-- --cpu-prof=DIR]
// CustomResourceDefinition benchmarks against a hearth in its own process on loopback:
//   1. durable creates/s of a custom resource whose schema has ~200 properties and 5 CEL rules
//      (test/fixtures/crds/bench-widgets.yaml), 16 at a time: from 16 keep-alive HTTP/1.1
//      connections, and as client-go (kubectl, controllers) sends them, as streams of one HTTP/2
//      connection; in turns with ConfigMap creates on the same server, as a ratio
//   2. time from POST of a CRD to its resource being served (first 200 on a list of it), median
//      and worst of several CRDs of that size
//   3. server start time (spawn → listening) with 100 such CRDs installed, next to an empty file
// --cpu-prof=DIR writes a CPU profile of the server that serves 1 and 2.
import { mkdtempSync, rmSync } from 'node:fs';
import tls from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LeanH2Session, type LeanConnection } from './bench-client.ts';
import { startHearth, stopHearth, request, createNamespace, configMap, percentile, rateOf, ratesInTurns, type Server } from './bench-kit.ts';
import { benchWidgetsCRD, benchWidget } from '../test/fixtures/crds/generate.ts';

const quick = process.argv.includes('--quick');
const cpuProfDir = process.argv.find((a) => a.startsWith('--cpu-prof='))?.slice('--cpu-prof='.length);
const COMMAND = `node --import tsx bench/bench-crd.ts ${process.argv.slice(2).join(' ')}`.trim();
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

type Rate = { rate: number; cpuMs: number };

async function createRates(s: Server): Promise<{ widgets: Rate; widgetsH2: Rate; configMaps: Rate }> {
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
  // The same creates from CONCURRENCY workers as streams of one HTTP/2 connection.
  const h2 = await LeanH2Session.open(s.url, tls.createSecureContext(s.creds));
  const widgetH2 = async () => {
    const c = await h2.send('POST', widgetPath, Buffer.from(JSON.stringify(benchWidget(serial++))));
    if (c.status !== 201) throw new Error(`widget create (HTTP/2): ${c.status} ${c.body}`);
  };
  const cm = async (conn: LeanConnection) => {
    const c = await request(s, 'POST', '/api/v1/namespaces/bench/configmaps', configMap('bench', `cm-${serial++}`), conn);
    if (c.status !== 201) throw new Error(`configmap create: ${c.status} ${c.body}`);
  };
  await rateOf(s, WARMUP_SECONDS, widget);
  await rateOf(s, WARMUP_SECONDS, widgetH2);
  await rateOf(s, WARMUP_SECONDS, cm);
  // In turns (ROUNDS slices of each), so the ratios compare the requests, not two moments.
  try {
    return await ratesInTurns(s, ROUNDS, CREATE_SECONDS / ROUNDS, { widgets: widget, widgetsH2: widgetH2, configMaps: cm });
  } finally {
    h2.close();
  }
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
    const s = await startHearth(dir, { connections: CONCURRENCY, nodeArgs: cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : [] });
    const rates = await createRates(s);
    const slices = `${ROUNDS} slices of ${CREATE_SECONDS / ROUNDS} s`;
    console.log(`custom resource creates/s (~200 properties, 5 CEL rules), ${CONCURRENCY} at a time, ${slices} each, in turns:`);
    console.log(`  ${CONCURRENCY} HTTP/1.1 keep-alive connections: ${rates.widgets.rate.toFixed(0)} (server CPU ${rates.widgets.cpuMs.toFixed(3)} ms each)`);
    console.log(`  one HTTP/2 connection, as client-go sends them: ${rates.widgetsH2.rate.toFixed(0)} (server CPU ${rates.widgetsH2.cpuMs.toFixed(3)} ms each)`);
    console.log(`ConfigMap creates/s (HTTP/1.1), same server, in turns with them: ${rates.configMaps.rate.toFixed(0)} (server CPU ${rates.configMaps.cpuMs.toFixed(3)} ms each) → ratio ${(rates.widgets.rate / rates.configMaps.rate).toFixed(2)} (HTTP/1.1), ${(rates.widgetsH2.rate / rates.configMaps.rate).toFixed(2)} (HTTP/2)`);
    const est = await establishTimes(s);
    console.log(`CRD create → served (${est.length} CRDs of ~200 properties): median ${percentile(est, 50).toFixed(1)} ms, worst ${est[est.length - 1].toFixed(1)} ms`);
    await stopHearth(s);
    if (cpuProfDir) console.log(`server CPU profile written to ${cpuProfDir}`);

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
