// Objects an older hearth wrote stay usable: rows are rewritten in the shape an earlier version
// stored them (CBOR, before a default existed; a CRD kept as a plain object by a version that did
// not serve CRDs), straight into the SQLite file of a stopped server, which is then started again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import YAML from 'yaml';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer } from '../../helpers/server.ts';
import { decodeObject, encodeObjectCbor } from '../../../server/storage/rows/codec.ts';
import { checksum } from '../../../server/storage/rows/checksum.ts';

/** Rewrites a stopped server's current row of a key (and the event that wrote it) with what `change` makes of the object, as CBOR. */
async function rewriteRow(dataDir: string, res: string, ns: string, name: string, change: (obj: any) => void): Promise<void> {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(join(dataDir, 'hearth.db'));
  try {
    const row = db.prepare('SELECT rv, data FROM objects WHERE res = ? AND ns = ? AND name = ?').get(res, ns, name) as { rv: number; data: Buffer };
    const obj = decodeObject(row.data);
    change(obj);
    const data = Buffer.from(encodeObjectCbor(obj));
    // (with its checksum, as migration 004 gave the rows an older hearth stored)
    const crc = checksum(data);
    db.prepare('UPDATE objects SET data = ?, crc = ? WHERE res = ? AND ns = ? AND name = ?').run(data, crc, res, ns, name);
    db.prepare('UPDATE events SET data = ?, crc = ? WHERE rv = ?').run(data, crc, row.rv);
  } finally {
    db.close();
  }
}

/** The kubernetes.io CronTab CRD (crontabs.stable.example.com, served as `ct`). */
const CRONTABS = YAML.parse(readFileSync(new URL('../../fixtures/kinds/customresourcedefinition.yaml', import.meta.url), 'utf8'));

test('a pod stored before a default existed can be labelled and annotated; a CRD stored without a status is served at start', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-older-'));
  try {
    let s = await startTestServer({ dataDir });
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'old' }, spec: { containers: [{ name: 'c', image: 'nginx:1.25', resources: { limits: { cpu: '1' } } }, { name: 'd', image: 'busybox' }] } };
    assert.equal((await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod })).status, 201);
    assert.equal((await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRONTABS })).status, 201);
    await s.stop();

    // As hearth wrote them before `resources: {}` was defaulted (and with a quantity not yet
    // canonical), and before CRDs were served: no conditions, no accepted names, no stored versions.
    await rewriteRow(dataDir, 'pods', 'default', 'old', (p) => {
      delete p.spec.containers[1].resources;
      p.spec.containers[0].resources = { limits: { cpu: '1000m' }, requests: { cpu: '1000m' } };
    });
    await rewriteRow(dataDir, 'customresourcedefinitions.apiextensions.k8s.io', '', 'crontabs.stable.example.com', (crd) => {
      delete crd.status;
      delete crd.metadata.managedFields;
    });

    s = await startTestServer({ dataDir });
    try {
      const label = await s.kubectl(['label', 'pod', 'old', 'tier=web']);
      assert.equal(label.code, 0, label.stderr);
      const annotate = await s.kubectl(['annotate', 'pod', 'old', 'note=kept']);
      assert.equal(annotate.code, 0, annotate.stderr);
      const got = (await s.request('GET', '/api/v1/namespaces/default/pods/old')).json();
      assert.deepEqual(got.metadata.labels, { tier: 'web' });
      assert.deepEqual(got.metadata.annotations, { note: 'kept' });
      assert.deepEqual(got.spec.containers.map((c: any) => c.resources), [{ limits: { cpu: '1' }, requests: { cpu: '1' } }, {}]);
      // The label's manager took the label only: the defaults were there already, as kube reads them.
      const labeller = got.metadata.managedFields.find((e: any) => e.manager === 'kubectl-label');
      assert.deepEqual(labeller.fieldsV1, { 'f:metadata': { 'f:labels': { '.': {}, 'f:tier': {} } } });
      // A spec change is still refused, in kube's words.
      const changed = await s.request('PATCH', '/api/v1/namespaces/default/pods/old', { raw: JSON.stringify({ spec: { containers: [{ name: 'd', workingDir: '/x' }] } }), headers: { 'content-type': 'application/strategic-merge-patch+json' } });
      assert.equal(changed.status, 422, changed.text);
      assert.match(changed.json().message, /pod updates may not change fields other than/);

      // The CRD is established and served, as kube's naming and establishing controllers leave it.
      const crd = (await s.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com')).json();
      assert.deepEqual(crd.status.conditions.map((c: any) => [c.type, c.status, c.reason]), [
        ['NamesAccepted', 'True', 'NoConflicts'],
        ['Established', 'True', 'InitialNamesAccepted'],
      ]);
      assert.equal(crd.status.acceptedNames.kind, 'CronTab');
      assert.deepEqual(crd.status.storedVersions, ['v1']);
      const cr = await s.request('POST', '/apis/stable.example.com/v1/namespaces/default/crontabs', { body: { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'c' }, spec: { cronSpec: '* * * * */5' } } });
      assert.equal(cr.status, 201, cr.text);
      assert.match((await s.kubectl(['get', 'ct'])).stdout, /^c\s/m);
    } finally {
      await s.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
