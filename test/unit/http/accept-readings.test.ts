// The one Accept parser (http/negotiation.ts parseAccept) and the readings that keep what each
// endpoint answered before they shared it: where they differ, pinned here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAccept, negotiateOutput, API_ACCEPT, DISCOVERY_ACCEPT, OPENAPI_ACCEPT } from '../../../server/http/negotiation.ts';
import { negotiateDiscovery } from '../../../server/http/discovery.ts';
import { openApiV2ProtobufContentType, OPENAPI_V2_PROTOBUF, OPENAPI_V2_PROTOBUF_CONTENT_TYPE } from '../../../server/http/openapi-v2-proto.ts';

const AGGREGATED_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

test('parseAccept: ranges by q, then header order; names lower-cased, values trimmed and unquoted', () => {
  const ranges = parseAccept('application/yaml;q=0.5, Application/JSON; AS = Table ;g="meta.k8s.io";v=v1, */*;q=0.8', API_ACCEPT);
  assert.deepEqual(ranges.map((r) => [r.mediaType, r.q]), [['application/json', 1], ['*/*', 0.8], ['application/yaml', 0.5]]);
  assert.deepEqual([...ranges[0].params], [['as', 'Table'], ['g', 'meta.k8s.io'], ['v', 'v1']]);
  assert.equal(ranges[0].type, 'application');
  assert.equal(ranges[0].subtype, 'json');
  assert.equal(parseAccept('text', API_ACCEPT)[0].subtype, undefined);
});

test('quality: as written for the API (above 1 counts more), clamped for discovery, nonsense kept from before for OpenAPI', () => {
  assert.equal(negotiateOutput('application/json, application/yaml;q=2', []).encoding, 'yaml');
  assert.equal(parseAccept('a/b;q=2', DISCOVERY_ACCEPT)[0].q, 1);
  assert.equal(parseAccept('a/b;q=abc', DISCOVERY_ACCEPT)[0].q, 1);
  assert.ok(Number.isNaN(parseAccept('a/b;q=abc', API_ACCEPT)[0].q));
  assert.equal(parseAccept('a/b;q=0.5;q=abc', OPENAPI_ACCEPT)[0].q, 0.5);
  // (q=5 counts as 1 in discovery: a tie, so the range sent first wins)
  assert.equal(negotiateDiscovery(`application/json;q=5, ${AGGREGATED_V2}`)?.form, 'legacy');
});

test('quotes: the API drops them at either end, discovery only in pairs (and splits around them), OpenAPI keeps them', () => {
  assert.equal(parseAccept('a/b;v="v1', API_ACCEPT)[0].params.get('v'), 'v1');
  assert.equal(parseAccept('a/b;v="v1', DISCOVERY_ACCEPT)[0].params.get('v'), '"v1');
  assert.equal(parseAccept('a/b;q="0.5"', API_ACCEPT)[0].q, 0.5);
  assert.equal(parseAccept('a/b;q="0.5"', OPENAPI_ACCEPT)[0].q, 1);
  assert.deepEqual(parseAccept('a/b;x="1,2", c/d', DISCOVERY_ACCEPT).map((r) => r.mediaType), ['a/b', 'c/d']);
  assert.deepEqual(parseAccept('a/b;x="1,2", c/d', API_ACCEPT).map((r) => r.mediaType), ['a/b', '2"', 'c/d']);
  assert.equal(negotiateDiscovery(`application/json;x="a,b";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`)?.form, 'aggregated-v2');
});

test('/openapi/v2 ranks equal q by specificity, as goautoneg does; the others by header order', () => {
  assert.equal(openApiV2ProtobufContentType(`*/*, ${OPENAPI_V2_PROTOBUF}`), OPENAPI_V2_PROTOBUF_CONTENT_TYPE);
  assert.equal(openApiV2ProtobufContentType(`application/*, ${OPENAPI_V2_PROTOBUF}`), OPENAPI_V2_PROTOBUF_CONTENT_TYPE);
  assert.equal(negotiateOutput('*/*, application/yaml', []).encoding, 'json');
  // A range without a subtype is type/* there: "application" takes JSON, the first offer.
  assert.equal(openApiV2ProtobufContentType(`application, ${OPENAPI_V2_PROTOBUF}`), OPENAPI_V2_PROTOBUF_CONTENT_TYPE);
  assert.equal(openApiV2ProtobufContentType('application'), undefined);
});
