// AuthenticationConfiguration (apiserver.config.k8s.io v1alpha1, v1beta1 and v1, as kube-apiserver
// 1.36 reads them from --authentication-config) and the --oidc-* flags converted into it, as kube's
// pkg/kubeapiserver/options/authentication.go does (ToAuthenticationConfig, validateOIDCOptions,
// loadAuthenticationConfig with its strict decoder), then validated and compiled as
// k8s.io/apiserver/pkg/apis/apiserver/validation does (ValidateAuthenticationConfiguration,
// validateJWTAuthenticator): field paths and wording are kube's. CEL expressions compile in the
// server's one CEL environment (registry/crd/cel), with kube's variables: `claims`
// (map(string, any)) for claim rules and mappings, `user` (kubernetes.UserInfo) for user rules.
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import YAML from 'yaml';
import { goQuote } from '../../go/strconv.ts';
import { KUBE_YAML } from '../../go/yaml.ts';
import { CelTypes, compileExpression, type CelType, type CompiledExpression } from '../../registry/crd/cel/index.ts';
import { isDNS1123Subdomain } from '../../validation/names.ts';
import { childPath, duplicateError, fieldErrorsText, goValue, indexPath, invalidError, requiredError, tooManyError, type FieldError } from '../../validation/field.ts';

export const AUTHENTICATION_CONFIG_GROUP = 'apiserver.config.k8s.io';
/** The versions kube-apiserver 1.36 decodes AuthenticationConfiguration from. */
export const AUTHENTICATION_CONFIG_VERSIONS = ['v1alpha1', 'v1beta1', 'v1'];

/** go-oidc's allow-list as kube keeps it (oidc.AllValidSigningAlgorithms, sorted). */
export const ALL_VALID_SIGNING_ALGS = ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512'];

export interface Issuer {
  url: string;
  discoveryURL?: string;
  certificateAuthority?: string;
  audiences?: string[];
  audienceMatchPolicy?: string;
  egressSelectorType?: string;
}
export interface ClaimValidationRule {
  claim?: string;
  requiredValue?: string;
  expression?: string;
  message?: string;
}
export interface PrefixedClaimOrExpression {
  claim?: string;
  /** A pointer in kube: unset (undefined) differs from "". */
  prefix?: string;
  expression?: string;
}
export interface ClaimOrExpression {
  claim?: string;
  expression?: string;
}
export interface ExtraMapping {
  key: string;
  valueExpression: string;
}
export interface UserValidationRule {
  expression: string;
  message?: string;
}
export interface JWTAuthenticatorConfig {
  issuer: Issuer;
  claimValidationRules?: ClaimValidationRule[];
  claimMappings: { username: PrefixedClaimOrExpression; groups?: PrefixedClaimOrExpression; uid?: ClaimOrExpression; extra?: ExtraMapping[] };
  userValidationRules?: UserValidationRule[];
}
export interface AnonymousConfig {
  enabled: boolean;
  conditions?: { path: string }[];
}
export interface AuthenticationConfiguration {
  jwt?: JWTAuthenticatorConfig[];
  anonymous?: AnonymousConfig;
}

/** The --oidc-* flags (kube's OIDCAuthenticationOptions); `flagsSet` when any was given. */
export interface OidcFlags {
  issuerURL?: string;
  clientID?: string;
  caFile?: string;
  usernameClaim?: string;
  usernamePrefix?: string;
  groupsClaim?: string;
  groupsPrefix?: string;
  signingAlgs?: string[];
  requiredClaims?: Record<string, string>;
}

/** A compiled CEL expression with the text kube quotes in its errors. */
export interface CompiledRule {
  expression: string;
  message?: string;
  compiled: CompiledExpression;
}

/** One JWT authenticator, validated, with its CEL compiled (kube's JWTAuthenticator + CELMapper). */
export interface JwtAuthenticatorSpec {
  config: JWTAuthenticatorConfig;
  signingAlgs: readonly string[];
  username?: CompiledRule;
  groups?: CompiledRule;
  uid?: CompiledRule;
  extra: { key: string; rule: CompiledRule }[];
  claimValidationRules: CompiledRule[];
  userValidationRules: CompiledRule[];
}

export interface AuthenticationSetup {
  jwt: JwtAuthenticatorSpec[];
  /** The anonymous section of the file, when it has one. */
  anonymous?: AnonymousConfig;
}

const CLAIMS_VARIABLE = { claims: CelTypes.mapOf(CelTypes.string, CelTypes.dyn) };
const USER_VARIABLE = {
  user: CelTypes.objectOf({
    username: CelTypes.string,
    uid: CelTypes.string,
    groups: CelTypes.listOf(CelTypes.string),
    extra: CelTypes.mapOf(CelTypes.string, CelTypes.listOf(CelTypes.string)),
  }),
};

/**
 * The JWT (and anonymous) authentication a server starts with, from --authentication-config or the
 * --oidc-* flags; throws kube's start errors. `serviceAccountIssuers` may not be JWT issuers.
 */
export function authenticationSetup(opts: { configFile?: string; oidc?: OidcFlags; anonymousFlagSet?: boolean; serviceAccountIssuers?: readonly string[] }): AuthenticationSetup {
  const oidcSet = opts.oidc !== undefined && Object.values(opts.oidc).some((v) => v !== undefined);
  let config: AuthenticationConfiguration;
  let signingAlgs: readonly string[];
  if (opts.configFile !== undefined && opts.configFile !== '') {
    if (oidcSet) throw new Error('authentication-config file and oidc-* flags are mutually exclusive');
    config = loadAuthenticationConfig(opts.configFile);
    // All known algorithms when the file configures JWTs (kube's TODO: any that matches a key).
    signingAlgs = ALL_VALID_SIGNING_ALGS;
  } else {
    const oidc = opts.oidc ?? {};
    if (oidcSet && (!oidc.issuerURL || !oidc.clientID)) throw new Error('oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set');
    config = {};
    signingAlgs = oidc.signingAlgs?.length ? oidc.signingAlgs : ['RS256'];
    if (oidc.issuerURL && oidc.clientID) config.jwt = [jwtFromFlags(oidc)];
  }
  if (config.anonymous !== undefined && opts.anonymousFlagSet) {
    throw new Error('anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file');
  }
  const { specs, errors } = validateAuthenticationConfiguration(config, opts.serviceAccountIssuers ?? [], signingAlgs);
  if (errors.length) throw new Error(`invalid authentication configuration: ${fieldErrorsText(errors)}`);
  // oidc.New's check of the algorithms (after validation, as kube builds the authenticators then).
  for (const alg of signingAlgs) if (!ALL_VALID_SIGNING_ALGS.includes(alg)) throw new Error(`oidc: unsupported signing alg: ${goQuote(alg)}`);
  return { jwt: specs, anonymous: config.anonymous };
}

/** kube's conversion of the --oidc-* flags into one JWT authenticator (ToAuthenticationConfig). */
function jwtFromFlags(oidc: OidcFlags): JWTAuthenticatorConfig {
  const usernameClaim = oidc.usernameClaim ?? 'sub';
  let usernamePrefix = oidc.usernamePrefix ?? '';
  // Legacy flag behaviour: claims other than email are prefixed with the issuer unless told otherwise.
  if (usernamePrefix === '' && usernameClaim !== 'email') usernamePrefix = `${oidc.issuerURL}#`;
  if (oidc.usernamePrefix === '-') usernamePrefix = '';
  const jwt: JWTAuthenticatorConfig = {
    issuer: { url: oidc.issuerURL!, audiences: [oidc.clientID!] },
    claimMappings: { username: { prefix: usernamePrefix, claim: usernameClaim } },
  };
  if (oidc.groupsClaim) jwt.claimMappings.groups = { prefix: oidc.groupsPrefix ?? '', claim: oidc.groupsClaim };
  if (oidc.caFile) {
    try {
      jwt.issuer.certificateAuthority = readFileSync(oidc.caFile, 'utf8');
    } catch (e) {
      throw new Error(goOpenError(oidc.caFile, e));
    }
  }
  const required = Object.entries(oidc.requiredClaims ?? {});
  if (required.length) jwt.claimValidationRules = required.map(([claim, requiredValue]) => ({ claim, requiredValue }));
  return jwt;
}

/** Go's os.ReadFile error text. */
function goOpenError(path: string, e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'EISDIR') return `read ${path}: is a directory`;
  return `open ${path}: ${code === 'ENOENT' ? 'no such file or directory' : code === 'EACCES' ? 'permission denied' : (e as Error).message}`;
}

// ---------------------------------------------------------------------------------------------
// Loading: YAML or JSON, apiVersion and kind checked, decoded strictly (unknown fields refused).

/** The file's configuration, or kube's "failed to load authentication configuration" error. */
export function loadAuthenticationConfig(path: string): AuthenticationConfiguration {
  const fail = (msg: string): never => {
    throw new Error(`failed to load authentication configuration from file ${goQuote(path)}: ${msg}`);
  };
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    return fail(goOpenError(path, e));
  }
  if (text.length === 0) return fail('empty config data');
  return decodeAuthenticationConfig(text, fail);
}

export function decodeAuthenticationConfig(text: string, fail: (msg: string) => never = (m) => { throw new Error(m); }): AuthenticationConfiguration {
  let doc: unknown;
  try {
    doc = YAML.parse(text, KUBE_YAML);
  } catch (e) {
    return fail(`yaml: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!isObject(doc)) return fail(`couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonKindOf(doc)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`);
  const kind = typeof doc.kind === 'string' ? doc.kind : '';
  const apiVersion = typeof doc.apiVersion === 'string' ? doc.apiVersion : '';
  if (kind === '') return fail(`Object 'Kind' is missing in '${JSON.stringify(doc)}'`);
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
  if (group !== AUTHENTICATION_CONFIG_GROUP || !AUTHENTICATION_CONFIG_VERSIONS.includes(version!) || kind !== 'AuthenticationConfiguration') {
    return fail(`no kind ${goQuote(kind)} is registered for version ${goQuote(apiVersion)} in scheme "pkg/apis/apiserver/install/install.go"`);
  }
  const errors: string[] = [];
  const decoded = decodeStruct(doc, CONFIG_SHAPE, '', errors, ['apiVersion', 'kind']) as AuthenticationConfiguration;
  if (errors.length) return fail(`strict decoding error: ${errors.join(', ')}`);
  return decoded;
}

/** A field's decoded shape: a Go type name (for errors) and how to read it. */
type Shape = 'string' | 'bool' | 'stringPtr' | { list: Shape } | { struct: string; fields: Record<string, Shape> };

const PREFIXED: Shape = { struct: 'PrefixedClaimOrExpression', fields: { claim: 'string', prefix: 'stringPtr', expression: 'string' } };
const CONFIG_SHAPE: Shape = {
  struct: 'AuthenticationConfiguration',
  fields: {
    jwt: {
      list: {
        struct: 'JWTAuthenticator',
        fields: {
          issuer: { struct: 'Issuer', fields: { url: 'string', discoveryURL: 'string', certificateAuthority: 'string', audiences: { list: 'string' }, audienceMatchPolicy: 'string', egressSelectorType: 'string' } },
          claimValidationRules: { list: { struct: 'ClaimValidationRule', fields: { claim: 'string', requiredValue: 'string', expression: 'string', message: 'string' } } },
          claimMappings: {
            struct: 'ClaimMappings',
            fields: {
              username: PREFIXED,
              groups: PREFIXED,
              uid: { struct: 'ClaimOrExpression', fields: { claim: 'string', expression: 'string' } },
              extra: { list: { struct: 'ExtraMapping', fields: { key: 'string', valueExpression: 'string' } } },
            },
          },
          userValidationRules: { list: { struct: 'UserValidationRule', fields: { expression: 'string', message: 'string' } } },
        },
      },
    },
    anonymous: { struct: 'AnonymousAuthConfig', fields: { enabled: 'bool', conditions: { list: { struct: 'AnonymousAuthCondition', fields: { path: 'string' } } } } },
  },
};

function goTypeOf(shape: Shape): string {
  if (shape === 'string') return 'string';
  if (shape === 'bool') return 'bool';
  if (shape === 'stringPtr') return 'string';
  if ('list' in shape) return `[]${goTypeOf(shape.list).replace(/^(?=[A-Z])/, 'v1.')}`;
  return `v1.${shape.struct}`;
}

/** encoding/json's decoding of a value into shape, with sigs.k8s.io/json's strict unknown-field errors. */
function decodeStruct(v: unknown, shape: Shape, path: string, errors: string[], ignore: string[] = [], owner = 'AuthenticationConfiguration'): unknown {
  if (v === null || v === undefined) return undefined;
  if (shape === 'string' || shape === 'stringPtr' || shape === 'bool') {
    const want = shape === 'bool' ? 'boolean' : 'string';
    if (typeof v !== want) {
      errors.push(`json: cannot unmarshal ${jsonKindOf(v)} into Go struct field ${owner}.${path} of type ${goTypeOf(shape)}`);
      return undefined;
    }
    return v;
  }
  if ('list' in shape) {
    if (!Array.isArray(v)) {
      errors.push(`json: cannot unmarshal ${jsonKindOf(v)} into Go struct field ${owner}.${path} of type ${goTypeOf(shape)}`);
      return undefined;
    }
    return v.map((item, i) => decodeStruct(item, shape.list, `${path}[${i}]`, errors, [], owner));
  }
  if (!isObject(v)) {
    errors.push(`json: cannot unmarshal ${jsonKindOf(v)} into Go struct field ${owner}.${path} of type ${goTypeOf(shape)}`);
    return undefined;
  }
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (ignore.includes(k)) continue;
    const field = shape.fields[k];
    const childName = path ? `${path}.${k}` : k;
    if (!field) {
      errors.push(`unknown field ${goQuote(childName)}`);
      continue;
    }
    const decoded = decodeStruct(x, field, childName, errors, [], owner);
    if (decoded !== undefined) out[k] = decoded;
  }
  return out;
}

function jsonKindOf(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  return typeof v === 'object' ? 'object' : typeof v;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

// ---------------------------------------------------------------------------------------------
// Validation (k8s.io/apiserver/pkg/apis/apiserver/validation), compiling the CEL as it goes.

/** kube's ValidateAuthenticationConfiguration, returning the compiled authenticators too. */
export function validateAuthenticationConfiguration(c: AuthenticationConfiguration, disallowedIssuers: readonly string[], signingAlgs: readonly string[] = ALL_VALID_SIGNING_ALGS): { specs: JwtAuthenticatorSpec[]; errors: FieldError[] } {
  const root = 'jwt';
  const jwt = c.jwt ?? [];
  const errors: FieldError[] = [];
  if (jwt.length > 64) return { specs: [], errors: [tooManyError(root, jwt.length, 64)] };
  const specs: JwtAuthenticatorSpec[] = [];
  const seenIssuers = new Set<string>();
  const seenDiscovery = new Set<string>();
  jwt.forEach((a, i) => {
    const path = indexPath(root, i);
    const { spec, errors: errs } = validateJwtAuthenticator(a, path, disallowedIssuers, signingAlgs);
    errors.push(...errs);
    if (errs.length === 0) specs.push(spec);
    const url = a.issuer?.url ?? '';
    if (seenIssuers.has(url)) errors.push(duplicateError(`${path}.issuer.url`, goValue(url)));
    seenIssuers.add(url);
    const discovery = a.issuer?.discoveryURL ?? '';
    if (discovery) {
      if (seenDiscovery.has(discovery)) errors.push(duplicateError(`${path}.issuer.discoveryURL`, goValue(discovery)));
      seenDiscovery.add(discovery);
    }
  });
  if (c.anonymous && !c.anonymous.enabled && (c.anonymous.conditions?.length ?? 0) > 0) {
    errors.push(invalidError('anonymous.conditions', goAnonymousConditions(c.anonymous.conditions!), 'enabled should be set to true when conditions are defined'));
  }
  return { specs, errors };
}

function goAnonymousConditions(conditions: { path: string }[]): string {
  return `[]apiserver.AnonymousAuthCondition{${conditions.map((c) => `apiserver.AnonymousAuthCondition{Path:${goQuote(c.path ?? '')}}`).join(', ')}}`;
}

function validateJwtAuthenticator(a: JWTAuthenticatorConfig, path: string, disallowed: readonly string[], signingAlgs: readonly string[]): { spec: JwtAuthenticatorSpec; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const issuer = a.issuer ?? { url: '' };
  const spec: JwtAuthenticatorSpec = { config: a, signingAlgs, extra: [], claimValidationRules: [], userValidationRules: [] };
  const state = { usesEmailClaim: false, usesEmailVerifiedClaim: false };

  // issuer
  const ip = childPath(path, 'issuer');
  if (!issuer.url) errors.push(requiredError(`${ip}.url`));
  else errors.push(...validateUrl(issuer.url, disallowed, `${ip}.url`));
  if (issuer.discoveryURL) {
    if (issuer.url && issuer.url.replace(/\/+$/, '') === issuer.discoveryURL.replace(/\/+$/, '')) errors.push(invalidError(`${ip}.discoveryURL`, goValue(issuer.discoveryURL), 'discoveryURL must be different from URL'));
    errors.push(...validateUrl(issuer.discoveryURL, [], `${ip}.discoveryURL`));
  }
  const audiences = issuer.audiences ?? [];
  if (audiences.length === 0) {
    errors.push(requiredError(`${ip}.audiences`, `at least one ${ip}.audiences is required`));
  } else {
    const seen = new Set<string>();
    audiences.forEach((aud, i) => {
      if (aud === '') errors.push(requiredError(`${ip}.audiences[${i}]`));
      if (seen.has(aud)) errors.push(duplicateError(`${ip}.audiences[${i}]`, goValue(aud)));
      seen.add(aud);
    });
    const policy = issuer.audienceMatchPolicy ?? '';
    if (audiences.length > 1 && policy !== 'MatchAny') errors.push(invalidError(`${ip}.audienceMatchPolicy`, goValue(policy), 'audienceMatchPolicy must be MatchAny for multiple audiences'));
    if (audiences.length === 1 && policy !== '' && policy !== 'MatchAny') errors.push(invalidError(`${ip}.audienceMatchPolicy`, goValue(policy), 'audienceMatchPolicy must be empty or MatchAny for single audience'));
  }
  if (issuer.certificateAuthority) {
    const err = caBundleError(issuer.certificateAuthority);
    if (err) errors.push(invalidError(`${ip}.certificateAuthority`, '"<omitted>"', err));
  }
  if (issuer.egressSelectorType) {
    // hearth has no egress selector (kube's feature gate off): kube's two errors in that case.
    errors.push(invalidError(`${ip}.egressSelectorType`, goValue(issuer.egressSelectorType), 'egress selector is not supported when StructuredAuthenticationConfigurationEgressSelector feature gate is disabled'));
    if (issuer.egressSelectorType !== 'controlplane' && issuer.egressSelectorType !== 'cluster') errors.push(invalidError(`${ip}.egressSelectorType`, goValue(issuer.egressSelectorType), 'egress selector must be either controlplane or cluster'));
  }

  // claimValidationRules
  const cvp = childPath(path, 'claimValidationRules');
  const seenClaims = new Set<string>();
  const seenExpressions = new Set<string>();
  (a.claimValidationRules ?? []).forEach((rule, i) => {
    const rp = indexPath(cvp, i);
    const claim = rule.claim ?? '';
    const expression = rule.expression ?? '';
    if (claim && expression) errors.push(invalidError(rp, goValue(claim), "claim and expression can't both be set"));
    else if (!claim && !expression) errors.push(requiredError(rp, 'claim or expression is required'));
    else if (claim) {
      if (rule.message) errors.push(invalidError(`${rp}.message`, goValue(rule.message), 'may not be specified when claim is set'));
      if (seenClaims.has(claim)) errors.push(duplicateError(`${rp}.claim`, goValue(claim)));
      seenClaims.add(claim);
    } else {
      if (rule.requiredValue) errors.push(invalidError(`${rp}.requiredValue`, goValue(rule.requiredValue), 'may not be specified when expression is set'));
      if (seenExpressions.has(expression)) {
        errors.push(duplicateError(`${rp}.expression`, goValue(expression)));
        return;
      }
      seenExpressions.add(expression);
      const compiled = compileRule(expression, CLAIMS_VARIABLE, 'bool', `${rp}.expression`, errors);
      if (compiled) {
        spec.claimValidationRules.push({ expression, message: rule.message, compiled });
        state.usesEmailVerifiedClaim ||= compiled.selects('claims', 'email_verified');
      }
    }
  });

  // claimMappings
  const mp = childPath(path, 'claimMappings');
  const m = a.claimMappings ?? { username: {} };
  const username = prefixedClaimOrExpression(m.username ?? {}, `${mp}.username`, true, errors);
  if (username) {
    spec.username = username;
    state.usesEmailClaim ||= username.compiled.selects('claims', 'email');
    state.usesEmailVerifiedClaim ||= username.compiled.selects('claims', 'email_verified');
  }
  const groups = prefixedClaimOrExpression(m.groups ?? {}, `${mp}.groups`, false, errors);
  if (groups) spec.groups = groups;
  const uid = m.uid ?? {};
  if (uid.claim && uid.expression) errors.push(invalidError(`${mp}.uid`, '""', "claim and expression can't both be set"));
  else if (uid.expression) {
    const compiled = compileRule(uid.expression, CLAIMS_VARIABLE, 'any', `${mp}.uid.expression`, errors);
    if (compiled) spec.uid = { expression: uid.expression, compiled };
  }
  const seenKeys = new Set<string>();
  (m.extra ?? []).forEach((mapping, i) => {
    const ep = indexPath(`${mp}.extra`, i);
    const key = mapping.key ?? '';
    errors.push(...domainPrefixedPathErrors(`${ep}.key`, key));
    if (key !== key.toLowerCase()) errors.push(invalidError(`${ep}.key`, goValue(key), 'must be lowercase'));
    if (isKubernetesDomainPrefix(key)) errors.push(invalidError(`${ep}.key`, goValue(key), 'k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use'));
    if (seenKeys.has(key)) {
      errors.push(duplicateError(`${ep}.key`, goValue(key)));
      return;
    }
    seenKeys.add(key);
    if (!mapping.valueExpression) {
      errors.push(requiredError(`${ep}.valueExpression`));
      return;
    }
    const compiled = compileRule(mapping.valueExpression, CLAIMS_VARIABLE, 'any', `${ep}.valueExpression`, errors);
    if (compiled) {
      spec.extra.push({ key, rule: { expression: mapping.valueExpression, compiled } });
      state.usesEmailVerifiedClaim ||= compiled.selects('claims', 'email_verified');
    }
  });
  if (state.usesEmailClaim && !state.usesEmailVerifiedClaim) {
    errors.push(
      invalidError(
        `${mp}.username.expression`,
        goValue(m.username?.expression ?? ''),
        'claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression',
      ),
    );
  }

  // userValidationRules
  const up = childPath(path, 'userValidationRules');
  const seenUserExpressions = new Set<string>();
  (a.userValidationRules ?? []).forEach((rule, i) => {
    const rp = indexPath(up, i);
    if (!rule.expression) {
      errors.push(requiredError(`${rp}.expression`));
      return;
    }
    if (seenUserExpressions.has(rule.expression)) {
      errors.push(duplicateError(`${rp}.expression`, goValue(rule.expression)));
      return;
    }
    seenUserExpressions.add(rule.expression);
    const compiled = compileRule(rule.expression, USER_VARIABLE, 'bool', `${rp}.expression`, errors);
    if (compiled) spec.userValidationRules.push({ expression: rule.expression, message: rule.message, compiled });
  });
  return { spec, errors };
}

function prefixedClaimOrExpression(mapping: PrefixedClaimOrExpression, path: string, required: boolean, errors: FieldError[]): CompiledRule | undefined {
  const claim = mapping.claim ?? '';
  const expression = mapping.expression ?? '';
  if (expression && claim) errors.push(invalidError(path, '""', "claim and expression can't both be set"));
  else if (!expression && !claim && required) errors.push(requiredError(path, 'claim or expression is required'));
  else if (expression) {
    if (mapping.prefix !== undefined) errors.push(invalidError(`${path}.prefix`, goValue(mapping.prefix), 'may not be specified when expression is set'));
    const compiled = compileRule(expression, CLAIMS_VARIABLE, 'any', `${path}.expression`, errors);
    return compiled ? { expression, compiled } : undefined;
  } else if (claim && mapping.prefix === undefined) {
    errors.push(requiredError(`${path}.prefix`, 'prefix is required when claim is set. It can be set to an empty string to disable prefixing'));
  }
  return undefined;
}

/** kube's authentication CEL compiler: "compilation failed: <issues>" or the return-type check. */
function compileRule(expression: string, variables: Record<string, CelType>, returns: 'bool' | 'any', path: string, errors: FieldError[]): CompiledExpression | undefined {
  const r = compileExpression(expression, variables);
  if ('error' in r) {
    errors.push(invalidError(path, goValue(expression), `compilation failed: ${r.error}`));
    return undefined;
  }
  if (returns === 'bool' && r.compiled.resultType !== 'bool') {
    errors.push(invalidError(path, goValue(expression), 'must evaluate to bool'));
    return undefined;
  }
  return r.compiled;
}

function validateUrl(raw: string, disallowed: readonly string[], path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (disallowed.includes(raw)) errors.push(invalidError(path, goValue(raw), `URL must not overlap with disallowed issuers: [${[...disallowed].sort().join(' ')}]`));
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    // Go's url.Parse accepts most text; what it refuses, WHATWG refuses too (the reverse is not so).
    errors.push(invalidError(path, goValue(raw), 'URL scheme must be https'));
    return errors;
  }
  if (u.protocol !== 'https:') errors.push(invalidError(path, goValue(raw), 'URL scheme must be https'));
  if (u.username || u.password) errors.push(invalidError(path, goValue(raw), 'URL must not contain a username or password'));
  if (u.search !== '') errors.push(invalidError(path, goValue(raw), 'URL must not contain a query'));
  if (u.hash !== '') errors.push(invalidError(path, goValue(raw), 'URL must not contain a fragment'));
  return errors;
}

/** cert.NewPoolFromBytes's error for a bundle with no usable certificate. */
function caBundleError(pem: string): string | undefined {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) return 'data does not contain any valid RSA or ECDSA certificates';
  for (const b of blocks) {
    try {
      new X509Certificate(b);
    } catch {
      return 'data does not contain any valid RSA or ECDSA certificates';
    }
  }
  return undefined;
}

/** apimachinery's IsDomainPrefixedPath. */
function domainPrefixedPathErrors(path: string, key: string): FieldError[] {
  if (key === '') return [requiredError(path)];
  const slash = key.indexOf('/');
  const host = slash < 0 ? '' : key.slice(0, slash);
  const rest = slash < 0 ? '' : key.slice(slash + 1);
  if (slash < 0 || host === '' || rest === '') return [invalidError(path, goValue(key), 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const errors = isDNS1123Subdomain(host).map((e) => invalidError(path, goValue(host), e));
  if (!/^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/.test(rest)) errors.push(invalidError(path, goValue(rest), `Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')`));
  return errors;
}

function isKubernetesDomainPrefix(key: string): boolean {
  const slash = key.indexOf('/');
  const domain = slash < 0 ? '' : key.slice(0, slash);
  return domain === 'kubernetes.io' || domain.endsWith('.kubernetes.io') || domain === 'k8s.io' || domain.endsWith('.k8s.io');
}
