// --service-cluster-ip-range and --service-node-port-range, as kube-apiserver has them: the
// default/kubernetes Service takes the primary range's first address; Services get addresses and
// node ports from the ranges given (IPv4, IPv6, or both for dual-stack), with kube's allocator
// errors (out of range, taken, range full) and nothing stored on a refusal; bad flag values stop
// the server at start (exit 2) before it touches the data directory; a store written under other
// ranges keeps its values, reported as kube's repair controllers report them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { logMessage } from '../../helpers/log-lines.ts';

const SERVICES = '/api/v1/namespaces/default/services';
const KUBECTL_1_33 = '/usr/lib/google-cloud-sdk/bin/kubectl.1.33';

type Obj = Record<string, any>;
const service = (name: string, spec: Obj = {}) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { selector: { app: name }, ports: [{ port: 80 }], ...spec } });

async function create(s: TestServer, name: string, spec: Obj = {}): Promise<Obj> {
  const r = await s.request('POST', SERVICES, { body: service(name, spec) });
  assert.equal(r.status, 201, r.text);
  return r.json();
}

/** Asserts a refused create: its status, reason and message; and that nothing was stored. */
async function assertRefused(s: TestServer, name: string, spec: Obj, code: number, reason: string, message: string): Promise<void> {
  const r = await s.request('POST', SERVICES, { body: service(name, spec) });
  assert.equal(r.status, code, r.text);
  assert.equal(r.json().reason, reason);
  assert.equal(r.json().message, message);
  assert.equal((await s.request('GET', `${SERVICES}/${name}`)).status, 404);
}

async function withServer(options: Obj, fn: (s: TestServer) => Promise<void>): Promise<void> {
  const s = await startTestServer({ options });
  try {
    await fn(s);
  } finally {
    await s.stop();
  }
}

test('an IPv4 range and a node-port range of the user\'s: kube\'s addresses and kube\'s errors', () =>
  withServer({ serviceClusterIPRange: '10.0.0.0/24', serviceNodePortRange: '31000-31010' }, async (s) => {
    const kubernetes = (await s.request('GET', `${SERVICES}/kubernetes`)).json();
    assert.deepEqual(kubernetes.spec.clusterIPs, ['10.0.0.1']);
    // A /24 keeps its first 16 addresses for requested ones; dynamic ones start above them.
    assert.deepEqual((await create(s, 'web')).spec.clusterIPs, ['10.0.0.17']);
    assert.deepEqual((await create(s, 'dns', { clusterIP: '10.0.0.10' })).spec.clusterIPs, ['10.0.0.10']);
    await assertRefused(s, 'taken', { clusterIP: '10.0.0.10' }, 422, 'Invalid', 'Service "taken" is invalid: spec.clusterIPs: Invalid value: []string{"10.0.0.10"}: failed to allocate IP 10.0.0.10: provided IP is already allocated');
    await assertRefused(s, 'network', { clusterIP: '10.0.0.0' }, 422, 'Invalid', 'Service "network" is invalid: spec.clusterIPs: Invalid value: []string{"10.0.0.0"}: failed to allocate IP 10.0.0.0: the provided IP (10.0.0.0) is not in the valid range. The range of valid IPs is 10.0.0.0/24');
    await assertRefused(s, 'broadcast', { clusterIP: '10.0.0.255' }, 422, 'Invalid', 'Service "broadcast" is invalid: spec.clusterIPs: Invalid value: []string{"10.0.0.255"}: failed to allocate IP 10.0.0.255: the provided IP (10.0.0.255) is not in the valid range. The range of valid IPs is 10.0.0.0/24');
    await assertRefused(s, 'elsewhere', { clusterIP: '10.96.0.10' }, 422, 'Invalid', 'Service "elsewhere" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.10"}: failed to allocate IP 10.96.0.10: the provided network does not match the current range');
    // A single-stack cluster has no IPv6 and no dual-stack services.
    await assertRefused(s, 'v6', { clusterIP: 'fd00::10' }, 422, 'Invalid', 'Service "v6" is invalid: spec.clusterIPs[0]: Invalid value: []string{"fd00::10"}: IPv6 is not configured on this cluster');
    await assertRefused(s, 'dual', { ipFamilyPolicy: 'RequireDualStack' }, 422, 'Invalid', 'Service "dual" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services');

    // Node ports: a range of 11 has no static band; the first free one is taken.
    const np = await create(s, 'np', { type: 'NodePort' });
    assert.equal(np.spec.ports[0].nodePort, 31000);
    const out = await s.kubectl(['create', 'service', 'nodeport', 'low', '--tcp=80:80', '--node-port=30080'], { binary: KUBECTL_1_33 });
    assert.notEqual(out.code, 0);
    assert.match(out.stderr, /Service "low" is invalid: spec\.ports\[0\]\.nodePort: Invalid value: 30080: provided port is not in the valid range\. The range of valid ports is 31000-31010/);
    await assertRefused(s, 'taken-port', { type: 'NodePort', ports: [{ port: 80, nodePort: 31000 }] }, 422, 'Invalid', 'Service "taken-port" is invalid: spec.ports[0].nodePort: Invalid value: 31000: provided port is already allocated');
    for (let i = 1; i <= 10; i++) await create(s, `fill-${i}`, { type: 'NodePort' });
    await assertRefused(s, 'full', { type: 'NodePort' }, 500, 'InternalError', 'Internal error occurred: failed to allocate a nodePort: range is full');
    // kubectl shows the addresses it was given.
    const listed = await s.kubectl(['get', 'svc', 'web', 'np', '-o', 'custom-columns=IP:.spec.clusterIP,PORT:.spec.ports[0].nodePort', '--no-headers']);
    assert.deepEqual(listed.stdout.trim().split('\n').map((l) => l.split(/\s+/)), [['10.0.0.17', '<none>'], ['10.0.0.18', '31000']]);
  }));

test('a full service range refuses a dynamic address with kube\'s 500; headless and ExternalName services need none', () =>
  withServer({ serviceClusterIPRange: '192.168.7.0/29' }, async (s) => {
    // 8 addresses: .1 (default/kubernetes) to .6, the network and broadcast addresses aside.
    const got = [];
    for (let i = 0; i < 5; i++) got.push((await create(s, `s${i}`)).spec.clusterIP);
    assert.deepEqual(got, ['192.168.7.2', '192.168.7.3', '192.168.7.4', '192.168.7.5', '192.168.7.6']);
    await assertRefused(s, 'full', {}, 500, 'InternalError', 'Internal error occurred: failed to allocate a serviceIP: range is full');
    // Headless and ExternalName services need no address.
    assert.deepEqual((await create(s, 'headless', { clusterIP: 'None' })).spec.clusterIPs, ['None']);
    assert.equal((await create(s, 'external', { type: 'ExternalName', externalName: 'example.com' })).spec.clusterIP, undefined);
  }));

test('dual-stack ranges (IPv4 primary, IPv6 secondary): families, addresses, upgrades and downgrades as kube has them', () =>
  withServer({ serviceClusterIPRange: '10.96.0.0/12,fd00:10::/108' }, async (s) => {
    const kubernetes = (await s.request('GET', `${SERVICES}/kubernetes`)).json();
    assert.deepEqual([kubernetes.spec.clusterIPs, kubernetes.spec.ipFamilies, kubernetes.spec.ipFamilyPolicy], [['10.96.0.1'], ['IPv4'], 'SingleStack']);
    const single = await create(s, 'single');
    assert.deepEqual([single.spec.clusterIPs, single.spec.ipFamilies], [['10.96.1.1'], ['IPv4']]);
    // An IPv6 /108 keeps 256 addresses for requested ones.
    const prefer = await create(s, 'prefer', { ipFamilyPolicy: 'PreferDualStack' });
    assert.deepEqual([prefer.spec.clusterIP, prefer.spec.clusterIPs, prefer.spec.ipFamilies], ['10.96.1.2', ['10.96.1.2', 'fd00:10::101'], ['IPv4', 'IPv6']]);
    const v6first = await create(s, 'v6first', { ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv6', 'IPv4'] });
    assert.deepEqual(v6first.spec.clusterIPs, ['fd00:10::102', '10.96.1.3']);
    const v6only = await create(s, 'v6only', { ipFamilies: ['IPv6'] });
    assert.deepEqual([v6only.spec.clusterIPs, v6only.spec.ipFamilyPolicy], [['fd00:10::103'], 'SingleStack']);
    const asked = await create(s, 'asked', { ipFamilyPolicy: 'RequireDualStack', clusterIPs: ['10.96.0.53', 'fd00:10::53'], clusterIP: '10.96.0.53' });
    assert.deepEqual(asked.spec.clusterIPs, ['10.96.0.53', 'fd00:10::53']);
    await assertRefused(s, 'taken6', { ipFamilies: ['IPv6'], clusterIP: 'fd00:10::53' }, 422, 'Invalid', 'Service "taken6" is invalid: spec.clusterIPs: Invalid value: []string{"fd00:10::53"}: failed to allocate IP fd00:10::53: provided IP is already allocated');
    await assertRefused(s, 'far6', { ipFamilies: ['IPv6'], clusterIP: 'fd00:99::1' }, 422, 'Invalid', 'Service "far6" is invalid: spec.clusterIPs: Invalid value: []string{"fd00:99::1"}: failed to allocate IP fd00:99::1: the provided network does not match the current range');
    await assertRefused(s, 'two4', { ipFamilyPolicy: 'RequireDualStack', clusterIP: '10.96.0.60', clusterIPs: ['10.96.0.60', '10.96.0.61'] }, 422, 'Invalid', 'Service "two4" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.60", "10.96.0.61"}: may specify no more than one IP for each IP family');
    await assertRefused(s, 'mismatch', { ipFamilies: ['IPv6'], clusterIP: '10.96.0.70' }, 422, 'Invalid', 'Service "mismatch" is invalid: spec.clusterIPs[0]: Invalid value: "10.96.0.70": expected an IPv6 value as indicated by `ipFamilies[0]`');

    // Upgrade: PreferDualStack on a single-stack service adds an IPv6 address, the IPv4 one stays.
    const up = await s.request('PATCH', `${SERVICES}/single`, { raw: JSON.stringify({ spec: { ipFamilyPolicy: 'PreferDualStack' } }), headers: { 'content-type': 'application/merge-patch+json' } });
    assert.equal(up.status, 200, up.text);
    assert.deepEqual([up.json().spec.clusterIPs, up.json().spec.ipFamilies], [['10.96.1.1', 'fd00:10::104'], ['IPv4', 'IPv6']]);
    // Downgrade: SingleStack releases the secondary address; another policy may not drop it.
    const keep = await s.request('PATCH', `${SERVICES}/single`, { raw: JSON.stringify({ spec: { clusterIPs: ['10.96.1.1'] } }), headers: { 'content-type': 'application/merge-patch+json' } });
    assert.equal(keep.status, 422, keep.text);
    assert.match(keep.json().message, /spec\.ipFamilyPolicy: Invalid value: "PreferDualStack": must be 'SingleStack' to release the secondary cluster IP/);
    const down = await s.request('PATCH', `${SERVICES}/single`, { raw: JSON.stringify({ spec: { ipFamilyPolicy: 'SingleStack' } }), headers: { 'content-type': 'application/merge-patch+json' } });
    assert.equal(down.status, 200, down.text);
    assert.deepEqual([down.json().spec.clusterIPs, down.json().spec.ipFamilies], [['10.96.1.1'], ['IPv4']]);
  }));

test('an IPv6-only range: the kubernetes Service and dynamic addresses come from it', () =>
  withServer({ serviceClusterIPRange: 'fd00:20::/112' }, async (s) => {
    const kubernetes = (await s.request('GET', `${SERVICES}/kubernetes`)).json();
    assert.deepEqual([kubernetes.spec.clusterIPs, kubernetes.spec.ipFamilies], [['fd00:20::1'], ['IPv6']]);
    const web = await create(s, 'web');
    assert.deepEqual([web.spec.clusterIPs, web.spec.ipFamilies], [['fd00:20::101'], ['IPv6']]);
    await assertRefused(s, 'v4', { clusterIP: '10.96.0.10' }, 422, 'Invalid', 'Service "v4" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.0.10"}: IPv4 is not configured on this cluster');
  }));

test('a store written under other ranges keeps its services\' values; they are reported as kube\'s repair controllers report them', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-ranges-'));
  try {
    const first = await startTestServer({ dataDir });
    try {
      await create(first, 'old', { type: 'NodePort', ports: [{ port: 80, nodePort: 30500 }] });
    } finally {
      await first.stop();
    }
    const lines: string[] = [];
    const second = await startTestServer({ dataDir, options: { serviceClusterIPRange: '10.0.0.0/24', serviceNodePortRange: '31000-31999', log: (l: string) => lines.push(logMessage(l)) } });
    try {
      const old = (await second.request('GET', `${SERVICES}/old`)).json();
      assert.deepEqual([old.spec.clusterIP, old.spec.ports[0].nodePort], ['10.96.1.1', 30500]);
      assert.equal((await second.request('GET', `${SERVICES}/kubernetes`)).json().spec.clusterIP, '10.96.0.1');
      assert.ok(lines.includes('the ClusterIP [IPv4]: 10.96.0.1 for Service default/kubernetes is not within any service CIDR; please recreate'), lines.join('\n'));
      assert.ok(lines.includes('the ClusterIP [IPv4]: 10.96.1.1 for Service default/old is not within any service CIDR; please recreate'), lines.join('\n'));
      assert.ok(lines.includes('the port 30500 for service old/default is not within the port range 31000-31999; please recreate'), lines.join('\n'));
      // The service can still be updated (labels), and new services get the new range.
      const labelled = await second.request('PATCH', `${SERVICES}/old`, { raw: JSON.stringify({ metadata: { labels: { a: 'b' } } }), headers: { 'content-type': 'application/merge-patch+json' } });
      assert.equal(labelled.status, 200, labelled.text);
      const fresh = await create(second, 'fresh', { type: 'NodePort' });
      assert.deepEqual([fresh.spec.clusterIP, fresh.spec.ports[0].nodePort], ['10.0.0.17', 31031]);
    } finally {
      await second.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/** Runs hearth's command line; it must stop at the flags, so it exits quickly either way. */
function runMain(args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'server/main.ts', ...args], { timeout: 60_000 }, (err, _stdout, stderr) => resolve({ code: err ? ((err as any).code ?? 1) : 0, stderr }));
  });
}

test('bad range flags stop hearth at start with exit 2 and kube-apiserver\'s message, before the data directory exists', async () => {
  const root = mkdtempSync(join(tmpdir(), 'hearth-flags-'));
  try {
    const cases: Array<[string[], string]> = [
      [['--service-cluster-ip-range', '10.0.0.0'], 'service-cluster-ip-range[0] is not a valid cidr'],
      [['--service-cluster-ip-range', '10.0.0.0/30'], 'error determining service IP ranges for primary service cidr: the service cluster IP range must be at least 8 IP addresses'],
      [['--service-cluster-ip-range', '10.0.0.0/24,10.1.0.0/24'], '--service-cluster-ip-range[0] and --service-cluster-ip-range[1] must be of different IP family'],
      [['--service-cluster-ip-range=10.0.0.0/24,fd00::/108,10.2.0.0/16'], '--service-cluster-ip-range must not contain more than two entries'],
      [['--service-cluster-ip-range', '10.0.0.0/24,fd00::/48'], 'shortest allowed prefix length for service CIDR is 64, got 48'],
      [['--service-node-port-range', '32767-30000'], 'invalid argument "32767-30000" for "--service-node-port-range" flag: end port cannot be less than start port: 32767-30000'],
      [['--service-node-port-range=30000-70000'], 'invalid argument "30000-70000" for "--service-node-port-range" flag: the port range cannot be greater than 65535: 30000-70000'],
    ];
    for (const [args, message] of cases) {
      const dataDir = join(root, 'data');
      const r = await runMain(['--data-dir', dataDir, '--secure-port', '0', ...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr.split('\n')[0], `hearth: ${message}`);
      assert.equal(existsSync(dataDir), false);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
