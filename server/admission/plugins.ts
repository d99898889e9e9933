// Which admission plugins run, and in what order: kube-apiserver 1.36's AllOrderedPlugins and its
// default-on set (pkg/kubeapiserver/options/plugins.go), with --enable-admission-plugins and
// --disable-admission-plugins read as apiserver's AdmissionOptions reads them (Validate's
// messages, enabledPluginNames: the default-on set, less the disabled, plus the enabled, in the
// recommended order). A plugin kube has that hearth does not is refused when named in
// --enable-admission-plugins; a default-on one hearth lacks is left out (those are behind
// feature gates hearth does not turn on, or are kube-controller-manager's business).

/** kube's AllOrderedPlugins: the order plugins run in, whatever order the flags name them. */
export const ALL_ORDERED_PLUGINS: readonly string[] = [
  'AlwaysAdmit',
  'NamespaceAutoProvision',
  'NamespaceLifecycle',
  'NamespaceExists',
  'LimitPodHardAntiAffinityTopology',
  'LimitRanger',
  'ServiceAccount',
  'NodeRestriction',
  'TaintNodesByCondition',
  'AlwaysPullImages',
  'ImagePolicyWebhook',
  'PodSecurity',
  'PodNodeSelector',
  'Priority',
  'DefaultTolerationSeconds',
  'PodTolerationRestriction',
  'EventRateLimit',
  'ExtendedResourceToleration',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'PodGroupProtection',
  'OwnerReferencesPermissionEnforcement',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'DenyServiceExternalIPs',
  'PodTopologyLabels',
  'PodGroupWorkloadExists',
  'NodeDeclaredFeatureValidator',
  'JobValidation',
  'PodResizeValidator',
  // webhooks, policies, quota and deny go last
  'MutatingAdmissionPolicy',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'AlwaysDeny',
];

/** kube's default-on set (everything else in the order is off unless enabled). */
export const DEFAULT_ON_PLUGINS: ReadonlySet<string> = new Set([
  'NamespaceLifecycle',
  'LimitRanger',
  'ServiceAccount',
  'DefaultStorageClass',
  'PersistentVolumeClaimResize',
  'DefaultTolerationSeconds',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'StorageObjectInUseProtection',
  'PodGroupProtection',
  'Priority',
  'TaintNodesByCondition',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'PodSecurity',
  'PodTopologyLabels',
  'MutatingAdmissionPolicy',
  'ValidatingAdmissionPolicy',
  'PodGroupWorkloadExists',
  'NodeDeclaredFeatureValidator',
  'JobValidation',
  'PodResizeValidator',
]);

/**
 * Plugins hearth turns on by default beyond kube's set, as kubeadm's kube-apiserver manifest
 * does (`--enable-admission-plugins=NodeRestriction`); --disable-admission-plugins lifts them.
 */
export const HEARTH_DEFAULT_ON_PLUGINS: ReadonlySet<string> = new Set(['NodeRestriction']);

/** Go's %v of a sorted []string: `[a b]`. */
const goList = (names: Iterable<string>): string => `[${[...names].sort().join(' ')}]`;

/**
 * The plugins to run, in kube's order, from the two flags. Throws one Error holding every
 * problem (kube's texts, one per line) when a name is unknown, both flags name a plugin, or a
 * plugin hearth does not have is enabled.
 */
export function enabledAdmissionPlugins(enable: readonly string[], disable: readonly string[], implemented: ReadonlySet<string>): string[] {
  const known = new Set(ALL_ORDERED_PLUGINS);
  const errors: string[] = [];
  for (const name of enable) if (!known.has(name)) errors.push(`enable-admission-plugins plugin ${JSON.stringify(name)} is unknown`);
  for (const name of disable) if (!known.has(name)) errors.push(`disable-admission-plugins plugin ${JSON.stringify(name)} is unknown`);
  const enabled = new Set(enable);
  const overlap = new Set(disable.filter((n) => enabled.has(n)));
  if (overlap.size) errors.push(`${goList(overlap)} in enable-admission-plugins and disable-admission-plugins overlapped`);
  const lacking = enable.filter((n) => known.has(n) && !implemented.has(n));
  if (lacking.length) errors.push(`enable-admission-plugins: ${goList(new Set(lacking))} not supported by hearth yet`);
  if (errors.length) throw new Error(errors.join('\n'));
  const disabled = new Set(disable);
  return ALL_ORDERED_PLUGINS.filter((n) => {
    if (enabled.has(n)) return true;
    if (disabled.has(n)) return false;
    return (DEFAULT_ON_PLUGINS.has(n) || HEARTH_DEFAULT_ON_PLUGINS.has(n)) && implemented.has(n);
  });
}
