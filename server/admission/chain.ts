// Runs admission plugins in order: every mutating phase first, then every validating phase,
// as kube-apiserver does. Plugins and (later) webhooks register here; the store calls the chain.
import type { AdmissionAttributes, AdmissionPlugin } from './types.ts';

export class AdmissionChain {
  private readonly plugins: AdmissionPlugin[];

  constructor(plugins: AdmissionPlugin[] = []) {
    this.plugins = plugins;
  }

  add(plugin: AdmissionPlugin): void {
    this.plugins.push(plugin);
  }

  get names(): string[] {
    return this.plugins.map((p) => p.name);
  }

  async admit(attrs: AdmissionAttributes): Promise<void> {
    for (const p of this.plugins) if (p.admit) await p.admit(attrs);
  }

  async validate(attrs: AdmissionAttributes): Promise<void> {
    for (const p of this.plugins) if (p.validate) await p.validate(attrs);
  }
}
