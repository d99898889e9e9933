// Run by test/e2e/http/hostile-bodies.test.ts in a process of its own, with --expose-gc: a hearth in this
// process takes each hostile body a few times, and after each the heap is collected and the
// process's RSS read. Prints {baseline, cases: [{name, statuses, rss}]} (RSS in MB) as JSON.
import { startTestServer } from './server.ts';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const rssMb = () => {
  gc();
  gc();
  return Math.round(process.memoryUsage().rss / 1e6);
};

const s = await startTestServer();
const CM = '/api/v1/namespaces/default/configmaps';
const unknownFields: Record<string, number> = {};
for (let i = 0; i < 100_000; i++) unknownFields[`u${i}`] = i;
await s.request('POST', '/apis/apps/v1/namespaces/default/controllerrevisions', {
  body: { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'bomb' }, revision: 1, data: { d: 'x'.repeat(3000) } },
});
// Ten copies of /data into itself would make it 3 MB; unbounded, 25 make 100 GB.
const copyBomb = Array.from({ length: 25 }, (_, i) => ({ op: 'copy', from: '/data', path: `/data/c${i}` }));

const cases: { name: string; method: string; path: string; body: Buffer; contentType: string }[] = [
  { name: 'YAML flow sequence 1,000,000 deep', method: 'POST', path: CM, body: Buffer.from(`a: ${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`), contentType: 'application/yaml' },
  { name: 'JSON 1,400,000 deep', method: 'POST', path: CM, body: Buffer.from(`{"a":${'['.repeat(1_400_000)}${']'.repeat(1_400_000)}}`), contentType: 'application/json' },
  { name: 'YAML flow sequence of 1,400,000 scalars', method: 'POST', path: CM, body: Buffer.from(`apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: w\nextra: [${'1,'.repeat(1_400_000)}1]\n`), contentType: 'application/yaml' },
  { name: '100,000 unknown fields', method: 'POST', path: `${CM}?dryRun=All`, body: Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'u' }, ...unknownFields })), contentType: 'application/json' },
  { name: 'CBOR 100,000 deep', method: 'POST', path: CM, body: Buffer.concat([Buffer.from([0xd9, 0xd9, 0xf7]), Buffer.alloc(100_000, 0x81), Buffer.from([0x01])]), contentType: 'application/cbor' },
  { name: 'JSON patch copying the object into itself', method: 'PATCH', path: '/apis/apps/v1/namespaces/default/controllerrevisions/bomb', body: Buffer.from(JSON.stringify(copyBomb)), contentType: 'application/json-patch+json' },
];

// Warm up the paths the cases take, so what they compile is in the baseline.
await s.request('POST', `${CM}?dryRun=All`, { raw: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "w"\n', headers: { 'content-type': 'application/yaml' } });
await s.request('POST', `${CM}?dryRun=All`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w' }, extra: 1 } });
const baseline = rssMb();
const results: { name: string; statuses: number[]; rss: number[] }[] = [];
for (const c of cases) {
  const r = { name: c.name, statuses: [] as number[], rss: [] as number[] };
  for (let i = 0; i < 3; i++) {
    const res = await s.request(c.method, c.path, { raw: c.body, headers: { 'content-type': c.contentType } });
    r.statuses.push(res.status);
    r.rss.push(rssMb());
  }
  results.push(r);
}
await s.stop();
process.stdout.write(JSON.stringify({ baseline, cases: results }) + '\n');
