// A CRD with two versions of different shape and Webhook conversion, through the server: objects
// are stored in the storage version and served in the requested one by a loopback HTTPS webhook
// (its own CA in caBundle); a failing webhook fails the request and writes nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { startConversionWebhook, type ConversionWebhook } from './helpers/conversion-webhook.ts';

const GROUP = 'convert.hearth.test';
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

before(async () => {
  hook = await startConversionWebhook({ path: '/convert', behaviour: { convert } });
  s = await startTestServer();
  const spec = (props: object) => ({ openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: props } } } });
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `boxes.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'boxes', singular: 'box', kind: 'Box' },
      versions: [
        { name: 'v1', served: true, storage: true, schema: spec({ size: { type: 'string' }, color: { type: 'string' } }) },
        { name: 'v2', served: true, storage: false, schema: spec({ dimensions: { type: 'object', properties: { size: { type: 'string' } } }, color: { type: 'string' } }) },
      ],
      conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: hook.url, caBundle: hook.caBundle } } },
    },
  };
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
