// --authorization-config: kube-apiserver's structured AuthorizationConfiguration
// (apiserver.config.k8s.io v1, v1beta1 or v1alpha1), read at start as kube's
// pkg/kubeapiserver/authorizer/reload.go LoadAndValidateFile reads it: decoded strictly,
// validated as apiserver/pkg/apis/apiserver/validation ValidateAuthorizationConfiguration does
// (with kube's messages), each non-webhook authorizer named after its type in lower case. The
// result is the ordered list of authorizer types, built into the same chain as
// --authorization-mode's (modes.ts). hearth has no Webhook authorizer yet: a file naming one is
// refused by name, after kube's own checks. Reloading the file while serving is not done.
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { KUBE_YAML } from '../go/yaml.ts';
import { goQuote } from '../go/strconv.ts';
import { isDNS1123Subdomain } from '../validation/names.ts';
import { duplicateError, fieldErrorsText, invalidError, notSupportedError, requiredError, type FieldError } from '../validation/field.ts';
import { AUTHORIZATION_MODES, SUPPORTED_AUTHORIZATION_MODES } from './modes.ts';
import { aggregateErrors } from './authorizer.ts';

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

/** load.LoadFromData: the file's object as the scheme decodes it (an empty file is the default, empty, configuration). */
function decode(text: string): Obj[] {
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
  authorizers.forEach((a, i) => {
    if (isObj(a)) strict.push(...unknownFields(a, ['type', 'name', 'webhook'], `authorizers[${i}].`));
  });
  if (strict.length) throw new Error(`strict decoding error: ${strict.join(', ')}`);
  return authorizers.map((a) => (isObj(a) ? a : {}));
}

/** ValidateAuthorizationConfiguration, with the mode names kube knows and Webhook repeatable. */
function validationErrors(authorizers: Obj[]): FieldError[] {
  const errs: FieldError[] = [];
  if (authorizers.length === 0) errs.push(requiredError('authorizers', 'at least one authorization mode must be defined'));
  const known: string[] = [...AUTHORIZATION_MODES].sort();
  const seenTypes = new Set<string>();
  const seenNames = new Set<string>();
  authorizers.forEach((a, i) => {
    const at = `authorizers[${i}]`;
    const type = str(a.type);
    if (type === '') return void errs.push(requiredError(`${at}.type`));
    if (!known.includes(type)) return void errs.push(notSupportedError(`${at}.type`, goQuote(type), known));
    if (seenTypes.has(type) && !REPEATABLE.includes(type)) return void errs.push(duplicateError(`${at}.type`, goQuote(type)));
    seenTypes.add(type);
    const name = str(a.name);
    if (name === '') errs.push(requiredError(`${at}.name`));
    else if (seenNames.has(name)) errs.push(duplicateError(`${at}.name`, goQuote(name)));
    else {
      const msgs = isDNS1123Subdomain(name);
      if (msgs.length) errs.push(invalidError(`${at}.name`, goQuote(name), `authorizer name is invalid: ${msgs.join(', ')}`));
    }
    seenNames.add(name);
    if (type === 'Webhook') {
      if (a.webhook === undefined || a.webhook === null) errs.push(requiredError(`${at}.webhook`, 'required when type=Webhook'));
    } else if (a.webhook !== undefined && a.webhook !== null) {
      errs.push(invalidError(`${at}.webhook`, goQuote('non-null'), 'may only be specified when type=Webhook'));
    }
  });
  return errs;
}

/**
 * The authorizer types the file names, in order; an Error with kube's message (and, past kube's
 * checks, hearth's for the types it does not have) when the file is refused.
 */
export function readAuthorizationConfig(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new Error(`open ${path}: ${code === 'ENOENT' ? 'no such file or directory' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : (e as Error).message}`);
  }
  let authorizers: Obj[];
  try {
    authorizers = decode(text);
  } catch (e) {
    throw new Error(`failed to load AuthorizationConfiguration from file: ${(e as Error).message}`);
  }
  const errs = validationErrors(authorizers);
  if (errs.length) throw new Error(fieldErrorsText(errs));
  // kube-apiserver's own check: a built-in authorizer is named after its type.
  const names: string[] = [];
  for (const a of authorizers) {
    const type = str(a.type);
    if (type !== 'Webhook' && str(a.name) !== type.toLowerCase()) names.push(`expected name ${type.toLowerCase()} for authorizer ${type} instead of ${str(a.name)}`);
  }
  if (names.length) throw new Error(aggregateErrors(names));
  const types = authorizers.map((a) => str(a.type));
  const unsupported = [...new Set(types.filter((t) => !SUPPORTED_AUTHORIZATION_MODES.includes(t)))];
  if (unsupported.length) throw new Error(aggregateErrors(unsupported.map((t) => `authorizer type ${goQuote(t)} is not supported by hearth yet (supported: ${SUPPORTED_AUTHORIZATION_MODES.join(', ')})`)));
  return types;
}
