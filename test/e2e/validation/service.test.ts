// Service ports and Ingress rules as kube-apiserver validates them (ValidateService, validateServicePort, validateIngressRules).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invalidCauses, useTestServer } from '../../helpers/server.ts';
import { DNS1123_SUBDOMAIN } from '../../helpers/kube-messages.ts';

const s = useTestServer();

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

test('ingress rules: DNS hosts, clean absolute paths for Exact and Prefix, one service and one port per backend', async () => {
  const ING = '/apis/networking.k8s.io/v1/namespaces/default/ingresses';
  const ingress = (rules: unknown[]) => ({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'web' }, spec: { rules } });
  const path = (p: Record<string, unknown>) => ({ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } }, ...p });
  assert.deepEqual(
    await causes('POST', ING, ingress([
      { host: '10.0.0.1', http: { paths: [path({ path: 'api' }), path({ path: '/a//b' }), path({ pathType: 'Regex' })] } },
      { host: 'Web.Example', http: { paths: [path({ backend: { service: { name: 'web', port: {} } } }), path({ backend: { service: { name: 'web', port: { name: 'http', number: 80 } } } })] } },
    ])),
    [
      ['spec.rules[0].host', 'Invalid value: "10.0.0.1": must be a DNS name, not an IP address'],
      ['spec.rules[0].http.paths[0].path', 'Invalid value: "api": must be an absolute path'],
      ['spec.rules[0].http.paths[1].path', `Invalid value: "/a//b": must not contain '//'`],
      ['spec.rules[0].http.paths[2].pathType', 'Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"'],
      ['spec.rules[1].host', `Invalid value: "Web.Example": ${DNS1123_SUBDOMAIN}`],
      ['spec.rules[1].http.paths[0].backend', 'Required value: port name or number is required'],
      ['spec.rules[1].http.paths[1].backend', 'Invalid value: "": cannot set both port name & port number'],
    ],
  );
  const ok = await s.request('POST', ING, { body: ingress([{ host: 'web.example.com', http: { paths: [path({}), path({ path: '', pathType: 'ImplementationSpecific' })] } }]) });
  assert.equal(ok.status, 201, ok.text);
});
