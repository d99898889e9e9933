// ResourceQuota's configuration in --admission-control-config-file (kube's
// staging/.../admission/plugin/resourcequota/config.go and apis/resourcequota): limitedResources,
// the resources (and pod scopes) that may be consumed only where a quota covers them. Read as
// apiserver.config.k8s.io/v1 ResourceQuotaConfiguration or resourcequota.admission.k8s.io/v1beta1
// and v1alpha1 Configuration, strictly (an unknown or duplicate field fails the start), then
// validated (each names its resource), as kube's plugin factory does.
import type { ScopeRequirement } from './evaluators.ts';

export interface LimitedResource {
  apiGroup: string;
  resource: string;
  matchContains: string[];
  matchScopes: ScopeRequirement[];
}

const KINDS: Record<string, string> = {
  'apiserver.config.k8s.io/v1': 'ResourceQuotaConfiguration',
  'resourcequota.admission.k8s.io/v1beta1': 'Configuration',
  'resourcequota.admission.k8s.io/v1alpha1': 'Configuration',
};

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function unknownFields(obj: Record<string, unknown>, known: readonly string[], path: string, out: string[]): void {
  for (const k of Object.keys(obj)) if (!known.includes(k)) out.push(`unknown field "${path}${k}"`);
}

function strings(v: unknown, path: string, wrong: string[]): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) {
    wrong.push(path);
    return [];
  }
  return v as string[];
}

/** The plugin's limitedResources; none without a configuration. Throws kube's start-up error for a bad one. */
export function limitedResourcesOf(configuration: unknown): LimitedResource[] {
  if (configuration === undefined || configuration === null) return [];
  const fail = (why: string) => new Error(`couldn't init admission plugin "ResourceQuota": ${why}`);
  if (!isObj(configuration)) throw fail("couldn't get version/kind; json parse error: the configuration is not an object");
  const apiVersion = typeof configuration.apiVersion === 'string' ? configuration.apiVersion : '';
  const kind = typeof configuration.kind === 'string' ? configuration.kind : '';
  if (!kind) throw fail(`Object 'Kind' is missing in '${JSON.stringify(configuration)}'`);
  if (KINDS[apiVersion] !== kind) throw fail(`no kind "${kind}" is registered for version "${apiVersion}" in scheme "k8s.io/apiserver/pkg/admission/plugin/resourcequota/config.go:31"`);
  const unknown: string[] = [];
  const wrongType: string[] = [];
  unknownFields(configuration, ['apiVersion', 'kind', 'limitedResources'], '', unknown);
  const items = configuration.limitedResources ?? [];
  if (!Array.isArray(items)) throw fail('json: cannot unmarshal into Go struct field Configuration.limitedResources of type []v1.LimitedResource');
  const out: LimitedResource[] = [];
  const required: string[] = [];
  for (const [i, item] of items.entries()) {
    if (!isObj(item)) throw fail(`json: cannot unmarshal into Go struct field Configuration.limitedResources of type v1.LimitedResource`);
    unknownFields(item, ['apiGroup', 'resource', 'matchContains', 'matchScopes'], `limitedResources[${i}].`, unknown);
    const scopes: ScopeRequirement[] = [];
    for (const [j, s] of (Array.isArray(item.matchScopes) ? item.matchScopes : []).entries()) {
      if (!isObj(s)) continue;
      unknownFields(s, ['scopeName', 'operator', 'values'], `limitedResources[${i}].matchScopes[${j}].`, unknown);
      scopes.push({ scopeName: String(s.scopeName ?? ''), operator: String(s.operator ?? ''), values: strings(s.values, `limitedResources[${i}].matchScopes[${j}].values`, wrongType) });
    }
    const resource = typeof item.resource === 'string' ? item.resource : '';
    if (!resource) required.push(`limitedResources[${i}].resource: Required value`);
    out.push({ apiGroup: typeof item.apiGroup === 'string' ? item.apiGroup : '', resource, matchContains: strings(item.matchContains, `limitedResources[${i}].matchContains`, wrongType), matchScopes: scopes });
  }
  if (wrongType.length) throw fail(`json: cannot unmarshal into Go struct field ${wrongType[0]} of type []string`);
  if (unknown.length) throw fail(`strict decoding error: ${unknown.join(', ')}`);
  if (required.length) throw fail(required.length === 1 ? required[0] : `[${required.join(', ')}]`);
  return out;
}
