// API Priority and Fairness' configuration objects kept as kube-apiserver keeps them, in two parts:
//  - maintenance, kube's `priority-and-fairness-config-producer` post-start hook
//    (pkg/registry/flowcontrol/rest/storage_flowcontrol.go, with pkg/registry/flowcontrol/ensurer):
//    at start and then about once a minute, the suggested objects are created when missing and
//    their spec restored when their `apf.kubernetes.io/autoupdate-spec` annotation says "true" (or,
//    without a boolean there, while the generation is still 1); the mandatory ones are created when
//    missing and always restored; an object that carries "true" but is no longer among kube's is
//    deleted. Each write uses kube's field manager `api-priority-and-fairness-config-producer-v1`.
//  - status, the part of kube's APF config controller (k8s.io/apiserver/pkg/util/flowcontrol/
//    apf_controller.go) that writes each FlowSchema's `Dangling` condition, by server-side apply on
//    the status subresource as `api-priority-and-fairness-config-consumer-v1`, only when it changes.
// A client of the registry; the objects themselves come from flowcontrol/config/bootstrap.ts.
import type { GenericStore } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { ResourceInfo } from '../schema/types.ts';
import type { EventLog } from '../storage/log/event-log.ts';
import type { LogEvent } from '../storage/log/types.ts';
import { ApiError } from '../errors.ts';
import { AUTO_UPDATE_ANNOTATION, FLOWCONTROL_API_VERSION, specsEqual, MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS, PRIORITY_LEVEL_EXEMPT, SUGGESTED_FLOW_SCHEMAS, SUGGESTED_PRIORITY_LEVELS } from '../flowcontrol/config/bootstrap.ts';
import { FLOWCONTROL_GROUP } from '../flowcontrol/config/index.ts';
import { realClock, type Clock, type HandlerResult } from './workqueue.ts';
import { QueueController, controllerWriteContext } from './queue-controller.ts';

/** The ensurer's field manager (ensurer/strategy.go). */
export const APF_CONFIG_PRODUCER_MANAGER = 'api-priority-and-fairness-config-producer-v1';
/** The APF config controller's field manager for FlowSchema status (apf_controller.go's asFieldManager). */
export const APF_CONFIG_CONSUMER_MANAGER = 'api-priority-and-fairness-config-consumer-v1';
/** kube's post-start hook, the name /livez and /readyz list it under. */
export const APF_CONFIG_PRODUCER_HOOK = 'poststarthook/priority-and-fairness-config-producer';
/** kube re-ensures the configuration every minute. */
export const DEFAULT_APF_MAINTENANCE_INTERVAL_MS = 60_000;
/** How soon a first pass that failed is tried again (kube's post-start hook polls every second). */
const STARTUP_RETRY_MS = 1_000;
const FLOW_SCHEMAS_KEY = `flowschemas.${FLOWCONTROL_GROUP}`;
const PRIORITY_LEVELS_KEY = `prioritylevelconfigurations.${FLOWCONTROL_GROUP}`;

interface ConfigObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; generation?: number; annotations?: Record<string, string>; resourceVersion?: string };
  spec?: unknown;
  status?: { conditions?: FlowSchemaCondition[] };
}

interface FlowSchemaCondition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

type Strategy = 'mandatory' | 'suggested';

/** Go's strconv.ParseBool. */
function parseBool(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  return undefined;
}

/** kube's shouldUpdateSpec: the annotation's boolean, else whether nobody has changed the spec yet. */
function shouldUpdateSpec(current: ConfigObject): boolean {
  const annotated = parseBool(current.metadata.annotations?.[AUTO_UPDATE_ANNOTATION]);
  if (annotated !== undefined) return annotated;
  return current.metadata.generation === 1;
}


/**
 * kube's SpecEqualish: the bootstrap spec (defaults in) equals the current one — for the exempt
 * priority level, whatever nominalConcurrencyShares and lendablePercent the current one has.
 */
function specEqualish(kind: 'FlowSchema' | 'PriorityLevelConfiguration', bootstrap: ConfigObject, current: ConfigObject): boolean {
  if (kind === 'PriorityLevelConfiguration' && bootstrap.metadata.name === PRIORITY_LEVEL_EXEMPT) {
    const exempt = (current.spec as { exempt?: Record<string, unknown> } | undefined)?.exempt;
    if (!exempt) return false;
    const expected = structuredClone(bootstrap.spec) as { exempt: Record<string, unknown> };
    expected.exempt = { ...expected.exempt, nominalConcurrencyShares: exempt.nominalConcurrencyShares, lendablePercent: exempt.lendablePercent };
    return specsEqual(expected, current.spec);
  }
  return specsEqual(bootstrap.spec, current.spec);
}

/** kube's ReviseIfNeeded: the object to write back, or undefined when it is as it should be. */
export function reviseIfNeeded(kind: 'FlowSchema' | 'PriorityLevelConfiguration', strategy: Strategy, current: ConfigObject, bootstrap: ConfigObject): ConfigObject | undefined {
  const autoUpdateSpec = strategy === 'mandatory' || shouldUpdateSpec(current);
  const updateAnnotation = parseBool(current.metadata.annotations?.[AUTO_UPDATE_ANNOTATION]) !== autoUpdateSpec;
  const specChanged = autoUpdateSpec && !specEqualish(kind, bootstrap, current);
  if (!updateAnnotation && !specChanged) return undefined;
  const revised = structuredClone(current);
  if (specChanged) revised.spec = structuredClone(bootstrap.spec);
  if (updateAnnotation) revised.metadata.annotations = { ...revised.metadata.annotations, [AUTO_UPDATE_ANNOTATION]: String(autoUpdateSpec) };
  return revised;
}

export interface ApfConfigurationOptions {
  /** How often the configuration is re-ensured (kube: a minute). */
  maintenanceIntervalMs?: number;
  log?: (line: string) => void;
  clock?: Clock;
}

export class ApfConfigurationController extends QueueController {
  private readonly flowSchemas: ResourceInfo;
  private readonly priorityLevels: ResourceInfo;
  private readonly intervalMs: number;
  private readonly log: (line: string) => void;
  private timer: NodeJS.Timeout | undefined;
  private maintaining: Promise<void> | undefined;
  private stopped = false;
  /** Whether the first maintenance pass has finished (the post-start hook's health). */
  private ensured = false;

  constructor(
    private readonly store: GenericStore,
    catalog: ResourceCatalog,
    eventLog: EventLog,
    opts: ApfConfigurationOptions = {},
  ) {
    super(eventLog, { name: 'priority-and-fairness-config', clock: opts.clock ?? realClock, workers: 1 });
    this.flowSchemas = catalog.lookup(FLOWCONTROL_GROUP, 'v1', 'flowschemas')!;
    this.priorityLevels = catalog.lookup(FLOWCONTROL_GROUP, 'v1', 'prioritylevelconfigurations')!;
    this.intervalMs = opts.maintenanceIntervalMs ?? DEFAULT_APF_MAINTENANCE_INTERVAL_MS;
    this.log = opts.log ?? (() => {});
  }

  /** /livez and /readyz: the first maintenance pass is done. */
  readonly healthCheck = (): string | undefined => (this.ensured ? undefined : 'not finished');

  protected onCommit(events: readonly LogEvent[]): void {
    for (const e of events) {
      if (e.key.res === FLOW_SCHEMAS_KEY && e.type !== 'DELETED') this.queue.add(e.key.name);
      // A priority level coming or going changes the Dangling condition of the schemas naming it.
      else if (e.key.res === PRIORITY_LEVELS_KEY && e.type !== 'MODIFIED') {
        for (const fs of this.store.listCurrent(this.flowSchemas, undefined) as { metadata: { name: string }; spec?: { priorityLevelConfiguration?: { name?: string } } }[]) {
          if (fs.spec?.priorityLevelConfiguration?.name === e.key.name) this.queue.add(fs.metadata.name);
        }
      }
    }
  }

  protected enqueueExisting(): void {
    for (const fs of this.store.listCurrent(this.flowSchemas, undefined) as ConfigObject[]) this.queue.add(fs.metadata.name);
  }

  /** Runs one maintenance pass now, then keeps the status and runs a pass every interval. */
  async startAndEnsure(): Promise<void> {
    await this.ensure();
    this.start();
    this.schedule();
  }

  override async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.maintaining;
    await super.stop();
  }

  private schedule(): void {
    if (this.stopped) return;
    // Until a pass has succeeded kube retries every second; then every interval.
    this.timer = setTimeout(
      () => {
        void this.ensure().finally(() => this.schedule());
      },
      this.ensured ? this.intervalMs : Math.min(STARTUP_RETRY_MS, this.intervalMs),
    );
    this.timer.unref();
  }

  /** One maintenance pass (kube's ensure): suggested, then mandatory, then unwanted objects removed. */
  ensure(): Promise<void> {
    this.maintaining ??= (async () => {
      try {
        await this.ensureAll(this.priorityLevels, 'PriorityLevelConfiguration', 'suggested', SUGGESTED_PRIORITY_LEVELS);
        await this.ensureAll(this.flowSchemas, 'FlowSchema', 'suggested', SUGGESTED_FLOW_SCHEMAS);
        await this.ensureAll(this.priorityLevels, 'PriorityLevelConfiguration', 'mandatory', MANDATORY_PRIORITY_LEVELS);
        await this.ensureAll(this.flowSchemas, 'FlowSchema', 'mandatory', MANDATORY_FLOW_SCHEMAS);
        // Schemas before the levels they may name (kube's removeDanglingBootstrapConfiguration).
        await this.removeUnwanted(this.flowSchemas, [...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_FLOW_SCHEMAS]);
        await this.removeUnwanted(this.priorityLevels, [...MANDATORY_PRIORITY_LEVELS, ...SUGGESTED_PRIORITY_LEVELS]);
        this.ensured = true;
      } catch (e) {
        this.log(`error: failed ensuring the APF configuration, will retry later: ${e instanceof Error ? e.message : String(e)}`);
      } finally {
        this.maintaining = undefined;
      }
    })();
    return this.maintaining;
  }

  private async ensureAll(info: ResourceInfo, kind: 'FlowSchema' | 'PriorityLevelConfiguration', strategy: Strategy, boots: readonly ConfigObject[]): Promise<void> {
    for (const bootstrap of boots) {
      if (this.stopped) return;
      await this.ensureOne(info, kind, strategy, bootstrap);
    }
  }

  /** kube's EnsureConfiguration. */
  private async ensureOne(info: ResourceInfo, kind: 'FlowSchema' | 'PriorityLevelConfiguration', strategy: Strategy, bootstrap: ConfigObject): Promise<void> {
    const name = bootstrap.metadata.name;
    const current = this.store.tryGet(info, '', name) as ConfigObject | undefined;
    if (!current) {
      try {
        await this.store.create(info, '', structuredClone(bootstrap), controllerWriteContext(APF_CONFIG_PRODUCER_MANAGER));
      } catch (e) {
        // Created meanwhile by someone else: looked at again on the next pass.
        if (!(e instanceof ApiError && e.reason === 'AlreadyExists')) throw e;
      }
      return;
    }
    const revised = reviseIfNeeded(kind, strategy, current, bootstrap);
    if (!revised) return;
    try {
      await this.store.update(info, '', name, revised, controllerWriteContext(APF_CONFIG_PRODUCER_MANAGER));
    } catch (e) {
      // Updated concurrently: kube checks its spec on the next pass.
      if (!(e instanceof ApiError && (e.reason === 'Conflict' || e.reason === 'NotFound'))) throw e;
    }
  }

  /** kube's RemoveUnwantedObjects: those annotated autoupdate-spec "true" that kube no longer has. */
  private async removeUnwanted(info: ResourceInfo, boots: readonly ConfigObject[]): Promise<void> {
    const wanted = new Set(boots.map((b) => b.metadata.name));
    for (const obj of this.store.listCurrent(info, undefined) as ConfigObject[]) {
      if (this.stopped) return;
      if (wanted.has(obj.metadata.name) || parseBool(obj.metadata.annotations?.[AUTO_UPDATE_ANNOTATION]) !== true) continue;
      try {
        await this.store.delete(info, '', obj.metadata.name, {}, controllerWriteContext());
      } catch (e) {
        if (!(e instanceof ApiError && e.reason === 'NotFound')) throw e;
      }
    }
  }

  /** The FlowSchema's Dangling condition, applied when it differs from the one it has. */
  protected async sync(name: string): Promise<HandlerResult> {
    const fs = this.store.tryGet(this.flowSchemas, '', name) as (ConfigObject & { spec?: { priorityLevelConfiguration?: { name?: string } } }) | undefined;
    if (!fs) return;
    const plName = fs.spec?.priorityLevelConfiguration?.name ?? '';
    const found = this.store.tryGet(this.priorityLevels, '', plName) !== undefined;
    const desired: FlowSchemaCondition = found
      ? { type: 'Dangling', status: 'False', reason: 'Found', message: `This FlowSchema references the PriorityLevelConfiguration object named ${goQuote(plName)} and it exists` }
      : { type: 'Dangling', status: 'True', reason: 'NotFound', message: `This FlowSchema references the PriorityLevelConfiguration object named ${goQuote(plName)} but there is no such object` };
    const current = fs.status?.conditions?.find((c) => c.type === 'Dangling');
    if (current && current.status === desired.status && current.reason === desired.reason && current.message === desired.message) return;
    const config = { apiVersion: FLOWCONTROL_API_VERSION, kind: 'FlowSchema', metadata: { name }, status: { conditions: [{ ...desired, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }] } };
    try {
      await this.store.apply(this.flowSchemas, '', name, config, controllerWriteContext(APF_CONFIG_CONSUMER_MANAGER), { force: true, subresource: 'status' });
    } catch (e) {
      if (!(e instanceof ApiError && e.reason === 'NotFound')) throw e;
    }
  }
}

/** Go's %q of a name (names here are DNS subdomains: nothing to escape but in theory quotes). */
function goQuote(s: string): string {
  return JSON.stringify(s);
}
