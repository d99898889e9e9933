// AuthenticationConfiguration and the --oidc-* flags as kube-apiserver reads them: the flags'
// conversion (username prefix defaulting, groups, required claims), the strict decoder, and
// ValidateAuthenticationConfiguration's field errors word for word, with the CEL compiled in the
// server's CEL environment (claims and user variables, return types, email_verified rule).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authenticationSetup, decodeAuthenticationConfig, validateAuthenticationConfiguration, type JWTAuthenticatorConfig } from '../../../server/authentication/jwt/config.ts';
import { fieldErrorText } from '../../../server/validation/field.ts';

const ISSUER = 'https://idp.example.com';

function errorsOf(jwt: Partial<JWTAuthenticatorConfig>[], disallowed: string[] = []): string[] {
  const full = jwt.map((j) => ({ issuer: { url: ISSUER, audiences: ['a'] }, claimMappings: { username: { claim: 'sub', prefix: '' } }, ...j }) as JWTAuthenticatorConfig);
  return validateAuthenticationConfiguration({ jwt: full }, disallowed).errors.map(fieldErrorText);
}

test('--oidc-* flags become one JWT authenticator as kube converts them', () => {
  const sub = authenticationSetup({ oidc: { issuerURL: ISSUER, clientID: 'c' } }).jwt[0]!;
  assert.deepEqual(sub.config.claimMappings.username, { prefix: `${ISSUER}#`, claim: 'sub' }, 'a non-email claim without a prefix gets <issuer>#');
  assert.deepEqual(sub.config.issuer, { url: ISSUER, audiences: ['c'] });
  assert.deepEqual(sub.signingAlgs, ['RS256']);

  const email = authenticationSetup({ oidc: { issuerURL: ISSUER, clientID: 'c', usernameClaim: 'email' } }).jwt[0]!;
  assert.deepEqual(email.config.claimMappings.username, { prefix: '', claim: 'email' }, 'email is not prefixed');
  const none = authenticationSetup({ oidc: { issuerURL: ISSUER, clientID: 'c', usernamePrefix: '-' } }).jwt[0]!;
  assert.equal(none.config.claimMappings.username.prefix, '', '"-" means no prefix');
  const own = authenticationSetup({ oidc: { issuerURL: ISSUER, clientID: 'c', usernamePrefix: 'corp:', groupsClaim: 'groups', groupsPrefix: 'g:', requiredClaims: { hd: 'example.com' }, signingAlgs: ['ES256', 'RS256'] } }).jwt[0]!;
  assert.equal(own.config.claimMappings.username.prefix, 'corp:');
  assert.deepEqual(own.config.claimMappings.groups, { prefix: 'g:', claim: 'groups' });
  assert.deepEqual(own.config.claimValidationRules, [{ claim: 'hd', requiredValue: 'example.com' }]);
  assert.deepEqual(own.signingAlgs, ['ES256', 'RS256']);

  assert.deepEqual(authenticationSetup({}).jwt, [], 'no flags, no authenticator');
  assert.throws(() => authenticationSetup({ oidc: { issuerURL: ISSUER } }), { message: 'oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set' });
  assert.throws(() => authenticationSetup({ oidc: { issuerURL: ISSUER, clientID: 'c', caFile: '/nonexistent/ca.pem' } }), { message: 'open /nonexistent/ca.pem: no such file or directory' });
  assert.throws(() => authenticationSetup({ oidc: { issuerURL: ISSUER, clientID: 'c', signingAlgs: ['none'] } }), { message: 'oidc: unsupported signing alg: "none"' });
});

test('the config file: YAML or JSON, its versions, strict decoding, and kube\'s load errors', () => {
  for (const v of ['v1alpha1', 'v1beta1', 'v1']) {
    const c = decodeAuthenticationConfig(`apiVersion: apiserver.config.k8s.io/${v}\nkind: AuthenticationConfiguration\njwt: []\n`);
    assert.deepEqual(c, { jwt: [] }, v);
  }
  assert.deepEqual(decodeAuthenticationConfig(JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AuthenticationConfiguration', anonymous: { enabled: true, conditions: [{ path: '/livez' }] } })), { anonymous: { enabled: true, conditions: [{ path: '/livez' }] } });
  assert.throws(() => decodeAuthenticationConfig('apiVersion: apiserver.config.k8s.io/v2\nkind: AuthenticationConfiguration\n'), /no kind "AuthenticationConfiguration" is registered for version "apiserver.config.k8s.io\/v2"/);
  assert.throws(() => decodeAuthenticationConfig('apiVersion: apiserver.config.k8s.io/v1\n'), /Object 'Kind' is missing in '{"apiVersion"/);
  assert.throws(() => decodeAuthenticationConfig('apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: x, audience: [a]}\n'), { message: 'strict decoding error: unknown field "jwt[0].issuer.audience"' });
  assert.throws(() => decodeAuthenticationConfig('apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: {}\n'), { message: 'strict decoding error: json: cannot unmarshal object into Go struct field AuthenticationConfiguration.jwt of type []v1.JWTAuthenticator' });

  const dir = mkdtempSync(join(tmpdir(), 'hearth-authn-config-'));
  try {
    const empty = join(dir, 'empty.yaml');
    writeFileSync(empty, '');
    assert.throws(() => authenticationSetup({ configFile: empty }), { message: `failed to load authentication configuration from file "${empty}": empty config data` });
    assert.throws(() => authenticationSetup({ configFile: join(dir, 'missing.yaml') }), { message: `failed to load authentication configuration from file "${join(dir, 'missing.yaml')}": open ${join(dir, 'missing.yaml')}: no such file or directory` });
    const ok = join(dir, 'ok.yaml');
    writeFileSync(ok, `apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: "${ISSUER}", audiences: [a]}\n  claimMappings:\n    username: {claim: sub, prefix: ""}\n`);
    const setup = authenticationSetup({ configFile: ok });
    assert.equal(setup.jwt.length, 1);
    assert.equal(setup.jwt[0]!.signingAlgs.length, 9, 'a config file allows every algorithm kube allows');
    assert.throws(() => authenticationSetup({ configFile: ok, oidc: { usernameClaim: 'email' } }), { message: 'authentication-config file and oidc-* flags are mutually exclusive' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('issuer validation: https URL without credentials, query or fragment; audiences and their policy; disallowed issuers; duplicates', () => {
  assert.deepEqual(errorsOf([{ issuer: { url: 'http://idp.example.com?x=1#f', audiences: ['a'] } }]), [
    'jwt[0].issuer.url: Invalid value: "http://idp.example.com?x=1#f": URL scheme must be https',
    'jwt[0].issuer.url: Invalid value: "http://idp.example.com?x=1#f": URL must not contain a query',
    'jwt[0].issuer.url: Invalid value: "http://idp.example.com?x=1#f": URL must not contain a fragment',
  ]);
  assert.deepEqual(errorsOf([{ issuer: { url: '', audiences: [] } }]), ['jwt[0].issuer.url: Required value', 'jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required']);
  assert.deepEqual(errorsOf([{ issuer: { url: ISSUER, audiences: ['a', 'a', ''] } }]), [
    'jwt[0].issuer.audiences[1]: Duplicate value: "a"',
    'jwt[0].issuer.audiences[2]: Required value',
    'jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences',
  ]);
  assert.deepEqual(errorsOf([{ issuer: { url: ISSUER, audiences: ['a'], audienceMatchPolicy: 'MatchAll' } }]), ['jwt[0].issuer.audienceMatchPolicy: Invalid value: "MatchAll": audienceMatchPolicy must be empty or MatchAny for single audience']);
  assert.deepEqual(errorsOf([{ issuer: { url: ISSUER, discoveryURL: `${ISSUER}/`, audiences: ['a'] } }]), ['jwt[0].issuer.discoveryURL: Invalid value: "https://idp.example.com/": discoveryURL must be different from URL']);
  assert.deepEqual(errorsOf([{ issuer: { url: ISSUER, audiences: ['a'], certificateAuthority: 'not a pem' } }]), ['jwt[0].issuer.certificateAuthority: Invalid value: "<omitted>": data does not contain any valid RSA or ECDSA certificates']);
  assert.deepEqual(errorsOf([{}], [ISSUER, 'https://b.example']), ['jwt[0].issuer.url: Invalid value: "https://idp.example.com": URL must not overlap with disallowed issuers: [https://b.example https://idp.example.com]']);
  assert.deepEqual(errorsOf([{}, {}]), ['jwt[1].issuer.url: Duplicate value: "https://idp.example.com"']);
});

test('claim mappings and rules: claim or expression, prefixes, extra keys, CEL compilation and return types', () => {
  assert.deepEqual(errorsOf([{ claimMappings: { username: {} } }]), ['jwt[0].claimMappings.username: Required value: claim or expression is required']);
  assert.deepEqual(errorsOf([{ claimMappings: { username: { claim: 'sub' } } }]), ['jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing']);
  assert.deepEqual(errorsOf([{ claimMappings: { username: { claim: 'sub', expression: 'claims.sub' } } }]), [`jwt[0].claimMappings.username: Invalid value: "": claim and expression can't both be set`]);
  assert.deepEqual(errorsOf([{ claimMappings: { username: { expression: 'claims.sub', prefix: 'x:' } } }]), ['jwt[0].claimMappings.username.prefix: Invalid value: "x:": may not be specified when expression is set']);
  const [compile] = errorsOf([{ claimMappings: { username: { expression: 'claims.sub + 1 +' } } }]);
  assert.match(compile!, /^jwt\[0\]\.claimMappings\.username\.expression: Invalid value: "claims\.sub \+ 1 \+": compilation failed: ERROR: <input>:1:/);
  assert.match(errorsOf([{ claimMappings: { username: { expression: 'user.username' } } }])[0]!, /compilation failed: ERROR: <input>:1:1: undeclared reference to 'user'/, 'claim mappings see claims, not user');
  assert.deepEqual(errorsOf([{ claimMappings: { username: { expression: 'claims.email' } } }]), [
    'jwt[0].claimMappings.username.expression: Invalid value: "claims.email": claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression',
  ]);
  assert.deepEqual(errorsOf([{ claimMappings: { username: { expression: 'claims.email' } }, claimValidationRules: [{ expression: 'claims.?email_verified.orValue(true) == true' }] }]), [], 'email_verified used in a validation rule');
  assert.deepEqual(
    errorsOf([{ claimMappings: { username: { claim: 'sub', prefix: '' }, extra: [{ key: 'Example.com/x', valueExpression: 'claims.x' }, { key: 'kubernetes.io/x', valueExpression: 'claims.x' }, { key: 'nodomain', valueExpression: 'claims.x' }, { key: 'example.com/y', valueExpression: '' }] } }]),
    [
      'jwt[0].claimMappings.extra[0].key: Invalid value: "Example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')',
      'jwt[0].claimMappings.extra[0].key: Invalid value: "Example.com/x": must be lowercase',
      'jwt[0].claimMappings.extra[1].key: Invalid value: "kubernetes.io/x": k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use',
      'jwt[0].claimMappings.extra[2].key: Invalid value: "nodomain": must be a domain-prefixed path (such as "acme.io/foo")',
      'jwt[0].claimMappings.extra[3].valueExpression: Required value',
    ],
  );
  assert.deepEqual(errorsOf([{ claimValidationRules: [{ claim: 'hd', requiredValue: 'x', message: 'm' }, { claim: 'hd' }, { expression: 'claims.hd', requiredValue: 'x' }, {}] }]), [
    'jwt[0].claimValidationRules[0].message: Invalid value: "m": may not be specified when claim is set',
    'jwt[0].claimValidationRules[1].claim: Duplicate value: "hd"',
    'jwt[0].claimValidationRules[2].requiredValue: Invalid value: "x": may not be specified when expression is set',
    'jwt[0].claimValidationRules[2].expression: Invalid value: "claims.hd": must evaluate to bool',
    'jwt[0].claimValidationRules[3]: Required value: claim or expression is required',
  ]);
  assert.deepEqual(errorsOf([{ userValidationRules: [{ expression: "user.username != ''" }, { expression: "user.username != ''" }, { expression: '' }, { expression: 'claims.sub == "x"' }] }]).map((e) => e.replace(/: compilation failed:[^]*/, ': compilation failed')), [
    `jwt[0].userValidationRules[1].expression: Duplicate value: "user.username != ''"`,
    'jwt[0].userValidationRules[2].expression: Required value',
    'jwt[0].userValidationRules[3].expression: Invalid value: "claims.sub == \\"x\\"": compilation failed',
  ]);
  assert.deepEqual(validateAuthenticationConfiguration({ anonymous: { enabled: false, conditions: [{ path: '/livez' }] } }, []).errors.map(fieldErrorText), [
    'anonymous.conditions: Invalid value: []apiserver.AnonymousAuthCondition{apiserver.AnonymousAuthCondition{Path:"/livez"}}: enabled should be set to true when conditions are defined',
  ]);
});
