// server/webhook/kubeconfig.ts: a webhook's kubeconfig read as client-go's clientcmd reads it —
// the current context's cluster and user, relative paths against the kubeconfig's folder, data
// over files, and client-go's message for each file it refuses.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { loadWebhookKubeconfig } from '../../../server/webhook/kubeconfig.ts';
import { ensurePki, type ServerPki } from '../../../server/pki/certificates.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-webhook-kubeconfig-'));
let pki: ServerPki;
const b64 = (s: string) => Buffer.from(s).toString('base64');

before(async () => {
  pki = await ensurePki(join(dir, 'pki-source'));
  mkdirSync(join(dir, 'certs'));
  writeFileSync(join(dir, 'certs', 'ca.crt'), pki.caCertPem);
  writeFileSync(join(dir, 'certs', 'client.crt'), pki.adminCertPem);
  writeFileSync(join(dir, 'certs', 'client.key'), pki.adminKeyPem);
  writeFileSync(join(dir, 'certs', 'token'), '  file-token\n');
});
after(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** Writes a kubeconfig (an object is YAML-encoded) and returns its path. */
function write(content: unknown): string {
  const file = join(dir, `k${n++}.yaml`);
  writeFileSync(file, typeof content === 'string' ? content : YAML.stringify(content));
  return file;
}

function kubeconfig(cluster: Record<string, unknown>, user: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): string {
  return write({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'webhook', cluster }],
    users: [{ name: 'apiserver', user }],
    contexts: [{ name: 'ctx', context: { cluster: 'webhook', user: 'apiserver' } }],
    'current-context': 'ctx',
    ...extra,
  });
}

function refused(file: string, message: string | RegExp): void {
  assert.throws(
    () => loadWebhookKubeconfig(file),
    (e: Error) => {
      if (typeof message === 'string') assert.equal(e.message, message);
      else assert.match(e.message, message);
      return true;
    },
  );
}

test('the current context names the cluster and user; relative paths resolve against the kubeconfig\'s folder', () => {
  const file = kubeconfig(
    { server: 'https://127.0.0.1:8443/authn/', 'certificate-authority': 'certs/ca.crt', 'tls-server-name': 'idp.internal' },
    { 'client-certificate': 'certs/client.crt', 'client-key': 'certs/client.key', tokenFile: 'certs/token' },
  );
  const c = loadWebhookKubeconfig(file);
  assert.equal(c.server.href, 'https://127.0.0.1:8443/authn/');
  assert.equal(c.caPem, pki.caCertPem);
  assert.equal(c.clientCertPem, pki.adminCertPem);
  assert.equal(c.clientKeyPem, pki.adminKeyPem);
  assert.equal(c.tokenFile, join(dir, 'certs', 'token'));
  assert.equal(c.tlsServerName, 'idp.internal');
  assert.equal(c.insecureSkipTlsVerify, false);
});

test('*-data fields are base64 and stand in for files; a server without a scheme gets one as client-go gives it', () => {
  const c = loadWebhookKubeconfig(kubeconfig({ server: '127.0.0.1:9443', 'certificate-authority-data': b64(pki.caCertPem) }, { token: 'secret' }));
  assert.equal(c.server.href, 'https://127.0.0.1:9443/', 'https: a CA is configured');
  assert.equal(c.caPem, pki.caCertPem);
  assert.equal(c.token, 'secret');
  const plain = loadWebhookKubeconfig(kubeconfig({ server: 'localhost:9080' }));
  assert.equal(plain.server.href, 'http://localhost:9080/', 'http: nothing says TLS');
  const insecure = loadWebhookKubeconfig(kubeconfig({ server: 'https://127.0.0.1:1', 'insecure-skip-tls-verify': true }, { username: 'u', password: 'p' }));
  assert.equal(insecure.insecureSkipTlsVerify, true);
  assert.equal(insecure.caPem, undefined);
  assert.deepEqual([insecure.username, insecure.password], ['u', 'p']);
});

test('a missing or unreadable file, bad YAML and wrong types fail with client-go\'s messages', () => {
  const missing = join(dir, 'nope.yaml');
  refused(missing, `stat ${missing}: no such file or directory`);
  const badYaml = write('clusters: [\n  - name: a\n    : b\n');
  refused(badYaml, new RegExp(`^error loading config file "${badYaml}": error converting YAML to JSON: yaml: `));
  const wrongType = write({ clusters: [{ name: 'a', cluster: { server: 8443 } }] });
  refused(wrongType, `error loading config file "${wrongType}": json: cannot unmarshal number into Go struct field Cluster.clusters.cluster.server of type string`);
  const notList = write({ users: 'alice' });
  refused(notList, `error loading config file "${notList}": json: cannot unmarshal string into Go struct field Config.users of type []v1.NamedAuthInfo`);
  const badBase64 = kubeconfig({ server: 'https://x', 'certificate-authority-data': 'not*base64' });
  refused(badBase64, `error loading config file "${badBase64}": illegal base64 data at input byte 3`);
  const duplicate = write({ clusters: [{ name: 'a', cluster: { server: 'https://x' } }, { name: 'a', cluster: { server: 'https://y' } }] });
  refused(duplicate, /duplicate name "a" in list/);
});

test('an unusable context, cluster or user is "invalid configuration" as DirectClientConfig.ConfirmUsable says it', () => {
  refused(write(''), 'invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable');
  refused(kubeconfig({ server: 'https://x' }, {}, { 'current-context': 'other' }), 'invalid configuration: [context was not found for specified context: other, cluster has no server defined]');
  refused(kubeconfig({ 'certificate-authority-data': b64(pki.caCertPem) }), 'invalid configuration: no server found for cluster "webhook"');
  const caFile = join(dir, 'certs', 'ca.crt');
  refused(kubeconfig({ server: 'https://x', 'certificate-authority': caFile, 'certificate-authority-data': b64(pki.caCertPem) }), 'invalid configuration: certificate-authority-data and certificate-authority are both specified for webhook. certificate-authority-data will override.');
  const gone = join(dir, 'certs', 'gone.crt');
  refused(kubeconfig({ server: 'https://x', 'certificate-authority': gone }), `invalid configuration: unable to read certificate-authority ${gone} for webhook due to open ${gone}: no such file or directory`);
  refused(kubeconfig({ server: 'https://x' }, { 'client-certificate-data': b64(pki.adminCertPem) }), 'invalid configuration: client-key-data or client-key must be specified for apiserver to use the clientCert authentication method.');
  refused(kubeconfig({ server: 'https://x' }, { token: 't', password: 'p' }), 'invalid configuration: more than one authentication method found for apiserver; found [token basicAuth], only one is allowed');
});

test('TLS material client-go refuses: insecure with a CA, data that is no certificate, a key that does not match', () => {
  refused(kubeconfig({ server: 'https://x', 'insecure-skip-tls-verify': true, 'certificate-authority-data': b64(pki.caCertPem) }), 'specifying a root certificates file with the insecure flag is not allowed');
  refused(kubeconfig({ server: 'https://x', 'certificate-authority-data': b64('hello') }), 'unable to load root certificates: unable to parse bytes as PEM block');
  refused(kubeconfig({ server: 'https://x' }, { 'client-certificate-data': b64(pki.adminCertPem), 'client-key-data': b64(pki.servingKeyPem) }), 'tls: private key does not match public key');
  refused(kubeconfig({ server: 'https://x' }, { 'client-certificate-data': b64('junk'), 'client-key-data': b64(pki.adminKeyPem) }), 'tls: failed to find any PEM data in certificate input');
});

test('what hearth\'s client does not do is refused, never ignored', () => {
  refused(kubeconfig({ server: 'https://x' }, { exec: { command: 'get-token', apiVersion: 'client.authentication.k8s.io/v1' } }), /does not support exec credential plugins/);
  refused(kubeconfig({ server: 'https://x', 'proxy-url': 'http://proxy:3128' }), /does not support proxy-url/);
  refused(kubeconfig({ server: 'ftp://x' }), 'unsupported protocol scheme "ftp"');
});
