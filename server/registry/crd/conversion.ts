// Custom resource version conversion (spec.conversion of a CustomResourceDefinition), as
// kube-apiserver's apiextensions converters do it:
//
// - strategy None: only apiVersion changes (nopConverter).
// - strategy Webhook: a ConversionReview (v1, or v1beta1 when the CRD lists that first) is POSTed
//   over HTTPS to clientConfig.url, or to a clientConfig.service resolved as kube-apiserver's
//   default resolver does (the Service's cluster IP and port, or its external name), verified
//   against caBundle (else the default roots), with the webhook client's fixed 30 s timeout, and
//   the answer is checked the way webhook_converter.go checks it (uid, result, count,
//   apiVersion/kind, name/namespace/uid); the converted metadata is replaced by the original
//   except labels and annotations (restoreObjectMeta).
//
// Before either, the generic CR checks run (both versions must be versions of the CRD).
//
// Errors: kube returns these as plain Go errors, which reach the client through the storage
// layer as a Status with code 500, no reason (StatusReasonUnknown) and the error text as message,
// e.g. `conversion webhook for example.com/v1, Kind=Widget failed: Post "https://...": ...`.
// ConversionError renders exactly that.
//
// Messages follow kube's two shapes: one object in = its single-object conversion (what kube
// does for every get, write and per-item list decode); several = its UnstructuredList conversion
// (one review for all items needing it, messages naming `<group>/<version>, Kind=<ListKind>`).
import type * as https from 'node:https';
import { randomUUID } from 'node:crypto';
import { ApiError, internalError } from '../../errors.ts';
import type { Converter, ServiceLookup } from '../../schema/types.ts';
import { fieldErrorText, type FieldError } from '../../validation/field.ts';
import { validateAnnotations, validateLabels } from '../../validation/object-meta.ts';
import { goTypeName } from '../../go/fmt.ts';
import { agentFor, caPemFrom, callErrorText, closeClientConfigAgents, endpointFor, httpStatusErrorText, postJson, resolveService, serviceEndpointFor, type DialTarget, type Endpoint, type HttpAnswer } from '../../webhook/client-config.ts';
import { isPlainObject } from '../../util/json.ts';

type Obj = Record<string, any>;

export interface ConverterOptions {
  /**
   * Webhook deadline in ms. kube-apiserver fixes it at 30 s (setGlobalDefaults in
   * apiserver/pkg/util/webhook sets rest.Config.Timeout; apiextensions v1 has no timeoutSeconds
   * for conversion webhooks). Only tests pass a shorter one.
   */
  timeoutMs?: number;
}

/**
 * A failed conversion as kube-apiserver serves it: a plain error reaching the handler, so code
 * 500, reason StatusReasonUnknown (omitted from the Status) and the converter's text verbatim.
 */
export class ConversionError extends ApiError {
  constructor(message: string) {
    super(500, '', message);
  }
}

// ---------------------------------------------------------------------------------------------
// Group/version/kind, printed as apimachinery's schema package prints them.

interface GVK {
  group: string;
  version: string;
  kind: string;
}

/** schema.ParseGroupVersion on an object's apiVersion; unparsable gives the empty GVK, as Unstructured does. */
function gvkOf(obj: unknown): GVK {
  const av = isPlainObject(obj) && typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const kind = isPlainObject(obj) && typeof obj.kind === 'string' ? obj.kind : '';
  if (av === '') return { group: '', version: '', kind };
  const parts = av.split('/');
  if (parts.length === 1) return { group: '', version: av, kind };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]!, kind };
  return { group: '', version: '', kind: '' };
}

const gvString = (g: { group: string; version: string }): string => (g.group ? `${g.group}/${g.version}` : g.version);
const gvkString = (g: GVK): string => `${g.group}/${g.version}, Kind=${g.kind}`;

/** utilerrors.Aggregate's text: one error as is, several deduplicated in brackets. */
function aggregate(errs: FieldError[]): string {
  const msgs = [...new Set(errs.map(fieldErrorText))];
  return msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`;
}

// ---------------------------------------------------------------------------------------------
// converterFor

interface CrdFacts {
  name: string;
  group: string;
  listKind: string;
  versions: Set<string>;
}

const byCrdName = new Map<string, { fingerprint: string; converter: Converter }>();

/**
 * The converter of a CRD (apiextensions.k8s.io/v1). Cheap to call on every CRD change (a small
 * fingerprint and a map lookup): a revision whose group, list kind, version names and conversion
 * did not change gets the converter it had. Webhook clients (and their keep-alive connections)
 * are shared per URL origin and caBundle, as kube caches its webhook REST clients.
 */
export function converterFor(crd: any, opts: ConverterOptions = {}): Converter {
  const spec = isPlainObject(crd?.spec) ? crd.spec : {};
  const names = isPlainObject(crd?.status?.acceptedNames) && crd.status.acceptedNames.kind ? crd.status.acceptedNames : isPlainObject(spec.names) ? spec.names : {};
  const versions: string[] = (Array.isArray(spec.versions) ? spec.versions : []).map((v: any) => String(v?.name ?? ''));
  const conversion = isPlainObject(spec.conversion) ? spec.conversion : { strategy: 'None' };
  const name = String(crd?.metadata?.name ?? '');
  const kind = typeof names.kind === 'string' ? names.kind : '';
  const listKind = typeof names.listKind === 'string' && names.listKind ? names.listKind : `${kind}List`;
  const fingerprint = JSON.stringify([spec.group, listKind, versions, conversion, opts.timeoutMs ?? null]);

  const cached = byCrdName.get(name);
  let converter: Converter;
  if (cached && cached.fingerprint === fingerprint) converter = cached.converter;
  else {
    const facts: CrdFacts = { name, group: String(spec.group ?? ''), listKind, versions: new Set(versions) };
    converter = conversion.strategy === 'Webhook' ? new WebhookConverter(facts, conversion.webhook, opts) : new NoneConverter(facts);
    byCrdName.set(name, { fingerprint, converter });
  }
  return converter;
}

/** Forget a deleted CRD's converter. */
export function forgetConverter(crdName: string): void {
  byCrdName.delete(crdName);
}

// ---------------------------------------------------------------------------------------------
// Checks every strategy shares (crConverter.ConvertToVersion).

function checkVersions(facts: CrdFacts, objects: any[], toVersion: string): void {
  const to = { group: facts.group, version: toVersion };
  const valid = (g: { group: string; version: string }) => g.group === facts.group && facts.versions.has(g.version);
  if (objects.length === 1) {
    const from = gvkOf(objects[0]);
    if (from.group !== facts.group) {
      throw new ConversionError(`${gvkString(from)} is unstructured and is not suitable for converting to "${gvString(to)}"`);
    }
    if (!valid(to)) throw new ConversionError(`request to convert CR to an invalid group/version: ${gvString(to)}`);
    if (!valid(from)) throw new ConversionError(`request to convert CR from an invalid group/version: ${gvString(from)}`);
    return;
  }
  // A list is created in the requested version, so only the target and the items are checked.
  if (!valid(to)) throw new ConversionError(`request to convert CR to an invalid group/version: ${gvString(to)}`);
  objects.forEach((item, i) => {
    const gv = gvkOf(item);
    if (!valid(gv)) throw new ConversionError(`request to convert CR list failed, list index ${i} has invalid group/version: ${gvString(gv)}`);
  });
}

function withApiVersion(obj: any, apiVersion: string): any {
  return obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
}

class NoneConverter implements Converter {
  readonly strategy = 'None' as const;
  readonly trivial = true;
  constructor(private readonly facts: CrdFacts) {}

  convertSync(objects: any[], toVersion: string): any[] {
    checkVersions(this.facts, objects, toVersion);
    const apiVersion = `${this.facts.group}/${toVersion}`;
    return objects.map((o) => withApiVersion(o, apiVersion));
  }

  async convert(objects: any[], toVersion: string): Promise<any[]> {
    return this.convertSync(objects, toVersion);
  }
}

// ---------------------------------------------------------------------------------------------
// Webhook clients: server/webhook/client-config.ts (one keep-alive agent per URL origin and
// caBundle, kube's request URL with ?timeout=, Go's error texts, Service resolution).

const DEFAULT_TIMEOUT_MS = 30_000;

/** Close every webhook connection (server shutdown, tests). */
export const closeConversionClients = closeClientConfigAgents;

// ---------------------------------------------------------------------------------------------
// WebhookConverter

class WebhookConverter implements Converter {
  readonly strategy = 'Webhook' as const;
  readonly trivial = false;
  private readonly reviewVersion: 'v1' | 'v1beta1' | undefined;
  private readonly timeoutMs: number;
  private readonly clientConfig: Obj;
  private client?: { agent: https.Agent; ep: Endpoint } | { error: ApiError | string };

  constructor(
    private readonly facts: CrdFacts,
    webhook: unknown,
    opts: ConverterOptions,
  ) {
    const w = isPlainObject(webhook) ? webhook : {};
    this.clientConfig = isPlainObject(w.clientConfig) ? w.clientConfig : {};
    // The first version in the CRD's list that kube speaks.
    const listed: unknown[] = Array.isArray(w.conversionReviewVersions) ? w.conversionReviewVersions : [];
    this.reviewVersion = listed.find((v): v is 'v1' | 'v1beta1' => v === 'v1' || v === 'v1beta1');
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** Built on first use, so that installing a CRD never fails on its webhook settings. */
  private clientOrError(): { agent: https.Agent; ep: Endpoint } | { error: ApiError | string } {
    if (this.client) return this.client;
    const cc = this.clientConfig;
    let ep: Endpoint | string;
    if (isPlainObject(cc.service)) {
      // The URL kube's webhook client builds for a service; the dial goes where the Service resolves.
      ep = serviceEndpointFor(cc.service, this.timeoutMs);
    } else if (typeof cc.url === 'string' && cc.url !== '') {
      ep = endpointFor(cc.url, this.timeoutMs);
    } else {
      return (this.client = { error: 'webhook configuration must have either service or URL' });
    }
    if (typeof ep === 'string') return (this.client = { error: ep });
    const ca = caPemFrom(cc.caBundle);
    // kube fails to build the REST client, so every request for the resource answers this.
    if (ca.error) return (this.client = { error: internalError('error resolving resource') });
    return (this.client = { agent: agentFor(ep.origin, ca.pem), ep });
  }

  async convert(objects: any[], toVersion: string, services?: ServiceLookup): Promise<any[]> {
    checkVersions(this.facts, objects, toVersion);
    const isList = objects.length !== 1;
    const desired = `${this.facts.group}/${toVersion}`;
    // The GVK kube names in its messages: the object's, or the list's (created in the requested version).
    const inGvk = isList ? gvkString({ group: this.facts.group, version: toVersion, kind: this.facts.listKind }) : gvkString(gvkOf(objects[0]));

    // An object with nothing but apiVersion and kind converts without the webhook.
    if (!isList && isEmptyObject(objects[0])) return [withApiVersion(objects[0], desired)];

    const toSend = isList ? objects.filter((o) => o?.apiVersion !== desired) : gvString(gvkOf(objects[0])) !== desired ? objects : [];
    if (!this.reviewVersion) throw new ConversionError('no supported conversion review versions');
    if (toSend.length === 0) return objects;

    const client = this.clientOrError();
    if ('error' in client) throw typeof client.error === 'string' ? new ConversionError(`conversion webhook for ${inGvk} failed: ${client.error}`) : client.error;
    const { agent, ep } = client;

    const uid = randomUUID();
    const reviewApiVersion = `apiextensions.k8s.io/${this.reviewVersion}`;
    // Field order and the empty response are what Go's encoding of the request struct gives.
    const review = {
      kind: 'ConversionReview',
      apiVersion: reviewApiVersion,
      request: { uid, desiredAPIVersion: desired, objects: toSend },
      response: { uid: '', convertedObjects: null, result: { metadata: {} } },
    };
    const failed = (msg: string) => new ConversionError(`conversion webhook for ${inGvk} failed: ${msg}`);

    // kube's dialer resolves a service reference at each dial; its errors end the request as a dial error would.
    let dial: DialTarget | undefined;
    if (ep.service) {
      const to = resolveService(services?.(ep.service.namespace, ep.service.name), ep.service.name, ep.service.port);
      if (typeof to === 'string') throw failed(`Post "${ep.display}": ${to}`);
      dial = to;
    }
    let ans: HttpAnswer;
    try {
      ans = await postJson(agent, ep, Buffer.from(JSON.stringify(review)), this.timeoutMs, dial, 'kube-apiserver-admission');
    } catch (e) {
      throw failed(`Post "${ep.display}": ${callErrorText(e, ep, dial)}`);
    }
    if (ans.status < 200 || ans.status > 206) throw failed(httpStatusErrorText(ans));
    const converted = this.readResponse(ans, uid, reviewApiVersion, failed);

    if (converted.length !== toSend.length) {
      throw new ConversionError(`conversion webhook for ${inGvk} returned ${converted.length} objects, expected ${toSend.length}`);
    }

    if (isList) {
      const out = objects.slice();
      let next = 0;
      for (let i = 0; i < objects.length; i++) {
        const original = objects[i];
        if (original?.apiVersion === desired) continue; // not sent, already right
        const raw = converted[next];
        const bad = (msg: string, idx: number) => new ConversionError(`conversion webhook for ${inGvk} returned invalid converted object at index ${idx}: ${msg}`);
        const rawErr = rawObjectError(raw);
        if (rawErr) throw bad(rawErr, next);
        next++;
        // kube reports these two with the index already advanced.
        const got = gvkOf(raw);
        if (gvString(got) !== desired) throw bad(`invalid groupVersion (expected ${desired}, received ${gvString(got)})`, next);
        if (got.kind !== gvkOf(original).kind) throw bad(`invalid kind (expected ${gvkOf(original).kind}, received ${got.kind})`, next);
        const sameErr = sameIdentityError(original, raw);
        if (sameErr) throw bad(sameErr, next);
        const metaErr = restoreObjectMeta(original, raw);
        if (metaErr) throw new ConversionError(`conversion webhook for ${inGvk} returned invalid metadata in object at index ${next}: ${metaErr}`);
        out[i] = raw;
      }
      return out;
    }

    const original = objects[0];
    const raw = converted[0];
    const rawErr = rawObjectError(raw);
    if (rawErr) throw new ConversionError(rawErr); // kube returns this one unwrapped
    const got = gvkOf(raw);
    if (gvString(got) !== desired) {
      throw new ConversionError(`conversion webhook for ${inGvk} returned invalid object at index 0: invalid groupVersion (expected ${desired}, received ${gvString(got)})`);
    }
    if (got.kind !== gvkOf(original).kind) {
      throw new ConversionError(`conversion webhook for ${inGvk} returned invalid object at index 0: invalid kind (expected ${gvkOf(original).kind}, received ${got.kind})`);
    }
    const sameErr = sameIdentityError(original, raw);
    if (sameErr) throw new ConversionError(`conversion webhook for ${inGvk} returned invalid object: ${sameErr}`);
    const metaErr = restoreObjectMeta(original, raw);
    if (metaErr) throw new ConversionError(`conversion webhook for ${inGvk} returned invalid metadata: ${metaErr}`);
    return [raw];
  }

  /** Decodes the ConversionReview answer and checks it as getConvertedObjectsFromResponse does. */
  private readResponse(ans: HttpAnswer, uid: string, reviewApiVersion: string, failed: (m: string) => ConversionError): any[] {
    if (ans.body.length === 0) throw failed(`0-length response with status code: ${ans.status} and content type: ${ans.contentType}`);
    let doc: unknown;
    try {
      doc = JSON.parse(ans.body.toString('utf8'));
    } catch (e) {
      throw failed(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
    }
    if (!isPlainObject(doc)) throw failed(`couldn't get version/kind; json parse error: json: cannot unmarshal ${Array.isArray(doc) ? 'array' : typeof doc} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`);
    if (typeof doc.kind !== 'string' || doc.kind === '') throw failed(`Object 'Kind' is missing in '${ans.body.toString('utf8')}'`);
    if (doc.kind === 'Status' && doc.status !== 'Success') throw failed(typeof doc.message === 'string' ? doc.message : '');
    if (this.reviewVersion === 'v1') {
      // v1 answers must be v1 ConversionReviews (v1beta1 processing never checked the GVK or uid).
      if (doc.apiVersion !== reviewApiVersion || doc.kind !== 'ConversionReview') {
        throw failed(`expected webhook response of ${reviewApiVersion}, Kind=ConversionReview, got ${gvkString(gvkOf(doc))}`);
      }
    }
    const response = doc.response;
    if (!isPlainObject(response)) throw failed('no response provided');
    if (this.reviewVersion === 'v1') {
      const got = typeof response.uid === 'string' ? response.uid : '';
      if (got !== uid) throw failed(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(got)}`);
    }
    const result = isPlainObject(response.result) ? response.result : {};
    if (result.status !== 'Success') {
      if (typeof result.message === 'string' && result.message.length > 0) throw failed(result.message);
      throw failed(`response.result.status was '${typeof result.status === 'string' ? result.status : ''}', not 'Success'`);
    }
    return Array.isArray(response.convertedObjects) ? response.convertedObjects : [];
  }
}

function isEmptyObject(o: unknown): boolean {
  if (!isPlainObject(o)) return false;
  const keys = Object.keys(o);
  return keys.length === 2 && 'kind' in o && 'apiVersion' in o;
}

/** What decoding one convertedObjects entry as Unstructured fails with, if it does. */
function rawObjectError(raw: unknown): string | undefined {
  if (raw === null || raw === undefined) return 'unexpected end of JSON input';
  if (!isPlainObject(raw)) return `json: cannot unmarshal ${Array.isArray(raw) ? 'array' : typeof raw === 'string' ? 'string' : typeof raw === 'boolean' ? 'bool' : 'number'} into Go value of type map[string]interface {}`;
  if (typeof raw.kind !== 'string' || raw.kind === '') return `Object 'Kind' is missing in '${JSON.stringify(raw)}'`;
  return undefined;
}

const metaString = (o: any, field: string): string => (isPlainObject(o?.metadata) && typeof o.metadata[field] === 'string' ? o.metadata[field] : '');

/** validateConvertedObject: kind, name, namespace and uid must survive conversion. */
function sameIdentityError(original: any, converted: any): string | undefined {
  const k1 = typeof original?.kind === 'string' ? original.kind : '';
  const k2 = typeof converted?.kind === 'string' ? converted.kind : '';
  if (k1 !== k2) return `must have the same kind: ${k1} != ${k2}`;
  for (const [field, label] of [
    ['name', 'name'],
    ['namespace', 'namespace'],
    ['uid', 'UID'],
  ] as const) {
    const a = metaString(original, field);
    const b = metaString(converted, field);
    if (a !== b) return `must have the same ${label}: ${a} != ${b}`;
  }
  return undefined;
}

/**
 * restoreObjectMeta: the converted object gets a copy of the original metadata, keeping only the
 * webhook's labels and annotations (validated when they changed). Mutates `converted`.
 */
function restoreObjectMeta(original: any, converted: Obj): string | undefined {
  if (!('metadata' in converted)) return 'missing metadata in converted object';
  const response = converted.metadata;
  if (!isPlainObject(response)) return `invalid metadata of type ${goTypeName(response, 'integral')} in converted object`;
  const meta: Obj = isPlainObject(original?.metadata) ? structuredClone(original.metadata) : {};
  converted.metadata = meta;
  for (const field of ['labels', 'annotations'] as const) {
    const fromWebhook = response[field];
    if (fromWebhook === undefined || fromWebhook === null) {
      delete meta[field];
      continue;
    }
    if (!isPlainObject(fromWebhook)) return `invalid metadata.${field} of type ${goTypeName(fromWebhook, 'integral')} in converted object`;
    const before = meta[field];
    if (before !== undefined && before !== null && !isPlainObject(before)) return `invalid metadata.${field} of type ${goTypeName(before, 'integral')} in original object`;
    const prior: Obj = isPlainObject(before) ? before : {};
    let changed = Object.keys(prior).length !== Object.keys(fromWebhook).length;
    for (const [k, v] of Object.entries(fromWebhook)) {
      if (typeof v !== 'string') return `metadata.${field}[${k}] must be a string, but is ${goTypeName(v, 'integral')} in converted object`;
      if (prior[k] !== v) changed = true;
    }
    if (changed) {
      // kube validates annotations under the path "metadata.annotation".
      const errs = field === 'labels' ? validateLabels(fromWebhook, 'metadata.labels') : validateAnnotations(fromWebhook, 'metadata.annotation');
      if (errs.length > 0) return aggregate(errs);
    }
    meta[field] = fromWebhook;
  }
  return undefined;
}
