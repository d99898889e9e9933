// A realistic manifest of every built-in kind (test/fixtures/kinds/, from the kubernetes.io
// documentation where it has one) applied the way users apply them: `kubectl apply` twice, then
// `kubectl apply --server-side` twice (the upgrade from client-side apply), with `kubectl diff`
// of each. A second apply changes nothing, the server-side one does not conflict with the
// client-side one, and no served object carries a field encoding/json leaves out (an
// `apiGroup: ""` on a ServiceAccount subject made every apply of an RBAC binding "configured").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { useTestServer } from '../../helpers/server.ts';
import { TypeModel } from '../../../server/schema/model.ts';
import { goOmitsZero } from '../../../server/schema/go-structs.ts';
import type { TypeNode } from '../../../server/schema/types.ts';

const DIR = fileURLToPath(new URL('../../fixtures/kinds/', import.meta.url));
const FILES = readdirSync(DIR).filter((f) => f.endsWith('.yaml'));

/**
 * What kubectl reports "configured" on every apply, against kube-apiserver too: the patch it sends
 * changes nothing, so the object keeps its resourceVersion.
 */
const CONFIGURED_EVERY_TIME: Record<string, string> = {
  // kubectl's three-way merge puts a field whose patch strategy is replace in every patch.
  'poddisruptionbudget.policy/zk-pdb': 'spec.selector has x-kubernetes-patch-strategy: replace',
  // The documentation's `globalDefault: false` is omitempty: never served, so kubectl adds it back each time.
  'priorityclass.scheduling.k8s.io/high-priority': 'globalDefault: false is left out of the served object',
  // The kube-api-access volume and mount ServiceAccount admission added are not in the file:
  // kubectl's patch orders the lists ($setElementOrder) each time, as against kube-apiserver.
  'pod/task-pv-pod': 'the live pod has the kube-api-access volume and mount the file lacks',
};

/**
 * What every server-side apply writes again, in kube-apiserver too: the configuration sets a
 * field the object never keeps, so the merge always changes something and the applier's
 * managedFields entry gets a new time.
 */
const REWRITTEN_BY_SERVER_SIDE_APPLY = new Set(['PriorityClass/high-priority']);

const s = useTestServer();

const kubectl = async (...args: string[]) => {
  const r = await s.kubectl(args);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
  return r.stdout;
};

/** "kind.group/name" → the word kubectl printed after it. */
function outcomes(stdout: string): Map<string, string> {
  return new Map(stdout.trim().split('\n').map((line) => {
    const at = line.lastIndexOf(' ');
    return [line.slice(0, at), line.slice(at + 1)];
  }));
}

/** Every fixture object's resourceVersion, by "kind/name" (as `kubectl get -f` lists them). */
async function resourceVersions(): Promise<Map<string, string>> {
  const list = JSON.parse(await kubectl('get', '-f', DIR, '-o', 'json'));
  return new Map(list.items.map((o: any) => [`${o.kind}/${o.metadata.name}`, o.metadata.resourceVersion]));
}

/** Paths of fields that hold a zero value encoding/json would have left out. */
function omittedZeros(node: TypeNode, v: unknown, path: string, out: string[]): string[] {
  if (v === null || typeof v !== 'object') return out;
  if (Array.isArray(v)) {
    if (node.type === 'array' && node.items) v.forEach((x, i) => omittedZeros(node.items!, x, `${path}[${i}]`, out));
  } else if (node.type === 'map' && node.values) {
    for (const [k, x] of Object.entries(v)) omittedZeros(node.values, x, `${path}[${k}]`, out);
  } else if (node.type === 'object' && node.properties) {
    for (const [k, x] of Object.entries(v)) {
      const child = node.properties[k];
      if (!child) continue;
      if (node.definition && (x === '' || x === 0 || x === false) && goOmitsZero(node.definition, k)) out.push(`${path}.${k}: ${JSON.stringify(x)}`);
      omittedZeros(child, x, `${path}.${k}`, out);
    }
  }
  return out;
}

test('every built-in kind has a fixture', () => {
  const resources = JSON.parse(readFileSync(new URL('../../../schemas/resources.json', import.meta.url), 'utf8')).resources as { kind: string; group: string }[];
  const kinds = new Set(FILES.flatMap((f) => YAML.parseAllDocuments(readFileSync(DIR + f, 'utf8')).map((d) => `${d.get('kind')}.${String(d.get('apiVersion')).split('/').slice(0, -1).join('')}`)));
  const missing = resources.map((r) => `${r.kind}.${r.group}`).filter((k) => !kinds.has(k));
  assert.deepEqual([...new Set(missing)], []);
});

test('kubectl apply, then again: unchanged; apply --server-side after it: no conflict, and again: nothing written; diff: none', async () => {
  const created = outcomes(await kubectl('apply', '-f', DIR));
  assert.equal(created.size, FILES.length);
  for (const [object, word] of created) assert.equal(word, 'created', object);
  const before = await resourceVersions();

  const again = outcomes(await kubectl('apply', '-f', DIR));
  for (const [object, word] of again) assert.equal(word, CONFIGURED_EVERY_TIME[object] ? 'configured' : 'unchanged', `${object}: ${CONFIGURED_EVERY_TIME[object] ?? ''}`);
  assert.deepEqual(await resourceVersions(), before, 'the second client-side apply wrote nothing');
  await kubectl('diff', '-f', DIR);

  // The upgrade to server-side apply takes over what the client-side apply set: no conflict.
  const serverSide = outcomes(await kubectl('apply', '--server-side', '-f', DIR));
  assert.equal(serverSide.size, FILES.length);
  for (const [object, word] of serverSide) assert.equal(word, 'serverside-applied', object);
  const afterServerSide = await resourceVersions();
  await kubectl('apply', '--server-side', '-f', DIR);
  const afterAgain = await resourceVersions();
  for (const object of REWRITTEN_BY_SERVER_SIDE_APPLY) {
    afterServerSide.delete(object);
    afterAgain.delete(object);
  }
  assert.deepEqual(afterAgain, afterServerSide, 'the second server-side apply wrote nothing');
  await kubectl('diff', '--server-side', '-f', DIR);

  // Every object as served: no field that encoding/json would have left out.
  const model = TypeModel.loadBuiltins();
  const list = JSON.parse(await kubectl('get', '-f', DIR, '-o', 'json'));
  const resources = JSON.parse(readFileSync(new URL('../../../schemas/resources.json', import.meta.url), 'utf8')).resources as { kind: string; group: string; version: string; definition: string }[];
  for (const o of list.items) {
    const r = resources.find((x) => x.kind === o.kind && (x.group ? `${x.group}/${x.version}` : x.version) === o.apiVersion)!;
    assert.deepEqual(omittedZeros(model.node(r.definition), o, '', []), [], `${o.kind}/${o.metadata.name}`);
  }
  const binding = list.items.find((o: any) => o.kind === 'RoleBinding');
  assert.deepEqual(binding.subjects, [
    { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'jane' },
    { kind: 'ServiceAccount', name: 'build-robot' },
  ]);
});

test('zero values a client sends for omitempty fields are left out, as kube-apiserver writes its Go types back', async () => {
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'explicit-zeros' },
    subjects: [{ kind: 'ServiceAccount', name: 'default', apiGroup: '', namespace: 'default' }],
    roleRef: { kind: 'Role', name: 'r', apiGroup: 'rbac.authorization.k8s.io' },
  };
  const created = await s.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', { body: binding });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(created.json().subjects, [{ kind: 'ServiceAccount', name: 'default', namespace: 'default' }]);
  // (limits and requests: the fixtures' ResourceQuota in this namespace asks for them)
  const resources = { limits: { cpu: '10m', memory: '16Mi' }, requests: { cpu: '10m', memory: '16Mi' } };
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'zeros' }, spec: { hostNetwork: false, containers: [{ name: 'c', image: 'nginx', workingDir: '', stdin: false, resources }] } };
  const p = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod });
  assert.equal(p.status, 201, p.text);
  assert.equal('hostNetwork' in p.json().spec, false);
  assert.equal('workingDir' in p.json().spec.containers[0], false);
  assert.equal('stdin' in p.json().spec.containers[0], false);
  // A pointer keeps its explicit zero; so does a merge patch's result, decoded the same way.
  const patched = await s.request('PATCH', '/api/v1/namespaces/default/pods/zeros', {
    raw: JSON.stringify({ spec: { activeDeadlineSeconds: 5 }, metadata: { labels: { a: '' } } }),
    headers: { 'content-type': 'application/merge-patch+json' },
  });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.json().spec.activeDeadlineSeconds, 5);
  assert.deepEqual(patched.json().metadata.labels, { a: '' });
  const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'zero-replicas' }, spec: { replicas: 0, paused: false, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } };
  const d = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment });
  assert.equal(d.status, 201, d.text);
  assert.equal(d.json().spec.replicas, 0);
  assert.equal('paused' in d.json().spec, false);
});
