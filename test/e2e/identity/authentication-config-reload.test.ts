// --authentication-config reloaded while serving, as kube-apiserver reloads it: the file rewritten
// to trust another OIDC issuer (two real HTTPS issuers on loopback, each with its own CA) changes
// which tokens authenticate; a rewrite that does not validate, or that changes the anonymous
// section, is logged with kube's words and the authenticators already in use stay.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { startOidcIssuer, type OidcIssuer } from '../../helpers/oidc-issuer.ts';
import { logMessage } from '../../helpers/log-lines.ts';

const dir = mkdtempSync(join(tmpdir(), 'hearth-authn-reload-'));
const configFile = join(dir, 'authn.yaml');
let first: OidcIssuer;
let second: OidcIssuer;
let s: TestServer;
const logs: string[] = [];

/** A configuration trusting this issuer, its usernames prefixed with `prefix`; anonymous as given. */
function configFor(issuer: OidcIssuer, prefix: string, anonymous = 'anonymous:\n  enabled: true\n'): string {
  const ca = issuer.caPem.trim().split('\n').map((l) => `        ${l}`).join('\n');
  return `apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
  - issuer:
      url: ${issuer.url}
      audiences: [${issuer.clientId}]
      certificateAuthority: |
${ca}
    claimMappings:
      username:
        claim: sub
        prefix: "${prefix}"
${anonymous}`;
}

before(async () => {
  first = await startOidcIssuer();
  second = await startOidcIssuer();
  writeFileSync(configFile, configFor(first, 'first:'));
  // No success cache in front of the tokens, so a reload shows on the next request.
  s = await startTestServer({ options: { authenticationConfigFile: configFile, authenticationConfigReloadIntervalMs: 100, tokenSuccessCacheTtlMs: 0, jwtTiming: { discoveryRetryMs: 100 }, log: (l) => logs.push(logMessage(l)) } });
});
after(async () => {
  await s?.stop();
  await first?.close();
  await second?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** SelfSubjectReview with only this bearer token: its username, or the status code. */
async function whoami(token: string): Promise<string | number> {
  const r = await s.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { anonymous: true, headers: { authorization: `Bearer ${token}` }, body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
  return r.status === 201 ? (r.json().status.userInfo.username as string) : r.status;
}

async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`never happened: ${what}`);
}

test('the file rewritten to another issuer: its tokens authenticate, the first issuer\'s no longer do', async () => {
  const firstToken = await first.token({ sub: 'alice' });
  const secondToken = await second.token({ sub: 'bob' });
  await eventually('the first issuer is discovered', async () => (await whoami(firstToken)) === 'first:alice');
  assert.equal(await whoami(secondToken), 401);

  writeFileSync(configFile, configFor(second, 'second:'));
  await eventually('the second issuer\'s token authenticates', async () => (await whoami(secondToken)) === 'second:bob');
  assert.equal(await whoami(firstToken), 401);
  assert.ok(logs.includes('reloaded authentication config'), logs.join('\n'));
});

test('a rewrite that does not validate, or changes anonymous, is logged and the authenticators in use stay', async () => {
  const secondToken = await second.token({ sub: 'carol' });
  assert.equal(await whoami(secondToken), 'second:carol');

  writeFileSync(configFile, configFor(second, 'second:', 'anonymous:\n  enabled: false\n'));
  await eventually('the anonymous change is refused', async () => logs.includes('failed to validate authentication config: anonymous: Forbidden: changed from initial configuration file'));
  assert.equal(await whoami(secondToken), 'second:carol');

  writeFileSync(configFile, 'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n  - issuer:\n      url: http://insecure.example.com\n      audiences: [x]\n    claimMappings:\n      username:\n        claim: sub\n        prefix: ""\nanonymous:\n  enabled: true\n');
  await eventually('the invalid issuer is refused', async () => logs.some((l) => l.startsWith('failed to validate authentication config: jwt[0].issuer.url: Invalid value: "http://insecure.example.com": URL scheme must be https')));
  assert.equal(await whoami(secondToken), 'second:carol');
});
