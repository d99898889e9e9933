// The printers of the workload controllers' kinds: apps (deployments, replica sets, stateful and
// daemon sets, controller revisions), batch (jobs, cron jobs) and autoscaling (HPAs, whose
// metrics are printed from their autoscaling/v2 form, as kube prints the internal one).
import { convertHorizontalPodAutoscaler } from '../kinds/autoscaling/horizontalpodautoscalers/conversion.ts';
import { humanDuration, parseTime, since, age, nameOf, str, int, arr, quantity, boolPtr, formatLabels, selectorString, formatLabelSelector, containerCells, conditionStatus, col, nameCol, ageCol, containersCol, imagesCol, selectorCol, printer } from './columns.ts';
import { replicasPrinter } from './core.ts';

// ---------------------------------------------------------------------------
// apps
// ---------------------------------------------------------------------------

export const deploymentPrinter = printer(
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

export const replicaSetPrinter = replicasPrinter(formatLabelSelector);

export const statefulSetPrinter = printer(
  [nameCol(), col('Ready', 'string', 'Number of the pod with ready state'), ageCol(), containersCol(), imagesCol()],
  (o, now) => {
    const [names, images] = containerCells(o?.spec?.template?.spec?.containers);
    return [nameOf(o), `${int(o?.status?.readyReplicas)}/${int(o?.spec?.replicas, 1)}`, age(o, now), names, images];
  },
);

export const daemonSetPrinter = printer(
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

export const controllerRevisionPrinter = printer(
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

export const jobPrinter = printer(
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

export const cronJobPrinter = printer(
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

export const hpaPrinter = printer(
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
