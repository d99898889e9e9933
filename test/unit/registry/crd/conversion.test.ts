// CRD version conversion: the None strategy and conversion webhooks (ConversionReview over HTTPS
// to a loopback webhook with its own CA), checked and worded the way kube-apiserver does it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { ApiError } from '../../../../server/errors.ts';
import { closeConversionClients, ConversionError, converterFor } from '../../../../server/registry/crd/conversion.ts';
import type { Converter } from '../../../../server/schema/types.ts';
import { goDuration } from '../../../../server/go/time.ts';
import { createTestCa, startConversionWebhook, type ConversionWebhook } from '../../../helpers/conversion-webhook.ts';

const T = 2000; // webhook timeout in these tests: "?timeout=2s"
let crdSeq = 0;

function crd(conversion: any, extra: { name?: string } = {}): any {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: extra.name ?? `widgets${++crdSeq}.example.com` },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        { name: 'v1', served: true, storage: true },
        { name: 'v2', served: true, storage: false },
      ],
      conversion,
    },
  };
}

function webhookConversion(wh: { url: string; caBundle?: string }, reviewVersions = ['v1']): any {
  return {
    strategy: 'Webhook',
    webhook: { clientConfig: { url: wh.url, ...(wh.caBundle ? { caBundle: wh.caBundle } : {}) }, conversionReviewVersions: reviewVersions },
  };
}

function widget(version: string, name: string, spec: any = { size: 'large' }): any {
  return {
    apiVersion: `example.com/${version}`,
    kind: 'Widget',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: '7', generation: 1, labels: { app: 'w' }, annotations: { note: 'n' } },
    spec,
  };
}

/** v1 spec.size <-> v2 spec.dimension. */
function renameConvert(obj: any, desired: string): any {
  const from = obj.apiVersion;
  if (from === 'example.com/v1' && desired === 'example.com/v2') {
    obj.spec = { dimension: obj.spec.size };
  } else if (from === 'example.com/v2' && desired === 'example.com/v1') {
    obj.spec = { size: obj.spec.dimension };
  }
  obj.apiVersion = desired;
  return obj;
}

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ApiError, `expected an ApiError, got ${e}`);
    return e;
  }
  assert.fail('expected the conversion to fail');
}

let wh: ConversionWebhook;
let conv: Converter;
const prefix = 'conversion webhook for example.com/v1, Kind=Widget';

before(async () => {
  wh = await startConversionWebhook();
  conv = converterFor(crd(webhookConversion(wh)), { timeoutMs: T });
});
after(async () => {
  closeConversionClients();
  await wh.close();
});

/** Runs one webhook case with the given behaviour, then restores the default. */
async function withBehaviour<R>(b: Parameters<ConversionWebhook['setBehaviour']>[0], fn: () => Promise<R>): Promise<R> {
  wh.setBehaviour(b);
  wh.reset();
  try {
    return await fn();
  } finally {
    wh.setBehaviour({});
  }
}

describe('None strategy', () => {
  const none = converterFor(crd({ strategy: 'None' }));

  it('is trivial and changes only apiVersion, synchronously', () => {
    assert.equal(none.trivial, true);
    assert.equal(none.strategy, 'None');
    const input = widget('v1', 'a');
    const snapshot = structuredClone(input);
    const [out] = none.convertSync!([input], 'v2');
    assert.deepEqual(out, { ...snapshot, apiVersion: 'example.com/v2' });
    assert.deepEqual(input, snapshot, 'input untouched');
    assert.deepEqual(Object.keys(out), Object.keys(input), 'apiVersion keeps its place');
  });

  it('returns objects already at the version as they are, and converts lists', async () => {
    const at = widget('v2', 'b');
    const list = await none.convert([widget('v1', 'a'), at], 'v2');
    assert.equal(list[1], at);
    assert.deepEqual(list.map((o) => o.apiVersion), ['example.com/v2', 'example.com/v2']);
  });

  it('a CRD without spec.conversion converts as None', () => {
    const c = crd(undefined);
    delete c.spec.conversion;
    assert.equal(converterFor(c).trivial, true);
  });

  it('refuses versions the CRD does not have, in kube words', () => {
    assert.throws(() => none.convertSync!([widget('v1', 'a')], 'v9'), { message: 'request to convert CR to an invalid group/version: example.com/v9' });
    assert.throws(() => none.convertSync!([widget('v7', 'a')], 'v2'), { message: 'request to convert CR from an invalid group/version: example.com/v7' });
    assert.throws(() => none.convertSync!([{ ...widget('v1', 'a'), apiVersion: 'other.io/v1' }], 'v2'), {
      message: 'other.io/v1, Kind=Widget is unstructured and is not suitable for converting to "example.com/v2"',
    });
    assert.throws(() => none.convertSync!([widget('v1', 'a'), widget('v7', 'b')], 'v2'), {
      message: 'request to convert CR list failed, list index 1 has invalid group/version: example.com/v7',
    });
    try {
      none.convertSync!([widget('v1', 'a')], 'v9');
    } catch (e) {
      assert.ok(e instanceof ConversionError);
      assert.equal(e.code, 500);
    }
  });
});

describe('Webhook strategy', () => {
  it('is not trivial and has no synchronous form', () => {
    assert.equal(conv.trivial, false);
    assert.equal(conv.strategy, 'Webhook');
    assert.equal(conv.convertSync, undefined);
  });

  it('converts one object (v1 -> v2 field rename) with a kube-shaped ConversionReview', async () => {
    const input = widget('v1', 'a', { size: 'large' });
    const snapshot = structuredClone(input);
    const out = await withBehaviour({ convert: renameConvert }, () => conv.convert([input], 'v2'));
    assert.equal(out.length, 1);
    assert.equal(out[0].apiVersion, 'example.com/v2');
    assert.deepEqual(out[0].spec, { dimension: 'large' });
    assert.deepEqual(out[0].metadata, snapshot.metadata);
    assert.deepEqual(input, snapshot, 'input untouched');

    assert.equal(wh.requests.length, 1);
    const req = wh.requests[0]!;
    assert.equal(req.method, 'POST');
    assert.equal(req.url, '/convert?timeout=2s');
    assert.match(String(req.headers['content-type']), /^application\/json/);
    assert.equal(req.headers['user-agent'], 'kube-apiserver-admission');
    const review = req.review;
    assert.deepEqual(Object.keys(review), ['kind', 'apiVersion', 'request', 'response']);
    assert.equal(review.kind, 'ConversionReview');
    assert.equal(review.apiVersion, 'apiextensions.k8s.io/v1');
    assert.match(review.request.uid, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.equal(review.request.desiredAPIVersion, 'example.com/v2');
    assert.deepEqual(review.request.objects, [snapshot]);
    assert.deepEqual(review.response, { uid: '', convertedObjects: null, result: { metadata: {} } });
  });

  it('converts many objects in one review, sending only those not yet at the desired version', async () => {
    const a = widget('v1', 'a', { size: 'small' });
    const b = widget('v2', 'b', { dimension: 'large' });
    const c = widget('v1', 'c', { size: 'large' });
    const out = await withBehaviour({ convert: renameConvert }, () => conv.convert([a, b, c], 'v2'));
    assert.equal(wh.requests.length, 1);
    assert.deepEqual(
      wh.reviews[0].request.objects.map((o: any) => o.metadata.name),
      ['a', 'c'],
    );
    assert.deepEqual(
      out.map((o) => [o.metadata.name, o.apiVersion, o.spec]),
      [
        ['a', 'example.com/v2', { dimension: 'small' }],
        ['b', 'example.com/v2', { dimension: 'large' }],
        ['c', 'example.com/v2', { dimension: 'large' }],
      ],
    );
    assert.equal(out[1], b, 'the object already at v2 is returned as is');

    // and back: v2 -> v1
    const back = await withBehaviour({ convert: renameConvert }, () => conv.convert(out, 'v1'));
    assert.deepEqual(
      back.map((o) => o.spec),
      [{ size: 'small' }, { size: 'large' }, { size: 'large' }],
    );
  });

  it('does not call the webhook when nothing needs converting', async () => {
    const a = widget('v2', 'a');
    const out = await withBehaviour({}, () => conv.convert([a], 'v2'));
    assert.equal(out[0], a);
    const list = await withBehaviour({}, () => conv.convert([widget('v2', 'x'), widget('v2', 'y')], 'v2'));
    assert.equal(list.length, 2);
    const empty = await withBehaviour({}, () => conv.convert([{ apiVersion: 'example.com/v1', kind: 'Widget' }], 'v2'));
    assert.deepEqual(empty, [{ apiVersion: 'example.com/v2', kind: 'Widget' }], 'an object with only apiVersion and kind converts without the webhook');
    assert.equal(wh.requests.length, 0);
    assert.deepEqual(await conv.convert([], 'v2'), []);
  });

  it('reuses one keep-alive TLS connection across conversions (and CRDs with the same client config)', async () => {
    const own = await startConversionWebhook();
    try {
      const one = converterFor(crd(webhookConversion(own)), { timeoutMs: T });
      await one.convert([widget('v1', 'a')], 'v2');
      await one.convert([widget('v1', 'b')], 'v2');
      const other = converterFor(crd(webhookConversion(own)), { timeoutMs: T });
      assert.notEqual(other, one);
      await other.convert([widget('v1', 'c')], 'v2');
      assert.equal(own.requests.length, 3);
      assert.equal(own.connections, 1);
    } finally {
      await own.close();
    }
  });

  it('a result other than Success fails with the webhook message: 500, no reason, kube wording', async () => {
    const err = await withBehaviour({ failure: { message: 'custom webhook conversion error' } }, () => rejection(conv.convert([widget('v1', 'a')], 'v2')));
    assert.ok(err instanceof ConversionError);
    assert.equal(err.code, 500);
    assert.equal(err.message, `${prefix} failed: custom webhook conversion error`);
    assert.deepEqual(err.toStatus(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `${prefix} failed: custom webhook conversion error`, code: 500 });

    const bare = await withBehaviour({ failure: {} }, () => rejection(conv.convert([widget('v1', 'a')], 'v2')));
    assert.equal(bare.message, `${prefix} failed: response.result.status was 'Failure', not 'Success'`);
  });

  it('a list conversion names the list kind', async () => {
    const err = await withBehaviour({ failure: { message: 'nope' } }, () => rejection(conv.convert([widget('v1', 'a'), widget('v1', 'b')], 'v2')));
    assert.equal(err.message, 'conversion webhook for example.com/v2, Kind=WidgetList failed: nope');
  });

  it('HTTP error answers read as client-go reads them', async () => {
    let err = await withBehaviour({ httpError: { status: 500, body: 'boom\n' } }, () => rejection(conv.convert([widget('v1', 'a')], 'v2')));
    assert.equal(err.message, `${prefix} failed: an error on the server ("boom") has prevented the request from succeeding`);
    err = await withBehaviour({ httpError: { status: 400, body: '{}', contentType: 'application/json' } }, () => rejection(conv.convert([widget('v1', 'a')], 'v2')));
    assert.equal(err.message, `${prefix} failed: the server rejected our request for an unknown reason`);
    const status = { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'webhook says no', code: 403 };
    err = await withBehaviour({ httpError: { status: 403, body: JSON.stringify(status), contentType: 'application/json' } }, () => rejection(conv.convert([widget('v1', 'a')], 'v2')));
    assert.equal(err.message, `${prefix} failed: webhook says no`);
  });

  it('rejects an answer for another request (uid)', async () => {
    const err = await withBehaviour({ uid: 'bogus' }, () => rejection(conv.convert([widget('v1', 'a')], 'v2')));
    const uid = wh.reviews[0].request.uid;
    assert.equal(err.message, `${prefix} failed: expected response.uid="${uid}", got "bogus"`);
  });

  it('rejects malformed answers', async () => {
    let err = await withBehaviour({ rawResponse: '' }, () => rejection(conv.convert([widget('v1', 'a')], 'v2')));
    assert.equal(err.message, `${prefix} failed: 0-length response with status code: 200 and content type: application/json`);
    err = await withBehaviour({ rawResponse: { apiVersion: 'apiextensions.k8s.io/v1beta1', kind: 'ConversionReview', response: {} } }, () => rejection(conv.convert([widget('v1', 'a')], 'v2')));
    assert.equal(err.message, `${prefix} failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got apiextensions.k8s.io/v1beta1, Kind=ConversionReview`);
    err = await withBehaviour({ rawResponse: { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' } }, () => rejection(conv.convert([widget('v1', 'a')], 'v2')));
    assert.equal(err.message, `${prefix} failed: no response provided`);
  });

  it('rejects a wrong number of converted objects', async () => {
    let err = await withBehaviour({ count: 0 }, () => rejection(conv.convert([widget('v1', 'a')], 'v2')));
    assert.equal(err.message, `${prefix} returned 0 objects, expected 1`);
    err = await withBehaviour({ count: 3 }, () => rejection(conv.convert([widget('v1', 'a'), widget('v1', 'b')], 'v2')));
    assert.equal(err.message, 'conversion webhook for example.com/v2, Kind=WidgetList returned 3 objects, expected 2');
  });

  it('rejects a converted object in the wrong apiVersion or kind', async () => {
    let err = await withBehaviour({ apiVersion: 'example.com/v3' }, () => rejection(conv.convert([widget('v1', 'a')], 'v2')));
    assert.equal(err.message, `${prefix} returned invalid object at index 0: invalid groupVersion (expected example.com/v2, received example.com/v3)`);
    // kube's list path reports the index after advancing it
    err = await withBehaviour({ apiVersion: 'example.com/v3' }, () => rejection(conv.convert([widget('v1', 'a'), widget('v1', 'b')], 'v2')));
    assert.equal(err.message, 'conversion webhook for example.com/v2, Kind=WidgetList returned invalid converted object at index 1: invalid groupVersion (expected example.com/v2, received example.com/v3)');
    err = await withBehaviour({ convert: (o, d) => ({ ...o, apiVersion: d, kind: 'Gadget' }) }, () => rejection(conv.convert([widget('v1', 'a')], 'v2')));
    assert.equal(err.message, `${prefix} returned invalid object at index 0: invalid kind (expected Widget, received Gadget)`);
  });

  it('rejects a changed name, namespace or uid', async () => {
    let err = await withBehaviour({ mutateMetadata: (m) => (m.name = 'other') }, () => rejection(conv.convert([widget('v1', 'a')], 'v2')));
    assert.equal(err.message, `${prefix} returned invalid object: must have the same name: a != other`);
    err = await withBehaviour({ mutateMetadata: (m) => (m.uid = 'x') }, () => rejection(conv.convert([widget('v1', 'a')], 'v2')));
    assert.equal(err.message, `${prefix} returned invalid object: must have the same UID: uid-a != x`);
    err = await withBehaviour({ mutateMetadata: (m, i) => i === 1 && (m.namespace = 'elsewhere') }, () => rejection(conv.convert([widget('v1', 'a'), widget('v1', 'b')], 'v2')));
    assert.equal(err.message, 'conversion webhook for example.com/v2, Kind=WidgetList returned invalid converted object at index 2: must have the same namespace: default != elsewhere');
  });

  it('keeps the webhook labels and annotations, restores every other metadata field', async () => {
    const input = widget('v1', 'a');
    const [out] = await withBehaviour(
      {
        mutateMetadata: (m) => {
          m.labels = { app: 'w', to: 'v2' };
          m.annotations = { from: 'v1' };
          m.generation = 42;
          m.finalizers = ['foo'];
          m.resourceVersion = '999';
          m.garbage = 'x';
        },
      },
      () => conv.convert([input], 'v2'),
    );
    assert.deepEqual(out.metadata, { ...input.metadata, labels: { app: 'w', to: 'v2' }, annotations: { from: 'v1' } });
    // Removing labels in the webhook removes them.
    const [bare] = await withBehaviour({ mutateMetadata: (m) => delete m.labels }, () => conv.convert([widget('v1', 'b')], 'v2'));
    assert.equal('labels' in bare.metadata, false);
    assert.deepEqual(bare.metadata.annotations, { note: 'n' });
    // A converted object without metadata is refused.
    const err = await withBehaviour({ convert: (o, d) => ({ apiVersion: d, kind: o.kind, spec: o.spec }) }, () => rejection(conv.convert([widget('v1', 'c')], 'v2')));
    assert.equal(err.message, `${prefix} returned invalid object: must have the same name: c != `);
  });

  it('validates changed labels and annotations as kube does', async () => {
    let err = await withBehaviour({ mutateMetadata: (m) => (m.labels = { 'bad key!': 'x' }) }, () => rejection(conv.convert([widget('v1', 'a')], 'v2')));
    assert.match(err.message, new RegExp(`^${prefix} returned invalid metadata: metadata\\.labels: Invalid value: "bad key!": `));
    err = await withBehaviour({ mutateMetadata: (m) => (m.labels = { a: 1 }) }, () => rejection(conv.convert([widget('v1', 'a')], 'v2')));
    assert.equal(err.message, `${prefix} returned invalid metadata: metadata.labels[a] must be a string, but is int64 in converted object`);
    err = await withBehaviour({ mutateMetadata: (m) => (m.annotations = { 'a/b/c': 'x' }) }, () => rejection(conv.convert([widget('v1', 'a')], 'v2')));
    assert.match(err.message, new RegExp(`^${prefix} returned invalid metadata: metadata\\.annotation: Invalid value: "a/b/c": `));
  });

  it('speaks v1beta1 when the CRD lists it first (no uid check, as kube)', async () => {
    const beta = converterFor(crd(webhookConversion(wh, ['v1beta1', 'v1'])), { timeoutMs: T });
    const out = await withBehaviour({ uid: 'whatever' }, () => beta.convert([widget('v1', 'a')], 'v2'));
    assert.equal(out[0].apiVersion, 'example.com/v2');
    assert.equal(wh.reviews[0].apiVersion, 'apiextensions.k8s.io/v1beta1');
    const none = converterFor(crd(webhookConversion(wh, ['v9'])), { timeoutMs: T });
    const err = await rejection(none.convert([widget('v1', 'a')], 'v2'));
    assert.equal(err.message, 'no supported conversion review versions');
  });

  it('uses kube\'s fixed 30s timeout by default and cleans the URL path like path.Join', async () => {
    const dflt = converterFor(crd(webhookConversion({ url: `${wh.url}/`, caBundle: wh.caBundle })));
    await withBehaviour({}, () => dflt.convert([widget('v1', 'a')], 'v2'));
    assert.equal(wh.requests[0]!.url, '/convert?timeout=30s');
    assert.equal(goDuration(30_000), '30s');
    assert.equal(goDuration(300), '300ms');
    assert.equal(goDuration(1500), '1.5s');
    assert.equal(goDuration(90_000), '1m30s');
  });

  it('times out with the deadline error', async () => {
    const quick = converterFor(crd(webhookConversion(wh)), { timeoutMs: 200 });
    const started = Date.now();
    const err = await withBehaviour({ delayMs: 1500 }, () => rejection(quick.convert([widget('v1', 'a')], 'v2')));
    const took = Date.now() - started;
    assert.equal(err.message, `${prefix} failed: Post "${wh.url}?timeout=200ms": context deadline exceeded`);
    assert.ok(took < 1400, `gave up after ${took} ms`);
  });

  it('a webhook that drops the connection reads as EOF', async () => {
    const err = await withBehaviour({ closeConnection: true }, () => rejection(conv.convert([widget('v1', 'a')], 'v2')));
    assert.equal(err.message, `${prefix} failed: Post "${wh.url}?timeout=2s": EOF`);
  });
});

describe('Webhook connection failures', () => {
  it('an unreachable URL fails with the dial error', async () => {
    const port = await freePort();
    const c = converterFor(crd(webhookConversion({ url: `https://127.0.0.1:${port}/convert`, caBundle: wh.caBundle })), { timeoutMs: T });
    const err = await rejection(c.convert([widget('v1', 'a')], 'v2'));
    assert.ok(err instanceof ConversionError);
    assert.equal(err.message, `${prefix} failed: Post "https://127.0.0.1:${port}/convert?timeout=2s": dial tcp 127.0.0.1:${port}: connect: connection refused`);
  });

  it('a caBundle of another CA (or none: system roots) fails TLS verification', async () => {
    const other = await createTestCa();
    const wrongCa = converterFor(crd(webhookConversion({ url: wh.url, caBundle: other.caBundle })), { timeoutMs: T });
    wh.reset();
    let err = await rejection(wrongCa.convert([widget('v1', 'a')], 'v2'));
    assert.equal(err.message, `${prefix} failed: Post "${wh.url}?timeout=2s": tls: failed to verify certificate: x509: certificate signed by unknown authority`);
    const noCa = converterFor(crd(webhookConversion({ url: wh.url })), { timeoutMs: T });
    err = await rejection(noCa.convert([widget('v1', 'a')], 'v2'));
    assert.equal(err.message, `${prefix} failed: Post "${wh.url}?timeout=2s": tls: failed to verify certificate: x509: certificate signed by unknown authority`);
    assert.equal(wh.requests.length, 0, 'nothing was sent');
  });

  it('a certificate for another host fails hostname verification', async () => {
    const far = await startConversionWebhook({ host: '127.0.0.2' });
    try {
      const c = converterFor(crd(webhookConversion(far)), { timeoutMs: T });
      const err = await rejection(c.convert([widget('v1', 'a')], 'v2'));
      assert.equal(err.message, `${prefix} failed: Post "${far.url}?timeout=2s": tls: failed to verify certificate: x509: certificate is valid for 127.0.0.1, ::1, not 127.0.0.2`);
      assert.equal(far.requests.length, 0);
    } finally {
      await far.close();
    }
  });

  it('a caBundle without certificates fails like kube failing to build the client', async () => {
    const c = converterFor(crd(webhookConversion({ url: wh.url, caBundle: Buffer.from('not a pem').toString('base64') })), { timeoutMs: T });
    const err = await rejection(c.convert([widget('v1', 'a')], 'v2'));
    assert.equal(err.code, 500);
    assert.equal(err.reason, 'InternalError');
    assert.equal(err.message, 'Internal error occurred: error resolving resource');
  });
});

describe('service references', () => {
  // A webhook whose certificate names the Service, as a cluster's webhook certificates do.
  const SVC = 'conv.hooks.svc';
  let svcHook: ConversionWebhook;
  let svcConv: Converter;
  const service = (spec: any) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'conv', namespace: 'hooks' }, spec });
  const only = (svc: any) => (namespace: string, name: string) => (namespace === 'hooks' && name === 'conv' ? svc : undefined);

  before(async () => {
    svcHook = await startConversionWebhook({ sans: [SVC] });
    svcConv = converterFor(
      crd({
        strategy: 'Webhook',
        webhook: { clientConfig: { service: { namespace: 'hooks', name: 'conv', path: '/convert', port: svcHook.port }, caBundle: svcHook.caBundle }, conversionReviewVersions: ['v1'] },
      }),
      { timeoutMs: T },
    );
  });
  after(() => svcHook.close());

  const shown = () => `https://${SVC}:${svcHook.port}/convert?timeout=2s`;

  it('a ClusterIP Service is reached at its cluster IP and port, its certificate checked against the Service name', async () => {
    svcHook.reset();
    const [out] = await svcConv.convert([widget('v1', 'a')], 'v2', only(service({ type: 'ClusterIP', clusterIP: '127.0.0.1', ports: [{ port: svcHook.port }] })));
    assert.equal(out.apiVersion, 'example.com/v2');
    assert.equal(svcHook.requests.length, 1);
    assert.equal(svcHook.requests[0].url, '/convert?timeout=2s');
    assert.equal(svcHook.requests[0].headers.host, `${SVC}:${svcHook.port}`);
  });

  it('an ExternalName Service is reached at its external name and the reference\'s port', async () => {
    svcHook.reset();
    const [out] = await svcConv.convert([widget('v1', 'a')], 'v2', only(service({ type: 'ExternalName', externalName: 'localhost' })));
    assert.equal(out.apiVersion, 'example.com/v2');
    assert.equal(svcHook.requests.length, 1);
  });

  it('a Service that cannot be routed to fails with kube\'s resolver errors', async () => {
    const cases: [((ns: string, n: string) => any) | undefined, string][] = [
      [undefined, 'service "conv" not found'],
      [only(undefined), 'service "conv" not found'],
      [only(service({ type: 'ClusterIP', clusterIP: 'None', ports: [{ port: svcHook.port }] })), 'cannot route to service with ClusterIP "None"'],
      [only(service({ type: 'NodePort', clusterIP: '127.0.0.1', ports: [{ port: 1 }] })), `no service port ${svcHook.port} found for service "conv"`],
      [only(service({ type: 'Elsewhere' })), 'unsupported service type "Elsewhere"'],
    ];
    for (const [lookup, text] of cases) {
      svcHook.reset();
      const err = await rejection(svcConv.convert([widget('v1', 'a')], 'v2', lookup));
      assert.equal(err.code, 500);
      assert.equal(err.message, `${prefix} failed: Post "${shown()}": ${text}`);
      assert.equal(svcHook.requests.length, 0);
    }
  });

  it('dial and certificate errors name the resolved address and the Service name', async () => {
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const refusedConv = converterFor(
      crd({ strategy: 'Webhook', webhook: { clientConfig: { service: { namespace: 'hooks', name: 'conv', port } }, conversionReviewVersions: ['v1'] } }),
      { timeoutMs: T },
    );
    const refused = await rejection(refusedConv.convert([widget('v1', 'a')], 'v2', only(service({ type: 'ClusterIP', clusterIP: '127.0.0.1', ports: [{ port }] }))));
    assert.equal(refused.message, `${prefix} failed: Post "https://${SVC}:${port}/?timeout=2s": dial tcp 127.0.0.1:${port}: connect: connection refused`);

    // The other webhook's certificate (its own CA in caBundle) does not name the Service.
    const wrongCert = converterFor(
      crd({ strategy: 'Webhook', webhook: { clientConfig: { service: { namespace: 'hooks', name: 'conv', path: '/convert', port: wh.port }, caBundle: wh.caBundle }, conversionReviewVersions: ['v1'] } }),
      { timeoutMs: T },
    );
    const mismatch = await rejection(wrongCert.convert([widget('v1', 'a')], 'v2', only(service({ type: 'ClusterIP', clusterIP: '127.0.0.1', ports: [{ port: wh.port }] }))));
    assert.match(mismatch.message, new RegExp(`^${prefix} failed: Post "https://${SVC}:${wh.port}/convert\\?timeout=2s": tls: failed to verify certificate: x509: certificate is valid for .*localhost.*, not ${SVC.replace(/\./g, '\\.')}$`));
  });
});

describe('converterFor caching', () => {
  it('returns the same converter for the same CRD or an unchanged revision, a new one on change', () => {
    const c = crd(webhookConversion(wh), { name: 'cached.example.com' });
    const first = converterFor(c);
    assert.equal(converterFor(c), first);
    const relabelled = structuredClone(c);
    relabelled.metadata.labels = { x: 'y' };
    relabelled.spec.versions[0].schema = { openAPIV3Schema: { type: 'object' } };
    assert.equal(converterFor(relabelled), first);
    const moved = structuredClone(c);
    moved.spec.conversion.webhook.clientConfig.url = `${wh.url}2`;
    assert.notEqual(converterFor(moved), first);
    const toNone = structuredClone(c);
    toNone.spec.conversion = { strategy: 'None' };
    assert.equal(converterFor(toNone).trivial, true);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}
