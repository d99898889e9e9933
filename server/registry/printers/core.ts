// The printers of the core group's kinds (pods, services, nodes, events, volumes, quotas...), as
// kube's pkg/printers/internalversion prints them. Events are printed in their core/v1 form
// (events.k8s.io/v1 ones converted first), as kube prints the internal one.
import { convertEvent, CORE_EVENT_VERSION, EVENTS_V1_VERSION } from '../kinds/events/conversion.ts';
import type { TablePrinter } from '../../schema/types.ts';
import { humanDuration, parseTime, since, age, nameOf, str, int, arr, countKeys, quantity, formatLabels, containerCells, joinHostPort, conditionStatus, col, NAME_DESC, nameCol, ageCol, containersCol, imagesCol, selectorCol, printer } from './columns.ts';

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

export const podPrinter = printer(
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

export const podTemplatePrinter = printer(
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

export const namespacePrinter = printer(
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

export const servicePrinter = printer(
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

export const configMapPrinter = printer(
  [nameCol(), col('Data', 'string', 'Number of data and binaryData keys.'), ageCol()],
  (o, now) => [nameOf(o), countKeys(o?.data) + countKeys(o?.binaryData), age(o, now)],
);

export const secretPrinter = printer(
  [nameCol(), col('Type', 'string', 'Used to facilitate programmatic handling of secret data.'), col('Data', 'string', 'Number of data keys.'), ageCol()],
  (o, now) => [nameOf(o), str(o?.type), countKeys(o?.data), age(o, now)],
);

export const serviceAccountPrinter = printer(
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

export const nodePrinter = printer(
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

export const eventPrinter = printer(
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

export const endpointsPrinter = printer(
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

export const persistentVolumePrinter = printer(
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

export const persistentVolumeClaimPrinter = printer(
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
export function replicasPrinter(selector: (sel: any) => string): TablePrinter {
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

export const replicationControllerPrinter = replicasPrinter(formatLabels);

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

export const resourceQuotaPrinter = printer(
  [
    nameCol(),
    col('Request', 'string', 'Used/hard amounts of requested resources.'),
    col('Limit', 'string', 'Used/hard amounts of resource limits.'),
    ageCol(),
  ],
  resourceQuotaCells,
);

export const componentStatusPrinter = printer(
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
