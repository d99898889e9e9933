// The cluster authentication trust controller kube-apiserver runs (kube's
// pkg/controlplane/controller/clusterauthenticationtrust): it keeps the
// `kube-system/extension-apiserver-authentication` ConfigMap, from which aggregated API servers
// (and kube-controller-manager, kube-scheduler with delegated authentication) learn which client
// CAs the cluster trusts and how its authenticating proxy names users. `client-ca-file` is the CA
// bundle client certificates authenticate with (hearth's CA and --client-ca-file); with
// --requestheader-client-ca-file, the `requestheader-*` keys (the header lists as JSON arrays).
// As kube does, what the ConfigMap holds already is kept and what this server requires is added
// (several API servers share it): lists are merged without duplicates, CA bundles are merged
// without duplicate or expired certificates and written as PEM again; keys it does not know are
// dropped. It is written at start, again when it is changed or deleted, and checked every minute.
// A client of the registry, writing as the loopback identity under kube-apiserver's field manager.
import { X509Certificate } from 'node:crypto';
import type { GenericStore, RequestContext } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { EventLog } from '../storage/log/event-log.ts';
import type { ResourceInfo } from '../schema/types.ts';
import { ApiError } from '../errors.ts';
import { WorkQueue, realClock, type Clock, type HandlerResult } from './workqueue.ts';
import { controllerWriteContext } from './queue-controller.ts';
import { fallbackLogger } from '../logging/logger.ts';

export const AUTHENTICATION_CONFIGMAP_NAMESPACE = 'kube-system';
export const AUTHENTICATION_CONFIGMAP = 'extension-apiserver-authentication';
/** kube's loopback client writes as "kube-apiserver/<version> …": managedFields name it so. */
const FIELD_MANAGER = 'kube-apiserver';
/** kube rechecks once a minute, in case a change was missed. */
const RESYNC_MS = 60_000;
/** kube's filterExpiredCerts allows five minutes of slack. */
const EXPIRY_SLACK_MS = 5 * 60_000;
/** The one key of the work queue (namespace/name, as kube keys it). */
const KEY = `${AUTHENTICATION_CONFIGMAP_NAMESPACE}/${AUTHENTICATION_CONFIGMAP}`;

/** What this server requires the ConfigMap to say (kube's ClusterAuthenticationInfo). */
export interface ClusterAuthenticationInfo {
  /** The CAs client certificates authenticate with, PEM. */
  clientCaPem?: string;
  /** The authenticating proxy, when --requestheader-client-ca-file is set. */
  requestHeader?: {
    caPem: string;
    allowedNames: readonly string[];
    usernameHeaders: readonly string[];
    uidHeaders: readonly string[];
    groupHeaders: readonly string[];
    extraHeaderPrefixes: readonly string[];
  };
}

/** The same, as read back from a ConfigMap: lists absent or present, bundles as certificates. */
interface StoredAuthenticationInfo {
  clientCa: X509Certificate[];
  requestHeaderCa: X509Certificate[];
  allowedNames: readonly string[];
  usernameHeaders: readonly string[];
  uidHeaders: readonly string[];
  groupHeaders: readonly string[];
  extraHeaderPrefixes: readonly string[];
}

/** What the controller reads of the stored ConfigMap. */
interface ConfigMap {
  metadata: Record<string, unknown>;
  data?: Record<string, string>;
  [k: string]: unknown;
}

export class ClusterAuthenticationTrustController {
  private readonly queue: WorkQueue<string>;
  private readonly cmInfo: ResourceInfo;
  private readonly unsubscribe: () => void;
  private cancelResync: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly store: GenericStore,
    catalog: ResourceCatalog,
    log: EventLog,
    private readonly required: ClusterAuthenticationInfo,
    private readonly clock: Clock = realClock,
    private readonly logLine: (line: string) => void = fallbackLogger().lines(),
  ) {
    this.cmInfo = catalog.lookup('', 'v1', 'configmaps')!;
    this.queue = new WorkQueue({ name: 'cluster_authentication_trust_controller', clock });
    this.unsubscribe = log.onCommit((events) => {
      for (const e of events) {
        // Added, changed or deleted: each is looked at (its own write finds nothing to do).
        if (e.key.res === 'configmaps' && e.key.ns === AUTHENTICATION_CONFIGMAP_NAMESPACE && e.key.name === AUTHENTICATION_CONFIGMAP) this.queue.add(KEY);
      }
    });
  }

  /** Writes the ConfigMap once (so it is there when the server is ready), then keeps it. */
  async start(): Promise<void> {
    try {
      await this.sync();
    } catch (e) {
      // (the queue retries it with backoff, as kube's worker would)
      this.logLine(`cluster_authentication_trust_controller: ${KEY} failed with: ${(e as Error).message}`);
      this.queue.addRateLimited(KEY);
    }
    this.queue.run(() => this.sync(), 1);
    this.scheduleResync();
  }

  stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    this.cancelResync?.();
    return this.queue.shutDown();
  }

  private scheduleResync(): void {
    if (this.stopped) return;
    this.cancelResync = this.clock.after(RESYNC_MS, () => {
      this.queue.add(KEY);
      this.scheduleResync();
    });
  }

  private async sync(): Promise<HandlerResult> {
    const ctx: RequestContext = controllerWriteContext(FIELD_MANAGER);
    const ns = AUTHENTICATION_CONFIGMAP_NAMESPACE;
    const cm: ConfigMap | undefined = this.store.tryGet(this.cmInfo, ns, AUTHENTICATION_CONFIGMAP);
    // (certificate expiry is wall-clock time; the work queue's clock is monotonic)
    const data = authenticationConfigMapData(cm?.data ?? {}, this.required, new Date());
    try {
      if (!cm) {
        await this.store.create(this.cmInfo, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: AUTHENTICATION_CONFIGMAP, namespace: ns }, data }, ctx);
      } else if (!sameData(cm.data ?? {}, data)) {
        // The read object's resourceVersion makes it a conditional update.
        await this.store.update(this.cmInfo, ns, AUTHENTICATION_CONFIGMAP, { ...cm, data }, ctx);
      }
    } catch (e) {
      // Created, changed or deleted meanwhile: that write queued it again; this try is no failure.
      if (e instanceof ApiError && (e.code === 409 || e.code === 404)) return;
      throw e;
    }
  }
}

/**
 * The ConfigMap's data: what it holds combined with what is required (kube's syncConfigMap:
 * getClusterAuthenticationInfoFor, combinedClusterAuthenticationInfo, getConfigMapDataFor).
 * Throws, as kube's sync fails, when what it holds does not parse (a list that is not a JSON
 * array of strings, a bundle without certificates).
 */
export function authenticationConfigMapData(existing: Readonly<Record<string, string>>, required: ClusterAuthenticationInfo, now: Date): Record<string, string> {
  const stored = storedInfo(existing);
  const rh = required.requestHeader;
  const clientCa = combineCertificates(stored.clientCa, required.clientCaPem ? certificatesOf(required.clientCaPem, 'required') : [], now);
  const requestHeaderCa = combineCertificates(stored.requestHeaderCa, rh ? certificatesOf(rh.caPem, 'required') : [], now);
  const data: Record<string, string> = {};
  if (clientCa.length) data['client-ca-file'] = encodeCertificates(clientCa);
  if (requestHeaderCa.length) {
    data['requestheader-username-headers'] = goJsonStrings(combineUnique(stored.usernameHeaders, rh?.usernameHeaders));
    data['requestheader-uid-headers'] = goJsonStrings(combineUnique(stored.uidHeaders, rh?.uidHeaders));
    data['requestheader-group-headers'] = goJsonStrings(combineUnique(stored.groupHeaders, rh?.groupHeaders));
    data['requestheader-extra-headers-prefix'] = goJsonStrings(combineUnique(stored.extraHeaderPrefixes, rh?.extraHeaderPrefixes));
    data['requestheader-client-ca-file'] = encodeCertificates(requestHeaderCa);
    data['requestheader-allowed-names'] = goJsonStrings(combineUnique(stored.allowedNames, rh?.allowedNames));
  }
  // A Go map is written with its keys sorted.
  return Object.fromEntries(Object.entries(data).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function storedInfo(data: Readonly<Record<string, string>>): StoredAuthenticationInfo {
  return {
    groupHeaders: jsonStrings(data['requestheader-group-headers']),
    extraHeaderPrefixes: jsonStrings(data['requestheader-extra-headers-prefix']),
    allowedNames: jsonStrings(data['requestheader-allowed-names']),
    usernameHeaders: jsonStrings(data['requestheader-username-headers']),
    uidHeaders: jsonStrings(data['requestheader-uid-headers']),
    requestHeaderCa: data['requestheader-client-ca-file'] ? certificatesOf(data['requestheader-client-ca-file'], 'existing') : [],
    clientCa: data['client-ca-file'] ? certificatesOf(data['client-ca-file'], 'existing') : [],
  };
}

/** kube's jsonDeserializeStringSlice: "" is nothing; anything but a JSON array of strings (or null) fails. */
function jsonStrings(text: string | undefined): string[] {
  if (!text) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new Error(`invalid JSON ${JSON.stringify(text)}: ${(e as Error).message}`);
  }
  if (parsed === null) return [];
  if (!Array.isArray(parsed) || parsed.some((v) => typeof v !== 'string')) throw new Error(`json: cannot unmarshal ${JSON.stringify(text)} into Go value of type []string`);
  return parsed as string[];
}

/** kube's combineUniqueStringSlices: the stored ones, then the required ones not there yet. */
function combineUnique(stored: readonly string[], required: readonly string[] | undefined): string[] {
  return [...new Set([...stored, ...(required ?? [])])];
}

/** kube's combineCertLists: both lists, the expired ones (five minutes' slack) and repeats left out. */
function combineCertificates(stored: X509Certificate[], required: X509Certificate[], now: Date): X509Certificate[] {
  const out: X509Certificate[] = [];
  const seen = new Set<string>();
  for (const cert of [...stored, ...required]) {
    if (new Date(cert.validTo).getTime() <= now.getTime() - EXPIRY_SLACK_MS) continue;
    const der = cert.raw.toString('base64');
    if (seen.has(der)) continue;
    seen.add(der);
    out.push(cert);
  }
  return out;
}

/** The CERTIFICATE blocks of a PEM bundle (client-go's cert.ParseCertsPEM: none, or a bad one, fails). */
function certificatesOf(pem: string, name: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
  const certs = blocks.map((block) => {
    try {
      return new X509Certificate(block);
    } catch {
      throw new Error(`unable to load ${name} CA bundle: x509: malformed certificate`);
    }
  });
  if (!certs.length) throw new Error(`unable to load ${name} CA bundle: data does not contain any valid RSA or ECDSA certificates`);
  return certs;
}

/** Go's pem.Encode of each certificate: 64 base64 characters a line. */
function encodeCertificates(certs: X509Certificate[]): string {
  return certs.map((c) => `-----BEGIN CERTIFICATE-----\n${c.raw.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`).join('');
}

/** Go's json.Marshal of a []string: HTML-sensitive characters escaped as Go escapes them. */
function goJsonStrings(values: readonly string[]): string {
  return JSON.stringify(values).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function sameData(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => b[k] === a[k]);
}
