// Which of the kube-controller-manager controllers hearth runs in-process may be switched off,
// with kube-controller-manager's --controllers syntax: `*` (the default) is every one, `NAME`
// turns one on, `-NAME` off (so `*,-root-ca-certificate-publisher-controller` runs all but the
// publisher). Useful when a real kube-controller-manager runs them instead, or for an API server
// with none, as kube's own API server integration tests run.

/** kube's names for the controllers this flag selects (cmd/kube-controller-manager/names). */
export const SERVICE_ACCOUNT_CONTROLLER = 'serviceaccount-controller';
export const ROOT_CA_PUBLISHER_CONTROLLER = 'root-ca-certificate-publisher-controller';
export const CSR_APPROVING_CONTROLLER = 'certificatesigningrequest-approving-controller';
export const SELECTABLE_CONTROLLERS = [SERVICE_ACCOUNT_CONTROLLER, ROOT_CA_PUBLISHER_CONTROLLER, CSR_APPROVING_CONTROLLER];
/** kube's older names (a controller descriptor's aliases), each standing for its canonical name. */
const CONTROLLER_ALIASES: Record<string, string> = { csrapproving: CSR_APPROVING_CONTROLLER };

/** An entry with an alias replaced by the canonical name, its `-` kept. */
function canonical(entry: string): string {
  const off = entry.startsWith('-');
  const name = off ? entry.slice(1) : entry;
  const known = Object.hasOwn(CONTROLLER_ALIASES, name) ? CONTROLLER_ALIASES[name] : name;
  return off ? `-${known}` : known;
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
  for (const raw of list) {
    const entry = canonical(raw);
    if (entry === name) return true;
    if (entry === `-${name}`) return false;
    if (entry === '*') star = true;
  }
  return star;
}
