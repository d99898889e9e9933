// Which of the kube-controller-manager controllers hearth runs in-process may be switched off,
// with kube-controller-manager's --controllers syntax: `*` (the default) is every one, `NAME`
// turns one on, `-NAME` off (so `*,-root-ca-certificate-publisher-controller` runs all but the
// publisher). Useful when a real kube-controller-manager runs them instead, or for an API server
// with none, as kube's own API server integration tests run.

/** kube's names for the controllers this flag selects (cmd/kube-controller-manager/names). */
export const SERVICE_ACCOUNT_CONTROLLER = 'serviceaccount-controller';
export const ROOT_CA_PUBLISHER_CONTROLLER = 'root-ca-certificate-publisher-controller';
export const SERVICE_ACCOUNT_TOKEN_CONTROLLER = 'serviceaccount-token-controller';
export const LEGACY_TOKEN_CLEANER_CONTROLLER = 'legacy-serviceaccount-token-cleaner-controller';
/** The bootstrap signer (it also publishes kube-public/cluster-info) and the token cleaner: off by default in kube, which kubeadm turns on; on by default in hearth. */
export const BOOTSTRAP_SIGNER_CONTROLLER = 'bootstrap-signer-controller';
export const TOKEN_CLEANER_CONTROLLER = 'token-cleaner-controller';
export const CSR_APPROVING_CONTROLLER = 'certificatesigningrequest-approving-controller';
export const CLUSTERROLE_AGGREGATION_CONTROLLER = 'clusterrole-aggregation-controller';
export const RESOURCE_QUOTA_CONTROLLER = 'resourcequota-controller';
export const VALIDATING_ADMISSION_POLICY_STATUS_CONTROLLER = 'validatingadmissionpolicy-status-controller';
/** API Priority and Fairness' configuration maintenance and FlowSchema status: kube-apiserver's own, its priority-and-fairness-config-producer post-start hook. */
export const APF_CONFIGURATION_CONTROLLER = 'priority-and-fairness-config-producer';
export const SELECTABLE_CONTROLLERS = [SERVICE_ACCOUNT_CONTROLLER, ROOT_CA_PUBLISHER_CONTROLLER, SERVICE_ACCOUNT_TOKEN_CONTROLLER, LEGACY_TOKEN_CLEANER_CONTROLLER, BOOTSTRAP_SIGNER_CONTROLLER, TOKEN_CLEANER_CONTROLLER, CSR_APPROVING_CONTROLLER, CLUSTERROLE_AGGREGATION_CONTROLLER, RESOURCE_QUOTA_CONTROLLER, VALIDATING_ADMISSION_POLICY_STATUS_CONTROLLER, APF_CONFIGURATION_CONTROLLER];
/** The older names kube-controller-manager still takes for them (its ControllerDescriptor aliases), read as the canonical ones. */
const CONTROLLER_ALIASES: Record<string, string> = { bootstrapsigner: BOOTSTRAP_SIGNER_CONTROLLER, tokencleaner: TOKEN_CLEANER_CONTROLLER, csrapproving: CSR_APPROVING_CONTROLLER, resourcequota: RESOURCE_QUOTA_CONTROLLER };

/** A name of the list with its alias replaced by the canonical name, the `-` kept (kube's ApplyTo). */
function canonical(entry: string): string {
  const off = entry.startsWith('-');
  const name = off ? entry.slice(1) : entry;
  const resolved = Object.hasOwn(CONTROLLER_ALIASES, name) ? CONTROLLER_ALIASES[name]! : name;
  return off ? `-${resolved}` : resolved;
}

/** The list's names that are not known, each as kube-controller-manager reports it; empty when all are. */
export function controllerSelectionErrors(list: readonly string[]): string[] {
  const errs: string[] = [];
  for (const entry of list) {
    if (entry === '*') continue;
    const name = entry.startsWith('-') ? entry.slice(1) : entry;
    if (!SELECTABLE_CONTROLLERS.includes(canonical(name))) errs.push(`"${name}" is not in the list of known controllers`);
  }
  return errs;
}

/** kube's IsControllerEnabled: the name itself decides, then `-name`, then `*`. */
export function controllerEnabled(list: readonly string[] = ['*'], name: string): boolean {
  let star = false;
  for (const entry of list.map(canonical)) {
    if (entry === name) return true;
    if (entry === `-${name}`) return false;
    if (entry === '*') star = true;
  }
  return star;
}
