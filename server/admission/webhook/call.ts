// One call of an admission webhook over server/webhook/client-config.ts: the request URL with
// `?timeout=<timeoutSeconds>s`, the webhook's timeout as the call's hard deadline, no retry (kube
// makes one attempt per admission call), and kube's error texts, each wrapped as its dispatchers
// wrap them ("could not get REST client: ...", "failed to call webhook: Post ...: ...").
import type * as https from 'node:https';
import { agentFor, caPemFrom, callErrorText, endpointFor, httpStatusErrorText, postJson, resolveService, serviceEndpointFor, type Endpoint } from '../../webhook/client-config.ts';
import type { WebhookAccessor } from './source.ts';

/** kube's ErrCallingWebhook: what failurePolicy decides about; `statusCode` is its Status's code (the metrics' label). */
export class CallingWebhookError extends Error {
  constructor(
    readonly webhookName: string,
    readonly reason: string,
    readonly statusCode = 503,
  ) {
    super(`failed calling webhook ${JSON.stringify(webhookName)}: ${reason}`);
  }
}

/** Where a `service` reference leads: the Service and its Endpoints, from memory. */
export interface ServiceResolver {
  service(namespace: string, name: string): unknown;
  endpoints(namespace: string, name: string): unknown;
}

const USER_AGENT = 'kube-apiserver-admission';

interface Client {
  agent: https.Agent;
  ep: Endpoint;
}

/** Clients by webhook (an accessor lives as long as its configuration revision). */
const clients = new WeakMap<WebhookAccessor, Client | string>();

function clientFor(hook: WebhookAccessor): Client | string {
  let c = clients.get(hook);
  if (c !== undefined) return c;
  const cc = hook.clientConfig;
  const timeoutMs = hook.timeoutSeconds * 1000;
  const service = cc.service;
  let ep: Endpoint | string;
  if (service !== null && typeof service === 'object') ep = serviceEndpointFor(service as Record<string, unknown>, timeoutMs);
  else if (typeof cc.url === 'string' && cc.url !== '') ep = endpointFor(cc.url, timeoutMs);
  else ep = 'webhook configuration must have either service or URL';
  if (typeof ep === 'string') c = ep;
  else {
    const ca = caPemFrom(cc.caBundle);
    c = ca.error ?? { agent: agentFor(ep.origin, ca.pem), ep };
  }
  clients.set(hook, c);
  return c;
}

/** POSTs the review; the answer's JSON, or a CallingWebhookError. */
export async function callWebhook(hook: WebhookAccessor, review: unknown, resolver: ServiceResolver): Promise<unknown> {
  const client = clientFor(hook);
  if (typeof client === 'string') throw new CallingWebhookError(hook.name, `could not get REST client: ${client}`, 500);
  const { agent, ep } = client;
  const post = `Post ${JSON.stringify(ep.display)}`;
  let dial;
  if (ep.service) {
    const to = resolveService(resolver.service(ep.service.namespace, ep.service.name), ep.service.name, ep.service.port, resolver.endpoints(ep.service.namespace, ep.service.name));
    if (typeof to === 'string') throw new CallingWebhookError(hook.name, `failed to call webhook: ${post}: ${to}`);
    dial = to;
  }
  let ans;
  try {
    ans = await postJson(agent, ep, Buffer.from(JSON.stringify(review)), hook.timeoutSeconds * 1000, dial, USER_AGENT);
  } catch (e) {
    throw new CallingWebhookError(hook.name, `failed to call webhook: ${post}: ${callErrorText(e, ep, dial)}`);
  }
  if (ans.status < 200 || ans.status > 206) throw new CallingWebhookError(hook.name, `failed to call webhook: ${httpStatusErrorText(ans)}`, ans.status);
  if (ans.body.length === 0) throw new CallingWebhookError(hook.name, `failed to call webhook: 0-length response with status code: ${ans.status} and content type: ${ans.contentType}`);
  try {
    return JSON.parse(ans.body.toString('utf8'));
  } catch (e) {
    throw new CallingWebhookError(hook.name, `failed to call webhook: couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
}
