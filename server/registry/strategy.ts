// Per-kind rules: the interfaces a built-in kind implements for the generic store. A kind is
// data (its schema); a strategy exists only for kinds with special rules, registered by
// qualified resource in the kinds' registry (kinds/index.ts); the generic store applies the
// defaults itself. KindFields is a kind's field set for field selectors (kube's GetAttrs and
// field-label conversion), gathered in kinds/fields.ts.
import type { FieldError } from '../validation/field.ts';
import type { UserInfo } from '../authentication/user.ts';
import { goQuote } from '../go/strconv.ts';

/** A JSON object as kinds read and write it: any field may hold anything until validated. */
export type Obj = Record<string, any>;

export interface Strategy {
  /** metadata.generation starts at 1 and is bumped when anything outside metadata/status changes. */
  tracksGeneration?: boolean;
  /**
   * A create keeps the status it is given (kube's nodeStrategy: "Nodes allow *all* fields,
   * including status, to be set on create"); other kinds with a status subresource start with none.
   */
  statusOnCreate?: boolean;
  /** Fills defaults and server-set fields on create (after the generic status reset); requester is who asked (kube's user from the context). */
  prepareForCreate?(obj: Obj, requester?: UserInfo): void;
  /** Adjusts an update of the main resource (after the generic status carry-over). */
  prepareForUpdate?(obj: Obj, old: Obj): void;
  /** Adjusts a write to /status (after the generic one took the body's status onto the stored object): kube's status strategy's PrepareForUpdate. */
  prepareForStatusUpdate?(obj: Obj, old: Obj): void;
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
  validate?(obj: Obj): FieldError[];
  /** Update validation; replaces validate on updates. */
  validateUpdate?(obj: Obj, old: Obj, subresource: string): FieldError[];
  /** Finalizers beyond metadata.finalizers that hold deletion (namespaces: spec.finalizers). */
  pendingFinalizers?(obj: Obj): string[];
  /**
   * Graceful deletion (kube's CheckGracefulDelete): the seconds a delete gives an object of
   * this kind, from the period the request asked for (undefined: none). Kinds without it go at once.
   */
  gracePeriod?(obj: Obj, requested: number | undefined): number;
  /** Called when deletion starts on an object that must wait (namespaces turn Terminating). */
  prepareForDeletion?(obj: Obj): void;
  /** Subresources with their own update rules: given the stored object and the request body, the object to store. */
  subresourceUpdate?: Record<string, (body: Obj, old: Obj) => Obj>;
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
  check(body: unknown, name: string): void;
  apply(obj: Obj, body: Obj): Obj;
}

/** A kind's fields for field selectors (kube's GetAttrs and its field-label conversion). */
export interface KindFields {
  /** Labels the kind's field-label conversion accepts (metadata.* included where kube accepts them). */
  accepted: readonly string[];
  /** The fields beyond metadata.name/namespace an object exposes. */
  fields?: (o: Obj) => Record<string, string>;
  /** The error for an unsupported label, when it is not "field label not supported: <label>". */
  message?: (label: string, version: string) => string;
  /**
   * Where in the stored object a selectable field is read from, for fields whose value is that
   * string as it is (else ""): storage can then look for objects holding a given non-empty value
   * without decoding them.
   */
  stringFieldPaths?: Readonly<Record<string, string>>;
}

// A field's value as the kinds' GetAttrs write it into a fields.Set.
/** A string field (string(x)): "" when unset. */
export const stringField = (v: unknown): string => (typeof v === 'string' ? v : '');
/** An integer field (strconv.Itoa): "0" when unset. */
export const intField = (v: unknown): string => (typeof v === 'number' ? String(Math.trunc(v)) : '0');
/** A boolean field (strconv.FormatBool): "false" when unset. */
export const boolField = (v: unknown): string => (v === true ? 'true' : 'false');

/** DefaultMetaV1FieldSelectorConversion's error, for kinds without a conversion of their own. */
export function notKnownFieldSelector(label: string): string {
  return `${goQuote(label)} is not a known field selector: only "metadata.name", "metadata.namespace"`;
}
