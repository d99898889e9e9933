// The impersonation middleware's rules, against kube's impersonation filter: what each header asks
// for, what is asked of the authorizers (recorded by a test authorizer), the user that results,
// and the headers left behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { impersonatedUser, impersonationMiddleware, impersonationRequests, splitServiceAccountUsername, unescapeExtraKey, type ImpersonationSource } from '../../../server/authentication/impersonation.ts';
import type { AuthorizationAttributes, Authorizer } from '../../../server/authorization/authorizer.ts';
import type { UserInfo } from '../../../server/authentication/user.ts';
import { ApiError } from '../../../server/errors.ts';

/** A request from its raw header list (Node's rawHeaders), with `headers` built as Node builds it. */
function request(raw: string[]): ImpersonationSource & { headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    headers[name] = headers[name] === undefined ? raw[i + 1] : `${headers[name]}, ${raw[i + 1]}`;
  }
  return { headers, rawHeaders: raw, socket: {} as Socket };
}

const ADMIN: UserInfo = { name: 'admin', groups: ['system:masters', 'system:authenticated'] };

/** Runs the middleware as the given caller with an authorizer that records each question and allows what `allow` says. */
async function run(raw: string[], allow: (a: AuthorizationAttributes) => boolean = () => true, caller: UserInfo = ADMIN) {
  const asked: AuthorizationAttributes[] = [];
  const recorder: Authorizer = { name: 'recorder', authorize: (a) => (asked.push(a), allow(a) ? 'allow' : 'noopinion') };
  const req = request(raw);
  const ctx = { req, state: { user: caller } };
  let nextUser: UserInfo | undefined;
  const mw = impersonationMiddleware([recorder]);
  let error: unknown;
  try {
    await mw(ctx as unknown as Parameters<typeof mw>[0], async () => {
      nextUser = ctx.state.user;
    });
  } catch (e) {
    error = e;
  }
  return { asked, user: nextUser, error, headers: req.headers };
}

test("splitServiceAccountUsername is kube's SplitUsername: valid namespace and name, exactly two parts", () => {
  assert.deepEqual(splitServiceAccountUsername('system:serviceaccount:team-a:builder'), { namespace: 'team-a', name: 'builder' });
  assert.deepEqual(splitServiceAccountUsername('system:serviceaccount:ns:my.sa'), { namespace: 'ns', name: 'my.sa' }, 'a name is a subdomain');
  for (const notSa of ['system:serviceaccount:ns', 'system:serviceaccount:a:b:c', 'system:serviceaccount:NS:sa', 'system:serviceaccount:a.b:sa', 'system:serviceaccount::sa', 'system:serviceaccount:ns:', 'system:serviceaccounts:ns:sa', 'jane']) {
    assert.equal(splitServiceAccountUsername(notSa), undefined, notSa);
  }
});

test("extra keys are lower-cased and percent-decoded as Go's url.PathUnescape; a malformed escape keeps the key", () => {
  assert.equal(unescapeExtraKey('example.com%2fscopes'), 'example.com/scopes');
  assert.equal(unescapeExtraKey('a%20b+c'), 'a b+c', '+ is no space in a path');
  assert.equal(unescapeExtraKey('caf%c3%a9'), 'café');
  assert.equal(unescapeExtraKey('bad%zz'), 'bad%zz');
  assert.equal(unescapeExtraKey('trailing%2'), 'trailing%2');
  const [r] = impersonationRequests(request(['Impersonate-User', 'jane', 'Impersonate-Extra-Example.com%2FScopes', 'view'])).slice(1);
  assert.deepEqual(r, { kind: 'UserExtra', namespace: '', name: 'view', apiVersion: 'authentication.k8s.io/v1', fieldPath: 'example.com/scopes' });
});

test('the requests, in kube order: user (or service account), groups, extras, uid; the first Impersonate-User counts', () => {
  const rs = impersonationRequests(request(['Impersonate-Uid', 'u-1', 'Impersonate-Group', 'a', 'Impersonate-User', 'system:serviceaccount:ns:sa', 'Impersonate-Group', 'b, c', 'Impersonate-Extra-Scope', 'x', 'Impersonate-Extra-Scope', 'y', 'Impersonate-User', 'second']));
  assert.deepEqual(
    rs.map((r) => [r.kind, r.namespace, r.name, r.fieldPath]),
    [
      ['ServiceAccount', 'ns', 'sa', ''],
      ['Group', '', 'a', ''],
      ['Group', '', 'b, c', ''],
      ['UserExtra', '', 'x', 'scope'],
      ['UserExtra', '', 'y', 'scope'],
      ['UID', '', 'u-1', ''],
    ],
  );
  assert.deepEqual(impersonationRequests(request(['Accept', 'application/json'])), []);
  assert.deepEqual(impersonationRequests(request(['Impersonate-User', ''])), [], 'an empty user asks for nothing');
});

test('without the raw header list, list headers are split back at ", " and the user is taken whole', () => {
  const rs = impersonationRequests({ headers: { 'impersonate-user': 'Doe, Jane', 'impersonate-group': 'a, b' }, socket: {} as Socket });
  assert.deepEqual(rs.map((r) => [r.kind, r.name]), [['User', 'Doe, Jane'], ['Group', 'a'], ['Group', 'b']]);
});

test('groups, extras or a uid without a user: 400 BadRequest with the requests as Go prints them', () => {
  const error = (raw: string[]) => {
    try {
      impersonationRequests(request(raw));
    } catch (e) {
      assert.ok(e instanceof ApiError);
      assert.equal(e.code, 400);
      assert.equal(e.reason, 'BadRequest');
      return e.message;
    }
    assert.fail('no error');
  };
  assert.equal(error(['Impersonate-Group', 'g1', 'Impersonate-Group', 'g2']), 'requested [{Group  g1    } {Group  g2    }] without impersonating a user');
  assert.equal(error(['Impersonate-Extra-K', 'v', 'Impersonate-Uid', 'u']), 'requested [{UserExtra  v  authentication.k8s.io/v1  k} {UID  u  authentication.k8s.io/v1  }] without impersonating a user');
  assert.equal(error(['Impersonate-User', '', 'Impersonate-Uid', 'u']), 'requested [{UID  u  authentication.k8s.io/v1  }] without impersonating a user');
});

test("the impersonated user: kube's group rules", () => {
  const user = (raw: string[]) => impersonatedUser(impersonationRequests(request(raw)));
  assert.deepEqual(user(['Impersonate-User', 'jane']), { name: 'jane', groups: ['system:authenticated'], extra: {} });
  assert.deepEqual(user(['Impersonate-User', 'system:serviceaccount:ns:sa']), { name: 'system:serviceaccount:ns:sa', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns', 'system:authenticated'], extra: {} });
  assert.deepEqual(user(['Impersonate-User', 'system:serviceaccount:ns:sa', 'Impersonate-Group', 'g']).groups, ['g', 'system:authenticated'], "given groups replace the service account's");
  assert.deepEqual(user(['Impersonate-User', 'system:anonymous']).groups, ['system:unauthenticated']);
  assert.deepEqual(user(['Impersonate-User', 'system:anonymous', 'Impersonate-Group', 'system:authenticated']).groups, ['system:authenticated', 'system:unauthenticated']);
  assert.deepEqual(user(['Impersonate-User', 'jane', 'Impersonate-Group', 'system:unauthenticated']).groups, ['system:unauthenticated']);
  assert.deepEqual(user(['Impersonate-User', 'jane', 'Impersonate-Group', 'system:authenticated', 'Impersonate-Group', 'dev']).groups, ['system:authenticated', 'dev']);
  assert.deepEqual(user(['Impersonate-User', 'jane', 'Impersonate-Uid', 'u-1', 'Impersonate-Extra-Scopes', 'a', 'Impersonate-Extra-Scopes', 'b']), { name: 'jane', uid: 'u-1', groups: ['system:authenticated'], extra: { scopes: ['a', 'b'] } });
});

test('each request is asked of the chain for the real caller, with kube attributes; the user is replaced and the headers removed', async () => {
  const { asked, user, headers } = await run(['Impersonate-User', 'system:serviceaccount:ns:sa', 'Impersonate-Group', 'g', 'Impersonate-Extra-Example.com%2fScopes', 'view', 'Impersonate-Uid', 'u-1', 'Accept', '*/*']);
  const question = (a: AuthorizationAttributes) => [a.user.name, a.verb, a.isResourceRequest, a.apiGroup, a.apiVersion, a.resource, a.subresource, a.namespace, a.name];
  assert.deepEqual(asked.map(question), [
    ['admin', 'impersonate', true, '', '', 'serviceaccounts', '', 'ns', 'sa'],
    ['admin', 'impersonate', true, '', '', 'groups', '', '', 'g'],
    ['admin', 'impersonate', true, 'authentication.k8s.io', 'v1', 'userextras', 'example.com/scopes', '', 'view'],
    ['admin', 'impersonate', true, 'authentication.k8s.io', 'v1', 'uids', '', '', 'u-1'],
  ]);
  assert.deepEqual(user, { name: 'system:serviceaccount:ns:sa', uid: 'u-1', groups: ['g', 'system:authenticated'], extra: { 'example.com/scopes': ['view'] } });
  assert.deepEqual(Object.keys(headers), ['accept']);
});

test('the first refusal is a 403 naming the real caller and what it asked; nothing runs after it', async () => {
  const denyExtras = (a: AuthorizationAttributes) => a.resource !== 'userextras';
  const { asked, user, error } = await run(['Impersonate-User', 'jane', 'Impersonate-Extra-Example.com%2fScopes', 'view', 'Impersonate-Uid', 'u-1'], denyExtras);
  assert.equal(user, undefined);
  assert.equal(asked.length, 2, 'the uid is never asked once the extra is refused');
  assert.ok(error instanceof ApiError);
  assert.equal(error.code, 403);
  assert.equal(error.message, 'userextras.authentication.k8s.io "view" is forbidden: User "admin" cannot impersonate resource "userextras/example.com/scopes" in API group "authentication.k8s.io" at the cluster scope');
  assert.deepEqual(error.details, { name: 'view', group: 'authentication.k8s.io', kind: 'userextras' });

  const uid = await run(['Impersonate-User', 'jane', 'Impersonate-Uid', 'u-1'], (a) => a.resource !== 'uids');
  assert.ok(uid.error instanceof ApiError);
  assert.equal(uid.error.message, 'uids.authentication.k8s.io "u-1" is forbidden: User "admin" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope');

  const group = await run(['Impersonate-User', 'jane', 'Impersonate-Group', 'system:masters'], (a) => a.resource !== 'groups');
  assert.ok(group.error instanceof ApiError);
  assert.equal(group.error.message, 'groups "system:masters" is forbidden: User "admin" cannot impersonate resource "groups" in API group "" at the cluster scope');
});

test('a request without Impersonate-* headers keeps its user and asks nothing', async () => {
  const { asked, user } = await run(['Accept', 'application/json', 'Impersonate', 'x']);
  assert.deepEqual(asked, []);
  assert.equal(user, ADMIN);
  const empty = await run(['Impersonate-User', '']);
  assert.deepEqual(empty.asked, []);
  assert.equal(empty.user, ADMIN);
});
