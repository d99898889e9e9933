// node --import tsx bench/bench-apply-engine.ts [--quick] [--only=abcd]
// Microbenchmark of the Server-Side Apply engine (server/registry/apply) on a ~60-field Deployment:
//   (a) update() for a create (no live object)
//   (b) update() for a PUT that changes one image
//   (c) apply() alternating 3 managers with force on the same evolving object
//   (d) a no-op update() (the object written back unchanged)
// and on the ~200-field bench Widget custom resource (test/fixtures/crds/generate.ts):
//   (e) update() for a create
//   (f) update() for a PUT that changes one field
//   (g) a create and then a PUT of the created object (one field changed, another manager): the
//       PUT reads the FieldsV1 the create wrote (a create's sets are not kept for its object)
// and as the server sees them under a load of 16 clients (bench-kit's deploymentConfig PUTs and
// applies, benchWidget creates): objects defaulted as the store defaults them, every live object and
// body parsed anew from JSON text (the store decodes each row; a request body is parsed), 16 objects
// written in turn, each Widget a new one:
//   (h) update() for a PUT of a Deployment: image and an annotation changed
//   (i) apply() of a Deployment, 3 managers alternating per object, force
//   (j) update() for a create of the bench Widget, parsed and defaulted
// (a)-(g) write objects that are not defaulted (a defaulted Deployment has ~40% more fields) and
// reuse the same few objects, so their FieldsV1, list element names and key lists are always in
// the engine's caches (and in the CPU's): (h) costs about twice (b), (j) about twice (e). Their
// µs are what the server spends in the engine (its CPU profiles, allowing for the profiler's own
// cost); (a)-(g) show the engine's floor.
// Prints µs per call (median of several timed rounds, after warm-up), of process CPU time: on a
// shared machine the time this process is not running does not count (wall time would).
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
import { TypeModel } from '../server/schema/model.ts';
import { deploymentConfig } from './bench-kit.ts';
import { goFieldShape } from '../server/schema/go-structs.ts';
import { apply, update, zeroObject, type ApplyOptions, type UpdateOptions } from '../server/registry/apply/index.ts';
import { customResourceInfos } from '../server/registry/crd/runtime.ts';
import { benchWidget, benchWidgetsCRD } from '../test/fixtures/crds/generate.ts';
import { defaultsFor } from '../server/registry/kinds/index.ts';

const quick = process.argv.includes('--quick');
/** --only=bc runs just those cases (for profiling). */
const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7) ?? 'abcdefghij';
const ROUNDS = quick ? 3 : 7;
const ROUND_MS = quick ? 200 : 500;

const node = TypeModel.loadBuiltins().node('io.k8s.api.apps.v1.Deployment');
const emptyObject = zeroObject(node, goFieldShape);
const NOW = '2024-05-01T10:00:00Z';

function base(manager: string): UpdateOptions {
  return { manager, apiVersion: 'apps/v1', now: NOW, statusSubresource: true, emptyObject };
}

function stored(obj: any, manager: string): any {
  const o = structuredClone(obj);
  Object.assign(o.metadata, { uid: '0b7c6a3e-1111-2222-3333-444455556666', resourceVersion: '42', generation: 1, creationTimestamp: NOW });
  o.metadata.managedFields = update(node, undefined, o, base(manager));
  return o;
}

/**
 * Median µs per call of fn over ROUNDS rounds of about ROUND_MS each, after a warm-up. With
 * `prepare`, each call's argument is made outside the timed region (one clock read per call).
 */
function time<T>(label: string, fn: (arg: T, i: number) => void, prepare?: (i: number) => T): number {
  if (!only.includes(label[1])) return NaN;
  let i = 0;
  const warmEnd = cpuMs() + (quick ? 300 : 1000);
  while (cpuMs() < warmEnd) {
    fn(prepare?.(i) as T, i);
    i++;
  }
  const perCall: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    let n = 0;
    let spent = 0;
    const end = cpuMs() + ROUND_MS;
    if (prepare) {
      for (let now = cpuMs(); now < end; ) {
        const arg = prepare(i);
        const t0 = cpuMs();
        fn(arg, i++);
        now = cpuMs();
        spent += now - t0;
        n++;
      }
    } else {
      const start = cpuMs();
      let now = start;
      while (now < end) {
        for (let k = 0; k < 20; k++) fn(undefined as T, i++);
        n += 20;
        now = cpuMs();
      }
      spent = now - start;
    }
    perCall.push((spent * 1000) / n);
  }
  perCall.sort((a, b) => a - b);
  const median = perCall[Math.floor(perCall.length / 2)];
  console.log(`${label.padEnd(46)} ${median.toFixed(1).padStart(7)} µs/call (${(1e6 / median).toFixed(0).padStart(5)}/s)`);
  return median;
}

// (a) create
const created = stored(deploymentConfig('web', 0) as any, 'kubectl-create');
const createBody = structuredClone(created);
delete createBody.metadata.managedFields;
time('(a) update() create', (_, i) => {
  // A new uid per create, as the store assigns: no create finds recent sets of its object.
  createBody.metadata.uid = `0b7c6a3e-1111-2222-3333-${i}`;
  update(node, undefined, createBody, base('kubectl-create'));
});

// (b) PUT changing one image (alternating between two images, so every call is a change)
const putBodies = [1, 2].map((i) => {
  const b = structuredClone(createBody);
  b.spec.template.spec.containers[0].image = `registry.example.com/web:${i}`;
  return b;
});
time('(b) update() PUT, one image changed', (_, i) => {
  update(node, created, putBodies[i & 1], base('kubectl-edit'));
});

// (c) apply, 3 managers alternating with force, each result the next live object
const managers = ['team-a', 'team-b', 'team-c'];
const applyConfigs = Array.from({ length: 21 }, (_, i) => deploymentConfig('web', i) as any);
// The live object as the store keeps it: with the metadata the server sets, which nobody owns.
let live: any = apply(node, undefined, applyConfigs[0], { ...base(managers[0]), force: true }).object;
Object.assign(live.metadata, { uid: '0b7c6a3e-1111-2222-3333-444455556666', resourceVersion: '42', generation: 1, creationTimestamp: NOW });
// The store hands apply() a private copy of the stored object (structuredClone), made outside the timing.
time(
  '(c) apply(), 3 managers alternating, force',
  (cur: any, i) => {
    const opts: ApplyOptions = { ...base(managers[i % 3]), force: true };
    live = apply(node, cur, applyConfigs[i % applyConfigs.length], opts).object;
  },
  () => structuredClone(live),
);

// (d) no-op update: the stored object written back as it is
const same = structuredClone(created);
time('(d) update() no-op (same object)', () => {
  update(node, created, same, base('kubectl-edit'));
});

// (e) create of the bench Widget, with the options the store gives custom resources: the zero
// object is {} (no Go struct), the kind has a status subresource. The body is defaulted and has
// its server-set metadata (uid, creationTimestamp) as when the store records the create.
const widgetInfo = customResourceInfos(benchWidgetsCRD())[0];
const widgetNode = widgetInfo.custom!.typeNode();
const widgetOpts = (manager: string): UpdateOptions => ({ manager, apiVersion: 'bench.hearth.test/v1', now: NOW, statusSubresource: true, emptyObject: {} });
const widgetBodies = Array.from({ length: 64 }, (_, i) => {
  const w = benchWidget(i) as any;
  widgetInfo.custom!.compiled().applyDefaults(w);
  Object.assign(w.metadata, { uid: `0b7c6a3e-1111-2222-3333-${String(i).padStart(12, '0')}`, generation: 1, creationTimestamp: NOW });
  return w;
});
time('(e) update() Widget CR create', (_, i) => {
  const w = widgetBodies[i & 63];
  // A new uid per create, as the store assigns: no create finds recent sets of its object.
  w.metadata.uid = `0b7c6a3e-1111-2222-3333-${i}`;
  update(widgetNode, undefined, w, widgetOpts('kubectl-create'));
});

// (f) PUT of a stored Widget changing one field (alternating, so every call is a change)
const storedWidget = structuredClone(widgetBodies[0]);
storedWidget.metadata.resourceVersion = '42';
storedWidget.metadata.managedFields = update(widgetNode, undefined, storedWidget, widgetOpts('kubectl-create'));
const widgetPuts = [1, 2].map((i) => {
  const b = structuredClone(storedWidget);
  b.spec.replicas = 3 + i;
  return b;
});
time('(f) update() Widget CR PUT, one field changed', (_, i) => {
  update(widgetNode, storedWidget, widgetPuts[i & 1], widgetOpts('kubectl-edit'));
});

// (g) create, then PUT of what was created (from the stored object, with its managedFields)
time('(g) Widget CR create + PUT of it', (_, i) => {
  const w = widgetBodies[i & 63];
  w.metadata.uid = `0b7c6a3e-1111-2222-3333-g${i}`;
  const managedFields = update(widgetNode, undefined, w, widgetOpts('kubectl-create'));
  const live = { ...w, metadata: { ...w.metadata, managedFields } };
  update(widgetNode, live, { ...live, spec: { ...live.spec, replicas: 7 } }, widgetOpts('kubectl-edit'));
});

// ---------------------------------------------------------------------------------------------
// As the server sees them: defaulted, parsed from JSON text per call, 16 objects in turn.

const OBJECTS = 16;
const defaultDeployment = defaultsFor('io.k8s.api.apps.v1.Deployment')!;
const parsed = (v: unknown): any => JSON.parse(JSON.stringify(v));
/** What the store keeps of each object: its JSON text (the row), written after each timed call. */
function storedRows(make: (w: number) => any, applier?: string): string[] {
  return Array.from({ length: OBJECTS }, (_, w) => {
    // Created by a POST (update()), or by an apply to an object that does not exist yet.
    const o = applier ? apply(node, undefined, parsed(make(w)), { ...base(applier), force: true }).object : parsed(make(w));
    defaultDeployment(o);
    Object.assign(o.metadata, { uid: `0b7c6a3e-1111-2222-3333-${String(w).padStart(12, '0')}`, resourceVersion: String(100 + w), generation: 1, creationTimestamp: NOW });
    if (!applier) o.metadata.managedFields = update(node, undefined, o, base('bench'));
    return JSON.stringify(o);
  });
}

// (h) PUT: the body parsed and defaulted, with what prepareUpdate carries over from the live object.
{
  const rows = storedRows((w) => deploymentConfig(`d${w}`, 0));
  let pending: { w: number; obj: any } | undefined;
  time(
    '(h) server-like PUT (16 objects, parsed)',
    (a: { w: number; live: any; body: any }) => {
      a.body.metadata.managedFields = update(node, a.live, a.body, base('bench'));
      pending = { w: a.w, obj: a.body };
    },
    (i) => {
      if (pending) rows[pending.w] = JSON.stringify(pending.obj);
      const w = i % OBJECTS;
      const live = JSON.parse(rows[w]);
      const body = parsed(deploymentConfig(`d${w}`, (i >> 4) + 1));
      defaultDeployment(body);
      const m = body.metadata;
      Object.assign(m, { uid: live.metadata.uid, creationTimestamp: live.metadata.creationTimestamp, resourceVersion: live.metadata.resourceVersion, generation: live.metadata.generation });
      if (live.status !== undefined) body.status = live.status;
      return { w, live, body };
    },
  );
}

// (i) apply: per object, managers alternate; the live object is the store's private copy of the row.
{
  const rows = storedRows((w) => deploymentConfig(`a${w}`, 0), managers[0]);
  let pending: { w: number; obj: any } | undefined;
  time(
    '(i) server-like apply (16 objects, 3 managers)',
    (a: { w: number; live: any; config: any; manager: string }) => {
      pending = { w: a.w, obj: apply(node, a.live, a.config, { ...base(a.manager), force: true }).object };
    },
    (i) => {
      if (pending) {
        defaultDeployment(pending.obj); // the store defaults what apply returns
        rows[pending.w] = JSON.stringify(pending.obj);
      }
      const w = i % OBJECTS;
      const j = (i >> 4) + 1;
      return { w, live: JSON.parse(rows[w]), config: parsed(deploymentConfig(`a${w}`, j)), manager: managers[j % 3] };
    },
  );
}

// (j) Widget create: a new Widget per call (names, tags... differ), parsed and defaulted, as a POST's.
{
  time(
    '(j) server-like Widget CR create (parsed)',
    (w: any) => {
      update(widgetNode, undefined, w, widgetOpts('bench'));
    },
    (i) => {
      const b = benchWidget(i) as any;
      b.metadata.namespace = 'put';
      const w = JSON.parse(JSON.stringify(b));
      widgetInfo.custom!.compiled().pruneAndDefault(w);
      Object.assign(w.metadata, { uid: `0b7c6a3e-1111-2222-3333-j${i}`, generation: 1, creationTimestamp: NOW });
      return w;
    },
  );
}
