// The printers of the kinds that administer the cluster rather than run workloads: policy (PDBs),
// rbac (bindings), storage (classes, CSI, attachments), scheduling, coordination (leases), node
// (runtime classes), certificates, admissionregistration, flowcontrol, apiregistration, resource.
import type { TablePrinter } from '../../schema/types.ts';
import { SECOND, humanDuration, age, nameOf, str, int, arr, intOrString, selectorString, conditionStatus, col, nameCol, ageCol, printer } from './columns.ts';

// ---------------------------------------------------------------------------
// policy, rbac
// ---------------------------------------------------------------------------

export const pdbPrinter = printer(
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

export function bindingPrinter(what: string): TablePrinter {
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

export const storageClassPrinter = printer(
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

export const volumeAttributesClassPrinter = printer(
  [nameCol(), col('DriverName', 'string', 'Name of the CSI driver.'), ageCol()],
  (o, now) => [nameOf(o), str(o?.driverName), age(o, now)],
);

export const volumeAttachmentPrinter = printer(
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

export const csiNodePrinter = printer(
  [nameCol(), col('Drivers', 'integer', 'Drivers indicates the number of CSI drivers registered on the node'), ageCol()],
  (o, now) => [nameOf(o), arr(o?.spec?.drivers).length, age(o, now)],
);

export const csiDriverPrinter = printer(
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

export const csiStorageCapacityPrinter = printer(
  [
    nameCol(),
    col('StorageClassName', 'string', 'The storage class this capacity applies to.'),
    col('Capacity', 'string', 'Reported available capacity.'),
  ],
  (o) => [nameOf(o), str(o?.storageClassName), o?.capacity === undefined || o?.capacity === null ? '<unset>' : String(o.capacity)],
);

export const priorityClassPrinter = printer(
  [
    nameCol(),
    col('Value', 'integer', 'The priority value of pods using this class.'),
    col('Global-Default', 'boolean', 'Whether this is the default priority class.'),
    ageCol(),
    col('PreemptionPolicy', 'string', 'Policy for preempting lower priority pods.', 1),
  ],
  (o, now) => [nameOf(o), int(o?.value), o?.globalDefault === true, age(o, now), str(o?.preemptionPolicy)],
);

export const leasePrinter = printer(
  [nameCol(), col('Holder', 'string', 'Identity of the current lease holder.'), ageCol()],
  (o, now) => [nameOf(o), str(o?.spec?.holderIdentity), age(o, now)],
);

export const leaseCandidatePrinter = printer(
  [
    nameCol(),
    col('LeaseName', 'string', 'Name of the lease the candidate is for.'),
    col('BinaryVersion', 'string', 'Binary version of the candidate.'),
    col('EmulationVersion', 'string', 'Emulation version of the candidate.'),
    ageCol(),
  ],
  (o, now) => [nameOf(o), str(o?.spec?.leaseName), str(o?.spec?.binaryVersion), str(o?.spec?.emulationVersion), age(o, now)],
);

export const runtimeClassPrinter = printer(
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

export const csrPrinter = printer(
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

export const clusterTrustBundlePrinter = printer(
  [nameCol(), col('SignerName', 'string', 'Signer associated with the bundle.')],
  (o) => [nameOf(o), str(o?.spec?.signerName) || '<none>'],
);

// ---------------------------------------------------------------------------
// admissionregistration
// ---------------------------------------------------------------------------

export const webhookConfigPrinter = printer(
  [nameCol(), col('Webhooks', 'integer', 'Webhooks indicates the number of webhooks registered in this configuration'), ageCol()],
  (o, now) => [nameOf(o), arr(o?.webhooks).length, age(o, now)],
);

export function admissionPolicyPrinter(countName: string, field: string, desc: string): TablePrinter {
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

export const admissionPolicyBindingPrinter = printer(
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

export const flowSchemaPrinter: TablePrinter = {
  ...printer(
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
  ),
  // kube's printFlowSchemaList sorts the rows as APF matches: matchingPrecedence, then name.
  rowOrder: (a: unknown, b: unknown) => matchingPrecedenceOf(a) - matchingPrecedenceOf(b) || (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0),
};

function matchingPrecedenceOf(o: unknown): number {
  const p = (o as { spec?: { matchingPrecedence?: unknown } } | undefined)?.spec?.matchingPrecedence;
  return typeof p === 'number' ? p : 0;
}

export const priorityLevelPrinter = printer(
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

export const apiServicePrinter = printer(
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

export const nameAgePrinter = printer([nameCol(), ageCol()], (o, now) => [nameOf(o), age(o, now)]);
