// What the two halves of API Priority and Fairness share (k8s.io/apiserver/pkg/util/flowcontrol):
// the configuration (config/: the FlowSchema and PriorityLevelConfiguration objects kept from the
// commit stream, and classification) and the dispatcher (dispatch/: seats, queues, fair queuing,
// work estimation, rejection). flowcontrol/ sits between authentication and authorization on the
// request's path; it never imports http/, and reads the objects through what server.ts gives it.
import type { UserInfo } from '../authentication/user.ts';

/** What classification reads of a request (kube's RequestDigest: the RequestInfo and the user). */
export interface RequestDigest {
  user: UserInfo;
  isResourceRequest: boolean;
  /** The kube verb (get, list, watch, create, ...), or for a non-resource request the lower-cased method. */
  verb: string;
  /** The URL path (non-resource rules match it). */
  path: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

/** A FlowSchema as the dispatcher needs it. */
export interface FlowSchemaRef {
  name: string;
  uid: string;
  matchingPrecedence: number;
  /** spec.distinguisherMethod.type, if any. */
  distinguisherMethod?: 'ByUser' | 'ByNamespace';
}

/** A PriorityLevelConfiguration as the dispatcher needs it: its name, uid and spec (flowcontrol/v1 JSON). */
export interface PriorityLevelRef {
  name: string;
  uid: string;
  spec: PriorityLevelSpec;
}

/** flowcontrol.apiserver.k8s.io/v1 PriorityLevelConfigurationSpec, as stored (defaulted). */
export interface PriorityLevelSpec {
  type: 'Exempt' | 'Limited';
  exempt?: { nominalConcurrencyShares?: number; lendablePercent?: number };
  limited?: {
    nominalConcurrencyShares?: number;
    lendablePercent?: number;
    borrowingLimitPercent?: number;
    limitResponse?: { type: 'Queue' | 'Reject'; queuing?: { queues?: number; handSize?: number; queueLengthLimit?: number } };
  };
}

/** The outcome of classifying one request. */
export interface Classification {
  flowSchema: FlowSchemaRef;
  priorityLevel: PriorityLevelRef;
  /** ByUser: the user's name; ByNamespace: the namespace; else "". */
  flowDistinguisher: string;
}

/** The live APF configuration, kept from the commit stream (config/). */
export interface FlowControlConfiguration {
  /** The FlowSchema and priority level a request belongs to (kube's catch-all when nothing else matches). */
  classify(digest: RequestDigest): Classification;
  /** Every priority level whose object exists, in name order. */
  priorityLevels(): readonly PriorityLevelRef[];
  /** Called after any FlowSchema or PriorityLevelConfiguration changes (the dispatcher re-plans its seats). */
  onChange(listener: () => void): void;
}
