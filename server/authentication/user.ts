/** Who is calling, as authentication established it (kube's user.Info). */
export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** What authentication adds to a request's state (koa's ctx.state; http/state.ts declares the whole of it). */
export interface AuthenticatedState {
  user: UserInfo;
}

export const ANONYMOUS: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };

/** The identity in-process controllers act as; a member of system:masters. */
export const LOOPBACK_USER: UserInfo = { name: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] };
