import type { UserInfo } from '../authentication/user.ts';
import type { ResourceInfo } from '../schema/types.ts';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** What admission sees of one request (kube's admission.Attributes). */
export interface AdmissionAttributes {
  operation: AdmissionOperation;
  info: ResourceInfo;
  subresource: string;
  namespace: string;
  name: string;
  /** The object about to be stored (mutating plugins may change it in place). */
  object?: unknown;
  oldObject?: unknown;
  user: UserInfo;
  dryRun: boolean;
  /** The object's group, version and kind at the request's version (kube's GetKind). */
  kind: { group: string; version: string; kind: string };
  /**
   * The request's options as kube sends them to webhooks and policies (GetOperationOptions):
   * CreateOptions, UpdateOptions (updates and patches) or DeleteOptions, with apiVersion
   * meta.k8s.io/v1 and kind.
   */
  options: Record<string, unknown>;
  /** Adds a `Warning: 299` header to the response (kube's warning.AddWarning). */
  warn(message: string): void;
  /** Records an annotation for the request's audit event (kube's Attributes.AddAnnotation). */
  addAuditAnnotation(key: string, value: string): void;
}

export interface AdmissionPlugin {
  name: string;
  /** Mutating phase: may change attrs.object; throws ApiError to reject. */
  admit?(attrs: AdmissionAttributes): void | Promise<void>;
  /** Validating phase: must not change anything; throws ApiError to reject. */
  validate?(attrs: AdmissionAttributes): void | Promise<void>;
}
