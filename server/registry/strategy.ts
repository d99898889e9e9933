// Per-kind rules: the interface a kind's strategy implements. A kind is data (its schema); a
// strategy exists only for kinds with special rules, registered by qualified resource in the
// kinds' registry (kinds/index.ts). The generic store applies the defaults itself.
import type { FieldError } from '../validation/field.ts';

export interface Strategy {
  /** metadata.generation starts at 1 and is bumped when anything outside metadata/status changes. */
  tracksGeneration?: boolean;
  /**
   * A create keeps the status it is given (kube's nodeStrategy: "Nodes allow *all* fields,
   * including status, to be set on create"); other kinds with a status subresource start with none.
   */
  statusOnCreate?: boolean;
  /** Fills defaults and server-set fields on create (after the generic status reset). */
  prepareForCreate?(obj: any): void;
  /** Adjusts an update of the main resource (after the generic status carry-over). */
  prepareForUpdate?(obj: any, old: any): void;
  /**
   * kube's AllowUnconditionalUpdate: an update without a resourceVersion (or with "0") is written
   * over whatever is stored. Where false, it is refused as Invalid. Absent: true, but for the kinds
   * in CONDITIONAL_UPDATES_ONLY.
   */
  allowUnconditionalUpdate?: boolean;
  /** The strategy reports missing fields itself, where and when kube does: the schema's `required` is not checked. */
  reportsRequired?: boolean;
  /**
   * Fields (with all below them) kube's validation of this kind never looks at: the schema's
   * `required` is not checked there (a StatefulSet's pod template spec).
   */
  unvalidated?: readonly string[];
  /** Create validation (and update validation when there is no validateUpdate). */
  validate?(obj: any): FieldError[];
  /** Update validation; replaces validate on updates. */
  validateUpdate?(obj: any, old: any, subresource: string): FieldError[];
  /** Finalizers beyond metadata.finalizers that hold deletion (namespaces: spec.finalizers). */
  pendingFinalizers?(obj: any): string[];
  /**
   * Graceful deletion (kube's CheckGracefulDelete): the seconds a delete gives an object of
   * this kind, from the period the request asked for (undefined: none). Kinds without it go at once.
   */
  gracePeriod?(obj: any, requested: number | undefined): number;
  /** Called when deletion starts on an object that must wait (namespaces turn Terminating). */
  prepareForDeletion?(obj: any): void;
  /** Subresources with their own update rules: given the stored object and the request body, the object to store. */
  subresourceUpdate?: Record<string, (body: any, old: any) => any>;
  /**
   * Subresources a POST writes through (pods/binding): the body's definition, `check` refusing a
   * malformed body before anything is read, and `apply` making the object to store from a copy
   * of the stored one. Written straight to storage, as kube's REST for them writes: no
   * managedFields entry and no generation bump.
   */
  subresourceCreate?: Record<string, SubresourceCreate>;
}

export interface SubresourceCreate {
  definition: string;
  check(body: any, name: string): void;
  apply(obj: any, body: any): any;
}
