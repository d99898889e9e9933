// The ValidatingAdmissionPolicy status controller kube-controller-manager runs as
// "validatingadmissionpolicy-status-controller" (kube's pkg/controller/validatingadmissionpolicystatus):
// each policy whose generation is newer than its status.observedGeneration is type checked (the
// check server.ts passes: admission/policy/typechecking.ts, kube's TypeChecker) and its status
// applied — observedGeneration and typeChecking.expressionWarnings — by server-side apply on the
// status subresource with the controller's field manager and force, as kube's controller does.
// A client of the registry, on the shared work queue.
import type { GenericStore } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { ResourceInfo } from '../schema/types.ts';
import type { EventLog } from '../storage/log/event-log.ts';
import type { LogEvent } from '../storage/log/types.ts';
import { realClock, type Clock, type HandlerResult } from './workqueue.ts';
import { QueueController, controllerWriteContext } from './queue-controller.ts';

/** kube's controller name, also its field manager. */
export const VALIDATING_ADMISSION_POLICY_STATUS_MANAGER = 'validatingadmissionpolicy-status-controller';
const POLICIES_KEY = 'validatingadmissionpolicies.admissionregistration.k8s.io';
/** kube-controller-manager starts it with 5 workers (ConcurrentPolicySyncs). */
const WORKERS = 5;

export interface PolicyExpressionWarning {
  fieldRef: string;
  warning: string;
}

interface Policy {
  metadata: { name: string; generation?: number };
  status?: { observedGeneration?: number };
}

export class ValidatingAdmissionPolicyStatusController extends QueueController {
  private readonly info: ResourceInfo;

  constructor(
    private readonly store: GenericStore,
    catalog: ResourceCatalog,
    log: EventLog,
    private readonly typeCheck: (policy: Record<string, unknown>) => PolicyExpressionWarning[],
    clock: Clock = realClock,
  ) {
    super(log, { name: 'validatingadmissionpolicy-status', clock, workers: WORKERS });
    this.info = catalog.lookup('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicies')!;
  }

  protected onCommit(events: readonly LogEvent[]): void {
    for (const e of events) if (e.key.res === POLICIES_KEY && e.type !== 'DELETED') this.queue.add(e.key.name);
  }

  protected enqueueExisting(): void {
    for (const p of this.store.listCurrent(this.info, undefined) as Policy[]) this.queue.add(p.metadata.name);
  }

  protected async sync(name: string): Promise<HandlerResult> {
    const policy: Policy | undefined = this.store.tryGet(this.info, '', name);
    if (!policy) return;
    const generation = policy.metadata.generation ?? 0;
    if (generation <= (policy.status?.observedGeneration ?? 0)) return;
    const warnings = this.typeCheck(policy as unknown as Record<string, unknown>);
    const config = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      status: { observedGeneration: generation, typeChecking: warnings.length ? { expressionWarnings: warnings } : {} },
    };
    await this.store.apply(this.info, '', name, config, controllerWriteContext(VALIDATING_ADMISSION_POLICY_STATUS_MANAGER, 'Strict'), { force: true, subresource: 'status' });
  }
}
