// Generates the committed schema files from the upstream OpenAPI v2 document:
//   schemas/definitions.json — every definition, descriptions stripped
//   schemas/resources.json   — the GA resources kube-apiserver serves by default (ResourceCatalogFile)
// Run: node --import tsx scripts/gen-schemas.ts
// This is the only place that reads ../shared/; the server reads the generated files.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import type { GroupInfo, ResourceCatalogFile, ResourceInfo, SubresourceInfo } from '../server/schema/types.ts';
import { compareKubeVersions } from '../server/schema/catalog.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const swaggerPath = join(root, '..', 'shared', 'k8s-openapi', 'swagger.json');
const outDir = join(root, 'schemas');

/**
 * The Kubernetes release this swagger describes. Evidence in the document: MutatingAdmissionPolicy
 * is served at admissionregistration.k8s.io/v1 (GA in v1.36), scheduling.k8s.io/v1alpha2 with
 * Workload + PodGroup exists (v1alpha1 was replaced by v1alpha2 in v1.36), storagemigration.k8s.io/v1beta1
 * (v1.35+) and resource.k8s.io/v1 (v1.34+). Checked by assertions below so a newer swagger fails loudly.
 */
const KUBERNETES_VERSION = 'v1.36.0';

// ---------------------------------------------------------------------------------------------
// Facts not present in swagger: short names and categories as kube-apiserver's REST storages report them.
const SHORT_NAMES: Record<string, string[]> = {
  '/configmaps': ['cm'],
  '/endpoints': ['ep'],
  '/events': ['ev'],
  '/limitranges': ['limits'],
  '/namespaces': ['ns'],
  '/nodes': ['no'],
  '/persistentvolumeclaims': ['pvc'],
  '/persistentvolumes': ['pv'],
  '/pods': ['po'],
  '/replicationcontrollers': ['rc'],
  '/resourcequotas': ['quota'],
  '/serviceaccounts': ['sa'],
  '/services': ['svc'],
  'apiextensions.k8s.io/customresourcedefinitions': ['crd', 'crds'],
  'apps/daemonsets': ['ds'],
  'apps/deployments': ['deploy'],
  'apps/replicasets': ['rs'],
  'apps/statefulsets': ['sts'],
  'autoscaling/horizontalpodautoscalers': ['hpa'],
  'batch/cronjobs': ['cj'],
  'certificates.k8s.io/certificatesigningrequests': ['csr'],
  'events.k8s.io/events': ['ev'],
  'networking.k8s.io/ingresses': ['ing'],
  'networking.k8s.io/networkpolicies': ['netpol'],
  'networking.k8s.io/ipaddresses': ['ip'],
  'policy/poddisruptionbudgets': ['pdb'],
  'scheduling.k8s.io/priorityclasses': ['pc'],
  'storage.k8s.io/storageclasses': ['sc'],
  'storage.k8s.io/volumeattributesclasses': ['vac'],
};

const CATEGORIES: Record<string, string[]> = {
  '/pods': ['all'],
  '/replicationcontrollers': ['all'],
  '/services': ['all'],
  'apps/daemonsets': ['all'],
  'apps/deployments': ['all'],
  'apps/replicasets': ['all'],
  'apps/statefulsets': ['all'],
  'autoscaling/horizontalpodautoscalers': ['all'],
  'batch/cronjobs': ['all'],
  'batch/jobs': ['all'],
  'apiextensions.k8s.io/customresourcedefinitions': ['api-extensions'],
  'apiregistration.k8s.io/apiservices': ['api-extensions'],
  'admissionregistration.k8s.io/mutatingwebhookconfigurations': ['api-extensions'],
  'admissionregistration.k8s.io/validatingwebhookconfigurations': ['api-extensions'],
  'admissionregistration.k8s.io/validatingadmissionpolicies': ['api-extensions'],
  'admissionregistration.k8s.io/validatingadmissionpolicybindings': ['api-extensions'],
  'admissionregistration.k8s.io/mutatingadmissionpolicies': ['api-extensions'],
  'admissionregistration.k8s.io/mutatingadmissionpolicybindings': ['api-extensions'],
};

/** kube-apiserver's group discovery order (by APIService group priority). */
const GROUP_ORDER = [
  '',
  'apiregistration.k8s.io',
  'apps',
  'events.k8s.io',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'autoscaling',
  'batch',
  'certificates.k8s.io',
  'networking.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'storage.k8s.io',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'scheduling.k8s.io',
  'coordination.k8s.io',
  'node.k8s.io',
  'discovery.k8s.io',
  'flowcontrol.apiserver.k8s.io',
  'resource.k8s.io',
];

/** Create-only, never-stored kinds: served as resources but not part of this catalog. */
const EXCLUDED_KINDS = new Set([
  'TokenReview',
  'SubjectAccessReview',
  'SelfSubjectAccessReview',
  'LocalSubjectAccessReview',
  'SelfSubjectRulesReview',
  'SelfSubjectReview',
]);
const EXCLUDED_RESOURCES = new Set(['/bindings', '/componentstatuses']);
const EXCLUDED_GROUPS = new Set(['internal.apiserver.k8s.io']);

const VERB_ORDER = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

const ACTION_VERBS: Record<string, string> = {
  get: 'get',
  list: 'list',
  watch: 'watch',
  watchlist: 'watch',
  post: 'create',
  put: 'update',
  patch: 'patch',
  delete: 'delete',
  deletecollection: 'deletecollection',
};
/** "connect" operations (exec, attach, proxy, portforward) map by HTTP method, as discovery does. */
const METHOD_VERBS: Record<string, string> = { get: 'get', post: 'create', put: 'update', patch: 'patch', delete: 'delete' };
const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

// ---------------------------------------------------------------------------------------------
type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };
interface Gvk {
  group: string;
  version: string;
  kind: string;
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Removes every schema `description`, keeping property names (a property may be called "description"). */
function stripSchema(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(stripSchema);
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  for (const key of Object.keys(schema).sort()) {
    if (key === 'description') continue;
    const v = schema[key];
    if ((key === 'properties' || key === 'patternProperties' || key === 'definitions') && isObject(v)) {
      const props: JsonObject = {};
      for (const name of Object.keys(v).sort()) props[name] = stripSchema(v[name]);
      out[key] = props;
    } else if (key === 'items' || key === 'additionalProperties' || key === 'not' || key === 'allOf' || key === 'anyOf' || key === 'oneOf') {
      out[key] = stripSchema(v);
    } else {
      out[key] = sortKeysDeep(v);
    }
  }
  return out;
}

function sortKeysDeep(v: Json): Json {
  if (Array.isArray(v)) return v.map(sortKeysDeep);
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const k of Object.keys(v).sort()) out[k] = sortKeysDeep(v[k]);
  return out;
}

const isGA = (version: string): boolean => /^v\d+$/.test(version);

function sortVerbs(verbs: Iterable<string>): string[] {
  return [...new Set(verbs)].sort((a, b) => {
    const ia = VERB_ORDER.indexOf(a);
    const ib = VERB_ORDER.indexOf(b);
    if (ia !== ib) return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib);
    return a < b ? -1 : a > b ? 1 : 0;
  });
}

// ---------------------------------------------------------------------------------------------
interface ResourceAcc {
  group: string;
  version: string;
  resource: string;
  kind?: string;
  namespaced: boolean;
  verbs: Set<string>;
  subresources: Map<string, { verbs: Set<string>; gvk?: Gvk }>;
}

function main(): void {
  const swagger = JSON.parse(readFileSync(swaggerPath, 'utf8')) as { definitions: JsonObject; paths: JsonObject };
  const definitions = swagger.definitions;
  const paths = swagger.paths;

  // Sanity checks for the version claim.
  const hasPath = (p: string): boolean => Object.prototype.hasOwnProperty.call(paths, p);
  if (!hasPath('/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies') || !hasPath('/apis/scheduling.k8s.io/v1alpha2/')) {
    throw new Error('swagger does not look like Kubernetes v1.36: update KUBERNETES_VERSION');
  }

  // GVK -> definition name
  const defByGvk = new Map<string, string>();
  for (const name of Object.keys(definitions).sort()) {
    const def = definitions[name];
    if (!isObject(def)) continue;
    const gvks = def['x-kubernetes-group-version-kind'];
    if (!Array.isArray(gvks)) continue;
    for (const g of gvks) {
      if (!isObject(g)) continue;
      const key = `${g.group}/${g.version}/${g.kind}`;
      const existing = defByGvk.get(key);
      // Prefer the definition named after the kind (DeleteOptions is listed under every group).
      if (!existing || (!existing.endsWith(`.${String(g.kind)}`) && name.endsWith(`.${String(g.kind)}`))) defByGvk.set(key, name);
    }
  }

  const groupVersions = new Map<string, Set<string>>();
  const resources = new Map<string, ResourceAcc>();

  for (const path of Object.keys(paths).sort()) {
    const item = paths[path];
    if (!isObject(item)) continue;
    const segs = path.split('/').filter((s) => s !== '');
    let group: string;
    let version: string;
    let rest: string[];
    if (segs[0] === 'api' && segs.length >= 2) {
      group = '';
      version = segs[1];
      rest = segs.slice(2);
    } else if (segs[0] === 'apis' && segs.length >= 3) {
      group = segs[1];
      version = segs[2];
      rest = segs.slice(3);
    } else continue;
    if (!isGA(version) || EXCLUDED_GROUPS.has(group)) continue;
    let gv = groupVersions.get(group);
    if (!gv) groupVersions.set(group, (gv = new Set()));
    gv.add(version);
    if (rest.length === 0) continue;

    if (rest[0] === 'watch') rest = rest.slice(1);
    let namespaced = false;
    if (rest.length >= 3 && rest[0] === 'namespaces' && rest[1] === '{namespace}') {
      namespaced = true;
      rest = rest.slice(2);
    }
    const resource = rest[0];
    const sub = rest.length >= 3 && rest[1] === '{name}' ? rest[2] : undefined;
    if (rest.length >= 2 && rest[1] !== '{name}') continue; // unknown shape
    const key = `${group}/${version}/${resource}`;
    let acc = resources.get(key);
    if (!acc) {
      acc = { group, version, resource, namespaced: false, verbs: new Set(), subresources: new Map() };
      resources.set(key, acc);
    }
    if (namespaced) acc.namespaced = true;

    for (const method of Object.keys(item)) {
      if (!HTTP_METHODS.has(method)) continue;
      const op = item[method];
      if (!isObject(op)) continue;
      const action = typeof op['x-kubernetes-action'] === 'string' ? op['x-kubernetes-action'] : undefined;
      const gvkRaw = op['x-kubernetes-group-version-kind'];
      const gvk: Gvk | undefined = isObject(gvkRaw) ? { group: String(gvkRaw.group), version: String(gvkRaw.version), kind: String(gvkRaw.kind) } : undefined;
      if (!action) continue;
      const verb = action === 'connect' ? METHOD_VERBS[method] : ACTION_VERBS[action];
      if (sub === undefined) {
        if (verb) acc.verbs.add(verb);
        if (gvk && !acc.kind) acc.kind = gvk.kind;
      } else {
        let s = acc.subresources.get(sub);
        if (!s) acc.subresources.set(sub, (s = { verbs: new Set() }));
        if (verb) s.verbs.add(verb);
        if (gvk && !s.gvk) s.gvk = gvk;
      }
    }
  }

  // Build ResourceInfo entries.
  const out: ResourceInfo[] = [];
  for (const acc of resources.values()) {
    if (!acc.kind) throw new Error(`no kind for ${acc.group}/${acc.version}/${acc.resource}`);
    if (EXCLUDED_KINDS.has(acc.kind) || EXCLUDED_RESOURCES.has(`${acc.group}/${acc.resource}`)) continue;
    if (acc.verbs.size === 0) continue;
    const tableKey = `${acc.group}/${acc.resource}`;
    const info: ResourceInfo = {
      group: acc.group,
      version: acc.version,
      resource: acc.resource,
      kind: acc.kind,
      listKind: `${acc.kind}List`,
      singularName: acc.kind.toLowerCase(),
      namespaced: acc.namespaced,
      verbs: sortVerbs(acc.verbs),
    };
    if (SHORT_NAMES[tableKey]) info.shortNames = SHORT_NAMES[tableKey];
    if (CATEGORIES[tableKey]) info.categories = CATEGORIES[tableKey];
    if (acc.subresources.size > 0) {
      const subs: Record<string, SubresourceInfo> = {};
      for (const name of [...acc.subresources.keys()].sort()) {
        const s = acc.subresources.get(name)!;
        const si: SubresourceInfo = { verbs: sortVerbs(s.verbs) };
        if (s.gvk) {
          if (s.gvk.kind !== acc.kind) si.kind = s.gvk.kind;
          if (s.gvk.group !== acc.group || s.gvk.version !== acc.version) {
            si.group = s.gvk.group;
            si.version = s.gvk.version;
          }
        }
        if (name === 'scale') {
          si.group = 'autoscaling';
          si.version = 'v1';
          si.kind = 'Scale';
        }
        subs[name] = si;
      }
      info.subresources = subs;
    }
    const def = defByGvk.get(`${acc.group}/${acc.version}/${acc.kind}`);
    if (!def) throw new Error(`no definition for ${acc.group}/${acc.version} ${acc.kind}`);
    info.definition = def;
    out.push(info);
  }

  // Groups, in discovery order, with versions preferred-first.
  const groupNames = [...groupVersions.keys()].sort((a, b) => {
    const ia = GROUP_ORDER.indexOf(a);
    const ib = GROUP_ORDER.indexOf(b);
    if (ia >= 0 && ib >= 0) return ia - ib;
    if (ia >= 0) return -1;
    if (ib >= 0) return 1;
    return a < b ? -1 : 1;
  });
  const groups: GroupInfo[] = groupNames.map((name) => {
    const versions = [...groupVersions.get(name)!].sort(compareKubeVersions);
    return { name, versions, preferredVersion: versions[0] };
  });
  const groupIndex = new Map(groups.map((g, i) => [g.name, i]));

  // Storage version: the most preferred version of the group that serves the resource.
  for (const info of out) {
    const versions = groups[groupIndex.get(info.group)!].versions;
    info.storageVersion = versions.find((v) => out.some((o) => o.group === info.group && o.version === v && o.resource === info.resource)) ?? info.version;
  }

  out.sort((a, b) => {
    const ga = groupIndex.get(a.group)!;
    const gb = groupIndex.get(b.group)!;
    if (ga !== gb) return ga - gb;
    if (a.version !== b.version) return compareKubeVersions(a.version, b.version);
    return a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0;
  });

  const catalog: ResourceCatalogFile = { kubernetesVersion: KUBERNETES_VERSION, groups, resources: out };

  const strippedDefs: JsonObject = {};
  for (const name of Object.keys(definitions).sort()) strippedDefs[name] = stripSchema(definitions[name]);

  mkdirSync(outDir, { recursive: true });
  // One resource / one definition per line: small, diff-friendly and deterministic.
  const lines = (obj: Record<string, unknown> | unknown[], isArray: boolean): string => {
    const entries = isArray ? (obj as unknown[]).map((v) => JSON.stringify(v)) : Object.entries(obj).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
    return isArray ? `[\n${entries.join(',\n')}\n]` : `{\n${entries.join(',\n')}\n}`;
  };
  writeFileSync(join(outDir, 'definitions.json'), lines(strippedDefs, false) + '\n');
  writeFileSync(
    join(outDir, 'resources.json'),
    `{\n"kubernetesVersion":${JSON.stringify(catalog.kubernetesVersion)},\n"groups":${lines(catalog.groups, true)},\n"resources":${lines(catalog.resources, true)}\n}\n`,
  );
  console.log(`wrote ${out.length} resources in ${groups.length} groups, ${Object.keys(strippedDefs).length} definitions`);
}

main();
