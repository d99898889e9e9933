// The set of REST resources the server serves: the built-ins from schemas/resources.json plus,
// later, CRD-defined ones. Every request resolves its resource here, so lookups are Map hits.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { GroupInfo, ResourceCatalogFile, ResourceInfo } from './types.ts';

const RESOURCES_FILE = fileURLToPath(new URL('../../schemas/resources.json', import.meta.url));

/** The Kubernetes version hearth serves (resources.json's first field), without parsing the whole file: for `--version`. */
export function servedKubernetesVersion(): string {
  const head = readFileSync(RESOURCES_FILE, 'utf8').slice(0, 200);
  return /"kubernetesVersion":"([^"]+)"/.exec(head)?.[1] ?? 'unknown';
}

/** Kubernetes version priority order: GA before beta before alpha, higher numbers first (v2 > v1 > v1beta2 > v1beta1 > v1alpha1). */
export function compareKubeVersions(a: string, b: string): number {
  const pa = parseKubeVersion(a);
  const pb = parseKubeVersion(b);
  if (pa && pb) {
    if (pa[1] !== pb[1]) return pb[1] - pa[1];
    if (pa[0] !== pb[0]) return pb[0] - pa[0];
    return pb[2] - pa[2];
  }
  if (pa) return -1;
  if (pb) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** [major, level (0 alpha, 1 beta, 2 GA), minor] or undefined for non-kube-like versions. */
function parseKubeVersion(v: string): [number, number, number] | undefined {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
  if (!m) return undefined;
  return [Number(m[1]), m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2, m[3] ? Number(m[3]) : 0];
}

const gvrKey = (group: string, version: string, resource: string): string => `${group}/${version}/${resource}`;

export class ResourceCatalog {
  readonly kubernetesVersion: string;
  private _generation = 0;
  /** Groups in discovery order; built-in groups are pinned (kept even with no resources). */
  private readonly groupList: GroupInfo[] = [];
  private readonly groupByName = new Map<string, GroupInfo>();
  private readonly builtinGroups = new Set<string>();
  private readonly builtinGroupVersions = new Set<string>();
  private readonly byGvr = new Map<string, ResourceInfo>();
  private readonly byGvk = new Map<string, ResourceInfo>();
  /** group/version -> resources in stable order (insertion order, built-ins sorted by name). */
  private readonly byGv = new Map<string, ResourceInfo[]>();
  /** group -> lower-cased name (plural, singular, kind, short name) -> candidates. */
  private readonly names = new Map<string, Map<string, ResourceInfo[]>>();
  private resourceListCache: ResourceInfo[] | undefined;
  private groupListCache: GroupInfo[] | undefined;

  constructor(file: ResourceCatalogFile) {
    this.kubernetesVersion = file.kubernetesVersion;
    for (const g of file.groups) {
      const info: GroupInfo = { name: g.name, versions: [...g.versions], preferredVersion: g.preferredVersion };
      this.groupList.push(info);
      this.groupByName.set(g.name, info);
      this.builtinGroups.add(g.name);
      for (const v of g.versions) this.builtinGroupVersions.add(`${g.name}/${v}`);
    }
    for (const r of file.resources) this.insert(r);
    this._generation = 0;
  }

  static loadBuiltins(): ResourceCatalog {
    return new ResourceCatalog(JSON.parse(readFileSync(RESOURCES_FILE, 'utf8')) as ResourceCatalogFile);
  }

  /** Bumps on every add/remove so discovery/OpenAPI caches can invalidate. */
  get generation(): number {
    return this._generation;
  }

  /** Groups in discovery order, versions preferred first. Do not mutate. */
  groups(): GroupInfo[] {
    if (!this.groupListCache) this.groupListCache = this.groupList.map((g) => ({ name: g.name, versions: [...g.versions], preferredVersion: g.preferredVersion }));
    return this.groupListCache;
  }

  group(name: string): GroupInfo | undefined {
    return this.groupByName.get(name);
  }

  /** All resources, grouped by discovery order of groups and versions. Do not mutate. */
  resources(): ResourceInfo[] {
    if (!this.resourceListCache) {
      const out: ResourceInfo[] = [];
      for (const g of this.groupList) for (const v of g.versions) out.push(...(this.byGv.get(`${g.name}/${v}`) ?? []));
      this.resourceListCache = out;
    }
    return this.resourceListCache;
  }

  /** Resources of one group-version, in stable order (empty if none). Do not mutate. */
  resourcesIn(group: string, version: string): ResourceInfo[] {
    return this.byGv.get(`${group}/${version}`) ?? [];
  }

  lookup(group: string, version: string, resource: string): ResourceInfo | undefined {
    return this.byGvr.get(gvrKey(group, version, resource));
  }

  byKind(group: string, version: string, kind: string): ResourceInfo | undefined {
    return this.byGvk.get(gvrKey(group, version, kind));
  }

  /**
   * Resolves a plural, singular, kind or short name (case-insensitive), as kubectl does, for
   * internal helpers. With a group, only that group is searched; the group's preferred version wins.
   * Without one, groups are tried in discovery order.
   */
  resolve(name: string, group?: string): ResourceInfo | undefined {
    const key = name.toLowerCase();
    if (group !== undefined) return this.pick(group, this.names.get(group)?.get(key));
    for (const g of this.groupList) {
      const hit = this.pick(g.name, this.names.get(g.name)?.get(key));
      if (hit) return hit;
    }
    return undefined;
  }

  private pick(group: string, candidates: ResourceInfo[] | undefined): ResourceInfo | undefined {
    if (!candidates || candidates.length === 0) return undefined;
    if (candidates.length === 1) return candidates[0];
    const g = this.groupByName.get(group);
    if (g) {
      for (const v of g.versions) {
        const c = candidates.find((r) => r.version === v);
        if (c) return c;
      }
    }
    return candidates[0];
  }

  /** Adds or replaces a resource (CRDs). New groups go after the built-ins, sorted by name. */
  add(info: ResourceInfo): void {
    const existing = this.byGvr.get(gvrKey(info.group, info.version, info.resource));
    if (existing) this.unindex(existing);
    this.insert(info);
    this.bump();
  }

  remove(group: string, version: string, resource: string): void {
    const existing = this.byGvr.get(gvrKey(group, version, resource));
    if (!existing) return;
    this.unindex(existing);
    const gv = `${group}/${version}`;
    if (!this.builtinGroupVersions.has(gv) && (this.byGv.get(gv)?.length ?? 0) === 0) {
      this.byGv.delete(gv);
      const g = this.groupByName.get(group);
      if (g) {
        g.versions = g.versions.filter((v) => v !== version);
        if (g.versions.length === 0 && !this.builtinGroups.has(group)) {
          this.groupByName.delete(group);
          this.groupList.splice(this.groupList.indexOf(g), 1);
        } else if (g.versions.length > 0) {
          g.preferredVersion = g.versions[0];
        }
      }
    }
    this.bump();
  }

  private bump(): void {
    this._generation++;
    this.resourceListCache = undefined;
    this.groupListCache = undefined;
  }

  private insert(info: ResourceInfo): void {
    const { group, version } = info;
    this.byGvr.set(gvrKey(group, version, info.resource), info);
    this.byGvk.set(gvrKey(group, version, info.kind), info);
    const gv = `${group}/${version}`;
    let list = this.byGv.get(gv);
    if (!list) this.byGv.set(gv, (list = []));
    list.push(info);

    let g = this.groupByName.get(group);
    if (!g) {
      g = { name: group, versions: [], preferredVersion: version };
      this.groupByName.set(group, g);
      // after the built-ins, alphabetical among the rest
      let at = this.groupList.length;
      for (let i = 0; i < this.groupList.length; i++) {
        const other = this.groupList[i].name;
        if (!this.builtinGroups.has(other) && other > group) {
          at = i;
          break;
        }
      }
      this.groupList.splice(at, 0, g);
    }
    if (!g.versions.includes(version)) {
      g.versions = [...g.versions, version].sort(compareKubeVersions);
      g.preferredVersion = g.versions[0];
    }

    let names = this.names.get(group);
    if (!names) this.names.set(group, (names = new Map()));
    for (const n of nameKeys(info)) {
      let c = names.get(n);
      if (!c) names.set(n, (c = []));
      if (!c.includes(info)) c.push(info);
    }
  }

  private unindex(info: ResourceInfo): void {
    const { group, version } = info;
    this.byGvr.delete(gvrKey(group, version, info.resource));
    if (this.byGvk.get(gvrKey(group, version, info.kind)) === info) this.byGvk.delete(gvrKey(group, version, info.kind));
    const list = this.byGv.get(`${group}/${version}`);
    if (list) {
      const i = list.indexOf(info);
      if (i >= 0) list.splice(i, 1);
    }
    const names = this.names.get(group);
    if (names) {
      for (const n of nameKeys(info)) {
        const c = names.get(n);
        if (!c) continue;
        const i = c.indexOf(info);
        if (i >= 0) c.splice(i, 1);
        if (c.length === 0) names.delete(n);
      }
    }
  }
}

function nameKeys(info: ResourceInfo): Set<string> {
  const keys = new Set<string>([info.resource.toLowerCase(), info.kind.toLowerCase()]);
  if (info.singularName) keys.add(info.singularName.toLowerCase());
  for (const s of info.shortNames ?? []) keys.add(s.toLowerCase());
  return keys;
}
