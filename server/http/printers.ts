/**
 * Server-side Table printing: the column definitions and row cells that
 * kube-apiserver returns for `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`.
 *
 * Column names/types/priorities and the way each cell is computed follow the
 * built-in Kubernetes printers; kube-apiserver always generates the "wide" set
 * of cells, and kubectl hides priority > 0 columns unless `-o wide` is used.
 * Every printer here therefore returns one cell per column, wide ones included.
 */
import { convertEvent, CORE_EVENT_VERSION, EVENTS_V1_VERSION } from '../registry/conversions/events.ts';
import { convertHorizontalPodAutoscaler } from '../registry/conversions/autoscaling.ts';
import { formatRFC3339 } from '../go/time.ts';

export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface TablePrinter {
  columns: TableColumnDefinition[];
  cells(obj: any, now: number): unknown[];
}

// ---------------------------------------------------------------------------
// humanDuration
// ---------------------------------------------------------------------------

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * Kubernetes' duration.HumanDuration: a short age with 2-3 significant figures.
 * Up to 1s in the future counts as "0s"; further in the future is "<invalid>".
 */
export function humanDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '<invalid>';
  const seconds = Math.trunc(ms / SECOND);
  if (seconds < -1) return '<invalid>';
  if (seconds <= 0) return '0s';
  if (seconds < 120) return `${seconds}s`;

  const minutes = Math.trunc(ms / MINUTE);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;

  const hours = Math.trunc(ms / HOUR);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;

  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;

  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) {
    const dy = days % 365;
    return dy === 0 ? `${years}y` : `${years}y${dy}d`;
  }
  return `${years}y`;
}

// ---------------------------------------------------------------------------
// small helpers
// ---------------------------------------------------------------------------

/** Milliseconds since epoch for an RFC3339 timestamp, or undefined when unset/unparseable. */
function parseTime(v: unknown): number | undefined {
  if (typeof v !== 'string' || v === '') return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}

/** Age of a timestamp as kube prints it ("<unknown>" when unset). */
function since(v: unknown, now: number): string {
  const t = parseTime(v);
  return t === undefined ? '<unknown>' : humanDuration(now - t);
}

function age(obj: any, now: number): string {
  return since(obj?.metadata?.creationTimestamp, now);
}

function nameOf(obj: any): string {
  return str(obj?.metadata?.name);
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
}

function int(v: unknown, dflt = 0): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : dflt;
}

function arr(v: unknown): any[] {
  return Array.isArray(v) ? v : [];
}

function countKeys(v: unknown): number {
  return v && typeof v === 'object' && !Array.isArray(v) ? Object.keys(v).length : 0;
}

/** Quantity as printed (stored quantities are already canonical strings); unset is "0". */
function quantity(v: unknown): string {
  if (v === undefined || v === null || v === '') return '0';
  return String(v);
}

function intOrString(v: unknown): string {
  return typeof v === 'number' ? String(v) : str(v);
}

function boolPtr(v: unknown): string {
  if (typeof v !== 'boolean') return '<unset>';
  return v ? 'True' : 'False';
}

/** labels.FormatLabels: sorted "k=v" pairs, "<none>" when empty. */
function formatLabels(m: unknown): string {
  if (!m || typeof m !== 'object') return '<none>';
  const keys = Object.keys(m as Record<string, unknown>).sort();
  if (keys.length === 0) return '<none>';
  return keys.map((k) => `${k}=${str((m as Record<string, unknown>)[k])}`).join(',');
}

/**
 * String form of a metav1.LabelSelector after conversion to a labels.Selector.
 * Returns "" for nil/empty selectors and null when the selector is invalid.
 */
function selectorString(sel: any): string | null {
  if (!sel || typeof sel !== 'object') return '';
  const reqs: { key: string; text: string }[] = [];
  const ml = sel.matchLabels;
  if (ml && typeof ml === 'object') {
    for (const k of Object.keys(ml)) reqs.push({ key: k, text: `${k}=${str(ml[k])}` });
  }
  for (const e of arr(sel.matchExpressions)) {
    const key = str(e?.key);
    const values = arr(e?.values).map(str);
    const uniq = [...new Set(values)].sort();
    switch (e?.operator) {
      case 'In':
        if (uniq.length === 0) return null;
        reqs.push({ key, text: `${key} in (${uniq.join(',')})` });
        break;
      case 'NotIn':
        if (uniq.length === 0) return null;
        reqs.push({ key, text: `${key} notin (${uniq.join(',')})` });
        break;
      case 'Exists':
        if (values.length > 0) return null;
        reqs.push({ key, text: key });
        break;
      case 'DoesNotExist':
        if (values.length > 0) return null;
        reqs.push({ key, text: `!${key}` });
        break;
      default:
        return null;
    }
  }
  reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return reqs.map((r) => r.text).join(',');
}

/** metav1.FormatLabelSelector: "<none>" when empty, "<error>" when invalid. */
function formatLabelSelector(sel: any): string {
  const s = selectorString(sel);
  if (s === null) return '<error>';
  return s === '' ? '<none>' : s;
}

/** Container names and images, each comma-joined. */
function containerCells(containers: unknown): [string, string] {
  const list = arr(containers);
  return [list.map((c) => str(c?.name)).join(','), list.map((c) => str(c?.image)).join(',')];
}

function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Up to `max` items, then " + N more..."; `empty` when there are none. */
function listWithMore(list: string[], total: number, max: number, empty: string): string {
  const shown = list.slice(0, max).join(',');
  if (total > max) return `${shown} + ${total - max} more...`;
  return shown === '' ? empty : shown;
}

function conditionStatus(conditions: unknown, type: string): string | undefined {
  for (const c of arr(conditions)) if (c?.type === type) return str(c?.status);
  return undefined;
}

// ---------------------------------------------------------------------------
// column helpers
// ---------------------------------------------------------------------------

function col(name: string, type: string, description: string, priority = 0, format = ''): TableColumnDefinition {
  return { name, type, format, description, priority };
}

const NAME_DESC = 'Name must be unique within a namespace.';
const AGE_DESC = 'CreationTimestamp is a timestamp representing the server time when this object was created.';

const nameCol = (): TableColumnDefinition => col('Name', 'string', NAME_DESC, 0, 'name');
const ageCol = (): TableColumnDefinition => col('Age', 'string', AGE_DESC);
const containersCol = (p = 1) => col('Containers', 'string', 'Names of each container in the template.', p);
const imagesCol = (p = 1) => col('Images', 'string', 'Images referenced by each container in the template.', p);
const selectorCol = (desc = 'Label selector for the controlled pods.') => col('Selector', 'string', desc, 1);

function printer(columns: TableColumnDefinition[], cells: (obj: any, now: number) => unknown[]): TablePrinter {
  return { columns, cells };
}

// ---------------------------------------------------------------------------
// core
// ---------------------------------------------------------------------------

const isRestartableInit = (c: any): boolean => c?.restartPolicy === 'Always';

function podCells(pod: any, now: number): unknown[] {
  const spec = pod?.spec ?? {};
  const status = pod?.status ?? {};
  const phase = str(status.phase);
  let reason = phase;
  if (str(status.reason) !== '') reason = str(status.reason);
  for (const c of arr(status.conditions)) {
    if (c?.type === 'PodScheduled' && c?.reason === 'SchedulingGated') reason = 'SchedulingGated';
  }

  const initSpecs = arr(spec.initContainers);
  const initByName = new Map<string, any>();
  let totalContainers = arr(spec.containers).length;
  for (const c of initSpecs) {
    initByName.set(str(c?.name), c);
    if (isRestartableInit(c)) totalContainers++;
  }

  let restarts = 0;
  let sidecarRestarts = 0;
  let readyContainers = 0;
  let lastRestart: number | undefined;
  let lastSidecarRestart: number | undefined;
  const later = (a: number | undefined, b: number | undefined) =>
    b === undefined ? a : a === undefined || a < b ? b : a;

  let initializing = false;
  const initStatuses = arr(status.initContainerStatuses);
  for (let i = 0; i < initStatuses.length; i++) {
    const cs = initStatuses[i] ?? {};
    const rc = int(cs.restartCount);
    const finished = parseTime(cs.lastState?.terminated?.finishedAt);
    restarts += rc;
    lastRestart = later(lastRestart, finished);
    const sidecar = isRestartableInit(initByName.get(str(cs.name)));
    if (sidecar) {
      sidecarRestarts += rc;
      lastSidecarRestart = later(lastSidecarRestart, finished);
    }
    const term = cs.state?.terminated;
    const wait = cs.state?.waiting;
    if (term && int(term.exitCode) === 0) continue;
    if (sidecar && cs.started === true) {
      if (cs.ready === true) readyContainers++;
      continue;
    }
    if (term) {
      if (str(term.reason) === '') {
        reason = int(term.signal) !== 0 ? `Init:Signal:${int(term.signal)}` : `Init:ExitCode:${int(term.exitCode)}`;
      } else {
        reason = `Init:${str(term.reason)}`;
      }
    } else if (wait && str(wait.reason) !== '' && wait.reason !== 'PodInitializing') {
      reason = `Init:${str(wait.reason)}`;
    } else {
      reason = `Init:${i}/${initSpecs.length}`;
    }
    initializing = true;
    break;
  }

  if (!initializing || conditionStatus(status.conditions, 'Initialized') === 'True') {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses = arr(status.containerStatuses);
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i] ?? {};
      restarts += int(cs.restartCount);
      lastRestart = later(lastRestart, parseTime(cs.lastState?.terminated?.finishedAt));
      const wait = cs.state?.waiting;
      const term = cs.state?.terminated;
      if (wait && str(wait.reason) !== '') {
        reason = str(wait.reason);
      } else if (term && str(term.reason) !== '') {
        reason = str(term.reason);
      } else if (term) {
        reason = int(term.signal) !== 0 ? `Signal:${int(term.signal)}` : `ExitCode:${int(term.exitCode)}`;
      } else if (cs.ready === true && cs.state?.running) {
        hasRunning = true;
        readyContainers++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      reason = conditionStatus(status.conditions, 'Ready') === 'True' ? 'Running' : 'NotReady';
    }
  }

  const deleting = !!pod?.metadata?.deletionTimestamp;
  if (deleting && status.reason === 'NodeLost') {
    reason = 'Unknown';
  } else if (deleting && phase !== 'Succeeded' && phase !== 'Failed') {
    reason = 'Terminating';
  }

  let restartsCell = String(restarts);
  if (restarts !== 0 && lastRestart !== undefined) {
    restartsCell = `${restarts} (${humanDuration(now - lastRestart)} ago)`;
  }

  let podIP = str(arr(status.podIPs)[0]?.ip);
  if (podIP === '') podIP = str(status.podIP);
  const gates = arr(spec.readinessGates);
  let readinessGates = '<none>';
  if (gates.length > 0) {
    let trueCount = 0;
    for (const g of gates) {
      if (conditionStatus(status.conditions, str(g?.conditionType)) === 'True') trueCount++;
    }
    readinessGates = `${trueCount}/${gates.length}`;
  }

  return [
    nameOf(pod),
    `${readyContainers}/${totalContainers}`,
    reason,
    restartsCell,
    age(pod, now),
    podIP || '<none>',
    str(spec.nodeName) || '<none>',
    str(status.nominatedNodeName) || '<none>',
    readinessGates,
  ];
}

const podPrinter = printer(
  [
    nameCol(),
    col('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
    col('Status', 'string', 'The aggregate status of the containers in this pod.'),
    col('Restarts', 'string', 'The number of times the containers in this pod have been restarted and when the last container restarted.'),
    ageCol(),
    col('IP', 'string', 'IP address allocated to the pod.', 1),
    col('Node', 'string', 'Node the pod is scheduled onto.', 1),
    col('Nominated Node', 'string', 'Node nominated by the scheduler for preemption.', 1),
    col('Readiness Gates', 'string', 'Readiness gates satisfied out of those declared.', 1),
  ],
  podCells,
);

const podTemplatePrinter = printer(
  [
    nameCol(),
    containersCol(0),
    imagesCol(0),
    col('Pod Labels', 'string', 'The labels for the pod template.'),
  ],
  (o) => {
    const [names, images] = containerCells(o?.template?.spec?.containers);
    return [nameOf(o), names, images, formatLabels(o?.template?.metadata?.labels)];
  },
);

const namespacePrinter = printer(
  [nameCol(), col('Status', 'string', 'The status of the namespace'), ageCol()],
  (o, now) => [nameOf(o), str(o?.status?.phase), age(o, now)],
);

function serviceExternalIP(svc: any): string {
  const spec = svc?.spec ?? {};
  const externalIPs = arr(spec.externalIPs).map(str);
  switch (spec.type) {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length > 0 ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      const lb = new Set<string>();
      for (const ing of arr(svc?.status?.loadBalancer?.ingress)) {
        if (str(ing?.ip) !== '') lb.add(str(ing.ip));
        else if (str(ing?.hostname) !== '') lb.add(str(ing.hostname));
      }
      const lbIPs = [...lb].sort();
      if (externalIPs.length > 0) return [...lbIPs, ...externalIPs].join(',');
      return lbIPs.length > 0 ? lbIPs.join(',') : '<pending>';
    }
    case 'ExternalName':
      return str(spec.externalName);
    default:
      return '<unknown>';
  }
}

function servicePorts(ports: unknown): string {
  return arr(ports)
    .map((p) => {
      const proto = str(p?.protocol) || 'TCP';
      const nodePort = int(p?.nodePort);
      return nodePort > 0 ? `${int(p?.port)}:${nodePort}/${proto}` : `${int(p?.port)}/${proto}`;
    })
    .join(',');
}

const servicePrinter = printer(
  [
    nameCol(),
    col('Type', 'string', 'Type determines how the Service is exposed.'),
    col('Cluster-IP', 'string', 'The IP address of the service.'),
    col('External-IP', 'string', 'External IPs or load-balancer ingress points of the service.'),
    col('Port(s)', 'string', 'The list of ports exposed by this service.'),
    ageCol(),
    col('Selector', 'string', 'Route service traffic to pods with label keys and values matching this selector.', 1),
  ],
  (o, now) => {
    const spec = o?.spec ?? {};
    let clusterIP = str(arr(spec.clusterIPs)[0]);
    if (clusterIP === '') clusterIP = str(spec.clusterIP);
    return [
      nameOf(o),
      str(spec.type),
      clusterIP || '<none>',
      serviceExternalIP(o),
      servicePorts(spec.ports) || '<none>',
      age(o, now),
      formatLabels(spec.selector),
    ];
  },
);

const configMapPrinter = printer(
  [nameCol(), col('Data', 'string', 'Number of data and binaryData keys.'), ageCol()],
  (o, now) => [nameOf(o), countKeys(o?.data) + countKeys(o?.binaryData), age(o, now)],
);

const secretPrinter = printer(
  [nameCol(), col('Type', 'string', 'Used to facilitate programmatic handling of secret data.'), col('Data', 'string', 'Number of data keys.'), ageCol()],
  (o, now) => [nameOf(o), str(o?.type), countKeys(o?.data), age(o, now)],
);

const serviceAccountPrinter = printer(
  [nameCol(), col('Secrets', 'string', 'Number of secrets referenced by the service account.'), ageCol()],
  (o, now) => [nameOf(o), arr(o?.secrets).length, age(o, now)],
);

function nodeRoles(node: any): string {
  const roles = new Set<string>();
  const labels = node?.metadata?.labels ?? {};
  for (const k of Object.keys(labels)) {
    if (k.startsWith('node-role.kubernetes.io/')) {
      const role = k.slice('node-role.kubernetes.io/'.length);
      if (role !== '') roles.add(role);
    } else if (k === 'kubernetes.io/role' && str(labels[k]) !== '') {
      roles.add(str(labels[k]));
    }
  }
  const list = [...roles].sort();
  return list.length > 0 ? list.join(',') : '<none>';
}

function nodeAddress(node: any, type: string): string {
  for (const a of arr(node?.status?.addresses)) if (a?.type === type) return str(a?.address);
  return '<none>';
}

const nodePrinter = printer(
  [
    nameCol(),
    col('Status', 'string', 'The status of the node'),
    col('Roles', 'string', 'The roles of the node'),
    ageCol(),
    col('Version', 'string', 'Kubelet version reported by the node.'),
    col('Internal-IP', 'string', 'Internal IP address of the node.', 1),
    col('External-IP', 'string', 'External IP address of the node.', 1),
    col('OS-Image', 'string', 'OS image reported by the node.', 1),
    col('Kernel-Version', 'string', 'Kernel version reported by the node.', 1),
    col('Container-Runtime', 'string', 'Container runtime version reported by the node.', 1),
  ],
  (o, now) => {
    let ready: any;
    for (const c of arr(o?.status?.conditions)) if (c?.type === 'Ready') ready = c;
    const status: string[] = [];
    if (ready) status.push(ready.status === 'True' ? 'Ready' : 'NotReady');
    else status.push('Unknown');
    if (o?.spec?.unschedulable === true) status.push('SchedulingDisabled');
    const info = o?.status?.nodeInfo ?? {};
    return [
      nameOf(o),
      status.join(','),
      nodeRoles(o),
      age(o, now),
      str(info.kubeletVersion),
      nodeAddress(o, 'InternalIP'),
      nodeAddress(o, 'ExternalIP'),
      str(info.osImage) || '<unknown>',
      str(info.kernelVersion) || '<unknown>',
      str(info.containerRuntimeVersion) || '<unknown>',
    ];
  },
);

/** A core/v1-shaped event (kube prints the internal form): events.k8s.io/v1 objects are converted first. */
function coreEventShape(o: any): any {
  return o?.apiVersion === EVENTS_V1_VERSION ? convertEvent(o, CORE_EVENT_VERSION) : (o ?? {});
}

function eventCells(raw: any, now: number): unknown[] {
  const ev = coreEventShape(raw);
  let first = since(ev.firstTimestamp, now);
  if (parseTime(ev.firstTimestamp) === undefined) first = since(ev.eventTime, now);
  let last = since(ev.lastTimestamp, now);
  if (parseTime(ev.lastTimestamp) === undefined) last = first;
  let count = int(ev.count);
  if (ev.series && typeof ev.series === 'object') {
    last = since(ev.series.lastObservedTime, now);
    count = int(ev.series.count);
  } else if (count === 0) {
    count = 1;
  }
  const involved = ev.involvedObject ?? {};
  const kind = str(involved.kind).toLowerCase();
  const target = str(involved.name) !== '' ? `${kind}/${str(involved.name)}` : kind;
  const component = str(ev.source?.component) || str(ev.reportingComponent);
  const instance = str(ev.source?.host) || str(ev.reportingInstance);
  const source = instance === '' ? component : `${component}, ${instance}`;
  return [
    last,
    str(ev.type),
    str(ev.reason),
    target,
    str(involved.fieldPath),
    source,
    str(ev.message).trim(),
    first,
    count,
    nameOf(ev),
  ];
}

const eventPrinter = printer(
  [
    col('Last Seen', 'string', 'The time at which the most recent occurrence of this event was recorded.'),
    col('Type', 'string', 'Type of this event (Normal, Warning).'),
    col('Reason', 'string', 'Short, machine understandable reason for the event.'),
    col('Object', 'string', 'The object that this event is about.'),
    col('Subobject', 'string', 'Field path within the involved object.', 1),
    col('Source', 'string', 'The component reporting this event.', 1),
    col('Message', 'string', 'A human-readable description of the event.'),
    col('First Seen', 'string', 'The time at which the event was first recorded.', 1),
    col('Count', 'string', 'The number of times this event has occurred.', 1),
    col('Name', 'string', NAME_DESC, 1, 'name'),
  ],
  eventCells,
);

function formatEndpoints(o: any): string {
  const subsets = arr(o?.subsets);
  if (subsets.length === 0) return '<none>';
  const max = 3;
  const list: string[] = [];
  let count = 0;
  for (const ss of subsets) {
    const addrs = arr(ss?.addresses);
    const ports = arr(ss?.ports);
    if (ports.length === 0) {
      count += addrs.length;
      for (const a of addrs) {
        if (list.length === max) break;
        list.push(str(a?.ip));
      }
      continue;
    }
    for (const p of ports) {
      count += addrs.length;
      for (const a of addrs) {
        if (list.length === max) break;
        list.push(joinHostPort(str(a?.ip), int(p?.port)));
      }
    }
  }
  const joined = list.join(',');
  return count > max ? `${joined} + ${count - max} more...` : joined;
}

const endpointsPrinter = printer(
  [nameCol(), col('Endpoints', 'string', 'The set of addresses and ports of the endpoints.'), ageCol()],
  (o, now) => [nameOf(o), formatEndpoints(o), age(o, now)],
);

/** PV access modes, always in RWO,ROX,RWX,RWOP order. */
function accessModes(modes: unknown): string {
  const set = new Set(arr(modes).map(str));
  const out: string[] = [];
  if (set.has('ReadWriteOnce')) out.push('RWO');
  if (set.has('ReadOnlyMany')) out.push('ROX');
  if (set.has('ReadWriteMany')) out.push('RWX');
  if (set.has('ReadWriteOncePod')) out.push('RWOP');
  return out.join(',');
}

const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

function storageClassOf(o: any): string {
  const ann = o?.metadata?.annotations;
  if (ann && typeof ann === 'object' && BETA_STORAGE_CLASS_ANNOTATION in ann) return str(ann[BETA_STORAGE_CLASS_ANNOTATION]);
  return str(o?.spec?.storageClassName);
}

const persistentVolumePrinter = printer(
  [
    nameCol(),
    col('Capacity', 'string', 'Capacity of the persistent volume.'),
    col('Access Modes', 'string', 'Ways the volume can be mounted.'),
    col('Reclaim Policy', 'string', 'What happens to the volume when released from its claim.'),
    col('Status', 'string', 'Phase of the persistent volume.'),
    col('Claim', 'string', 'The claim bound to this volume.'),
    col('StorageClass', 'string', 'StorageClass of the pv'),
    col('VolumeAttributesClass', 'string', 'VolumeAttributesClass of the pv'),
    col('Reason', 'string', 'Reason for the current phase.'),
    ageCol(),
    col('VolumeMode', 'string', 'Block or Filesystem.', 1),
  ],
  (o, now) => {
    const spec = o?.spec ?? {};
    const claim = spec.claimRef ? `${str(spec.claimRef.namespace)}/${str(spec.claimRef.name)}` : '';
    const phase = o?.metadata?.deletionTimestamp ? 'Terminating' : str(o?.status?.phase);
    return [
      nameOf(o),
      quantity(spec.capacity?.storage),
      accessModes(spec.accessModes),
      str(spec.persistentVolumeReclaimPolicy),
      phase,
      claim,
      storageClassOf(o),
      typeof spec.volumeAttributesClassName === 'string' ? spec.volumeAttributesClassName : '<unset>',
      str(o?.status?.reason),
      age(o, now),
      typeof spec.volumeMode === 'string' ? spec.volumeMode : '<unset>',
    ];
  },
);

const persistentVolumeClaimPrinter = printer(
  [
    nameCol(),
    col('Status', 'string', 'Phase of the claim.'),
    col('Volume', 'string', 'The volume bound to this claim.'),
    col('Capacity', 'string', 'Actual capacity of the bound volume.'),
    col('Access Modes', 'string', 'Access modes of the bound volume.'),
    col('StorageClass', 'string', 'StorageClass of the pvc'),
    col('VolumeAttributesClass', 'string', 'VolumeAttributesClass of the pvc'),
    ageCol(),
    col('VolumeMode', 'string', 'Block or Filesystem.', 1),
  ],
  (o, now) => {
    const spec = o?.spec ?? {};
    const phase = o?.metadata?.deletionTimestamp ? 'Terminating' : str(o?.status?.phase);
    let capacity = '';
    let modes = '';
    if (str(spec.volumeName) !== '') {
      modes = accessModes(o?.status?.accessModes);
      capacity = quantity(o?.status?.capacity?.storage);
    }
    return [
      nameOf(o),
      phase,
      str(spec.volumeName),
      capacity,
      modes,
      storageClassOf(o),
      typeof spec.volumeAttributesClassName === 'string' ? spec.volumeAttributesClassName : '<unset>',
      age(o, now),
      typeof spec.volumeMode === 'string' ? spec.volumeMode : '<unset>',
    ];
  },
);

/** ReplicationController and ReplicaSet print alike; their selectors differ (a label map, a LabelSelector). */
function replicasPrinter(selector: (sel: any) => string): TablePrinter {
  return printer(
    [
      nameCol(),
      col('Desired', 'integer', 'Number of desired replicas.'),
      col('Current', 'integer', 'Most recently observed number of replicas.'),
      col('Ready', 'integer', 'Number of ready replicas.'),
      ageCol(),
      containersCol(),
      imagesCol(),
      selectorCol(),
    ],
    (o, now) => {
      const [names, images] = containerCells(o?.spec?.template?.spec?.containers);
      return [nameOf(o), int(o?.spec?.replicas, 1), int(o?.status?.replicas), int(o?.status?.readyReplicas), age(o, now), names, images, selector(o?.spec?.selector)];
    },
  );
}

const replicationControllerPrinter = replicasPrinter(formatLabels);

function resourceQuotaCells(o: any, now: number): unknown[] {
  const hard = o?.status?.hard ?? {};
  const used = o?.status?.used ?? {};
  const requests: string[] = [];
  const limits: string[] = [];
  for (const r of Object.keys(hard).sort()) {
    const text = `${r}: ${quantity(used[r])}/${quantity(hard[r])}`;
    const pieces = r.split('.');
    if (pieces.length > 1 && pieces[0] === 'limits') limits.push(text);
    else requests.push(text);
  }
  return [nameOf(o), requests.join(', '), limits.join(', '), age(o, now)];
}

const resourceQuotaPrinter = printer(
  [
    nameCol(),
    col('Request', 'string', 'Used/hard amounts of requested resources.'),
    col('Limit', 'string', 'Used/hard amounts of resource limits.'),
    ageCol(),
  ],
  resourceQuotaCells,
);

const componentStatusPrinter = printer(
  [
    nameCol(),
    col('Status', 'string', 'Status of the component conditions'),
    col('Message', 'string', 'Message of the component conditions'),
    col('Error', 'string', 'Error of the component conditions'),
  ],
  (o) => {
    let status = 'Unknown';
    let message = '';
    let error = '';
    for (const c of arr(o?.conditions)) {
      if (c?.type === 'Healthy') {
        status = c.status === 'True' ? 'Healthy' : 'Unhealthy';
        message = str(c.message);
        error = str(c.error);
        break;
      }
    }
    return [nameOf(o), status, message, error];
  },
);

// ---------------------------------------------------------------------------
// apps
// ---------------------------------------------------------------------------

const deploymentPrinter = printer(
  [
    nameCol(),
    col('Ready', 'string', 'Number of the pod with ready state'),
    col('Up-to-date', 'string', 'Total number of pods running the desired template.'),
    col('Available', 'string', 'Total number of available pods.'),
    ageCol(),
    containersCol(),
    imagesCol(),
    selectorCol(),
  ],
  (o, now) => {
    const [names, images] = containerCells(o?.spec?.template?.spec?.containers);
    const sel = selectorString(o?.spec?.selector);
    return [
      nameOf(o),
      `${int(o?.status?.readyReplicas)}/${int(o?.spec?.replicas, 1)}`,
      int(o?.status?.updatedReplicas),
      int(o?.status?.availableReplicas),
      age(o, now),
      names,
      images,
      sel === null ? '<invalid>' : sel,
    ];
  },
);

const replicaSetPrinter = replicasPrinter(formatLabelSelector);

const statefulSetPrinter = printer(
  [nameCol(), col('Ready', 'string', 'Number of the pod with ready state'), ageCol(), containersCol(), imagesCol()],
  (o, now) => {
    const [names, images] = containerCells(o?.spec?.template?.spec?.containers);
    return [nameOf(o), `${int(o?.status?.readyReplicas)}/${int(o?.spec?.replicas, 1)}`, age(o, now), names, images];
  },
);

const daemonSetPrinter = printer(
  [
    nameCol(),
    col('Desired', 'integer', 'Number of nodes that should run the daemon pod.'),
    col('Current', 'integer', 'Number of nodes running at least one daemon pod.'),
    col('Ready', 'integer', 'Number of nodes with a ready daemon pod.'),
    col('Up-to-date', 'integer', 'Number of nodes running the updated daemon pod.'),
    col('Available', 'integer', 'Number of nodes with an available daemon pod.'),
    col('Node Selector', 'string', 'Node selector of the pod template.'),
    ageCol(),
    containersCol(),
    imagesCol(),
    selectorCol(),
  ],
  (o, now) => {
    const st = o?.status ?? {};
    const [names, images] = containerCells(o?.spec?.template?.spec?.containers);
    return [
      nameOf(o),
      int(st.desiredNumberScheduled),
      int(st.currentNumberScheduled),
      int(st.numberReady),
      int(st.updatedNumberScheduled),
      int(st.numberAvailable),
      formatLabels(o?.spec?.template?.spec?.nodeSelector),
      age(o, now),
      names,
      images,
      formatLabelSelector(o?.spec?.selector),
    ];
  },
);

/** The controller owner as "kind.group/name" (lowercased kind.group), or "<none>". */
function controllerOf(o: any): string {
  for (const ref of arr(o?.metadata?.ownerReferences)) {
    if (ref?.controller !== true) continue;
    const apiVersion = str(ref.apiVersion);
    const parts = apiVersion.split('/');
    const group = parts.length === 2 ? parts[0] : '';
    const kind = str(ref.kind);
    if (kind === '' && group === '') return str(ref.name);
    const gk = group === '' ? kind : `${kind}.${group}`;
    return `${gk.toLowerCase()}/${str(ref.name)}`;
  }
  return '<none>';
}

const controllerRevisionPrinter = printer(
  [
    nameCol(),
    col('Controller', 'string', 'Controller of the object'),
    col('Revision', 'string', 'Revision indicates the revision of the state represented by Data.'),
    ageCol(),
  ],
  (o, now) => [nameOf(o), controllerOf(o), int(o?.revision), age(o, now)],
);

// ---------------------------------------------------------------------------
// batch
// ---------------------------------------------------------------------------

function jobCondition(o: any, type: string): boolean {
  return conditionStatus(o?.status?.conditions, type) === 'True';
}

const jobPrinter = printer(
  [
    nameCol(),
    col('Status', 'string', 'Status of the job.'),
    col('Completions', 'string', 'Succeeded pods out of desired completions.'),
    col('Duration', 'string', 'Time required to complete the job.'),
    ageCol(),
    containersCol(),
    imagesCol(),
    selectorCol(),
  ],
  (o, now) => {
    const spec = o?.spec ?? {};
    const st = o?.status ?? {};
    const succeeded = int(st.succeeded);
    let completions: string;
    if (typeof spec.completions === 'number') {
      completions = `${succeeded}/${spec.completions}`;
    } else {
      const parallelism = int(spec.parallelism);
      completions = parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
    }
    const start = parseTime(st.startTime);
    const end = parseTime(st.completionTime);
    let duration = '';
    if (start !== undefined) duration = humanDuration((end ?? now) - start);
    let status: string;
    if (jobCondition(o, 'Complete')) status = 'Complete';
    else if (jobCondition(o, 'Failed')) status = 'Failed';
    else if (o?.metadata?.deletionTimestamp) status = 'Terminating';
    else if (jobCondition(o, 'Suspended')) status = 'Suspended';
    else if (jobCondition(o, 'FailureTarget')) status = 'FailureTarget';
    else status = 'Running';
    const [names, images] = containerCells(spec.template?.spec?.containers);
    return [nameOf(o), status, completions, duration, age(o, now), names, images, formatLabelSelector(spec.selector)];
  },
);

const cronJobPrinter = printer(
  [
    nameCol(),
    col('Schedule', 'string', 'The schedule in Cron format.'),
    col('Timezone', 'string', 'The time zone name for the schedule.'),
    col('Suspend', 'boolean', 'Whether subsequent executions are suspended.'),
    col('Active', 'integer', 'Number of currently running jobs.'),
    col('Last Schedule', 'string', 'When the job was last successfully scheduled.'),
    ageCol(),
    containersCol(),
    imagesCol(),
    selectorCol(),
  ],
  (o, now) => {
    const spec = o?.spec ?? {};
    const last = o?.status?.lastScheduleTime ? since(o.status.lastScheduleTime, now) : '<none>';
    const jobSpec = spec.jobTemplate?.spec ?? {};
    const [names, images] = containerCells(jobSpec.template?.spec?.containers);
    return [
      nameOf(o),
      str(spec.schedule),
      typeof spec.timeZone === 'string' ? spec.timeZone : '<none>',
      boolPtr(spec.suspend),
      arr(o?.status?.active).length,
      last,
      age(o, now),
      names,
      images,
      formatLabelSelector(jobSpec.selector),
    ];
  },
);

// ---------------------------------------------------------------------------
// autoscaling
// ---------------------------------------------------------------------------

function hpaMetrics(given: any): string {
  // kube prints the internal (v2) form: an autoscaling/v1 object's metrics are converted first.
  const o = given?.apiVersion === 'autoscaling/v1' ? convertHorizontalPodAutoscaler(given, 'autoscaling/v2') : given;
  const specs = arr(o?.spec?.metrics);
  const statuses = arr(o?.status?.currentMetrics);
  if (specs.length === 0) return '<none>';
  const list: string[] = [];
  specs.forEach((spec, i) => {
    const st = statuses[i];
    const has = (v: unknown) => v !== undefined && v !== null;
    switch (spec?.type) {
      case 'External':
      case 'Object': {
        const key = spec.type === 'External' ? 'external' : 'object';
        const target = spec[key]?.target ?? {};
        const cur = st?.[key]?.current;
        if (has(target.averageValue)) {
          const current = has(cur?.averageValue) ? String(cur.averageValue) : '<unknown>';
          list.push(`${current}/${String(target.averageValue)} (avg)`);
        } else {
          const current = st?.[key] ? quantity(cur?.value) : '<unknown>';
          list.push(`${current}/${quantity(target.value)}`);
        }
        break;
      }
      case 'Pods': {
        const current = st?.pods ? quantity(st.pods.current?.averageValue) : '<unknown>';
        list.push(`${current}/${quantity(spec.pods?.target?.averageValue)}`);
        break;
      }
      case 'Resource':
      case 'ContainerResource': {
        const key = spec.type === 'Resource' ? 'resource' : 'containerResource';
        const src = spec[key] ?? {};
        const target = src.target ?? {};
        const cur = st?.[key]?.current;
        if (has(target.averageValue)) {
          const current = st?.[key] ? quantity(cur?.averageValue) : '<unknown>';
          list.push(`${str(src.name)}: ${current}/${String(target.averageValue)}`);
        } else {
          const current = typeof cur?.averageUtilization === 'number' ? `${cur.averageUtilization}%` : '<unknown>';
          const tgt = typeof target.averageUtilization === 'number' ? `${target.averageUtilization}%` : '<auto>';
          list.push(`${str(src.name)}: ${current}/${tgt}`);
        }
        break;
      }
      default:
        list.push('<unknown type>');
    }
  });
  const max = 2;
  if (list.length > max) return `${list.slice(0, max).join(', ')} + ${list.length - max} more...`;
  return list.join(', ');
}

const hpaPrinter = printer(
  [
    nameCol(),
    col('Reference', 'string', 'The scale target of the autoscaler.'),
    col('Targets', 'string', 'Current/target values of the metrics.'),
    col('MinPods', 'string', 'Lower limit for the number of replicas.'),
    col('MaxPods', 'string', 'Upper limit for the number of replicas.'),
    col('Replicas', 'string', 'Current number of replicas.'),
    ageCol(),
  ],
  (o, now) => {
    const ref = o?.spec?.scaleTargetRef ?? {};
    const minPods = typeof o?.spec?.minReplicas === 'number' ? String(o.spec.minReplicas) : '<unset>';
    return [
      nameOf(o),
      `${str(ref.kind)}/${str(ref.name)}`,
      hpaMetrics(o),
      minPods,
      int(o?.spec?.maxReplicas),
      int(o?.status?.currentReplicas),
      age(o, now),
    ];
  },
);

// ---------------------------------------------------------------------------
// networking
// ---------------------------------------------------------------------------

function ingressHosts(rules: unknown): string {
  const list = arr(rules);
  const max = 3;
  const hosts: string[] = [];
  let more = false;
  for (const r of list) {
    if (hosts.length === max) more = true;
    if (!more && str(r?.host) !== '') hosts.push(str(r.host));
  }
  if (hosts.length === 0) return '*';
  return more ? `${hosts.join(',')} + ${list.length - max} more...` : hosts.join(',');
}

function lbAddresses(ingress: unknown): string {
  const set = new Set<string>();
  for (const i of arr(ingress)) {
    if (str(i?.ip) !== '') set.add(str(i.ip));
    else if (str(i?.hostname) !== '') set.add(str(i.hostname));
  }
  return [...set].sort().join(',');
}

const ingressPrinter = printer(
  [
    nameCol(),
    col('Class', 'string', 'The name of the IngressClass resource that should be used for additional configuration'),
    col('Hosts', 'string', 'Hosts that incoming requests are matched against before the ingress rule'),
    col('Address', 'string', 'Address is a list containing ingress points for the load-balancer'),
    col('Ports', 'string', 'Ports of TLS configurations that open'),
    ageCol(),
  ],
  (o, now) => [
    nameOf(o),
    typeof o?.spec?.ingressClassName === 'string' ? o.spec.ingressClassName : '<none>',
    ingressHosts(o?.spec?.rules),
    lbAddresses(o?.status?.loadBalancer?.ingress),
    arr(o?.spec?.tls).length > 0 ? '80, 443' : '80',
    age(o, now),
  ],
);

const ingressClassPrinter = printer(
  [
    nameCol(),
    col('Controller', 'string', 'Controller that is responsible for handling this class'),
    col('Parameters', 'string', 'A reference to a resource with additional parameters'),
    ageCol(),
  ],
  (o, now) => {
    const p = o?.spec?.parameters;
    let params = '<none>';
    if (p && typeof p === 'object') {
      params = str(p.kind);
      if (typeof p.apiGroup === 'string') params += `.${p.apiGroup}`;
      params += `/${str(p.name)}`;
    }
    return [nameOf(o), str(o?.spec?.controller), params, age(o, now)];
  },
);

const networkPolicyPrinter = printer(
  [nameCol(), col('Pod-Selector', 'string', 'Pods to which this policy applies.'), ageCol()],
  (o, now) => [nameOf(o), formatLabelSelector(o?.spec?.podSelector ?? {}), age(o, now)],
);

const serviceCIDRPrinter = printer(
  [nameCol(), col('CIDRs', 'string', 'CIDR ranges of the ServiceCIDR.'), ageCol()],
  (o, now) => [nameOf(o), arr(o?.spec?.cidrs).map(str).join(','), age(o, now)],
);

const ipAddressPrinter = printer(
  [nameCol(), col('ParentRef', 'string', 'The object this IP address is allocated to.')],
  (o) => {
    const p = o?.spec?.parentRef;
    let parent = '<none>';
    if (p && typeof p === 'object') {
      const gr = str(p.group) === '' ? str(p.resource) : `${str(p.resource)}.${str(p.group)}`;
      parent = gr.toLowerCase();
      if (str(p.namespace) !== '') parent += `/${str(p.namespace)}`;
      parent += `/${str(p.name)}`;
    }
    return [nameOf(o), parent];
  },
);

// ---------------------------------------------------------------------------
// discovery
// ---------------------------------------------------------------------------

const endpointSlicePrinter = printer(
  [
    nameCol(),
    col('AddressType', 'string', 'Type of addresses carried by this slice.'),
    col('Ports', 'string', 'Ports exposed by the endpoints.'),
    col('Endpoints', 'string', 'Addresses of the endpoints.'),
    ageCol(),
  ],
  (o, now) => {
    const ports = arr(o?.ports).map((p) =>
      typeof p?.port === 'number' ? String(p.port) : typeof p?.name === 'string' ? p.name : '*',
    );
    const addresses: string[] = [];
    for (const e of arr(o?.endpoints)) for (const a of arr(e?.addresses)) addresses.push(str(a));
    return [
      nameOf(o),
      str(o?.addressType),
      listWithMore(ports, ports.length, 3, '<unset>'),
      listWithMore(addresses, addresses.length, 3, '<unset>'),
      age(o, now),
    ];
  },
);

// ---------------------------------------------------------------------------
// policy, rbac
// ---------------------------------------------------------------------------

const pdbPrinter = printer(
  [
    nameCol(),
    col('Min Available', 'string', 'The minimum number of pods that must be available.'),
    col('Max Unavailable', 'string', 'The maximum number of pods that may be unavailable.'),
    col('Allowed Disruptions', 'integer', 'Calculated number of pods that may be disrupted at this time.'),
    ageCol(),
  ],
  (o, now) => {
    const spec = o?.spec ?? {};
    const has = (v: unknown) => v !== undefined && v !== null;
    return [
      nameOf(o),
      has(spec.minAvailable) ? intOrString(spec.minAvailable) : 'N/A',
      has(spec.maxUnavailable) ? intOrString(spec.maxUnavailable) : 'N/A',
      int(o?.status?.disruptionsAllowed),
      age(o, now),
    ];
  },
);

function bindingPrinter(what: string): TablePrinter {
  return printer(
    [
      nameCol(),
      col('Role', 'string', 'The role this binding grants.'),
      ageCol(),
      col('Users', 'string', `Users in the ${what}`, 1),
      col('Groups', 'string', `Groups in the ${what}`, 1),
      col('ServiceAccounts', 'string', `ServiceAccounts in the ${what}`, 1),
    ],
    (o, now) => {
      const users: string[] = [];
      const groups: string[] = [];
      const sas: string[] = [];
      for (const s of arr(o?.subjects)) {
        if (s?.kind === 'ServiceAccount') sas.push(`${str(s.namespace)}/${str(s.name)}`);
        else if (s?.kind === 'User') users.push(str(s.name));
        else if (s?.kind === 'Group') groups.push(str(s.name));
      }
      return [
        nameOf(o),
        `${str(o?.roleRef?.kind)}/${str(o?.roleRef?.name)}`,
        age(o, now),
        users.join(', '),
        groups.join(', '),
        sas.join(', '),
      ];
    },
  );
}

// ---------------------------------------------------------------------------
// storage, scheduling, coordination, node
// ---------------------------------------------------------------------------

function isDefaultClass(o: any): boolean {
  const ann = o?.metadata?.annotations ?? {};
  return (
    ann['storageclass.kubernetes.io/is-default-class'] === 'true' ||
    ann['storageclass.beta.kubernetes.io/is-default-class'] === 'true'
  );
}

const storageClassPrinter = printer(
  [
    nameCol(),
    col('Provisioner', 'string', 'The volume plugin used to provision volumes.'),
    col('ReclaimPolicy', 'string', 'Reclaim policy of dynamically provisioned volumes.'),
    col('VolumeBindingMode', 'string', 'When volumes are provisioned and bound.'),
    col('AllowVolumeExpansion', 'string', 'Whether volumes of this class can be expanded.'),
    ageCol(),
  ],
  (o, now) => [
    isDefaultClass(o) ? `${nameOf(o)} (default)` : nameOf(o),
    str(o?.provisioner),
    typeof o?.reclaimPolicy === 'string' ? o.reclaimPolicy : 'Delete',
    typeof o?.volumeBindingMode === 'string' ? o.volumeBindingMode : 'Immediate',
    o?.allowVolumeExpansion === true,
    age(o, now),
  ],
);

const volumeAttributesClassPrinter = printer(
  [nameCol(), col('DriverName', 'string', 'Name of the CSI driver.'), ageCol()],
  (o, now) => [nameOf(o), str(o?.driverName), age(o, now)],
);

const volumeAttachmentPrinter = printer(
  [
    nameCol(),
    col('Attacher', 'string', 'Name of the volume driver handling the attachment.', 0, 'name'),
    col('PV', 'string', 'Name of the persistent volume to attach.'),
    col('Node', 'string', 'The node the volume should be attached to.'),
    col('Attached', 'boolean', 'Whether the volume is attached.'),
    ageCol(),
  ],
  (o, now) => [
    nameOf(o),
    str(o?.spec?.attacher),
    str(o?.spec?.source?.persistentVolumeName),
    str(o?.spec?.nodeName),
    o?.status?.attached === true,
    age(o, now),
  ],
);

const csiNodePrinter = printer(
  [nameCol(), col('Drivers', 'integer', 'Drivers indicates the number of CSI drivers registered on the node'), ageCol()],
  (o, now) => [nameOf(o), arr(o?.spec?.drivers).length, age(o, now)],
);

const csiDriverPrinter = printer(
  [
    nameCol(),
    col('AttachRequired', 'boolean', 'Whether the driver requires an attach operation.'),
    col('PodInfoOnMount', 'boolean', 'Whether pod information is passed on mount.'),
    col('StorageCapacity', 'boolean', 'Whether storage capacity is considered for scheduling.'),
    col('TokenRequests', 'string', 'Audiences of service account tokens passed to the driver.'),
    col('RequiresRepublish', 'boolean', 'Whether NodePublishVolume is called periodically.'),
    col('Modes', 'string', 'Volume lifecycle modes supported by the driver.'),
    ageCol(),
  ],
  (o, now) => {
    const spec = o?.spec ?? {};
    const modes = arr(spec.volumeLifecycleModes).map(str).join(',');
    const tokenRequests = Array.isArray(spec.tokenRequests)
      ? spec.tokenRequests.map((t: any) => str(t?.audience)).join(',')
      : '<unset>';
    return [
      nameOf(o),
      typeof spec.attachRequired === 'boolean' ? spec.attachRequired : true,
      spec.podInfoOnMount === true,
      spec.storageCapacity === true,
      tokenRequests,
      spec.requiresRepublish === true,
      modes || '<none>',
      age(o, now),
    ];
  },
);

const csiStorageCapacityPrinter = printer(
  [
    nameCol(),
    col('StorageClassName', 'string', 'The storage class this capacity applies to.'),
    col('Capacity', 'string', 'Reported available capacity.'),
  ],
  (o) => [nameOf(o), str(o?.storageClassName), o?.capacity === undefined || o?.capacity === null ? '<unset>' : String(o.capacity)],
);

const priorityClassPrinter = printer(
  [
    nameCol(),
    col('Value', 'integer', 'The priority value of pods using this class.'),
    col('Global-Default', 'boolean', 'Whether this is the default priority class.'),
    ageCol(),
    col('PreemptionPolicy', 'string', 'Policy for preempting lower priority pods.', 1),
  ],
  (o, now) => [nameOf(o), int(o?.value), o?.globalDefault === true, age(o, now), str(o?.preemptionPolicy)],
);

const leasePrinter = printer(
  [nameCol(), col('Holder', 'string', 'Identity of the current lease holder.'), ageCol()],
  (o, now) => [nameOf(o), str(o?.spec?.holderIdentity), age(o, now)],
);

const leaseCandidatePrinter = printer(
  [
    nameCol(),
    col('LeaseName', 'string', 'Name of the lease the candidate is for.'),
    col('BinaryVersion', 'string', 'Binary version of the candidate.'),
    col('EmulationVersion', 'string', 'Emulation version of the candidate.'),
    ageCol(),
  ],
  (o, now) => [nameOf(o), str(o?.spec?.leaseName), str(o?.spec?.binaryVersion), str(o?.spec?.emulationVersion), age(o, now)],
);

const runtimeClassPrinter = printer(
  [nameCol(), col('Handler', 'string', 'The CRI handler for this runtime class.'), ageCol()],
  (o, now) => [nameOf(o), str(o?.handler), age(o, now)],
);

// ---------------------------------------------------------------------------
// certificates
// ---------------------------------------------------------------------------

function csrCondition(o: any): string {
  let approved = false;
  let denied = false;
  let failed = false;
  for (const c of arr(o?.status?.conditions)) {
    if (c?.type === 'Approved') approved = true;
    else if (c?.type === 'Denied') denied = true;
    else if (c?.type === 'Failed') failed = true;
  }
  let s = denied ? 'Denied' : approved ? 'Approved' : 'Pending';
  if (failed) s += ',Failed';
  if (str(o?.status?.certificate) !== '') s += ',Issued';
  return s;
}

const csrPrinter = printer(
  [
    nameCol(),
    ageCol(),
    col('SignerName', 'string', 'Requested signer for the certificate.'),
    col('Requestor', 'string', 'User who created the request.'),
    col('RequestedDuration', 'string', 'Requested validity duration of the certificate.'),
    col('Condition', 'string', 'Approval state of the request.'),
  ],
  (o, now) => [
    nameOf(o),
    age(o, now),
    str(o?.spec?.signerName) || '<none>',
    str(o?.spec?.username),
    typeof o?.spec?.expirationSeconds === 'number' ? humanDuration(o.spec.expirationSeconds * SECOND) : '<none>',
    csrCondition(o),
  ],
);

const clusterTrustBundlePrinter = printer(
  [nameCol(), col('SignerName', 'string', 'Signer associated with the bundle.')],
  (o) => [nameOf(o), str(o?.spec?.signerName) || '<none>'],
);

// ---------------------------------------------------------------------------
// admissionregistration
// ---------------------------------------------------------------------------

const webhookConfigPrinter = printer(
  [nameCol(), col('Webhooks', 'integer', 'Webhooks indicates the number of webhooks registered in this configuration'), ageCol()],
  (o, now) => [nameOf(o), arr(o?.webhooks).length, age(o, now)],
);

function admissionPolicyPrinter(countName: string, field: string, desc: string): TablePrinter {
  return printer(
    [
      nameCol(),
      col(countName, 'integer', desc),
      col('ParamKind', 'string', 'ParamKind specifies the kind of resources used to parameterize this policy'),
      ageCol(),
    ],
    (o, now) => {
      const pk = o?.spec?.paramKind;
      const paramKind = pk && typeof pk === 'object' ? `${str(pk.apiVersion)}/${str(pk.kind)}` : '<unset>';
      return [nameOf(o), arr(o?.spec?.[field]).length, paramKind, age(o, now)];
    },
  );
}

const admissionPolicyBindingPrinter = printer(
  [
    nameCol(),
    col('PolicyName', 'string', 'The policy this binding binds to.'),
    col('ParamRef', 'string', 'The param resource used to configure the policy.'),
    ageCol(),
  ],
  (o, now) => {
    const pr = o?.spec?.paramRef;
    let param = '<unset>';
    if (pr && typeof pr === 'object') {
      if (str(pr.name) !== '') {
        param = str(pr.namespace) !== '' ? `${pr.namespace}/${pr.name}` : `*/${pr.name}`;
      } else if (pr.selector && typeof pr.selector === 'object') {
        const s = selectorString(pr.selector);
        param = s === null ? '<error>' : s;
      }
    }
    return [nameOf(o), str(o?.spec?.policyName), param, age(o, now)];
  },
);

// ---------------------------------------------------------------------------
// flowcontrol
// ---------------------------------------------------------------------------

const flowSchemaPrinter = printer(
  [
    nameCol(),
    col('PriorityLevel', 'string', 'The priority level configuration this flow schema refers to.'),
    col('MatchingPrecedence', 'string', 'Lower values match first.'),
    col('DistinguisherMethod', 'string', 'How flows are distinguished.'),
    ageCol(),
    col('MissingPL', 'string', 'references a broken or non-existent PriorityLevelConfiguration'),
  ],
  (o, now) => {
    const spec = o?.spec ?? {};
    const dm = spec.distinguisherMethod;
    const missing = conditionStatus(o?.status?.conditions, 'Dangling');
    return [
      nameOf(o),
      str(spec.priorityLevelConfiguration?.name),
      int(spec.matchingPrecedence),
      dm && typeof dm === 'object' ? str(dm.type) : '<none>',
      age(o, now),
      missing === undefined ? '?' : missing,
    ];
  },
);

const priorityLevelPrinter = printer(
  [
    nameCol(),
    col('Type', 'string', 'Exempt or Limited.'),
    col('NominalConcurrencyShares', 'string', 'Share of the server concurrency limit.'),
    col('Queues', 'string', 'Number of queues.'),
    col('HandSize', 'string', 'Queues considered per request for shuffle sharding.'),
    col('QueueLengthLimit', 'string', 'Maximum requests waiting in a queue.'),
    ageCol(),
  ],
  (o, now) => {
    const limited = o?.spec?.limited;
    let ncs: unknown = '<none>';
    let queues: unknown = '<none>';
    let handSize: unknown = '<none>';
    let qll: unknown = '<none>';
    if (limited && typeof limited === 'object') {
      ncs = int(limited.nominalConcurrencyShares, 30);
      const q = limited.limitResponse?.queuing;
      if (q && typeof q === 'object') {
        queues = int(q.queues);
        handSize = int(q.handSize);
        qll = int(q.queueLengthLimit);
      }
    }
    return [nameOf(o), str(o?.spec?.type), ncs, queues, handSize, qll, age(o, now)];
  },
);

// ---------------------------------------------------------------------------
// apiregistration, resource
// ---------------------------------------------------------------------------

const apiServicePrinter = printer(
  [
    nameCol(),
    col('Service', 'string', 'The service backing this API, or Local.'),
    col('Available', 'string', 'Whether the API is available.'),
    ageCol(),
  ],
  (o, now) => {
    const svc = o?.spec?.service;
    const service = svc && typeof svc === 'object' ? `${str(svc.namespace)}/${str(svc.name)}` : 'Local';
    let available = 'Unknown';
    for (const c of arr(o?.status?.conditions)) {
      if (c?.type !== 'Available') continue;
      const st = str(c.status);
      available = st !== 'True' && str(c.reason) !== '' ? `${st} (${str(c.reason)})` : st;
      break;
    }
    return [nameOf(o), service, available, age(o, now)];
  },
);

const nameAgePrinter = printer([nameCol(), ageCol()], (o, now) => [nameOf(o), age(o, now)]);

// ---------------------------------------------------------------------------
// default printer and registry
// ---------------------------------------------------------------------------

/** Go's time.RFC3339 formatting (whole seconds, UTC); the zero time when unset. */
function rfc3339(v: unknown): string {
  const t = parseTime(v);
  if (t === undefined) return '0001-01-01T00:00:00Z';
  return formatRFC3339(t);
}

const defaultPrinter = printer(
  [
    col('Name', 'string', NAME_DESC, 0, 'name'),
    col('Created At', 'date', AGE_DESC),
  ],
  (o) => [nameOf(o), rfc3339(o?.metadata?.creationTimestamp)],
);

const registry = new Map<string, TablePrinter>([
  // core
  ['/pods', podPrinter],
  ['/podtemplates', podTemplatePrinter],
  ['/namespaces', namespacePrinter],
  ['/services', servicePrinter],
  ['/configmaps', configMapPrinter],
  ['/secrets', secretPrinter],
  ['/serviceaccounts', serviceAccountPrinter],
  ['/nodes', nodePrinter],
  ['/events', eventPrinter],
  ['/endpoints', endpointsPrinter],
  ['/persistentvolumes', persistentVolumePrinter],
  ['/persistentvolumeclaims', persistentVolumeClaimPrinter],
  ['/replicationcontrollers', replicationControllerPrinter],
  ['/resourcequotas', resourceQuotaPrinter],
  ['/componentstatuses', componentStatusPrinter],
  // limitranges: kube-apiserver uses the default (Name, Created At) convertor
  // apps
  ['apps/deployments', deploymentPrinter],
  ['apps/replicasets', replicaSetPrinter],
  ['apps/statefulsets', statefulSetPrinter],
  ['apps/daemonsets', daemonSetPrinter],
  ['apps/controllerrevisions', controllerRevisionPrinter],
  // batch
  ['batch/jobs', jobPrinter],
  ['batch/cronjobs', cronJobPrinter],
  // autoscaling
  ['autoscaling/horizontalpodautoscalers', hpaPrinter],
  // networking
  ['networking.k8s.io/ingresses', ingressPrinter],
  ['networking.k8s.io/ingressclasses', ingressClassPrinter],
  ['networking.k8s.io/networkpolicies', networkPolicyPrinter],
  ['networking.k8s.io/servicecidrs', serviceCIDRPrinter],
  ['networking.k8s.io/ipaddresses', ipAddressPrinter],
  // discovery
  ['discovery.k8s.io/endpointslices', endpointSlicePrinter],
  // events
  ['events.k8s.io/events', eventPrinter],
  // policy
  ['policy/poddisruptionbudgets', pdbPrinter],
  // rbac: roles and clusterroles use the default convertor
  ['rbac.authorization.k8s.io/rolebindings', bindingPrinter('roleBinding')],
  ['rbac.authorization.k8s.io/clusterrolebindings', bindingPrinter('clusterRoleBinding')],
  // storage
  ['storage.k8s.io/storageclasses', storageClassPrinter],
  ['storage.k8s.io/volumeattributesclasses', volumeAttributesClassPrinter],
  ['storage.k8s.io/volumeattachments', volumeAttachmentPrinter],
  ['storage.k8s.io/csinodes', csiNodePrinter],
  ['storage.k8s.io/csidrivers', csiDriverPrinter],
  ['storage.k8s.io/csistoragecapacities', csiStorageCapacityPrinter],
  // scheduling, coordination, node
  ['scheduling.k8s.io/priorityclasses', priorityClassPrinter],
  ['coordination.k8s.io/leases', leasePrinter],
  ['coordination.k8s.io/leasecandidates', leaseCandidatePrinter],
  ['node.k8s.io/runtimeclasses', runtimeClassPrinter],
  // certificates
  ['certificates.k8s.io/certificatesigningrequests', csrPrinter],
  ['certificates.k8s.io/clustertrustbundles', clusterTrustBundlePrinter],
  // admissionregistration
  ['admissionregistration.k8s.io/mutatingwebhookconfigurations', webhookConfigPrinter],
  ['admissionregistration.k8s.io/validatingwebhookconfigurations', webhookConfigPrinter],
  [
    'admissionregistration.k8s.io/validatingadmissionpolicies',
    admissionPolicyPrinter('Validations', 'validations', 'Validations indicates the number of validation rules defined in this configuration'),
  ],
  ['admissionregistration.k8s.io/validatingadmissionpolicybindings', admissionPolicyBindingPrinter],
  [
    'admissionregistration.k8s.io/mutatingadmissionpolicies',
    admissionPolicyPrinter('Mutations', 'mutations', 'Mutation indicates the number of mutations rules defined in this configuration'),
  ],
  ['admissionregistration.k8s.io/mutatingadmissionpolicybindings', admissionPolicyBindingPrinter],
  // flowcontrol
  ['flowcontrol.apiserver.k8s.io/flowschemas', flowSchemaPrinter],
  ['flowcontrol.apiserver.k8s.io/prioritylevelconfigurations', priorityLevelPrinter],
  // apiregistration
  ['apiregistration.k8s.io/apiservices', apiServicePrinter],
  // resource
  ['resource.k8s.io/deviceclasses', nameAgePrinter],
  ['resource.k8s.io/resourceclaimtemplates', nameAgePrinter],
  // apiextensions customresourcedefinitions use the default convertor (NAME, CREATED AT)
]);

/**
 * autoscaling/v1 Scale, as the /scale subresource of built-in kinds prints it (kube's printScale;
 * its Name column has no "name" format).
 */
export const scalePrinter = printer(
  [
    col('Name', 'string', NAME_DESC),
    col('Desired', 'integer', 'replicas is the desired number of instances for the scaled object.'),
    col('Available', 'integer', 'replicas is the actual number of observed instances of the scaled object.'),
    ageCol(),
  ],
  (o, now) => [nameOf(o), o.spec?.replicas ?? 0, o.status?.replicas ?? 0, age(o, now)],
);

/**
 * The printer for a group/resource (group "" = core); the default printer for
 * anything else: columns Name (type string, format name) and Created At (type date),
 * as kube-apiserver's default table convertor.
 */
export function printerFor(group: string, resource: string): TablePrinter {
  return registry.get(`${group}/${resource}`) ?? defaultPrinter;
}
