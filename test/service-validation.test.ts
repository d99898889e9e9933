// Service ports as kube-apiserver validates them (ValidateService, validateServicePort).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { invalidCauses, startTestServer, type TestServer } from './helpers/server.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s.stop();
});

const SERVICES = '/api/v1/namespaces/default/services';
const svc = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec });

const causes = (method: string, path: string, body: unknown) => invalidCauses(s, method, path, body);

test('service ports: required unless headless or ExternalName, named when several, in range, target ports numbers or IANA names', async () => {
  assert.deepEqual(await causes('POST', SERVICES, svc('none', { selector: { app: 'a' } })), [['spec.ports', 'Required value']]);
  assert.deepEqual(await causes('POST', SERVICES, svc('zero', { ports: [{ port: 0 }] })), [
    ['spec.ports[0].port', 'Invalid value: 0: must be between 1 and 65535, inclusive'],
    ['spec.ports[0].targetPort', 'Invalid value: 0: must be between 1 and 65535, inclusive'],
  ]);
  assert.deepEqual(await causes('POST', SERVICES, svc('many', { ports: [{ port: 80, targetPort: 'HTTP' }, { name: 'b', port: 81 }, { name: 'b', port: 82 }] })), [
    ['spec.ports[0].name', 'Required value'],
    ['spec.ports[0].targetPort', 'Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)'],
    ['spec.ports[0].targetPort', 'Invalid value: "HTTP": must contain at least one letter (a-z)'],
    ['spec.ports[2].name', 'Duplicate value: "b"'],
  ]);
  for (const [name, spec] of [['headless', { clusterIP: 'None' }], ['external', { type: 'ExternalName', externalName: 'example.com' }]] as const) {
    const r = await s.request('POST', SERVICES, { body: svc(name, spec) });
    assert.equal(r.status, 201, r.text);
  }
  // Updates are checked too.
  const web = (await s.request('POST', SERVICES, { body: svc('web', { ports: [{ port: 80 }] }) })).json();
  assert.deepEqual(await causes('PUT', `${SERVICES}/web`, { ...web, spec: { ...web.spec, ports: [{ port: 70000, targetPort: 80, protocol: 'TCP' }] } }), [['spec.ports[0].port', 'Invalid value: 70000: must be between 1 and 65535, inclusive']]);
});
