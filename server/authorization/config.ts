// --authorization-config: kube-apiserver's structured AuthorizationConfiguration
// (apiserver.config.k8s.io v1, v1beta1 or v1alpha1), read as kube's
// pkg/kubeapiserver/authorizer/reload.go LoadAndValidateData reads it: decoded strictly,
// defaulted (authorizedTTL 5m, unauthorizedTTL 30s, cacheAuthorizedRequests and
// cacheUnauthorizedRequests true), validated as apiserver/pkg/apis/apiserver/validation
// ValidateAuthorizationConfiguration and ValidateWebhookConfiguration do (with kube's messages and
// field paths, matchConditions compiled), each non-webhook authorizer named after its type in
// lower case, and — on a reload — every non-webhook type the server started with still present.
// The result is the ordered authorizers, each webhook with its kubeconfig loaded, built into the
// chain by reload.ts. connectionInfo type InClusterConfig (kube: "not allowed for
// kube-apiserver"; there it would call the API server itself) is refused by name after kube's
// checks, as are the types hearth does not have (modes.ts). The same shape comes from the flags
// (buildAuthorizationConfiguration: --authorization-mode and --authorization-webhook-*).
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import YAML from 'yaml';
import { KUBE_YAML } from '../go/yaml.ts';
import { goQuote } from '../go/strconv.ts';
import { isDNS1123Subdomain } from '../validation/names.ts';
import { duplicateError, fieldErrorsText, invalidError, notSupportedError, requiredError, tooManyError, type FieldError } from '../validation/field.ts';
import { goDuration, parseGoDuration } from '../go/time.ts';
import { loadWebhookKubeconfig } from '../webhook/kubeconfig.ts';
import { AUTHORIZATION_MODES, SUPPORTED_AUTHORIZATION_MODES } from './modes.ts';
import { aggregateErrors } from '../go/errors.ts';
import { compileMatchCondition, DEFAULT_AUTHORIZATION_WEBHOOK_VERSION, DEFAULT_AUTHORIZED_TTL_MS, DEFAULT_UNAUTHORIZED_TTL_MS, DEFAULT_WEBHOOK_TIMEOUT_MS, type FailurePolicy, type MatchCondition, type SubjectAccessReviewVersion, type WebhookAuthorizerSettings } from './webhook.ts';

const GROUP = 'apiserver.config.k8s.io';
const VERSIONS = ['v1', 'v1beta1', 'v1alpha1'];
const KIND = 'AuthorizationConfiguration';
/** Types that may appear more than once (kube's repeatableAuthorizerTypes). */
const REPEATABLE = ['Webhook'];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** kube's message when both ways of configuring authorization are given. */
export const AUTHORIZATION_CONFIG_WITH_MODES = '--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined';

/** The strict decoder's complaint about fields the type does not have. */
function unknownFields(o: Obj, known: string[], prefix: string): string[] {
  return Object.keys(o).filter((k) => !known.includes(k)).map((k) => `unknown field ${goQuote(prefix + k)}`);
}

const WEBHOOK_FIELDS = ['authorizedTTL', 'cacheAuthorizedRequests', 'unauthorizedTTL', 'cacheUnauthorizedRequests', 'timeout', 'subjectAccessReviewVersion', 'matchConditionSubjectAccessReviewVersion', 'failurePolicy', 'connectionInfo', 'matchConditions'];

/** A webhook section as the internal type holds it after decoding and defaulting (durations in ms). */
interface WebhookSection {
  authorizedTtlMs: number;
  cacheAuthorizedRequests: boolean;
  unauthorizedTtlMs: number;
  cacheUnauthorizedRequests: boolean;
  timeoutMs: number;
  subjectAccessReviewVersion: string;
  matchConditionSubjectAccessReviewVersion: string;
  failurePolicy: string;
  connectionType: string;
  kubeConfigFile: string | undefined;
  matchConditions: string[];
}

/** One entry of `authorizers`, decoded. */
interface DecodedAuthorizer {
  type: string;
  name: string;
  webhook: WebhookSection | undefined;
  /** `webhook:` was given (even empty or null-valued fields). */
  hasWebhook: boolean;
}

/** encoding/json's complaint about a value of the wrong type. */
function typeError(v: unknown, goType: string, field: string): string {
  const kind = typeof v === 'string' ? 'string' : typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'bool' : Array.isArray(v) ? 'array' : 'object';
  return `json: cannot unmarshal ${kind} into Go struct field ${field} of type ${goType}`;
}

/** A metav1.Duration field: a Go duration string (absent: 0). */
function durationField(o: Obj, key: string): number {
  const v = o[key];
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'string') throw new Error(typeError(v, 'string', `WebhookConfiguration.authorizers.webhook.${key}`));
  const ns = parseGoDuration(v);
  if (typeof ns === 'string') throw new Error(ns);
  return ns / 1e6;
}

function stringField(o: Obj, key: string, struct: string): string {
  const v = o[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new Error(typeError(v, 'string', `${struct}.${key}`));
  return v;
}

/** The webhook section decoded and defaulted (SetDefaults_WebhookConfiguration). */
function decodeWebhook(w: Obj, at: string, strict: string[]): WebhookSection {
  strict.push(...unknownFields(w, WEBHOOK_FIELDS, `${at}.`));
  const ci = w.connectionInfo ?? {};
  if (!isObj(ci)) throw new Error(typeError(ci, 'v1.WebhookConnectionInfo', 'WebhookConfiguration.authorizers.webhook.connectionInfo'));
  strict.push(...unknownFields(ci, ['type', 'kubeConfigFile'], `${at}.connectionInfo.`));
  const conditions = w.matchConditions ?? [];
  if (!Array.isArray(conditions)) throw new Error(typeError(conditions, '[]v1.WebhookMatchCondition', 'WebhookConfiguration.authorizers.webhook.matchConditions'));
  const expressions = conditions.map((c, j) => {
    if (!isObj(c)) throw new Error(typeError(c, 'v1.WebhookMatchCondition', 'WebhookConfiguration.authorizers.webhook.matchConditions'));
    strict.push(...unknownFields(c, ['expression'], `${at}.matchConditions[${j}].`));
    return stringField(c, 'expression', 'WebhookMatchCondition.authorizers.webhook.matchConditions');
  });
  const bool = (key: string): boolean => {
    const v = w[key];
    if (v === undefined || v === null) return true;
    if (typeof v !== 'boolean') throw new Error(typeError(v, 'bool', `WebhookConfiguration.authorizers.webhook.${key}`));
    return v;
  };
  const kubeConfigFile = ci.kubeConfigFile;
  if (kubeConfigFile !== undefined && kubeConfigFile !== null && typeof kubeConfigFile !== 'string') throw new Error(typeError(kubeConfigFile, 'string', 'WebhookConnectionInfo.authorizers.webhook.connectionInfo.kubeConfigFile'));
  return {
    authorizedTtlMs: durationField(w, 'authorizedTTL') || DEFAULT_AUTHORIZED_TTL_MS,
    cacheAuthorizedRequests: bool('cacheAuthorizedRequests'),
    unauthorizedTtlMs: durationField(w, 'unauthorizedTTL') || DEFAULT_UNAUTHORIZED_TTL_MS,
    cacheUnauthorizedRequests: bool('cacheUnauthorizedRequests'),
    timeoutMs: durationField(w, 'timeout'),
    subjectAccessReviewVersion: stringField(w, 'subjectAccessReviewVersion', 'WebhookConfiguration.authorizers.webhook'),
    matchConditionSubjectAccessReviewVersion: stringField(w, 'matchConditionSubjectAccessReviewVersion', 'WebhookConfiguration.authorizers.webhook'),
    failurePolicy: stringField(w, 'failurePolicy', 'WebhookConfiguration.authorizers.webhook'),
    connectionType: stringField(ci, 'type', 'WebhookConnectionInfo.authorizers.webhook.connectionInfo'),
    kubeConfigFile: typeof kubeConfigFile === 'string' ? kubeConfigFile : undefined,
    matchConditions: expressions,
  };
}

/** load.LoadFromData: the file's object as the scheme decodes and defaults it (an empty file is the default, empty, configuration). */
function decode(text: string): DecodedAuthorizer[] {
  if (text.length === 0) return [];
  let doc: unknown;
  try {
    doc = YAML.parse(text, KUBE_YAML);
  } catch (e) {
    throw new Error(`error converting YAML to JSON: yaml: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!isObj(doc)) throw new Error(`couldn't get version/kind; json parse error: cannot unmarshal into Go value of type struct`);
  const apiVersion = str(doc.apiVersion);
  const kind = str(doc.kind);
  if (!kind) throw new Error(`Object 'Kind' is missing in '${JSON.stringify(doc)}'`);
  if (!apiVersion.startsWith(`${GROUP}/`) || !VERSIONS.includes(apiVersion.slice(GROUP.length + 1)) || kind !== KIND) {
    throw new Error(`no kind ${goQuote(kind)} is registered for version ${goQuote(apiVersion)}`);
  }
  const authorizers: unknown[] = Array.isArray(doc.authorizers) ? doc.authorizers : [];
  const strict = [...unknownFields(doc, ['apiVersion', 'kind', 'authorizers'], '')];
  const decoded = authorizers.map((a, i): DecodedAuthorizer => {
    const o = isObj(a) ? a : {};
    strict.push(...unknownFields(o, ['type', 'name', 'webhook'], `authorizers[${i}].`));
    const hasWebhook = o.webhook !== undefined && o.webhook !== null;
    if (hasWebhook && !isObj(o.webhook)) throw new Error(typeError(o.webhook, 'v1.WebhookConfiguration', 'AuthorizerConfiguration.authorizers.webhook'));
    return { type: str(o.type), name: str(o.name), hasWebhook, webhook: hasWebhook ? decodeWebhook(o.webhook as Obj, `authorizers[${i}].webhook`, strict) : undefined };
  });
  if (strict.length) throw new Error(`strict decoding error: ${strict.join(', ')}`);
  return decoded;
}

/** Go's time.Duration.String() of a whole number of milliseconds, negative ones too. */
const durationText = (ms: number): string => (ms < 0 ? `-${goDuration(-ms)}` : goDuration(ms));

/** ValidateWebhookConfiguration (its field paths hang off the authorizer's, as kube's do). */
function webhookErrors(w: WebhookSection, at: string): FieldError[] {
  const errs: FieldError[] = [];
  if (w.timeoutMs === 0) errs.push(requiredError(`${at}.timeout`));
  else if (w.timeoutMs > 30_000 || w.timeoutMs < 0) errs.push(invalidError(`${at}.timeout`, goQuote(durationText(w.timeoutMs)), 'must be > 0s and <= 30s'));
  if (w.authorizedTtlMs < 0) errs.push(invalidError(`${at}.authorizedTTL`, goQuote(durationText(w.authorizedTtlMs)), 'must be > 0s'));
  if (w.unauthorizedTtlMs < 0) errs.push(invalidError(`${at}.unauthorizedTTL`, goQuote(durationText(w.unauthorizedTtlMs)), 'must be > 0s'));
  if (w.subjectAccessReviewVersion === '') errs.push(requiredError(`${at}.subjectAccessReviewVersion`));
  else if (w.subjectAccessReviewVersion !== 'v1' && w.subjectAccessReviewVersion !== 'v1beta1') errs.push(notSupportedError(`${at}.subjectAccessReviewVersion`, goQuote(w.subjectAccessReviewVersion), ['v1', 'v1beta1']));
  if (w.matchConditionSubjectAccessReviewVersion === '') {
    if (w.matchConditions.length > 0) errs.push(requiredError(`${at}.matchConditionSubjectAccessReviewVersion`, 'required if match conditions are specified'));
  } else if (w.matchConditionSubjectAccessReviewVersion !== 'v1') errs.push(notSupportedError(`${at}.matchConditionSubjectAccessReviewVersion`, goQuote(w.matchConditionSubjectAccessReviewVersion), ['v1']));
  if (w.failurePolicy === '') errs.push(requiredError(`${at}.failurePolicy`));
  else if (w.failurePolicy !== 'NoOpinion' && w.failurePolicy !== 'Deny') errs.push(notSupportedError(`${at}.failurePolicy`, goQuote(w.failurePolicy), ['NoOpinion', 'Deny']));
  const file = w.kubeConfigFile;
  const fileText = file === undefined ? '(*string)(nil)' : '(*string)(0xc000000000)';
  switch (w.connectionType) {
    case '':
      errs.push(requiredError(`${at}.connectionInfo.type`));
      break;
    case 'InClusterConfig':
      if (file !== undefined) errs.push(invalidError(`${at}.connectionInfo.kubeConfigFile`, goQuote(file), 'can only be set when type=KubeConfigFile'));
      break;
    case 'KubeConfigFile':
      if (file === undefined || file === '') errs.push(requiredError(`${at}.connectionInfo.kubeConfigFile`));
      else if (!isAbsolute(file)) errs.push(invalidError(`${at}.connectionInfo.kubeConfigFile`, goQuote(file), 'must be an absolute path'));
      else {
        let regular: boolean;
        try {
          regular = statSync(file).isFile();
        } catch (e) {
          errs.push(invalidError(`${at}.connectionInfo.kubeConfigFile`, goQuote(file), `error loading file: stat ${file}: ${errnoText(e)}`));
          break;
        }
        if (!regular) errs.push(invalidError(`${at}.connectionInfo.kubeConfigFile`, goQuote(file), 'must be a regular file'));
      }
      break;
    default:
      errs.push(notSupportedError(`${at}.connectionInfo.type`, `api.WebhookConnectionInfo{Type:${goQuote(w.connectionType)}, KubeConfigFile:${fileText}}`, ['InClusterConfig', 'KubeConfigFile']));
  }
  errs.push(...matchConditionErrors(w.matchConditions, at).errors);
  return errs;
}

/** compileMatchConditions: at most 64, none empty or repeated, each compiling to a bool. */
function matchConditionErrors(expressions: readonly string[], at: string): { errors: FieldError[]; conditions: MatchCondition[] } {
  const errors: FieldError[] = [];
  const conditions: MatchCondition[] = [];
  if (expressions.length > 64) return { errors: [tooManyError(`${at}.matchConditions`, expressions.length, 64)], conditions };
  const seen = new Set<string>();
  expressions.forEach((expression, i) => {
    const path = `${at}.matchConditions[${i}].expression`;
    if (expression.trim() === '') return void errors.push(requiredError(path));
    if (seen.has(expression)) return void errors.push(duplicateError(path, goQuote(expression)));
    seen.add(expression);
    const c = compileMatchCondition(expression);
    if ('error' in c) errors.push(invalidError(path, goQuote(expression), c.error));
    else conditions.push(c.condition);
  });
  return { errors, conditions };
}

/** Go's text of a file system error's cause. */
function errnoText(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ENOENT' ? 'no such file or directory' : code === 'EACCES' ? 'permission denied' : code === 'ENOTDIR' ? 'not a directory' : (e as Error).message;
}

/** ValidateAuthorizationConfiguration, with the mode names kube knows and Webhook repeatable. */
function validationErrors(authorizers: DecodedAuthorizer[]): FieldError[] {
  const errs: FieldError[] = [];
  if (authorizers.length === 0) errs.push(requiredError('authorizers', 'at least one authorization mode must be defined'));
  const known: string[] = [...AUTHORIZATION_MODES].sort();
  const seenTypes = new Set<string>();
  const seenNames = new Set<string>();
  authorizers.forEach((a, i) => {
    const at = `authorizers[${i}]`;
    const type = a.type;
    if (type === '') return void errs.push(requiredError(`${at}.type`));
    if (!known.includes(type)) return void errs.push(notSupportedError(`${at}.type`, goQuote(type), known));
    if (seenTypes.has(type) && !REPEATABLE.includes(type)) return void errs.push(duplicateError(`${at}.type`, goQuote(type)));
    seenTypes.add(type);
    const name = a.name;
    if (name === '') errs.push(requiredError(`${at}.name`));
    else if (seenNames.has(name)) errs.push(duplicateError(`${at}.name`, goQuote(name)));
    else {
      const msgs = isDNS1123Subdomain(name);
      if (msgs.length) errs.push(invalidError(`${at}.name`, goQuote(name), `authorizer name is invalid: ${msgs.join(', ')}`));
    }
    seenNames.add(name);
    if (type === 'Webhook') {
      if (!a.webhook) errs.push(requiredError(`${at}.webhook`, 'required when type=Webhook'));
      else errs.push(...webhookErrors(a.webhook, at));
    } else if (a.hasWebhook) {
      errs.push(invalidError(`${at}.webhook`, goQuote('non-null'), 'may only be specified when type=Webhook'));
    }
  });
  return errs;
}

/** An authorizer of the chain: its type and name, and a webhook's settings. */
export interface AuthorizerConfig {
  type: string;
  name: string;
  webhook?: WebhookAuthorizerSettings;
}

/**
 * An error building an authorizer from a valid configuration (kube's newForConfig and webhook.New:
 * a kubeconfig client-go refuses, an unsupported version), which kube-apiserver reports at start
 * as "invalid authorization config: …".
 */
export class AuthorizerBuildError extends Error {}

/** The kubeconfig as client-go reads it, its refusal an AuthorizerBuildError. */
function webhookKubeconfig(file: string) {
  try {
    return loadWebhookKubeconfig(file);
  } catch (e) {
    throw new AuthorizerBuildError((e as Error).message);
  }
}

/** What the webhook sections name, made usable: the kubeconfig read (client-go's errors), conditions compiled. */
function webhookSettings(name: string, w: WebhookSection): WebhookAuthorizerSettings {
  if (w.connectionType === 'InClusterConfig') {
    throw new AuthorizerBuildError(`authorizer ${goQuote(name)}: connectionInfo type InClusterConfig is not allowed for kube-apiserver, nor for hearth (it would call the API server itself); use KubeConfigFile`);
  }
  return {
    name,
    client: webhookKubeconfig(w.kubeConfigFile!),
    version: w.subjectAccessReviewVersion as SubjectAccessReviewVersion,
    timeoutMs: w.timeoutMs,
    // kube's newForConfig: a kind of decision not cached has a TTL of 0.
    authorizedTtlMs: w.cacheAuthorizedRequests ? w.authorizedTtlMs : 0,
    unauthorizedTtlMs: w.cacheUnauthorizedRequests ? w.unauthorizedTtlMs : 0,
    failurePolicy: w.failurePolicy as FailurePolicy,
    matchConditions: matchConditionErrors(w.matchConditions, '').conditions,
  };
}

/** A configuration that loaded and validated (kube's *AuthorizationConfiguration), not built yet. */
export interface ValidatedAuthorizationConfig {
  authorizers: readonly DecodedAuthorizer[];
  /** Its canonical JSON: two files that decode alike (kube's reflect.DeepEqual) have the same. */
  canonical: string;
}

/**
 * LoadAndValidateData: the decoded, defaulted and validated configuration, or an Error with
 * kube's message (and, past kube's checks, hearth's for the types it does not have).
 * `requireNonWebhookTypes`: on a reload, the non-webhook types the server started with.
 */
export function validateAuthorizationConfigData(text: string, requireNonWebhookTypes?: ReadonlySet<string>): ValidatedAuthorizationConfig {
  let authorizers: DecodedAuthorizer[];
  try {
    authorizers = decode(text);
  } catch (e) {
    throw new Error(`failed to load AuthorizationConfiguration from file: ${(e as Error).message}`);
  }
  const errs = validationErrors(authorizers);
  if (errs.length) throw new Error(fieldErrorsText(errs));
  // kube-apiserver's own checks: a built-in authorizer is named after its type; none may go on a reload.
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const a of authorizers) {
    if (a.type === 'Webhook') continue;
    seen.add(a.type);
    if (a.name !== a.type.toLowerCase()) problems.push(`expected name ${a.type.toLowerCase()} for authorizer ${a.type} instead of ${a.name}`);
  }
  const missing = [...(requireNonWebhookTypes ?? [])].filter((t) => !seen.has(t)).sort();
  if (missing.length) problems.push(`missing required types: [${missing.join(' ')}]`);
  if (problems.length) throw new Error(aggregateErrors(problems));
  const unsupported = [...new Set(authorizers.map((a) => a.type).filter((t) => !SUPPORTED_AUTHORIZATION_MODES.includes(t)))];
  if (unsupported.length) throw new Error(aggregateErrors(unsupported.map((t) => `authorizer type ${goQuote(t)} is not supported by hearth yet (supported: ${SUPPORTED_AUTHORIZATION_MODES.join(', ')})`)));
  return { authorizers, canonical: JSON.stringify(authorizers.map((a) => ({ type: a.type, name: a.name, webhook: a.webhook ?? null }))) };
}

/** newForConfig's part that reads: each webhook's kubeconfig (client-go's errors) and compiled conditions. */
export function buildAuthorizerConfigs(config: ValidatedAuthorizationConfig): AuthorizerConfig[] {
  return config.authorizers.map((a) => (a.webhook ? { type: a.type, name: a.name, webhook: webhookSettings(a.name, a.webhook) } : { type: a.type, name: a.name }));
}

/** LoadAndValidateData and what newForConfig reads: the authorizers in order. */
export function loadAuthorizationConfigData(text: string, requireNonWebhookTypes?: ReadonlySet<string>): AuthorizerConfig[] {
  return buildAuthorizerConfigs(validateAuthorizationConfigData(text, requireNonWebhookTypes));
}

/** LoadAndValidateFile: the file's text, its canonical form and its authorizers (read errors in Go's words). */
export function readAuthorizationConfig(path: string, requireNonWebhookTypes?: ReadonlySet<string>): { data: string; canonical: string; authorizers: AuthorizerConfig[] } {
  let data: string;
  try {
    data = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new Error(`open ${path}: ${code === 'ENOENT' ? 'no such file or directory' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : (e as Error).message}`);
  }
  const validated = validateAuthorizationConfigData(data, requireNonWebhookTypes);
  return { data, canonical: validated.canonical, authorizers: buildAuthorizerConfigs(validated) };
}

/** What the --authorization-webhook-* flags say (kube's BuiltInAuthorizationOptions). */
export interface AuthorizationWebhookFlags {
  configFile?: string;
  version?: string;
  authorizedTtlMs?: number;
  unauthorizedTtlMs?: number;
}

/** kube's message for Webhook in --authorization-mode without its kubeconfig. */
export const WEBHOOK_CONFIG_FILE_NOT_PASSED = "authorization-mode Webhook's authorization config file not passed";

/**
 * buildAuthorizationConfiguration: the modes as the same authorizers, Webhook as `default` with
 * the flags' kubeconfig, version and TTLs (a TTL of 0 caches nothing), 30 s and NoOpinion. The
 * modes are valid (authorizationModeErrors and authorizationWebhookFlagErrors ran first).
 */
export function authorizersFromFlags(modes: readonly string[], flags: AuthorizationWebhookFlags): AuthorizerConfig[] {
  return modes.map((mode) => {
    if (mode !== 'Webhook') return { type: mode, name: mode.toLowerCase() };
    const version = flags.version ?? DEFAULT_AUTHORIZATION_WEBHOOK_VERSION;
    if (version !== 'v1' && version !== 'v1beta1') throw new AuthorizerBuildError(`unsupported webhook authorizer version ${goQuote(version)}, supported versions are [v1 v1beta1]`);
    return {
      type: 'Webhook',
      name: 'default',
      webhook: {
        name: 'default',
        client: webhookKubeconfig(flags.configFile!),
        version,
        timeoutMs: DEFAULT_WEBHOOK_TIMEOUT_MS,
        authorizedTtlMs: flags.authorizedTtlMs ?? DEFAULT_AUTHORIZED_TTL_MS,
        unauthorizedTtlMs: flags.unauthorizedTtlMs ?? DEFAULT_UNAUTHORIZED_TTL_MS,
        failurePolicy: 'NoOpinion',
        matchConditions: [],
      },
    };
  });
}

/** kube's Validate of the webhook flags against the modes, in its order and words. */
export function authorizationWebhookFlagErrors(modes: readonly string[], flags: AuthorizationWebhookFlags): string[] {
  const errors: string[] = [];
  if (modes.includes('Webhook') && !flags.configFile) errors.push(WEBHOOK_CONFIG_FILE_NOT_PASSED);
  if (flags.configFile && !modes.includes('Webhook')) errors.push('cannot specify --authorization-webhook-config-file without mode Webhook');
  return errors;
}
