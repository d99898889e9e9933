// The bootstrap signer's pieces: its detached JWS against kube's own test vectors
// (k8s.io/cluster-bootstrap/token/jws/jws_test.go) and the cluster-info kubeconfig kubeadm writes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterInfoKubeconfig, computeDetachedSignature } from '../../../server/controllers/bootstrap-signer.ts';

test("the detached JWS is kube's, byte for byte (its jws_test.go vectors)", async () => {
  const content = 'Hello from the other side. I must have called a thousand times.';
  assert.equal(await computeDetachedSignature(content, 'joshua', 'my voice is my passcode'), 'eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8');
  assert.equal(await computeDetachedSignature('', 'joshua', 'my voice is my passcode'), 'eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..7Ui1ALizW4jXphVUB7xUqC9vLYLL9RZeOFfVLoB7Tgk');
  assert.equal(await computeDetachedSignature(content, 'joshua', ''), 'eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..UfkqvDGiIFxrMnFseDj9LYJOLNrvjW8aHhF71mvvAs8');
});

test("cluster-info's kubeconfig is clientcmd.Write's text for one cluster named \"\"", () => {
  assert.equal(
    clusterInfoKubeconfig('https://10.0.0.1:6443', 'PEM\n'),
    'apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: UEVNCg==\n    server: https://10.0.0.1:6443\n  name: ""\ncontexts: null\ncurrent-context: ""\nkind: Config\npreferences: {}\nusers: null\n',
  );
});
