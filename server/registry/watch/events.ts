// What a watch hands the one who serves it: its events' objects presented as a GET in the
// watched version serves them (made once per event and version, for every watcher), batches of
// events that watchers of the same selection share, and the sink a watch writes to.
import type { ResourceInfo } from '../../schema/types.ts';
import type { EventLog } from '../../storage/log/event-log.ts';
import type { LogEvent } from '../../storage/log/types.ts';
import { servedAsStored, servedJsonPrefix, storedJsonOf } from '../../storage/rows/codec.ts';
import type { ServiceLookup } from '../../schema/types.ts';
import type { FieldSelector, LabelSelector } from '../selectors.ts';
import { apiVersionOf } from '../store.ts';
import { customObjectOrder } from '../object-order.ts';

export type ObjectEventType = 'ADDED' | 'MODIFIED' | 'DELETED';
/** Events that carry no object of the resource: a BOOKMARK's resourceVersion, an ERROR's Status. */
export type NoticeType = 'BOOKMARK' | 'ERROR';

/** An object of a watched resource: JSON, whose metadata a watch filters on. */
export interface WatchedObject {
  metadata?: { namespace?: string; labels?: Record<string, string>; resourceVersion?: string };
  [field: string]: unknown;
}

/** What a watch reads objects through (GenericStore satisfies it). */
export interface WatchStore {
  readonly services: ServiceLookup;
  /** A stored object as a GET in info's version serves it, in a copy (see GenericStore.presentedCopy). */
  presentedCopy(info: ResourceInfo, obj: Record<string, unknown>): Record<string, unknown>;
  listCurrent(info: ResourceInfo, ns: string | undefined, fields?: FieldSelector, labels?: LabelSelector): WatchedObject[];
}

/** Where a watch's events come from (the WatchHub). */
export interface WatchSource {
  readonly log: EventLog;
  readonly store: WatchStore;
  /** Hands each commit batch of resource `res` to the subscriber until the returned function is called. */
  subscribe(res: string, subscriber: BatchSubscriber): () => void;
}

export interface BatchSubscriber {
  onBatch(batch: EventBatch): void;
}

/**
 * An object of an event as a watch of one version serves it. `shared`: made once for every
 * watcher of its batch (EventBatch.presented), so encodings of it are worth keeping.
 */
export class PresentedObject {
  private presented: WatchedObject | undefined;

  constructor(
    private readonly stored: WatchedObject,
    private readonly info: ResourceInfo,
    private readonly store: WatchStore,
    readonly shared: boolean,
  ) {}

  /** The object as a GET serves it: converted, defaulted, in kube's order. Shared: read-only. */
  get object(): WatchedObject {
    return (this.presented ??= this.store.presentedCopy(this.info, this.stored) as WatchedObject);
  }

  /** The object's stored JSON when that is byte for byte what is served (storage/codec.ts). */
  get storedJson(): Buffer | undefined {
    const info = this.info;
    const stored = storedJsonOf(this.stored);
    return stored && servedAsStored(stored, servedJsonPrefix(apiVersionOf(info), info.kind, !!info.custom), !!info.custom) ? stored : undefined;
  }
}

/** What one watcher wrote for a batch, for the watchers of the same selection and sink. */
export interface WrittenBatch {
  written: unknown;
  /** The watcher's resourceVersion after the batch, if the batch moved it. */
  lastRv: number | undefined;
}

/**
 * Events of one resource handed to its watchers together: a commit batch (shared by every
 * watcher of the resource), a page of a replay, a batch a webhook converted.
 */
export class EventBatch {
  /** By the watchers' share key (ResourceWatch.onBatch). */
  readonly written = new Map<string, WrittenBatch>();
  /** Each event's object as each version presents it, by apiVersion. */
  private readonly byVersion = new Map<string, (PresentedObject | undefined)[]>();

  constructor(readonly events: readonly LogEvent[]) {}

  /** Event i's object as `apiVersion` (info's) serves it, made once for every watcher of that version. */
  presented(i: number, apiVersion: string, info: ResourceInfo, store: WatchStore): PresentedObject {
    let objects = this.byVersion.get(apiVersion);
    if (!objects) this.byVersion.set(apiVersion, (objects = []));
    return (objects[i] ??= new PresentedObject(this.events[i].object, info, store, true));
  }
}

/**
 * Where a watch writes its events (the HTTP response: http/handlers/watch.ts frames and encodes
 * them). Called only while the watch is open.
 */
export interface WatchSink<Batch = unknown> {
  /**
   * Whether events may come framed already: the log's JSON lines of stored rows
   * (`{"type":…,"object":…}` and a newline; storage/codec.ts EVENT_OPEN). True for a sink that
   * writes plain JSON of whole objects on a watch that serves them as stored
   * (ResourceWatch.servesStoredJson).
   */
  readonly writesStoredJson: boolean;
  /** Sinks with the same key write the same bytes for the same events; undefined: never shared. */
  readonly shareKey: string | undefined;
  event(type: ObjectEventType, object: PresentedObject): void;
  notice(type: NoticeType, object: object): void;
  /** Events the log framed (see writesStoredJson). */
  framed(bytes: Buffer): void;
  /** Events until endBatch() are gathered, to leave in one write (writeBatch). */
  beginBatch(): void;
  endBatch(): Batch;
  /** Writes a gathered batch: this sink's own, or one a sink with the same key gathered. */
  writeBatch(batch: Batch): void;
  /** The initial state (or replay) is written; live events follow. */
  subscribed(): void;
  /** Whether a last bookmark can still be written. */
  readonly writable: boolean;
  /** The watch is over: end the stream. */
  end(): void;
}

/**
 * A BOOKMARK event's object: the kind with only a resourceVersion in its metadata, and the
 * `k8s.io/initial-events-end` annotation on the one that ends a streaming list's initial events;
 * in the kind's order (a custom object's keys sorted).
 */
export function bookmarkObject(info: ResourceInfo, rv: number, initialEventsEnd = false): object {
  const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
  if (initialEventsEnd) metadata.annotations = { 'k8s.io/initial-events-end': 'true' };
  const o = { kind: info.kind, apiVersion: apiVersionOf(info), metadata };
  return info.custom ? customObjectOrder(o) : o;
}
