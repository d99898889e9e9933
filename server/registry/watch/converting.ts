// A watch of a custom resource whose versions convert through a webhook: events (and the initial
// state or replay) are converted in order before the watch sees them. Nothing is shared with
// other watches, since each conversion is its own round trip.
import type { LogEvent } from '../../storage/log/types.ts';
import { ApiError, internalError } from '../../errors.ts';
import type { Converter, ServiceLookup } from '../../schema/types.ts';
import { EventBatch, type BatchSubscriber, type NoticeType, type ObjectEventType, type WatchedObject } from './events.ts';

/** The watch the converted events go to (ResourceWatch). */
export interface ConvertedWatch {
  readonly closed: boolean;
  writeObject(type: ObjectEventType, stored: WatchedObject): void;
  onBatch(batch: EventBatch): void;
  notice(type: NoticeType, object: object): void;
  finish(): void;
}

export class ConvertingWatch implements BatchSubscriber {
  private chain: Promise<void> = Promise.resolve();
  /** Events up to this version are queued already (replay overlaps the first live batches). */
  private queuedRv: number;

  constructor(
    private readonly watch: ConvertedWatch,
    private readonly converter: Converter,
    private readonly services: ServiceLookup,
    private readonly version: string,
    startRv: number,
  ) {
    this.queuedRv = startRv;
  }

  /** Objects to write as ADDED (the initial state), converted first. */
  initial(objects: WatchedObject[]): void {
    this.run(async () => {
      for (const o of await this.convert(objects)) this.watch.writeObject('ADDED', o);
    });
  }

  /** A step after everything queued so far. */
  then(step: () => void): void {
    this.run(async () => step());
  }

  onBatch(batch: EventBatch): void {
    const fresh = batch.events.filter((e) => e.rv > this.queuedRv);
    if (fresh.length === 0 || this.watch.closed) return;
    this.queuedRv = fresh[fresh.length - 1].rv;
    this.run(async () => {
      const objects = await this.convert(fresh.map((e) => e.object));
      const prev = await this.convert(fresh.map((e) => e.prevObject).filter((o) => o !== undefined));
      let p = 0;
      const converted: LogEvent[] = fresh.map((e, i) => ({ ...e, object: objects[i], prevObject: e.prevObject === undefined ? undefined : prev[p++] }));
      if (!this.watch.closed) this.watch.onBatch(new EventBatch(converted));
    });
  }

  private async convert(objects: WatchedObject[]): Promise<WatchedObject[]> {
    return objects.length ? this.converter.convert(objects, this.version, this.services) : objects;
  }

  private run(step: () => Promise<void>): void {
    this.chain = this.chain.then(step).catch((e) => {
      if (this.watch.closed) return;
      const status = e instanceof ApiError ? e.toStatus() : internalError(String((e as Error)?.message ?? e)).toStatus();
      this.watch.notice('ERROR', status);
      this.watch.finish();
    });
  }
}
