// One request's audit event (audit.k8s.io/v1 Event) as kube fills it: made when the policy gives
// the request a level above None, completed as the request goes (request object, response status
// and object, impersonated user, annotations) and written once per stage. Follows
// k8s.io/apiserver/pkg/audit (request.go: NewEventFromRequest, LogRequestObject, LogRequestPatch,
// LogResponseObject, the managed-fields omission; context.go: annotations) and
// pkg/apis/audit/v1/types.go (the fields, their order and omitempty).
import { isIP } from 'node:net';
import type { UserInfo } from '../authentication/user.ts';
import { LEVEL_RANK, STAGE_BIT, type AuditLevel, type AuditStage, type RequestAuditConfig } from './policy.ts';

/** authentication/v1 UserInfo as an event carries it (extra and uid only when set). */
export interface EventUser {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface ObjectReference {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

/** metav1.Status as the event keeps it: the bounded fields only (no kind, apiVersion). */
export interface ResponseStatus {
  metadata: Record<string, never>;
  status?: string;
  message?: string;
  reason?: string;
  details?: unknown;
  code: number;
}

/** What an event is made from: what the request already has. */
export interface EventSource {
  auditId: string;
  requestURI: string;
  verb: string;
  user: UserInfo | undefined;
  /** X-Forwarded-For, X-Real-Ip and the peer's address, as utilnet.SourceIPs reads them. */
  forwardedFor: string | undefined;
  realIp: string | undefined;
  remoteAddress: string | undefined;
  userAgent: string;
  objectRef: ObjectReference | undefined;
}

/** kube's maxUserAgentLength and the suffix a longer User-Agent is cut to. */
const MAX_USER_AGENT_LENGTH = 1024;
const USER_AGENT_TRUNCATE_SUFFIX = '...TRUNCATED';

const ORIGIN_MS = performance.timeOrigin;
/** Now in microseconds since the epoch (metav1.MicroTime's precision). */
export function nowMicros(): number {
  return Math.round((ORIGIN_MS + performance.now()) * 1000);
}

/** The date and time of the last second formatted (events come many to a second). */
let formattedSecond = NaN;
let formattedSecondText = '';

/** metav1.MicroTime's JSON: RFC3339 with six fractional digits, UTC. */
export function microTimeText(us: number): string {
  const second = Math.floor(us / 1e6);
  if (second !== formattedSecond) {
    formattedSecond = second;
    formattedSecondText = new Date(second * 1000).toISOString().slice(0, 19);
  }
  return `${formattedSecondText}.${String(us - second * 1e6).padStart(6, '0')}Z`;
}

/** Go's RFC3339Nano of a microsecond time: trailing zeros of the fraction dropped. */
export function rfc3339NanoText(us: number): string {
  const text = microTimeText(us);
  const frac = text.slice(20, 26).replace(/0+$/, '');
  return `${text.slice(0, 19)}${frac ? `.${frac}` : ''}Z`;
}

/** The user as an event names it, and its JSON; one per UserInfo object (token caches share them). */
const eventUsers = new WeakMap<UserInfo, { user: EventUser; json: string }>();
function eventUserEntry(u: UserInfo): { user: EventUser; json: string } {
  let entry = eventUsers.get(u);
  if (!entry) {
    const e: EventUser = { username: u.name };
    if (u.uid) e.uid = u.uid;
    if (u.groups.length) e.groups = u.groups;
    if (u.extra && Object.keys(u.extra).length) e.extra = u.extra;
    entry = { user: e, json: JSON.stringify(e) };
    eventUsers.set(u, entry);
  }
  return entry;
}
export function eventUser(u: UserInfo): EventUser {
  return eventUserEntry(u).user;
}

/** An IPv4-mapped IPv6 peer address as Go prints it (the IPv4 form). */
function plainIp(s: string): string | undefined {
  const t = s.trim();
  const ip = t.startsWith('::ffff:') && isIP(t.slice(7)) === 4 ? t.slice(7) : t;
  return isIP(ip) ? ip : undefined;
}

/** utilnet.SourceIPs: X-Forwarded-For's valid addresses, X-Real-Ip if new, the peer unless last already. */
export function sourceIPs(forwardedFor: string | undefined, realIp: string | undefined, remote: string | undefined): string[] {
  const ips: string[] = [];
  if (forwardedFor) {
    for (const part of forwardedFor.split(',')) {
      const ip = plainIp(part);
      if (ip) ips.push(ip);
    }
  }
  if (realIp) {
    const ip = plainIp(realIp);
    if (ip && !ips.includes(ip)) ips.push(ip);
  }
  const peer = remote === undefined ? undefined : plainIp(remote);
  if (peer && (ips.length === 0 || ips[ips.length - 1] !== peer)) ips.push(peer);
  return ips;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An object without metadata.managedFields (a list: its items without theirs); shares the rest. */
export function withoutManagedFields(obj: unknown): unknown {
  if (!isObj(obj)) return obj;
  let out = obj;
  if (isObj(obj.metadata) && obj.metadata.managedFields !== undefined) {
    const { managedFields: _omitted, ...metadata } = obj.metadata;
    out = { ...obj, metadata };
  }
  if (Array.isArray(obj.items)) out = { ...out, items: obj.items.map(withoutManagedFields) };
  return out;
}

/** Where an event is sent, stage by stage (the server's backends). */
export interface EventSink {
  /** false when a backend failed to take it (a blocking-strict backend); a promise for a blocking webhook. */
  process(ev: AuditEvent): boolean | Promise<boolean>;
}

export class AuditEvent {
  readonly level: AuditLevel;
  readonly auditID: string;
  stage: AuditStage = 'RequestReceived';
  readonly requestURI: string;
  readonly verb: string;
  readonly user: EventUser;
  impersonatedUser?: EventUser;
  readonly sourceIPs: string[];
  readonly userAgent?: string;
  objectRef?: ObjectReference;
  responseStatus?: ResponseStatus;
  requestObject?: unknown;
  responseObject?: unknown;
  readonly requestReceivedMicros: number;
  stageMicros = 0;
  annotations?: Record<string, string>;
  private readonly omitStages: number;
  private readonly omitManagedFields: boolean;
  /** Whether the response's object was logged (a later raw body is then ignored). */
  private responseLogged = false;
  /** The JSON of what no stage changes, made on the first: the fields before `stage`, and from requestURI to userAgent but impersonatedUser. */
  private jsonHead?: string;
  private jsonUser?: string;
  private jsonClient?: string;

  constructor(config: RequestAuditConfig, src: EventSource, receivedMicros: number) {
    this.level = config.level;
    this.omitStages = config.omitStages;
    this.omitManagedFields = config.omitManagedFields;
    this.auditID = src.auditId;
    this.requestURI = src.requestURI;
    this.verb = src.verb;
    // A request whose authentication failed has no user: `{}`.
    const entry = src.user && eventUserEntry(src.user);
    this.user = entry ? entry.user : {};
    this.jsonUser = entry ? entry.json : '{}';
    this.sourceIPs = sourceIPs(src.forwardedFor, src.realIp, src.remoteAddress);
    const ua = src.userAgent;
    if (ua) this.userAgent = ua.length > MAX_USER_AGENT_LENGTH ? ua.slice(0, MAX_USER_AGENT_LENGTH) + USER_AGENT_TRUNCATE_SUFFIX : ua;
    this.objectRef = src.objectRef;
    this.requestReceivedMicros = receivedMicros;
  }

  /** Whether the level is at least `level` (the request and response objects' tests). */
  atLeast(level: AuditLevel): boolean {
    return LEVEL_RANK[this.level] >= LEVEL_RANK[level];
  }

  /** Whether a stage is sent (not in the rule's or the policy's omitStages). */
  sends(stage: AuditStage): boolean {
    return (this.omitStages & STAGE_BIT[stage]) === 0;
  }

  /** audit.AddAuditAnnotation: the first value set for a key stays. */
  addAnnotation(key: string, value: string): void {
    const a = (this.annotations ??= {});
    if (!(key in a)) a[key] = value;
  }

  /** The annotations record admission writes into (RequestContext.auditAnnotations). */
  annotationRecord(): Record<string, string> {
    return (this.annotations ??= {});
  }

  /**
   * LogRequestObject: the object reference completed from the body's metadata (namespace, name,
   * uid, resourceVersion where the URL named none), and at Request level and above the object itself.
   */
  logRequestObject(obj: unknown): void {
    const ref = (this.objectRef ??= {});
    if (isObj(obj) && isObj(obj.metadata)) {
      const m = obj.metadata;
      if (!ref.namespace && typeof m.namespace === 'string' && m.namespace) ref.namespace = m.namespace;
      if (!ref.name && typeof m.name === 'string' && m.name) ref.name = m.name;
      if (!ref.uid && typeof m.uid === 'string' && m.uid) ref.uid = m.uid;
      if (!ref.resourceVersion && typeof m.resourceVersion === 'string' && m.resourceVersion) ref.resourceVersion = m.resourceVersion;
    }
    if (!this.atLeast('Request')) return;
    // A copy: the store fills the decoded body in afterwards, and the event shows it as sent.
    const copy: unknown = JSON.parse(objectJson(obj));
    this.requestObject = this.omitManagedFields ? withoutManagedFields(copy) : copy;
  }

  /** LogRequestPatch: a patch body, at Request level and above. */
  logRequestPatch(patch: Buffer | string): void {
    if (!this.atLeast('Request')) return;
    const text = typeof patch === 'string' ? patch : patch.toString('utf8');
    try {
      this.requestObject = JSON.parse(text);
    } catch {
      // A YAML apply body is not JSON: kept as the text it was.
      this.requestObject = text;
    }
  }

  /** LogResponseObject: a Status's bounded fields into responseStatus; at RequestResponse the object. */
  logResponseObject(obj: unknown): void {
    this.responseLogged = true;
    if (isObj(obj) && obj.kind === 'Status' && typeof obj.code === 'number') {
      const s: ResponseStatus = { metadata: {}, code: obj.code };
      if (obj.status) s.status = obj.status as string;
      if (obj.message) s.message = obj.message as string;
      if (obj.reason) s.reason = obj.reason as string;
      if (obj.details !== undefined) s.details = obj.details;
      this.responseStatus = s;
    }
    if (!this.atLeast('RequestResponse')) return;
    this.responseObject = this.omitManagedFields ? withoutManagedFields(obj) : obj;
  }

  /** A response sent as bytes already encoded (a stored object served as it is): JSON only. */
  logResponseBytes(bytes: Buffer | readonly Buffer[], json: boolean): void {
    if (this.responseLogged || !json || !this.atLeast('RequestResponse')) return;
    try {
      this.logResponseObject(JSON.parse((Buffer.isBuffer(bytes) ? bytes : Buffer.concat(bytes)).toString('utf8')));
    } catch {
      // Not JSON after all: no response object.
    }
  }

  /** The response's code (responseStatus kept from a Status, else made). */
  setResponseCode(code: number): void {
    if (this.responseStatus) this.responseStatus.code = code;
    else this.responseStatus = { metadata: {}, code };
  }

  /**
   * The event at its current stage as one JSON line's text (no newline), in Event's field order
   * with its omitempty: what no stage changes is serialized once.
   */
  json(): string {
    this.jsonHead ??= `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"${this.level}","auditID":${JSON.stringify(this.auditID)},"stage":"`;
    this.jsonClient ??= `${this.sourceIPs.length ? `,"sourceIPs":${JSON.stringify(this.sourceIPs)}` : ''}${this.userAgent ? `,"userAgent":${JSON.stringify(this.userAgent)}` : ''}`;
    let text = `${this.jsonHead}${this.stage}","requestURI":${JSON.stringify(this.requestURI)},"verb":${JSON.stringify(this.verb)},"user":${this.jsonUser}`;
    if (this.impersonatedUser) text += `,"impersonatedUser":${JSON.stringify(this.impersonatedUser)}`;
    text += this.jsonClient;
    if (this.objectRef) text += `,"objectRef":${JSON.stringify(this.objectRef)}`;
    if (this.responseStatus) text += `,"responseStatus":${JSON.stringify(this.responseStatus)}`;
    if (this.requestObject !== undefined) text += `,"requestObject":${objectJson(this.requestObject)}`;
    if (this.responseObject !== undefined) text += `,"responseObject":${objectJson(this.responseObject)}`;
    text += `,"requestReceivedTimestamp":"${microTimeText(this.requestReceivedMicros)}","stageTimestamp":"${microTimeText(this.stageMicros)}"`;
    const annotations = this.annotations && sortedRecord(this.annotations);
    return annotations ? `${text},"annotations":${JSON.stringify(annotations)}}` : `${text}}`;
  }
}

/** An object's JSON; a body decoded from protobuf or CBOR may hold bigints, written as numbers. */
function objectJson(v: unknown): string {
  try {
    return JSON.stringify(v);
  } catch {
    return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : x));
  }
}

/** A Go map's JSON: keys sorted (undefined for an empty one: omitempty). */
function sortedRecord(r: Record<string, string>): Record<string, string> | undefined {
  const keys = Object.keys(r);
  if (!keys.length) return undefined;
  if (keys.length === 1) return r;
  keys.sort();
  const out: Record<string, string> = {};
  for (const k of keys) out[k] = r[k];
  return out;
}
