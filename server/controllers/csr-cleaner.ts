// The CSR cleaner kube-controller-manager runs (pkg/controller/certificates/cleaner/cleaner.go):
// every hour, CertificateSigningRequests that are done with are deleted, so that automated
// requests and approvals do not pile up: issued ones an hour after approval, denied and failed
// ones an hour after that condition, pending ones a day after creation, and any whose issued
// certificate has expired.
import type { GenericStore, RequestContext } from '../registry/store.ts';
import type { ResourceCatalog } from '../schema/catalog.ts';
import type { ResourceInfo } from '../schema/types.ts';
import { X509Certificate } from 'node:crypto';
import { ApiError } from '../errors.ts';
import { pemBlocks } from '../util/pkcs10.ts';
import { controllerWriteContext } from './queue-controller.ts';

/** kube's pollingInterval. */
export const CSR_CLEANER_INTERVAL_MS = 60 * 60_000;
const HOUR_MS = 60 * 60_000;
const APPROVED_EXPIRATION_MS = HOUR_MS;
const DENIED_EXPIRATION_MS = HOUR_MS; // (failed requests too)
const PENDING_EXPIRATION_MS = 24 * HOUR_MS;

interface Condition {
  type?: string;
  lastUpdateTime?: string;
}
interface Csr {
  metadata: { name: string; creationTimestamp?: string; resourceVersion?: string };
  status?: { conditions?: Condition[]; certificate?: string };
}

/** isOlderThan: a set time more than d ago. */
function olderThan(time: string | undefined, d: number, now: number): boolean {
  const t = Date.parse(time ?? '');
  return !Number.isNaN(t) && now - t > d;
}

/** isExpired: the issued certificate's NotAfter has passed (an unreadable one is left alone, as kube reports it). */
function certificateExpired(csr: Csr, now: number): boolean {
  if (!csr.status?.certificate) return false;
  const block = pemBlocks(Buffer.from(csr.status.certificate, 'base64').toString('latin1'))[0];
  if (!block) return false;
  try {
    return now > Date.parse(new X509Certificate(block.bytes).validTo);
  } catch {
    return false;
  }
}

/** Whether kube's cleaner would delete this request now. */
export function csrIsDone(csr: Csr, now: number): boolean {
  const conditions = csr.status?.conditions ?? [];
  const issued = !!csr.status?.certificate;
  for (const c of conditions) {
    if (c?.type === 'Approved' && issued && (olderThan(c.lastUpdateTime, APPROVED_EXPIRATION_MS, now) || certificateExpired(csr, now))) return true;
    if ((c?.type === 'Denied' || c?.type === 'Failed') && olderThan(c.lastUpdateTime, DENIED_EXPIRATION_MS, now)) return true;
  }
  return conditions.length === 0 && olderThan(csr.metadata.creationTimestamp, PENDING_EXPIRATION_MS, now);
}

export class CsrCleanerController {
  private readonly info: ResourceInfo;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly store: GenericStore,
    catalog: ResourceCatalog,
    private readonly intervalMs: number = CSR_CLEANER_INTERVAL_MS,
    private readonly log: (line: string) => void = () => {},
  ) {
    this.info = catalog.lookup('certificates.k8s.io', 'v1', 'certificatesigningrequests')!;
  }

  /** Sweeps now and then every interval. */
  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.running = this.sweep().catch((e: unknown) => this.log(`csr cleaner: ${(e as Error).message}`));
      this.timer = setTimeout(() => void this.running.then(tick), this.intervalMs);
      this.timer.unref();
    };
    tick();
  }

  /** Stops sweeping; resolves once a sweep under way is done. */
  stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    return this.running;
  }

  private async sweep(): Promise<void> {
    const now = Date.now();
    const ctx: RequestContext = controllerWriteContext();
    for (const csr of this.store.listReadable(this.info, undefined) as Csr[]) {
      if (this.stopped) return;
      if (!csrIsDone(csr, now)) continue;
      try {
        // Only the version judged: a request written since is judged again next time.
        await this.store.delete(this.info, '', csr.metadata.name, { preconditions: { resourceVersion: csr.metadata.resourceVersion } }, ctx);
      } catch (e) {
        if (!(e instanceof ApiError && (e.code === 404 || e.code === 409))) throw e;
      }
    }
  }
}
