// The policies and bindings of one admission policy kind in memory (kube's
// policy/generic/policy_source.go): fed by the commit stream (server.ts passes each committed
// change), each policy compiled once per generation, and the hooks — a policy with the bindings
// that name it — rebuilt only after a change, so that a request reads no storage and a server
// with no binding does nothing at all.

type Obj = Record<string, unknown>;

export interface PolicyHook<C> {
  policy: Obj;
  name: string;
  compiled: C;
  bindings: Obj[];
}

/** A committed change as the commit stream gives it (storage/log's LogEvent, the part read here). */
export interface CommittedChange {
  type: string;
  key: { res: string; name: string };
  object?: unknown;
}

const nameOf = (o: Obj): string => String((o.metadata as Obj | undefined)?.name ?? '');
const generationOf = (o: Obj): number => Number((o.metadata as Obj | undefined)?.generation ?? 0);

export class PolicySource<C> {
  private readonly policies = new Map<string, { object: Obj; generation: number; compiled?: C }>();
  private readonly bindings = new Map<string, Obj>();
  private cached: PolicyHook<C>[] | undefined = [];

  constructor(
    /** The commit stream's resource names of the policy and of the binding kinds. */
    private readonly policyResource: string,
    private readonly bindingResource: string,
    private readonly compile: (policy: Obj) => C,
  ) {}

  /** What is stored at start. */
  load(policies: Obj[], bindings: Obj[]): void {
    for (const p of policies) this.setPolicy(p);
    for (const b of bindings) this.bindings.set(nameOf(b), b);
    this.cached = undefined;
  }

  /** One batch of committed changes; anything else is ignored at the cost of two comparisons. */
  onCommit(events: readonly CommittedChange[]): void {
    for (const e of events) {
      const res = e.key.res;
      if (res === this.policyResource) {
        if (e.type === 'DELETED') this.policies.delete(e.key.name);
        else this.setPolicy(e.object as Obj);
        this.cached = undefined;
      } else if (res === this.bindingResource) {
        if (e.type === 'DELETED') this.bindings.delete(e.key.name);
        else this.bindings.set(e.key.name, e.object as Obj);
        this.cached = undefined;
      }
    }
  }

  private setPolicy(p: Obj): void {
    const name = nameOf(p);
    const prior = this.policies.get(name);
    const generation = generationOf(p);
    // A status write leaves the generation: the compiled form is kept.
    this.policies.set(name, { object: p, generation, compiled: prior && prior.generation === generation ? prior.compiled : undefined });
  }

  /** The policies that have bindings, each with them, by name (empty when there is no binding). */
  hooks(): PolicyHook<C>[] {
    if (this.cached) return this.cached;
    const byPolicy = new Map<string, Obj[]>();
    for (const b of [...this.bindings.values()].sort((x, y) => (nameOf(x) < nameOf(y) ? -1 : 1))) {
      const policyName = String((b.spec as Obj | undefined)?.policyName ?? '');
      if (!this.policies.has(policyName)) continue;
      const list = byPolicy.get(policyName);
      if (list) list.push(b);
      else byPolicy.set(policyName, [b]);
    }
    const hooks: PolicyHook<C>[] = [];
    for (const name of [...byPolicy.keys()].sort()) {
      const entry = this.policies.get(name)!;
      entry.compiled ??= this.compile(entry.object);
      hooks.push({ policy: entry.object, name, compiled: entry.compiled, bindings: byPolicy.get(name)! });
    }
    this.cached = hooks;
    return hooks;
  }
}
