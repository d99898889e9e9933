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
}

export interface AdmissionPlugin {
  name: string;
  /** Mutating phase: may change attrs.object; throws ApiError to reject. */
  admit?(attrs: AdmissionAttributes): void | Promise<void>;
  /** Validating phase: must not change anything; throws ApiError to reject. */
  validate?(attrs: AdmissionAttributes): void | Promise<void>;
}
