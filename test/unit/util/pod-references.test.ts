// The objects a pod refers to by name, in kube's VisitPodSecretNames / VisitPodConfigmapNames
// order: what the legacy token cleaner, the Node authorizer's graph and admission rely on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { visitPodConfigMapNames, visitPodSecretNames } from '../../../server/util/pod-references.ts';

test("the Secrets a pod uses, as kube's VisitPodSecretNames finds them ", () => {
  const names: string[] = [];
  visitPodSecretNames(
    {
      spec: {
        imagePullSecrets: [{ name: 'pull' }],
        initContainers: [{ envFrom: [{ secretRef: { name: 'init-env-from' } }] }],
        containers: [{ env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'env', key: 'k' } } }, { name: 'Y', value: 'plain' }] }],
        ephemeralContainers: [{ envFrom: [{ configMapRef: { name: 'not-a-secret' } }] }],
        volumes: [
          { name: 'a', secret: { secretName: 'volume' } },
          { name: 'b', projected: { sources: [{ secret: { name: 'projected' } }, { configMap: { name: 'cm' } }] } },
          { name: 'c', csi: { driver: 'd', nodePublishSecretRef: { name: 'csi' } } },
          { name: 'd', rbd: { secretRef: { name: 'rbd' } } },
          { name: 'e', azureFile: { secretName: 'azure', shareName: 's' } },
          { name: 'f', emptyDir: {} },
        ],
      },
    },
    (n) => names.push(n),
  );
  assert.deepEqual(names, ['pull', 'init-env-from', 'env', 'volume', 'projected', 'csi', 'rbd', 'azure']);
});

test("the ConfigMaps a pod uses; a visitor returning false stops the walk", () => {
  const pod = {
    spec: {
      initContainers: [{ envFrom: [{ configMapRef: { name: 'init-env-from' } }] }],
      containers: [{ env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'env', key: 'k' } } }, { name: 'Y', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }],
      ephemeralContainers: [{ envFrom: [{ configMapRef: { name: '' } }] }],
      volumes: [
        { name: 'a', configMap: { name: 'volume' } },
        { name: 'b', projected: { sources: [{ secret: { name: 'projected-secret' } }, { configMap: { name: 'projected' } }] } },
        { name: 'c', secret: { secretName: 'not-a-configmap' } },
      ],
    },
  };
  const names: string[] = [];
  assert.equal(visitPodConfigMapNames(pod, (n) => names.push(n)), true);
  assert.deepEqual(names, ['init-env-from', 'env', 'volume', 'projected']);
  const first: string[] = [];
  assert.equal(visitPodConfigMapNames(pod, (n) => (first.push(n), false)), false);
  assert.deepEqual(first, ['init-env-from']);
  // Not a pod at all: nothing is referenced.
  assert.equal(visitPodSecretNames('nonsense', () => assert.fail('visited')), true);
});
