// The legacy-token tracking ConfigMap keeps its `since` only while it parses as
// Go's "2006-01-02" date; anything else is set again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isGoDate } from '../../../server/controllers/legacy-token-tracking.ts';
import { visitPodSecretNames } from '../../../server/controllers/legacy-token-cleaner.ts';

test("the tracking ConfigMap's date: Go's 2006-01-02 layout, real days only", () => {
  assert.ok(isGoDate('2024-02-29'));
  assert.ok(isGoDate('2026-12-31'));
  for (const bad of ['2023-02-29', '2024-13-01', '2024-04-31', '2024-1-01', '2024-01-01T00:00:00Z', 'yesterday', '', undefined]) assert.equal(isGoDate(bad), false, String(bad));
});

test("the Secrets a pod uses, as kube's VisitPodSecretNames finds them (what keeps a legacy token from the cleaner)", () => {
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
