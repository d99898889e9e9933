// The attributes a request is authorized with, as kube's RequestInfo and
// GetAuthorizerAttributes make them (AuthorizeWithSelectors): a list's, watch's or
// deletecollection's field and label selector requirements (or the error parsing them), and a
// list's or watch's name from its metadata.name selector, which the Node authorizer decides on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { authorizationMiddleware, type AuthorizationAttributes, type Authorizer } from '../../../../server/authorization/authorizer.ts';

/** The attributes the middleware hands the chain for a request (the chain allows, to let it through). */
async function attributesOf(method: string, path: string, query: string, ri: Partial<AuthorizationAttributes>): Promise<AuthorizationAttributes> {
  let seen: AuthorizationAttributes | undefined;
  const capture: Authorizer = { name: 'capture', authorize: (a) => ((seen = a), 'allow') };
  const requestInfo = { isResourceRequest: true, path, verb: 'list', apiGroup: '', apiVersion: 'v1', namespace: '', resource: 'pods', subresource: '', name: '', ...ri };
  const ctx = { method, querystring: query, state: { user: { name: 'system:node:n1', groups: ['system:nodes'] }, requestInfo } };
  await authorizationMiddleware([capture])(ctx as never, async () => {});
  return seen!;
}

test('a list is authorized with its selectors; a metadata.name selector names the object', async () => {
  const a = await attributesOf('GET', '/api/v1/pods', 'fieldSelector=spec.nodeName%3Dn1,status.phase!%3DFailed&labelSelector=app%3Dweb,tier', {});
  assert.deepEqual(a.fieldSelectorRequirements, [
    { field: 'spec.nodeName', op: '=', value: 'n1' },
    { field: 'status.phase', op: '!=', value: 'Failed' },
  ]);
  assert.deepEqual(a.labelSelectorRequirements, [
    { key: 'app', op: '=', values: ['web'] },
    { key: 'tier', op: 'exists', values: [] },
  ]);
  assert.equal(a.name, '');
  const named = await attributesOf('GET', '/api/v1/namespaces/ns/secrets', 'fieldSelector=metadata.name%3D%3Ds1', { verb: 'watch', namespace: 'ns', resource: 'secrets' });
  assert.equal(named.name, 's1');
  // A name that cannot stand in a path is not taken (path.IsValidPathSegmentName).
  assert.equal((await attributesOf('GET', '/api/v1/secrets', 'fieldSelector=metadata.name%3Da%2Fb', { resource: 'secrets' })).name, '');
  // metadata.name!=x names nothing.
  assert.equal((await attributesOf('GET', '/api/v1/secrets', 'fieldSelector=metadata.name!%3Ds1', { resource: 'secrets' })).name, '');
});

test('selectors that do not parse are kept as errors; the /watch/ path form and other verbs have none', async () => {
  const bad = await attributesOf('GET', '/api/v1/pods', 'fieldSelector=spec.nodeName&labelSelector=a%20in%20(', {});
  assert.equal(bad.fieldSelectorRequirements, undefined);
  assert.equal(bad.fieldSelectorParsingError, "invalid selector: 'spec.nodeName'; can't understand 'spec.nodeName'");
  assert.equal(bad.labelSelectorRequirements, undefined);
  assert.match(bad.labelSelectorParsingError!, /^unable to parse requirement: /);
  const viaPath = await attributesOf('GET', '/api/v1/watch/pods', 'fieldSelector=spec.nodeName%3Dn1', { verb: 'watch' });
  assert.equal(viaPath.fieldSelectorRequirements, undefined);
  const deleteCollection = await attributesOf('DELETE', '/api/v1/namespaces/ns/pods', 'fieldSelector=spec.nodeName%3Dn1', { verb: 'deletecollection', namespace: 'ns' });
  assert.deepEqual(deleteCollection.fieldSelectorRequirements, [{ field: 'spec.nodeName', op: '=', value: 'n1' }]);
  assert.equal(deleteCollection.name, '');
  const get = await attributesOf('GET', '/api/v1/namespaces/ns/pods/p', 'fieldSelector=spec.nodeName%3Dn1', { verb: 'get', namespace: 'ns', name: 'p' });
  assert.equal(get.fieldSelectorRequirements, undefined);
});
