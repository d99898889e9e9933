// The insides of pod volumes and volume mounts, in kube-apiserver 1.36's words and order: one
// source per volume (kube's order, its misspelt paths), then each source's fields: hostPath,
// emptyDir, secret and configMap items and modes, persistentVolumeClaim, downwardAPI files (at
// kube's item-less paths), projected sources and their path collisions, nfs, csi, generic
// ephemeral volumes' claim templates, image, iscsi, rbd, cephfs, fc, gitRepo and the other
// in-tree sources; volume mounts' subPath, subPathExpr, propagation and recursiveReadOnly. Pod
// templates are checked at their paths; nothing refused is written; a pod using many sources is
// created. The rules that need a Pod's name or an alpha/beta gate are checked on
// pod-volume-validation.ts's functions directly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invalidCauses, useTestServer } from '../../helpers/server.ts';
import { container, deployment, pod } from '../../helpers/builders.ts';
import { DNS1123_LABEL, DNS1123_SUBDOMAIN, QUALIFIED_NAME_PART } from '../../helpers/kube-messages.ts';

const s = useTestServer();

const PODS = '/api/v1/namespaces/default/pods';
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
const causes = (name: string, spec: Record<string, unknown>) => invalidCauses(s, 'POST', PODS, pod(name, spec));
/** The causes of a pod with these volumes: each cause's field relative to spec.volumes. */
const volumeCauses = async (name: string, volumes: unknown[]) => (await causes(name, { volumes })).map(([f, m]) => [f.replace(/^spec\.volumes/, ''), m]);
const absent = async (path: string) => assert.equal((await s.request('GET', path)).status, 404, `${path} was stored`);

const FILE_MODE = (v: number) => `Invalid value: ${v}: must be a number between 0 and 0777 (octal), both inclusive`;
const BYTE_DIVISORS = '1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei';
const MORE_THAN_ONE = 'Forbidden: may not specify more than 1 volume type';

test('one source per volume, in kube order (emptyDir first; cephfs and downwardAPI misspelt as extras); only valid volumes mount', async () => {
  const c = container('c', { volumeMounts: [{ name: 'a', mountPath: '/a' }, { name: 'ok', mountPath: '/ok' }] });
  const r = await invalidCauses(s, 'POST', PODS, pod('one1', {
    containers: [c],
    volumes: [
      { name: 'a', hostPath: { path: '/x' }, emptyDir: {} },
      { name: 'b', secret: { secretName: 's' }, cephfs: { monitors: ['m'] } },
      { name: 'c', nfs: { server: 's', path: '/p' }, downwardAPI: {} },
      { name: 'ok', configMap: { name: 'cm' } },
    ],
  }));
  assert.deepEqual(r, [
    ['spec.volumes[0].hostPath', MORE_THAN_ONE],
    ['spec.volumes[1].cephFS', MORE_THAN_ONE],
    ['spec.volumes[2].downwarAPI', MORE_THAN_ONE],
    ['spec.containers[0].volumeMounts[0].name', 'Not found: "a"'],
  ]);
  await absent(`${PODS}/one1`);
});

test('hostPath: a path without "..", a known type (not checked without a path); emptyDir: a sizeLimit not negative, any medium', async () => {
  assert.deepEqual(
    await volumeCauses('hp1', [
      { name: 'h1', hostPath: { path: '/a/../b', type: 'Dir' } },
      { name: 'h2', hostPath: { path: '', type: 'Nope' } },
      { name: 'h3', hostPath: { path: '..' } },
      { name: 'e1', emptyDir: { sizeLimit: '-1Gi', medium: 'Nonsense' } },
      { name: 'e2', emptyDir: { sizeLimit: '0', medium: 'Memory' } },
    ]),
    [
      ['[0].hostPath.path', 'Invalid value: "/a/../b": must not contain \'..\''],
      ['[0].hostPath.type', 'Unsupported value: "Dir": supported values: "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"'],
      ['[1].hostPath.path', 'Required value'],
      ['[2].hostPath.path', 'Invalid value: "..": must not contain \'..\''],
      ['[3].emptyDir.sizeLimit', 'Forbidden: SizeLimit field must be a valid resource quantity'],
    ],
  );
  await absent(`${PODS}/hp1`);
});

test('secret and configMap: named, modes 0 to 0777, items with a key and a local path; persistentVolumeClaim: a claim name', async () => {
  assert.deepEqual(
    await volumeCauses('sc1', [
      { name: 's', secret: { defaultMode: 512, items: [{ key: '', path: '/abs', mode: -1 }, { key: 'k', path: '..data' }, { key: 'k', path: 'a/../b' }, { key: 'k', path: '..' }] } },
      { name: 'cm', configMap: { name: '', defaultMode: 0o777, items: [{ key: 'k', path: '', mode: 0o1000 }] } },
      { name: 'pvc', persistentVolumeClaim: { claimName: '' } },
    ]),
    [
      ['[0].secret.secretName', 'Required value'],
      ['[0].secret.defaultMode', FILE_MODE(512)],
      ['[0].secret.items[0].key', 'Required value'],
      ['[0].secret.items[0].path', 'Invalid value: "/abs": must be a relative path'],
      ['[0].secret.items[0].mode', FILE_MODE(-1)],
      ['[0].secret.items[1].path', 'Invalid value: "..data": must not start with \'..\''],
      ['[0].secret.items[2].path', 'Invalid value: "a/../b": must not contain \'..\''],
      // (kube reports ".." twice)
      ['[0].secret.items[3].path', 'Invalid value: "..": must not contain \'..\''],
      ['[0].secret.items[3].path', 'Invalid value: "..": must not start with \'..\''],
      ['[1].configMap.name', 'Required value'],
      ['[1].configMap.items[0].path', 'Required value'],
      ['[1].configMap.items[0].mode', FILE_MODE(512)],
      ['[2].persistentVolumeClaim.claimName', 'Required value'],
    ],
  );
  await absent(`${PODS}/sc1`);
});

test('downwardAPI files (reported without their index): a local path, one of fieldRef (pod metadata) and resourceFieldRef (a named container, a known divisor)', async () => {
  const D = '[0].downwardAPI';
  assert.deepEqual(
    await volumeCauses('dw1', [
      {
        name: 'd',
        downwardAPI: {
          defaultMode: -1,
          items: [
            { path: 'node', fieldRef: { fieldPath: 'spec.nodeName' } },
            { path: '/abs', fieldRef: { fieldPath: 'metadata.labels' }, resourceFieldRef: { containerName: 'c', resource: 'limits.cpu' } },
            { path: 'cpu', resourceFieldRef: { resource: 'limits.cpu' } },
            { path: 'mem', resourceFieldRef: { containerName: 'c', resource: 'limits.memory', divisor: '3Mi' } },
            { path: 'cpu2', resourceFieldRef: { containerName: 'c', resource: 'requests.cpu', divisor: '1000m' } },
            { path: 'eph', resourceFieldRef: { containerName: 'c', resource: 'requests.ephemeral-storage', divisor: '2' } },
            { path: 'hp', resourceFieldRef: { containerName: 'c', resource: 'limits.hugepages-2Mi', divisor: '1m' } },
            { path: 'x', mode: 1000 },
            { path: 'lbl', fieldRef: { fieldPath: "metadata.labels['bad key']" } },
          ],
        },
      },
    ]),
    [
      [`${D}.defaultMode`, FILE_MODE(-1)],
      [`${D}.fieldRef.fieldPath`, 'Unsupported value: "spec.nodeName": supported values: "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"'],
      [`${D}.path`, 'Invalid value: "/abs": must be a relative path'],
      [D, 'Invalid value: "resource": fieldRef and resourceFieldRef can not be specified simultaneously'],
      [`${D}.resourceFieldRef.containerName`, 'Required value'],
      [`${D}.resourceFieldRef.divisor`, `Invalid value: "limits.memory": only divisor's values ${BYTE_DIVISORS} are supported with the memory resource`],
      [`${D}.resourceFieldRef.divisor`, `Invalid value: "requests.ephemeral-storage": only divisor's values ${BYTE_DIVISORS} are supported with the local ephemeral storage resource`],
      [`${D}.resourceFieldRef.divisor`, `Invalid value: "limits.hugepages-2Mi": only divisor's values ${BYTE_DIVISORS} are supported with the hugepages resource`],
      [D, 'Required value: one of fieldRef and resourceFieldRef is required'],
      [`${D}.mode`, FILE_MODE(1000)],
      [`${D}.fieldRef`, `Invalid value: "bad key": ${QUALIFIED_NAME_PART}`],
    ],
  );
  await absent(`${PODS}/dw1`);
});

test('env variables share the downward API selectors: a resourceFieldRef divisor is checked', async () => {
  const c = container('c', { env: [{ name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '2' } } }, { name: 'OK', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } }] });
  assert.deepEqual(await causes('env1', { containers: [c] }), [
    ['spec.containers[0].env[0].valueFrom.resourceFieldRef.divisor', 'Invalid value: "limits.cpu": only divisor\'s values 1m and 1 are supported with the cpu resource'],
  ]);
});

test('projected: a default mode, one kind per source, each checked, paths unique across the volume, token lifetimes and paths', async () => {
  const P = '[0].projected';
  assert.deepEqual(
    await volumeCauses('pr1', [
      {
        name: 'p',
        projected: {
          defaultMode: 1024,
          sources: [
            { secret: { items: [{ key: 'a', path: 'x' }] } },
            { configMap: { name: 'cm', items: [{ key: 'b', path: 'x' }] } },
            { downwardAPI: { items: [{ path: 'x', fieldRef: { fieldPath: 'metadata.name' } }] } },
            { serviceAccountToken: { path: '../token', expirationSeconds: 60 } },
            { serviceAccountToken: { path: 't', expirationSeconds: 5000000000 } },
            { secret: { name: 's' }, configMap: { name: 'c' } },
            { serviceAccountToken: { path: '' } },
            { downwardAPI: { items: [{ path: '/y', fieldRef: { fieldPath: 'metadata.uid' } }] } },
          ],
        },
      },
    ]),
    [
      [`${P}.defaultMode`, FILE_MODE(1024)],
      [`${P}.sources[0].secret.name`, 'Required value'],
      [P, 'Invalid value: "cm": conflicting duplicate paths'],
      [P, 'Invalid value: "x": conflicting duplicate paths'],
      [`${P}.sources[3].serviceAccountToken.expirationSeconds`, 'Invalid value: 60: may not specify a duration less than 10 minutes'],
      // (kube names the projected volume's path, not the token's)
      [`${P}.path`, 'Invalid value: "../token": must not contain \'..\''],
      [`${P}.sources[4].serviceAccountToken.expirationSeconds`, 'Invalid value: 5000000000: may not specify a duration larger than 2^32 seconds'],
      [`${P}.sources[5]`, 'Forbidden: may not specify more than 1 volume type per source'],
      [`${P}.path`, 'Required value'],
      [`${P}.sources[7].downwardAPI.path`, 'Invalid value: "/y": must be a relative path'],
    ],
  );
  await absent(`${PODS}/pr1`);
});

test('projected clusterTrustBundle and podCertificate sources are ignored: their gates are off in 1.36', async () => {
  const r = await s.request('POST', PODS, {
    body: pod('gated1', {
      volumes: [
        {
          name: 'p',
          projected: {
            sources: [
              { clusterTrustBundle: { name: 'a', signerName: 'b', path: '/x' } },
              { podCertificate: { signerName: 'nodomain', keyType: 'DSA' } },
              { secret: { name: 's' }, clusterTrustBundle: { signerName: 'example.com/x', path: 'a' } },
            ],
          },
        },
      ],
    }),
  });
  assert.equal(r.status, 201, r.text);
});

test('nfs, csi, image, gitRepo: required names, an absolute nfs path, a driver name, a pull policy, a local directory', async () => {
  assert.deepEqual(
    await volumeCauses('nc1', [
      { name: 'n1', nfs: { server: '', path: 'rel' } },
      { name: 'n2', nfs: { server: 's', path: '' } },
      { name: 'c1', csi: { driver: 'Bad_Driver!', nodePublishSecretRef: { name: 'Bad_Name' } } },
      { name: 'c2', csi: { driver: 'a'.repeat(64), nodePublishSecretRef: {} } },
      { name: 'c3', csi: { driver: '' } },
      { name: 'i1', image: { reference: '', pullPolicy: 'Sometimes' } },
      { name: 'g1', gitRepo: { repository: '', directory: '/abs/../x' } },
    ]),
    [
      ['[0].nfs.server', 'Required value'],
      ['[0].nfs.path', 'Invalid value: "rel": must be an absolute path'],
      ['[1].nfs.path', 'Required value'],
      ['[1].nfs.path', 'Invalid value: "": must be an absolute path'],
      ['[2].csi.driver', `Invalid value: "Bad_Driver!": ${DNS1123_SUBDOMAIN}`],
      // (kube names the secret's name csi.name)
      ['[2].csi.name', `Invalid value: "Bad_Name": ${DNS1123_SUBDOMAIN}`],
      ['[3].csi.driver', 'Too long: may not be more than 63 bytes'],
      ['[3].csi.nodePublishSecretRef.name', 'Required value'],
      ['[4].csi.driver', 'Required value'],
      ['[5].image.reference', 'Required value'],
      ['[5].image.pullPolicy', 'Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"'],
      ['[6].gitRepo.repository', 'Required value'],
      ['[6].gitRepo.directory', 'Invalid value: "/abs/../x": must be a relative path'],
      ['[6].gitRepo.directory', 'Invalid value: "/abs/../x": must not contain \'..\''],
    ],
  );
  await absent(`${PODS}/nc1`);
});

test('ephemeral: a claim template whose metadata has only labels and annotations and whose spec is a valid claim spec', async () => {
  const T = '[1].ephemeral.volumeClaimTemplate';
  const r = await volumeCauses('ep1', [
    { name: 'e1', ephemeral: {} },
    {
      name: 'e2',
      ephemeral: {
        volumeClaimTemplate: {
          metadata: { name: 'x', uid: 'u', labels: { 'bad key': 'v' }, annotations: { 'Bad Key': 'v' }, finalizers: [] },
          spec: {
            accessModes: ['ReadWriteOncePod', 'ReadWriteOnce', 'Sometimes'],
            selector: { matchExpressions: [{ key: 'k', operator: 'Near' }] },
            resources: { requests: { storage: '0' } },
            storageClassName: 'Bad_Class',
            volumeMode: 'Raw',
            dataSource: { kind: 'Snapshot', name: 'snap' },
            dataSourceRef: { kind: 'Snapshot', name: 'other', apiGroup: 'Bad_Group' },
            volumeAttributesClassName: 'Bad_Class',
          },
        },
      },
    },
    {
      name: 'e3',
      ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: {}, dataSource: { kind: 'PersistentVolumeClaim', name: 'a' }, dataSourceRef: { kind: 'PersistentVolumeClaim', name: 'b', namespace: 'Other_NS' } } } },
    },
  ]);
  // The *field.Path kube passes as the value, shown as %#v shows the struct (its parents as pointees).
  const specDataSource = (i: string) =>
    ['spec', 'volumes', `[${i}]`, 'ephemeral', 'volumeClaimTemplate', 'spec', 'dataSource']
      .reduce((parent, seg) => {
        const [name, index] = seg.startsWith('[') ? ['', seg.slice(1, -1)] : [seg, ''];
        return `(*field.Path)(field.Path{name:"${name}", index:"${index}", parent:${parent}})`;
      }, '(*field.Path)(nil)')
      .replace(/^\(\*field\.Path\)\((.*)\)$/, '$1');
  assert.deepEqual(r, [
    ['[0].ephemeral.volumeClaimTemplate', 'Required value'],
    [`${T}.metadata.annotations`, `Invalid value: "Bad Key": ${QUALIFIED_NAME_PART}`],
    [`${T}.metadata.labels`, `Invalid value: "bad key": ${QUALIFIED_NAME_PART}`],
    [`${T}.metadata.name`, 'Forbidden: cannot be set'],
    [`${T}.metadata.uID`, 'Forbidden: cannot be set'],
    [`${T}.metadata.finalizers`, 'Forbidden: cannot be set'],
    [`${T}.spec.selector.matchExpressions[0].operator`, 'Invalid value: "Near": not a valid selector operator'],
    [`${T}.spec.accessModes`, 'Unsupported value: "Sometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'],
    [`${T}.spec.accessModes`, 'Forbidden: may not use ReadWriteOncePod with other access modes'],
    [`${T}.spec.resources[storage]`, 'Invalid value: "0": must be greater than zero'],
    [`${T}.spec.storageClassName`, `Invalid value: "Bad_Class": ${DNS1123_SUBDOMAIN}`],
    [`${T}.spec.volumeMode`, 'Unsupported value: "Raw": supported values: "Block", "Filesystem"'],
    [`${T}.spec.dataSource`, 'Invalid value: "Snapshot": must be \'PersistentVolumeClaim\' when referencing the default apiGroup'],
    [`${T}.spec.dataSourceRef.apiGroup`, `Invalid value: "Bad_Group": ${DNS1123_SUBDOMAIN}`],
    [`${T}.spec`, `Invalid value: ${specDataSource('1')}: must match dataSourceRef`],
    [`${T}.spec.volumeAttributesClassName`, `Invalid value: "Bad_Class": ${DNS1123_SUBDOMAIN}`],
    ['[2].ephemeral.volumeClaimTemplate.spec.resources[storage]', 'Required value'],
    ['[2].ephemeral.volumeClaimTemplate.spec.dataSourceRef.namespace', `Invalid value: "Other_NS": ${DNS1123_LABEL}`],
    ['[2].ephemeral.volumeClaimTemplate.spec', `Invalid value: ${specDataSource('2')}: may not be specified when dataSourceRef.namespace is specified`],
  ]);
  await absent(`${PODS}/ep1`);
});

test('iscsi: portal, iqn/eui/naa names, lun, CHAP secret; the name:portal length is checked even of an iscsi that is a second source', async () => {
  const long = 'v'.repeat(60);
  const ok = { targetPortal: '10.0.0.1:3260', iqn: 'iqn.2001-04.com.example:storage', lun: 0 };
  assert.deepEqual(
    await volumeCauses('is1', [
      { name: 'i1', iscsi: { targetPortal: '', iqn: 'bad', lun: 300, chapAuthSession: true, initiatorName: 'iqn.bad' } },
      { name: 'i2', iscsi: { ...ok, iqn: 'eui.0123456789ABCDEF', initiatorName: 'naa.0123' } },
      { name: 'i3', iscsi: { ...ok, iqn: 'naa.0123456789abcdef0123456789ABCDEF', initiatorName: 'other' } },
      { name: long, iscsi: { ...ok, initiatorName: 'iqn.2001-04.com.example:node' } },
      { name: long.replace(/v$/, 'w'), emptyDir: {}, iscsi: { ...ok, initiatorName: 'iqn.2001-04.com.example:node' } },
    ]),
    [
      ['[0].iscsi.targetPortal', 'Required value'],
      ['[0].iscsi.iqn', 'Invalid value: "bad": must be valid format starting with iqn, eui, or naa'],
      ['[0].iscsi.lun', 'Invalid value: 300: must be between 0 and 255, inclusive'],
      ['[0].iscsi.secretRef', 'Required value'],
      ['[0].iscsi.initiatorname', 'Invalid value: "iqn.bad": must be valid format'],
      ['[1].iscsi.initiatorname', 'Invalid value: "naa.0123": must be valid format'],
      ['[2].iscsi.initiatorname', 'Invalid value: "other": must be valid format starting with iqn, eui, or naa'],
      ['[3].name', `Invalid value: "${long}": Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.`],
      ['[4].iscsi', MORE_THAN_ONE],
      ['[4].name', `Invalid value: "${long.replace(/v$/, 'w')}": Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.`],
    ],
  );
  await absent(`${PODS}/is1`);
});

test('rbd, cephfs, fc: monitors and an image, target WWNs or WWIDs (not both) with a lun', async () => {
  assert.deepEqual(
    await volumeCauses('rf1', [
      { name: 'r', rbd: { monitors: [], image: '' } },
      { name: 'c', cephfs: { monitors: [] } },
      { name: 'f1', fc: {} },
      { name: 'f2', fc: { targetWWNs: ['a', 'b'], wwids: ['c'] } },
      { name: 'f3', fc: { targetWWNs: ['a'], lun: 256 } },
      { name: 'f4', fc: { wwids: ['c'] } },
    ]),
    [
      ['[0].rbd.monitors', 'Required value'],
      ['[0].rbd.image', 'Required value'],
      ['[1].cephfs.monitors', 'Required value'],
      ['[2].fc.targetWWNs', 'Required value: must specify either targetWWNs or wwids, but not both'],
      ['[3].fc.targetWWNs', 'Invalid value: []string{"a", "b"}: targetWWNs and wwids can not be specified simultaneously'],
      ['[3].fc.lun', 'Required value: lun is required if targetWWNs is specified'],
      ['[4].fc.lun', 'Invalid value: 256: must be between 0 and 255, inclusive'],
    ],
  );
  await absent(`${PODS}/rf1`);
});

test('the other in-tree sources: required fields, partitions, reserved flex options, azure disk URIs, storageos names, quobyte registries', async () => {
  assert.deepEqual(
    await volumeCauses('lg1', [
      { name: 'gce', gcePersistentDisk: { pdName: '', partition: 256 } },
      { name: 'aws', awsElasticBlockStore: { volumeID: '', partition: -1 } },
      { name: 'gl', glusterfs: { endpoints: '', path: '' } },
      { name: 'fl1', flocker: {} },
      { name: 'fl2', flocker: { datasetName: 'a/b', datasetUUID: 'u' } },
      { name: 'ci', cinder: { volumeID: '', secretRef: {} } },
      { name: 'q1', quobyte: { registry: 'host,a:b:1,[::1]:2,h:1', volume: '' } },
      { name: 'q2', quobyte: { registry: 'h:1,[::1]:2', tenant: 't'.repeat(65), volume: 'v' } },
      { name: 'fx', flexVolume: { driver: '', options: { 'kubernetes.io/x': '1', 'example.com/y': '2', 'Foo.K8s.io': '3' } } },
      { name: 'af', azureFile: { secretName: '', shareName: '' } },
      { name: 'vs', vsphereVolume: { volumePath: '' } },
      { name: 'ph', photonPersistentDisk: { pdID: '' } },
      { name: 'px', portworxVolume: { volumeID: '' } },
      { name: 'ad1', azureDisk: { diskName: '', diskURI: 'http://x', cachingMode: 'Sometimes', kind: 'Managed' } },
      { name: 'ad2', azureDisk: { diskName: 'd', diskURI: 'http://x' } },
      { name: 'so', storageos: { volumeName: 'Bad_Name', volumeNamespace: 'a.b', secretRef: {} } },
      { name: 'sio', scaleIO: { gateway: '', system: '', secretRef: { name: 's' } } },
    ]),
    [
      // (kube checks a gcePersistentDisk at "persistentDisk")
      ['[0].persistentDisk.pdName', 'Required value'],
      ['[0].persistentDisk.partition', 'Invalid value: 256: must be between 1 and 255, inclusive'],
      ['[1].awsElasticBlockStore.volumeID', 'Required value'],
      ['[1].awsElasticBlockStore.partition', 'Invalid value: -1: must be between 1 and 255, inclusive'],
      ['[2].glusterfs.endpoints', 'Required value'],
      ['[2].glusterfs.path', 'Required value'],
      ['[3].flocker', 'Required value: one of datasetName and datasetUUID is required'],
      ['[4].flocker', 'Invalid value: "resource": datasetName and datasetUUID can not be specified simultaneously'],
      ['[4].flocker.datasetName', 'Invalid value: "a/b": must not contain \'/\''],
      ['[5].cinder.volumeID', 'Required value'],
      ['[5].cinder.secretRef.name', 'Required value'],
      // (one error for each bad pair: "host" has no port, "a:b:1" too many colons)
      ['[6].quobyte.registry', 'Invalid value: "host,a:b:1,[::1]:2,h:1": must be a host:port pair or multiple pairs separated by commas'],
      ['[6].quobyte.registry', 'Invalid value: "host,a:b:1,[::1]:2,h:1": must be a host:port pair or multiple pairs separated by commas'],
      ['[6].quobyte.volume', 'Required value'],
      ['[7].quobyte.tenant', 'Required value: must be a UUID and may not exceed a length of 64 characters'],
      ['[8].flexVolume.driver', 'Required value'],
      ['[8].flexVolume.options[Foo.K8s.io]', 'Invalid value: "Foo.K8s.io": kubernetes.io and k8s.io namespaces are reserved'],
      ['[8].flexVolume.options[kubernetes.io/x]', 'Invalid value: "kubernetes.io/x": kubernetes.io and k8s.io namespaces are reserved'],
      ['[9].azureFile.secretName', 'Required value'],
      ['[9].azureFile.shareName', 'Required value'],
      ['[10].vsphereVolume.volumePath', 'Required value'],
      ['[11].photonPersistentDisk.pdID', 'Required value'],
      ['[12].portworxVolume.volumeID', 'Required value'],
      ['[13].azureDisk.diskName', 'Required value'],
      ['[13].azureDisk.cachingMode', 'Unsupported value: "Sometimes": supported values: "None", "ReadOnly", "ReadWrite"'],
      ['[13].azureDisk.diskURI', 'Unsupported value: "http://x": supported values: "/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"'],
      // (kind is defaulted to Shared: a blob URI)
      ['[14].azureDisk.diskURI', 'Unsupported value: "http://x": supported values: "https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"'],
      ['[15].storageos.volumeName', `Invalid value: "Bad_Name": ${DNS1123_LABEL}`],
      ['[15].storageos.volumeNamespace', 'Invalid value: "a.b": must not contain dots'],
      ['[15].storageos.secretRef.name', 'Required value'],
      ['[16].scaleIO.gateway', 'Required value'],
      ['[16].scaleIO.system', 'Required value'],
      ['[16].scaleIO.volumeName', 'Required value'],
    ],
  );
  await absent(`${PODS}/lg1`);
});

test('volume mounts: local subPath and subPathExpr (not both), known propagation (Bidirectional when privileged), recursiveReadOnly, no clash with volume devices', async () => {
  const M = 'spec.containers[0].volumeMounts';
  const c = container('c', {
    volumeMounts: [
      { name: 'v', mountPath: '/a', subPath: '/abs' },
      { name: 'v', mountPath: '/b', subPath: 'x', subPathExpr: '../$(POD)' },
      { name: 'v', mountPath: '/c', mountPropagation: 'Sideways' },
      { name: 'v', mountPath: '/d', mountPropagation: 'Bidirectional' },
      { name: 'v', mountPath: '/e', recursiveReadOnly: 'Enabled', mountPropagation: 'HostToContainer' },
      { name: 'v', mountPath: '/f', recursiveReadOnly: 'Always' },
      { name: 'v', mountPath: '/g', readOnly: true, recursiveReadOnly: 'IfPossible', mountPropagation: 'None' },
      { name: 'dev', mountPath: '/dev/xvda' },
    ],
    volumeDevices: [{ name: 'dev', devicePath: '/dev/xvda' }],
  });
  const privileged = container('p', { securityContext: { privileged: true }, volumeMounts: [{ name: 'v', mountPath: '/d', mountPropagation: 'Bidirectional' }] });
  const init = container('i', { volumeMounts: [{ name: 'v', mountPath: '/x', subPath: 'a/../b' }] });
  assert.deepEqual(
    await causes('vm1', { containers: [c, privileged], initContainers: [init], volumes: [{ name: 'v', emptyDir: {} }, { name: 'dev', persistentVolumeClaim: { claimName: 'c' } }] }),
    [
      // (kube reports these at the list's path, without the mount's index)
      [`${M}.subPath`, 'Invalid value: "/abs": must be a relative path'],
      [`${M}[1].subPathExpr`, 'Invalid value: "../$(POD)": subPathExpr and subPath are mutually exclusive'],
      [`${M}.subPathExpr`, 'Invalid value: "../$(POD)": must not contain \'..\''],
      [`${M}.mountPropagation`, 'Unsupported value: "Sideways": supported values: "Bidirectional", "HostToContainer", "None"'],
      [`${M}.mountPropagation`, 'Forbidden: Bidirectional mount propagation is available only to privileged containers'],
      [`${M}.recursiveReadOnly`, 'Forbidden: may only be specified when readOnly is true'],
      [`${M}.recursiveReadOnly`, 'Forbidden: may only be specified when mountPropagation is None or not specified'],
      [`${M}.recursiveReadOnly`, 'Unsupported value: "Always": supported values: "Disabled", "Enabled", "IfPossible"'],
      [`${M}[7].name`, 'Invalid value: "dev": must not already exist in volumeDevices'],
      [`${M}[7].mountPath`, 'Invalid value: "/dev/xvda": must not already exist as a path in volumeDevices'],
      ['spec.initContainers[0].volumeMounts.subPath', 'Invalid value: "a/../b": must not contain \'..\''],
    ],
  );
  await absent(`${PODS}/vm1`);
});

test('a Deployment template is checked at spec.template.spec and not stored', async () => {
  const d = deployment('vd1', {
    containers: [container('c', { volumeMounts: [{ name: 'v', mountPath: '/v', subPathExpr: '/abs' }] })],
    volumes: [
      { name: 'v', emptyDir: {} },
      { name: 'h', hostPath: { path: '/a/../b' } },
      { name: 'd', downwardAPI: { items: [{ path: 'p', resourceFieldRef: { resource: 'limits.cpu' } }] } },
      { name: 'e', ephemeral: { volumeClaimTemplate: { spec: { accessModes: [], resources: { requests: { storage: '1Gi' } } } } } },
    ],
  });
  assert.deepEqual(await invalidCauses(s, 'POST', DEPLOYMENTS, d), [
    ['spec.template.spec.volumes[1].hostPath.path', 'Invalid value: "/a/../b": must not contain \'..\''],
    ['spec.template.spec.volumes[2].downwardAPI.resourceFieldRef.containerName', 'Required value'],
    ['spec.template.spec.volumes[3].ephemeral.volumeClaimTemplate.spec.accessModes', 'Required value: at least 1 access mode is required'],
    ['spec.template.spec.containers[0].volumeMounts.subPathExpr', 'Invalid value: "/abs": must be a relative path'],
  ]);
  await absent(`${DEPLOYMENTS}/vd1`);
});

test('a pod using many sources well is created', async () => {
  const mounts = ['cfg', 'sec', 'host', 'scratch', 'info', 'all', 'claim', 'nfs', 'csi', 'eph', 'img', 'iscsi', 'rbd', 'ceph', 'fc', 'git'].map((name) => ({ name, mountPath: `/mnt/${name}` }));
  mounts.push({ name: 'scratch', mountPath: '/sub', subPath: 'a/b', readOnly: true, recursiveReadOnly: 'IfPossible', mountPropagation: 'None' } as any);
  mounts.push({ name: 'scratch', mountPath: '/expr', subPathExpr: '$(POD_NAME)', mountPropagation: 'HostToContainer' } as any);
  const c = container('c', { volumeMounts: mounts, env: [{ name: 'MEM', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } }] });
  const body = pod('ok1', {
    // (no kube-api-access volume from ServiceAccount admission: the sixteen are the test's)
    automountServiceAccountToken: false,
    containers: [c],
    serviceAccountName: 'default',
    volumes: [
      { name: 'cfg', configMap: { name: 'cm', defaultMode: 0o644, items: [{ key: 'a', path: 'dir/a', mode: 0o400 }] } },
      { name: 'sec', secret: { secretName: 's', optional: true } },
      { name: 'host', hostPath: { path: '/var/log', type: 'DirectoryOrCreate' } },
      { name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
      {
        name: 'info',
        downwardAPI: {
          items: [
            { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
            { path: 'app', fieldRef: { fieldPath: "metadata.annotations['example.com/App']" } },
            { path: 'cpu', resourceFieldRef: { containerName: 'c', resource: 'limits.cpu', divisor: '1m' } },
          ],
        },
      },
      {
        name: 'all',
        projected: {
          sources: [
            { secret: { name: 's', items: [{ key: 'k', path: 's.txt' }] } },
            { configMap: { name: 'cm', items: [{ key: 'k', path: 'c.txt' }] } },
            { downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } },
            { serviceAccountToken: { path: 'token', expirationSeconds: 600, audience: 'vault' } },
          ],
        },
      },
      { name: 'claim', persistentVolumeClaim: { claimName: 'data', readOnly: true } },
      { name: 'nfs', nfs: { server: 'nfs.example.com', path: '/exports' } },
      { name: 'csi', csi: { driver: 'secrets-store.csi.k8s.io', readOnly: true, volumeAttributes: { a: 'b' }, nodePublishSecretRef: { name: 'creds' } } },
      {
        name: 'eph',
        ephemeral: {
          volumeClaimTemplate: {
            metadata: { labels: { app: 'x' }, annotations: { 'example.com/a': 'b' } },
            spec: { accessModes: ['ReadWriteOncePod'], storageClassName: 'fast', resources: { requests: { storage: '1Gi' } }, dataSourceRef: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap' } },
          },
        },
      },
      { name: 'img', image: { reference: 'quay.io/org/data:1.0' } },
      { name: 'iscsi', iscsi: { targetPortal: '10.0.0.1:3260', iqn: 'iqn.2001-04.com.example:storage', lun: 1, initiatorName: 'iqn.2001-04.com.example:node' } },
      { name: 'rbd', rbd: { monitors: ['10.0.0.1:6789'], image: 'disk' } },
      { name: 'ceph', cephfs: { monitors: ['10.0.0.1:6789'] } },
      { name: 'fc', fc: { targetWWNs: ['500a0982591b8b5a'], lun: 0 } },
      { name: 'git', gitRepo: { repository: 'https://example.com/r.git', directory: 'src' } },
    ],
  });
  const r = await s.request('POST', PODS, { body });
  assert.equal(r.status, 201, r.text);
  const stored = r.json().spec;
  assert.equal(stored.volumes.length, 16);
  assert.equal(stored.volumes[12].rbd.pool, 'rbd');
  assert.equal(stored.volumes[10].image.pullPolicy, 'IfNotPresent');
});

test('with a Pod name: an ephemeral volume claim named too long, a claim naming one an ephemeral volume creates (still mountable)', async () => {
  const template = { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
  const spec = {
    containers: [{ name: 'c', image: 'nginx', volumeMounts: [{ name: 'data', mountPath: '/d' }, { name: 'ref', mountPath: '/r' }] }],
    volumes: [
      { name: 'data', ephemeral: { volumeClaimTemplate: template } },
      { name: 'ref', persistentVolumeClaim: { claimName: 'web-data' } },
    ],
  };
  const named = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec });
  assert.deepEqual(await invalidCauses(s, 'POST', PODS, named('web')), [
    ['spec.volumes[1].persistentVolumeClaim.claimName', 'Invalid value: "web-data": must not reference a PVC that gets created for an ephemeral volume'],
  ]);
  const long = 'p'.repeat(250);
  assert.deepEqual(await invalidCauses(s, 'POST', PODS, named(long)), [
    ['spec.volumes[0].name', `Invalid value: "data": PVC name "${long}-data": must be no more than 253 bytes`],
    // (that error is the volume's own: it cannot be mounted)
    ['spec.containers[0].volumeMounts[0].name', 'Not found: "data"'],
  ]);
  for (const name of ['web', long]) assert.equal((await s.request('GET', `${PODS}/${name}`)).status, 404);
  // A template has no pod name: neither rule applies.
  const deployment = { metadata: { name: 'web' }, spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec } } };
  const d = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment });
  assert.equal(d.status, 201, d.text);
});
