// Bootstrap tokens as k8s.io/cluster-bootstrap reads them: the token's and the Secret name's
// shapes, expiration (Go's RFC 3339, unparseable = expired), extra groups (kube's pattern; one bad
// group refuses them all) and the authenticator's checks in kube's order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BootstrapTokenSecretCache,
  bootstrapTokenAuthenticator,
  bootstrapTokenExpiration,
  bootstrapTokenGroups,
  parseBootstrapToken,
  parseBootstrapTokenSecretName,
  type BootstrapTokenSecret,
} from '../../../server/authentication/bootstrap-token.ts';

const NOW = Date.parse('2026-06-01T12:00:00Z');

function secret(data: Record<string, string>, extra: Partial<BootstrapTokenSecret> = {}): BootstrapTokenSecret {
  const encoded = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
  return { metadata: { name: `bootstrap-token-${data['token-id'] ?? 'abcdef'}`, namespace: 'kube-system' }, type: 'bootstrap.kubernetes.io/token', data: encoded, ...extra };
}

const GOOD = { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true' };

test("tokens of kube's shape: 6 and 16 of [a-z0-9] around one dot, nothing else", () => {
  assert.deepEqual(parseBootstrapToken('abcdef.0123456789abcdef'), { id: 'abcdef', secret: '0123456789abcdef' });
  for (const bad of ['', 'abcdef0123456789abcdef', 'abcdef.0123456789abcde', 'abcdefg.0123456789abcdef', 'ABCDEF.0123456789abcdef', 'abcdef.0123456789abcdeF', 'abcdef:0123456789abcdef', 'abcdef.0123456789abcdef\n', ' abcdef.0123456789abcdef', 'abcde-.0123456789abcdef', 'x'.repeat(1 << 20)]) {
    assert.equal(parseBootstrapToken(bad), undefined, JSON.stringify(bad.slice(0, 40)));
  }
  assert.equal(parseBootstrapTokenSecretName('bootstrap-token-abcdef'), 'abcdef');
  for (const bad of ['bootstrap-token-abcdefg', 'bootstrap-token-ABCDEF', 'bootstrap-token-', 'xbootstrap-token-abcdef', 'bootstrap-token-abcdef\n']) assert.equal(parseBootstrapTokenSecretName(bad), undefined, bad);
});

test("expiration: none never expires; Go's RFC 3339 (offsets, fractions) until then; anything else is expired", () => {
  assert.deepEqual(bootstrapTokenExpiration(secret({}), NOW), { expired: false });
  assert.deepEqual(bootstrapTokenExpiration(secret({ expiration: '2026-06-01T12:00:10Z' }), NOW), { expired: false, remainingMs: 10_000 });
  assert.deepEqual(bootstrapTokenExpiration(secret({ expiration: '2026-06-01T13:00:10+01:00' }), NOW), { expired: false, remainingMs: 10_000 });
  assert.deepEqual(bootstrapTokenExpiration(secret({ expiration: '2026-06-01T12:00:00.5Z' }), NOW), { expired: false, remainingMs: 500 });
  assert.deepEqual(bootstrapTokenExpiration(secret({ expiration: '2026-06-01T12:00:00Z' }), NOW), { expired: true }, 'the very moment counts as passed (timeRemaining <= 0)');
  for (const bad of ['tomorrow', '2026-06-01 12:00:10Z', '2026-06-01T12:00:10', '2026-06-01t12:00:10z', '2026-13-01T12:00:10Z', '1780315210']) {
    assert.deepEqual(bootstrapTokenExpiration(secret({ expiration: bad }), NOW), { expired: true }, bad);
  }
});

test('groups: system:bootstrappers and the extra ones, sorted and once each; one outside the pattern fails them all', () => {
  assert.deepEqual(bootstrapTokenGroups(secret({})), { groups: ['system:bootstrappers'] });
  assert.deepEqual(bootstrapTokenGroups(secret({ 'auth-extra-groups': 'system:bootstrappers:z,system:bootstrappers:kubeadm:default-node-token,system:bootstrappers:z' })), {
    groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:bootstrappers:z'],
  });
  assert.deepEqual(bootstrapTokenGroups(secret({ 'auth-extra-groups': 'system:bootstrappers:ok,system:masters' })), {
    error: 'bootstrap group "system:masters" is invalid (must match \\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\\z)',
  });
  for (const bad of ['system:bootstrappers', 'system:bootstrappers:', 'system:bootstrappers:a-', 'system:bootstrappers:A', 'system:bootstrappers:a,', ' system:bootstrappers:a', `system:bootstrappers:${'a'.repeat(257)}`]) {
    assert.ok('error' in bootstrapTokenGroups(secret({ 'auth-extra-groups': bad })), bad);
  }
  assert.ok('groups' in bootstrapTokenGroups(secret({ 'auth-extra-groups': `system:bootstrappers:${'a'.repeat(256)}` })), '256 characters after the prefix fit');
});

test("the authenticator: the user for a good token; no opinion, with kube's reason, for each refusal", () => {
  const secrets = new Map<string, BootstrapTokenSecret>();
  const reasons: string[] = [];
  const auth = bootstrapTokenAuthenticator({ lookup: (name) => secrets.get(name), implicitAudiences: ['https://kubernetes.default.svc.cluster.local'], debug: (l) => reasons.push(l), now: () => NOW });
  const check = (data: Record<string, string>, extra: Partial<BootstrapTokenSecret> = {}, token = 'abcdef.0123456789abcdef') => {
    secrets.set('bootstrap-token-abcdef', secret(data, extra));
    reasons.length = 0;
    return auth.authenticateToken(token);
  };

  assert.deepEqual(check({ ...GOOD, 'auth-extra-groups': 'system:bootstrappers:x' }), { user: { name: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:x'] } });
  assert.deepEqual(auth.authenticateToken('abcdef.0123456789abcdef', ['https://kubernetes.default.svc.cluster.local', 'other']), {
    user: { name: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:x'] },
    audiences: ['https://kubernetes.default.svc.cluster.local'],
  });
  assert.equal(auth.authenticateToken('abcdef.0123456789abcdef', ['vault']), undefined, 'audience-agnostic: other audiences get no opinion');

  const refusals: [Record<string, string>, Partial<BootstrapTokenSecret>, string][] = [
    [GOOD, { metadata: { name: 'bootstrap-token-abcdef', deletionTimestamp: '2026-06-01T11:00:00Z' } }, 'is deleted and awaiting removal'],
    [GOOD, { type: 'Opaque' }, 'has invalid type, expected bootstrap.kubernetes.io/token.'],
    [GOOD, { data: undefined }, 'has invalid type, expected bootstrap.kubernetes.io/token.'],
    [{ ...GOOD, 'token-secret': '0123456789abcdeX' }, {}, 'has invalid value for key token-secret.'],
    [{ ...GOOD, 'token-secret': '0123456789abcdef0' }, {}, 'has invalid value for key token-secret.'],
    [{ ...GOOD, 'token-id': 'zzzzzz' }, { metadata: { name: 'bootstrap-token-abcdef' } }, 'has invalid value for key token-id.'],
    [{ ...GOOD, expiration: '2026-06-01T11:59:59Z' }, {}, 'has expired.'],
    [{ ...GOOD, expiration: 'soon' }, {}, 'has expired.'],
    [{ ...GOOD, 'usage-bootstrap-authentication': 'True' }, {}, 'not marked usage-bootstrap-authentication=true.'],
    [{ 'token-id': 'abcdef', 'token-secret': '0123456789abcdef' }, {}, 'not marked usage-bootstrap-authentication=true.'],
    [{ ...GOOD, 'auth-extra-groups': 'system:nodes' }, {}, 'has invalid value for key auth-extra-groups: bootstrap group "system:nodes" is invalid (must match \\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\\z).'],
  ];
  for (const [data, extra, reason] of refusals) {
    assert.equal(check(data, extra), undefined, reason);
    assert.deepEqual(reasons, [`Bootstrap secret kube-system/bootstrap-token-abcdef matching bearer token ${reason}`]);
  }
  assert.equal(check(GOOD, {}, 'abcdef.0123456789abcdeg'), undefined);
  secrets.clear();
  reasons.length = 0;
  assert.equal(auth.authenticateToken('abcdef.0123456789abcdef'), undefined);
  assert.deepEqual(reasons, ['No secret of name bootstrap-token-abcdef to match bootstrap bearer token']);
  reasons.length = 0;
  assert.equal(auth.authenticateToken('not-a-bootstrap-token'), undefined);
  assert.deepEqual(reasons, [], 'another shape is not looked up at all');
});

test('the cache holds the token-named Secrets of kube-system as the commit stream leaves them, and nothing else', () => {
  const named = (ns: string, name: string, type = 'bootstrap.kubernetes.io/token'): BootstrapTokenSecret => ({ metadata: { name, namespace: ns }, type, data: {} });
  const cache = new BootstrapTokenSecretCache([named('kube-system', 'bootstrap-token-abcdef'), named('kube-system', 'other'), named('kube-system', 'bootstrap-token-toolong')]);
  assert.ok(cache.lookup('bootstrap-token-abcdef'));
  assert.equal(cache.lookup('other'), undefined, 'no token asks for it');
  assert.equal(cache.lookup('bootstrap-token-toolong'), undefined);

  const opaque = named('kube-system', 'bootstrap-token-abcdef', 'Opaque');
  cache.observe([
    { type: 'MODIFIED', key: { res: 'secrets', ns: 'kube-system', name: 'bootstrap-token-abcdef' }, object: opaque },
    { type: 'ADDED', key: { res: 'secrets', ns: 'default', name: 'bootstrap-token-zzzzzz' }, object: named('default', 'bootstrap-token-zzzzzz') },
    { type: 'ADDED', key: { res: 'configmaps', ns: 'kube-system', name: 'bootstrap-token-yyyyyy' }, object: named('kube-system', 'bootstrap-token-yyyyyy') },
    { type: 'ADDED', key: { res: 'secrets', ns: 'kube-system', name: 'bootstrap-token-xxxxxx' }, object: named('kube-system', 'bootstrap-token-xxxxxx') },
  ]);
  assert.equal(cache.lookup('bootstrap-token-abcdef'), opaque, 'the newest version');
  assert.equal(cache.lookup('bootstrap-token-zzzzzz'), undefined, 'another namespace');
  assert.equal(cache.lookup('bootstrap-token-yyyyyy'), undefined, 'another resource');
  assert.ok(cache.lookup('bootstrap-token-xxxxxx'));
  cache.observe([{ type: 'DELETED', key: { res: 'secrets', ns: 'kube-system', name: 'bootstrap-token-xxxxxx' }, object: named('kube-system', 'bootstrap-token-xxxxxx') }]);
  assert.equal(cache.lookup('bootstrap-token-xxxxxx'), undefined);
});
