// Runs admission plugins in order: every mutating phase first, then every validating one, as
// kube-apiserver does. The store calls the chain on each write. Most plugins answer at once, so
// a phase stays synchronous until a plugin returns a promise (a webhook call): the default chain
// makes no promise per write.
import type { AdmissionAttributes, AdmissionPlugin } from './types.ts';

type Phase = (attrs: AdmissionAttributes) => void | Promise<void>;

export class AdmissionChain {
  private readonly plugins: AdmissionPlugin[];
  private mutating: Phase[] = [];
  private validating: Phase[] = [];

  constructor(plugins: AdmissionPlugin[] = []) {
    this.plugins = [];
    for (const p of plugins) this.add(p);
  }

  add(plugin: AdmissionPlugin): void {
    this.plugins.push(plugin);
    if (plugin.admit) this.mutating.push(plugin.admit.bind(plugin));
    if (plugin.validate) this.validating.push(plugin.validate.bind(plugin));
  }

  get names(): string[] {
    return this.plugins.map((p) => p.name);
  }

  admit(attrs: AdmissionAttributes): void | Promise<void> {
    return runPhase(this.mutating, 0, attrs);
  }

  validate(attrs: AdmissionAttributes): void | Promise<void> {
    return runPhase(this.validating, 0, attrs);
  }
}

/** Runs phases[from..] in order, synchronously until one returns a promise, then the rest after it. */
function runPhase(phases: Phase[], from: number, attrs: AdmissionAttributes): void | Promise<void> {
  for (let i = from; i < phases.length; i++) {
    const r = phases[i](attrs);
    if (r instanceof Promise) return r.then(() => runPhase(phases, i + 1, attrs));
  }
}
