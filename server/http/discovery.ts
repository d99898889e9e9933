// Discovery documents: the legacy /api, /apis, /apis/<g>, /api/v1 and /apis/<g>/<v> forms and the
// aggregated apidiscovery.k8s.io form (v2 and v2beta1) that kubectl 1.26+ asks for first.
// Pure builders over the catalog; everything is cached per catalog.generation.
import { createHash } from 'node:crypto';
import type { GroupInfo, ResourceInfo, SubresourceInfo } from '../schema/types.ts';
import { goJsonText } from '../go/json.ts';
import { parseAccept, DISCOVERY_ACCEPT, type MediaRange } from './negotiation.ts';

/** The subresources the server serves; discovery and OpenAPI advertise only these. */
export const SERVED_SUBRESOURCES: readonly string[] = ['status', 'scale', 'binding', 'eviction', 'ephemeralcontainers', 'resize', 'token', 'approval'];

/** What the discovery and OpenAPI builders need from the catalog (ResourceCatalog satisfies it). */
export interface CatalogView {
  readonly generation: number;
  groups(): GroupInfo[];
  resources(): ResourceInfo[];
}

export type DiscoveryForm = 'aggregated-v2' | 'aggregated-v2beta1' | 'legacy';

const DISCOVERY_GROUP = 'apidiscovery.k8s.io';
const AGGREGATED_KIND = 'APIGroupDiscoveryList';

/** kube's storageVersionHash: base64 of the first 8 bytes of sha256("group/version/kind") of the storage version. */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

/** Resources kube stores under another group's type (cohabitation); their hash names the stored type. */
const COHABITING_STORAGE: Record<string, [group: string, version: string, kind: string]> = {
  'events.k8s.io/events': ['', 'v1', 'Event'],
};

function resourceStorageHash(r: ResourceInfo): string {
  const stored = COHABITING_STORAGE[`${r.group}/${r.resource}`];
  return stored ? storageVersionHash(...stored) : storageVersionHash(r.group, r.storageVersion ?? r.version, r.kind);
}

/** The served subresources of a resource, sorted by name. */
export function servedSubresources(info: ResourceInfo): Array<[string, SubresourceInfo]> {
  const subs = info.subresources ?? {};
  return Object.keys(subs)
    .filter((name) => SERVED_SUBRESOURCES.includes(name))
    .sort()
    .map((name) => [name, subs[name]!] as [string, SubresourceInfo]);
}

function groupVersion(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

function byName(a: ResourceInfo, b: ResourceInfo): number {
  return a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0;
}

interface Cache {
  generation: number;
  groupList?: object;
  groups: Map<string, object | undefined>;
  resourceLists: Map<string, object | undefined>;
  aggregated: Map<string, object>;
  bodies: Map<string, Buffer>;
  etags: Map<string, string>;
  byGV?: Map<string, ResourceInfo[]>;
}

export class Discovery {
  private readonly catalog: CatalogView;
  private cache: Cache;

  constructor(catalog: CatalogView) {
    this.catalog = catalog;
    this.cache = this.fresh();
  }

  private fresh(): Cache {
    return { generation: this.catalog.generation, groups: new Map(), resourceLists: new Map(), aggregated: new Map(), bodies: new Map(), etags: new Map() };
  }

  private current(): Cache {
    if (this.cache.generation !== this.catalog.generation) this.cache = this.fresh();
    return this.cache;
  }

  /** Resources of one group-version, sorted by resource name. */
  private resourcesOf(group: string, version: string): ResourceInfo[] | undefined {
    const c = this.current();
    if (!c.byGV) {
      const m = new Map<string, ResourceInfo[]>();
      for (const r of this.catalog.resources()) {
        const key = `${r.group}/${r.version}`;
        let list = m.get(key);
        if (!list) m.set(key, (list = []));
        list.push(r);
      }
      for (const list of m.values()) list.sort(byName);
      c.byGV = m;
    }
    return c.byGV.get(`${group}/${version}`);
  }

  private groupInfo(group: string): GroupInfo | undefined {
    return this.catalog.groups().find((g) => g.name === group);
  }

  /** GET /api */
  apiVersions(serverAddress: string): object {
    const core = this.groupInfo('');
    return {
      kind: 'APIVersions',
      versions: core ? [...core.versions] : ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
    };
  }

  private groupObject(g: GroupInfo): { name: string; versions: object[]; preferredVersion: object } {
    return {
      name: g.name,
      versions: g.versions.map((v) => ({ groupVersion: groupVersion(g.name, v), version: v })),
      preferredVersion: { groupVersion: groupVersion(g.name, g.preferredVersion), version: g.preferredVersion },
    };
  }

  /** GET /apis */
  apiGroupList(): object {
    const c = this.current();
    if (!c.groupList) {
      const groups = this.catalog.groups().filter((g) => g.name !== '').map((g) => this.groupObject(g));
      c.groupList = { kind: 'APIGroupList', apiVersion: 'v1', groups };
    }
    return c.groupList;
  }

  /** GET /apis/<group> */
  apiGroup(group: string): object | undefined {
    if (group === '') return undefined;
    const c = this.current();
    if (!c.groups.has(group)) {
      const g = this.groupInfo(group);
      c.groups.set(group, g ? { kind: 'APIGroup', apiVersion: 'v1', ...this.groupObject(g) } : undefined);
    }
    return c.groups.get(group);
  }

  /** GET /api/v1, /apis/<group>/<version> */
  apiResourceList(group: string, version: string): object | undefined {
    const c = this.current();
    const key = `${group}/${version}`;
    if (!c.resourceLists.has(key)) c.resourceLists.set(key, this.buildResourceList(group, version));
    return c.resourceLists.get(key);
  }

  private buildResourceList(group: string, version: string): object | undefined {
    const g = this.groupInfo(group);
    if (!g || !g.versions.includes(version)) return undefined;
    const resources: object[] = [];
    for (const r of this.resourcesOf(group, version) ?? []) {
      const entry: Record<string, unknown> = {
        name: r.resource,
        singularName: r.singularName,
        namespaced: r.namespaced,
        kind: r.kind,
        verbs: [...r.verbs],
      };
      if (r.shortNames?.length) entry.shortNames = [...r.shortNames];
      if (r.categories?.length) entry.categories = [...r.categories];
      // Create-only resources (the reviews) are never stored, so they have no storage version.
      if (r.verbs.includes('get')) entry.storageVersionHash = resourceStorageHash(r);
      resources.push(entry);
      for (const [name, sub] of servedSubresources(r)) {
        const s: Record<string, unknown> = { name: `${r.resource}/${name}`, singularName: '', namespaced: r.namespaced };
        if (sub.group !== undefined && sub.version !== undefined && (sub.group !== r.group || sub.version !== r.version)) {
          s.group = sub.group;
          s.version = sub.version;
        }
        s.kind = sub.kind ?? r.kind;
        s.verbs = [...sub.verbs];
        resources.push(s);
      }
    }
    // kube-apiserver's core list carries no apiVersion; the group lists do.
    return group === ''
      ? { kind: 'APIResourceList', groupVersion: version, resources }
      : { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: groupVersion(group, version), resources };
  }

  /** GET /api or /apis with an aggregated Accept: APIGroupDiscoveryList (v2 and v2beta1 share the shape). */
  aggregated(which: 'api' | 'apis', version: 'v2' | 'v2beta1'): object {
    const c = this.current();
    const key = `${which}/${version}`;
    let doc = c.aggregated.get(key);
    if (!doc) {
      doc = { kind: AGGREGATED_KIND, apiVersion: `${DISCOVERY_GROUP}/${version}`, metadata: {}, items: this.aggregatedItems(which) };
      c.aggregated.set(key, doc);
    }
    return doc;
  }

  /** The aggregated document serialized once (JSON). */
  aggregatedBody(which: 'api' | 'apis', version: 'v2' | 'v2beta1'): Buffer {
    const c = this.current();
    const key = `${which}/${version}`;
    let body = c.bodies.get(key);
    if (!body) {
      body = Buffer.from(goJsonText(JSON.stringify(this.aggregated(which, version))));
      c.bodies.set(key, body);
    }
    return body;
  }

  /** ETag of the aggregated document, unquoted: uppercase hex sha512 of its v2 JSON, as kube computes it (kube sends it quoted). */
  etag(which: 'api' | 'apis'): string {
    const c = this.current();
    let tag = c.etags.get(which);
    if (!tag) {
      tag = createHash('sha512').update(this.aggregatedBody(which, 'v2')).digest('hex').toUpperCase();
      c.etags.set(which, tag);
    }
    return tag;
  }

  private aggregatedItems(which: 'api' | 'apis'): object[] {
    const groups = this.catalog.groups().filter((g) => (which === 'api' ? g.name === '' : g.name !== ''));
    return groups.map((g) => {
      const metadata: Record<string, unknown> = g.name ? { name: g.name, creationTimestamp: null } : { creationTimestamp: null };
      const versions = g.versions.map((v) => ({
        version: v,
        resources: (this.resourcesOf(g.name, v) ?? []).map((r) => this.aggregatedResource(r)),
        freshness: 'Current',
      }));
      return { metadata, versions };
    });
  }

  private aggregatedResource(r: ResourceInfo): object {
    const out: Record<string, unknown> = {
      resource: r.resource,
      // kube leaves group/version empty when the kind lives in the resource's own group-version.
      responseKind: { group: '', version: '', kind: r.kind },
      scope: r.namespaced ? 'Namespaced' : 'Cluster',
      singularResource: r.singularName,
      verbs: [...r.verbs],
    };
    if (r.shortNames?.length) out.shortNames = [...r.shortNames];
    if (r.categories?.length) out.categories = [...r.categories];
    const subs = servedSubresources(r);
    if (subs.length) {
      out.subresources = subs.map(([name, sub]) => {
        const foreign = sub.group !== undefined && sub.version !== undefined && (sub.group !== r.group || sub.version !== r.version);
        return {
          subresource: name,
          responseKind: foreign ? { group: sub.group, version: sub.version, kind: sub.kind ?? r.kind } : { group: '', version: '', kind: sub.kind ?? r.kind },
          verbs: [...sub.verbs],
        };
      });
    }
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// Accept negotiation

function matchRange(r: MediaRange): { form: DiscoveryForm; contentType: string } | undefined {
  // (a range needs a type and a subtype, each read without the spaces around them)
  if (r.subtype === undefined || !r.type) return undefined;
  const type = r.type.trim();
  const subtype = r.subtype.trim();
  const jsonish = (type === 'application' && (subtype === 'json' || subtype === '*')) || (type === '*' && subtype === '*');
  if (!jsonish) return undefined;
  const g = r.params.get('g');
  const v = r.params.get('v');
  const as = r.params.get('as');
  const profile = r.params.get('profile');
  if (g === undefined && v === undefined && as === undefined) {
    // Plain JSON (or a wildcard): the legacy documents. Unknown params such as charset are fine.
    if (profile !== undefined) return undefined;
    return { form: 'legacy', contentType: 'application/json' };
  }
  if (g !== DISCOVERY_GROUP || as !== AGGREGATED_KIND) return undefined;
  if (v !== 'v2' && v !== 'v2beta1') return undefined;
  // Only the "nopeer" profile is known (we have no peer servers, so it changes nothing).
  if (profile !== undefined && profile !== 'nopeer') return undefined;
  if (profile !== undefined && v !== 'v2') return undefined;
  const contentType = `application/json;g=${DISCOVERY_GROUP};v=${v};as=${AGGREGATED_KIND}${profile ? `;profile=${profile}` : ''}`;
  return { form: v === 'v2' ? 'aggregated-v2' : 'aggregated-v2beta1', contentType };
}

/**
 * Decide which discovery form the client wants from its Accept header. The first acceptable range
 * by quality (ties in header order) wins; undefined when nothing acceptable is offered (e.g.
 * protobuf only), for the caller to answer 406.
 */
export function negotiateDiscovery(accept: string | undefined): { form: DiscoveryForm; contentType: string } | undefined {
  if (accept === undefined || accept.trim() === '') return { form: 'legacy', contentType: 'application/json' };
  for (const r of parseAccept(accept, DISCOVERY_ACCEPT)) {
    if (r.q <= 0) continue;
    const m = matchRange(r);
    if (m) return m;
  }
  return undefined;
}
