// A CRD with two versions of different shape and Webhook conversion, through the server: objects
// are stored in the storage version and served in the requested one by a loopback HTTPS webhook
// (its own CA in caBundle); a failing webhook fails the request and writes nothing. A second CRD
// names the same webhook by a Service reference, resolved against the server's Services.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { startConversionWebhook, type ConversionWebhook } from '../../helpers/conversion-webhook.ts';

const GROUP = 'convert.hearth.test';
/** The Service the crates CRD's webhook is named by, as its certificate names it. */
const SERVICE_HOST = 'box-converter.default.svc';
let s: TestServer;
let hook: ConversionWebhook;

/** v1 keeps `spec.size`; v2 nests it as `spec.dimensions.size`. */
function convert(obj: any, desired: string): any {
  const out = structuredClone(obj);
  out.apiVersion = desired;
  if (desired.endsWith('/v2') && obj.apiVersion.endsWith('/v1')) {
    const { size, ...rest } = obj.spec ?? {};
    out.spec = { ...rest, dimensions: { size } };
  } else if (desired.endsWith('/v1') && obj.apiVersion.endsWith('/v2')) {
    const { dimensions, ...rest } = obj.spec ?? {};
    out.spec = { ...rest, size: dimensions?.size };
  }
  return out;
}

/** A CRD of `convert`'s two shapes (v1 stored), converted by the test webhook reached through clientConfig. */
function twoShapeCrd(names: { plural: string; singular: string; kind: string }, clientConfig: object): object {
  const spec = (props: object) => ({ openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: props } } } });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${names.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names,
      versions: [
        { name: 'v1', served: true, storage: true, schema: spec({ size: { type: 'string' }, color: { type: 'string' } }) },
        { name: 'v2', served: true, storage: false, schema: spec({ dimensions: { type: 'object', properties: { size: { type: 'string' } } }, color: { type: 'string' } }) },
      ],
      conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { ...clientConfig, caBundle: hook.caBundle } } },
    },
  };
}

before(async () => {
  hook = await startConversionWebhook({ path: '/convert', sans: [SERVICE_HOST], behaviour: { convert } });
  s = await startTestServer();
  const crd = twoShapeCrd({ plural: 'boxes', singular: 'box', kind: 'Box' }, { url: hook.url });
  const r = await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd });
  assert.equal(r.status, 201, r.text);
});
after(async () => {
  await s.stop();
  await hook.close();
});

const V1 = `/apis/${GROUP}/v1/namespaces/default/boxes`;
const V2 = `/apis/${GROUP}/v2/namespaces/default/boxes`;

test('an object written in v2 is stored in v1 and served in either version', async () => {
  hook.reset();
  const c = await s.request('POST', V2, { body: { apiVersion: `${GROUP}/v2`, kind: 'Box', metadata: { name: 'b1' }, spec: { dimensions: { size: 'L' }, color: 'red' } } });
  assert.equal(c.status, 201, c.text);
  assert.deepEqual(c.json().spec, { dimensions: { size: 'L' }, color: 'red' });
  assert.equal(hook.reviews[0].request.desiredAPIVersion, `${GROUP}/v1`);
  assert.ok(hook.reviews[0].request.uid);

  const g1 = (await s.request('GET', `${V1}/b1`)).json();
  assert.equal(g1.apiVersion, `${GROUP}/v1`);
  assert.deepEqual(g1.spec, { size: 'L', color: 'red' });
  const g2 = (await s.request('GET', `${V2}/b1`)).json();
  assert.equal(g2.apiVersion, `${GROUP}/v2`);
  assert.deepEqual(g2.spec, { dimensions: { size: 'L' }, color: 'red' });
  assert.equal(g2.metadata.resourceVersion, g1.metadata.resourceVersion);

  const l2 = (await s.request('GET', V2)).json();
  assert.deepEqual(l2.items.map((i: any) => [i.apiVersion, i.spec.dimensions?.size]), [[`${GROUP}/v2`, 'L']]);

  // An update through v2 round-trips through the storage version.
  const u = await s.request('PUT', `${V2}/b1`, { body: { ...g2, spec: { dimensions: { size: 'XL' }, color: 'red' } } });
  assert.equal(u.status, 200, u.text);
  assert.equal((await s.request('GET', `${V1}/b1`)).json().spec.size, 'XL');
});

test('a watch in v2 streams converted objects', async () => {
  const rv = (await s.request('GET', V2)).json().metadata.resourceVersion;
  const done = s.watch(`${V2}?watch=1&resourceVersion=${rv}`, (ev) => ev.length === 1);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal((await s.request('POST', V1, { body: { apiVersion: `${GROUP}/v1`, kind: 'Box', metadata: { name: 'b-watch' }, spec: { size: 'S' } } })).status, 201);
  const { events } = await done;
  assert.equal(events[0].type, 'ADDED');
  assert.equal(events[0].object.apiVersion, `${GROUP}/v2`);
  assert.deepEqual(events[0].object.spec, { dimensions: { size: 'S' } });
});

test('a failing webhook fails the request with its message and writes nothing', async () => {
  const before = (await s.request('GET', V1)).json().metadata.resourceVersion;
  hook.setBehaviour({ convert, failure: { message: 'boxes are closed today' } });
  try {
    const r = await s.request('POST', V2, { body: { apiVersion: `${GROUP}/v2`, kind: 'Box', metadata: { name: 'b-fail' }, spec: { dimensions: { size: 'M' } } } });
    assert.equal(r.status, 500, r.text);
    assert.match(r.json().message, /conversion webhook for convert\.hearth\.test\/v2, Kind=Box failed: boxes are closed today/);
    const g = await s.request('GET', `${V2}/b1`);
    assert.equal(g.status, 500);
  } finally {
    hook.setBehaviour({ convert });
  }
  assert.equal((await s.request('GET', `${V1}/b-fail`)).status, 404);
  assert.equal((await s.request('GET', V1)).json().metadata.resourceVersion, before);
});

test('a webhook named by a Service reference is reached where the Service resolves', async () => {
  const crd = twoShapeCrd({ plural: 'crates', singular: 'crate', kind: 'Crate' }, { service: { namespace: 'default', name: 'box-converter', path: '/convert', port: hook.port } });
  assert.equal((await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd })).status, 201);
  const C1 = `/apis/${GROUP}/v1/namespaces/default/crates`;
  const C2 = `/apis/${GROUP}/v2/namespaces/default/crates`;
  const crate = { apiVersion: `${GROUP}/v2`, kind: 'Crate', metadata: { name: 'c1' }, spec: { dimensions: { size: 'M' } } };

  // No such Service yet: the write fails with kube's resolver error and leaves nothing behind.
  const before = (await s.request('GET', C1)).json().metadata.resourceVersion;
  const missing = await s.request('POST', C2, { body: crate });
  assert.equal(missing.status, 500, missing.text);
  assert.equal(missing.json().message, `conversion webhook for ${GROUP}/v2, Kind=Crate failed: Post "https://${SERVICE_HOST}:${hook.port}/convert?timeout=30s": service "box-converter" not found`);
  assert.equal((await s.request('GET', C1)).json().metadata.resourceVersion, before);

  const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'box-converter' }, spec: { type: 'ExternalName', externalName: 'localhost' } };
  assert.equal((await s.request('POST', '/api/v1/namespaces/default/services', { body: svc })).status, 201);
  hook.reset();
  const c = await s.request('POST', C2, { body: crate });
  assert.equal(c.status, 201, c.text);
  assert.equal(hook.requests[0].headers.host, `${SERVICE_HOST}:${hook.port}`);
  assert.deepEqual((await s.request('GET', `${C1}/c1`)).json().spec, { size: 'M' });
  assert.deepEqual((await s.request('GET', `${C2}/c1`)).json().spec, { dimensions: { size: 'M' } });
});
