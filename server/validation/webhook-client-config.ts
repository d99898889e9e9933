// What a webhook's clientConfig may say, as kube's apiserver/pkg/util/webhook validation has it
// (ValidateWebhookURL, ValidateWebhookService): shared by CRD conversion webhooks and admission
// webhook configurations.
import { goValue, invalidError, requiredError, type FieldError } from './field.ts';
import { isDNS1123Subdomain } from './names.ts';
import { goQuote } from '../go/strconv.ts';

const q = goQuote;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

const DESIRED_URL_FORM = '; desired format: https://host[/path]';

export function validateWebhookURL(path: string, raw: string): FieldError[] {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return [requiredError(path, `url must be a valid URL: parse ${q(raw)}: invalid URI for request${DESIRED_URL_FORM}`)];
  }
  const errs: FieldError[] = [];
  const scheme = u.protocol.replace(/:$/, '');
  if (scheme !== 'https') errs.push(invalidError(path, q(scheme), `'https' is the only allowed URL scheme${DESIRED_URL_FORM}`));
  if (!u.host) errs.push(invalidError(path, q(u.host), `host must be specified${DESIRED_URL_FORM}`));
  if (u.username || u.password) errs.push(invalidError(path, q(u.password ? `${u.username}:${u.password}` : u.username), 'user information is not permitted in the URL'));
  if (u.hash.length > 1) errs.push(invalidError(path, q(u.hash.slice(1)), 'fragments are not permitted in the URL'));
  if (u.search.length > 1) errs.push(invalidError(path, q(u.search.slice(1)), 'query parameters are not permitted in the URL'));
  return errs;
}

export function validateWebhookService(path: string, svc: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  if (!str(svc.name)) errs.push(requiredError(`${path}.name`, 'service name is required'));
  if (!str(svc.namespace)) errs.push(requiredError(`${path}.namespace`, 'service namespace is required'));
  const port = svc.port === undefined ? 443 : svc.port;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
    errs.push(invalidError(`${path}.port`, goValue(port), 'port is not valid: must be between 1 and 65535, inclusive'));
  }
  if (typeof svc.path !== 'string') return errs;
  const p = svc.path;
  if (p === '/' || p.length === 0) return errs;
  if (p === '//') return [...errs, invalidError(`${path}.path`, q(p), 'segment[0] may not be empty')];
  if (!p.startsWith('/')) errs.push(invalidError(`${path}.path`, q(p), "must start with a '/'"));
  let check = p.slice(1);
  if (check.endsWith('/')) check = check.slice(0, -1);
  check.split('/').forEach((step, i) => {
    if (step.length === 0) {
      errs.push(invalidError(`${path}.path`, q(p), `segment[${i}] may not be empty`));
      return;
    }
    for (const f of isDNS1123Subdomain(step)) errs.push(invalidError(`${path}.path`, q(p), `segment[${i}]: ${f}`));
  });
  return errs;
}

