// Runs admission plugins in order: every mutating phase first, then every validating one, as
// kube-apiserver does. The store calls the chain on each write. Most plugins answer at once, so
// a phase stays synchronous until a plugin returns a promise (a webhook call): the default chain
// makes no promise per write. With metrics, each phase (kube's WithStepMetrics) and each of
// kube's plugins (WithControllerMetrics) is timed with performance.now(): still no promise.
import type { AdmissionAttributes, AdmissionPlugin } from './types.ts';
import type { AdmissionMetrics, AdmissionObserver } from '../metrics/admission.ts';
import { ALL_ORDERED_PLUGINS } from './plugins.ts';

/** kube's plugin names: only those are kube admission controllers (RBAC's escalation check, say, is storage's in kube). */
const KUBE_PLUGINS: ReadonlySet<string> = new Set(ALL_ORDERED_PLUGINS);

type Phase = (attrs: AdmissionAttributes) => void | Promise<void>;

export class AdmissionChain {
  private readonly plugins: AdmissionPlugin[];
  private mutating: Phase[] = [];
  private validating: Phase[] = [];
  private readonly admitStep: AdmissionObserver | undefined;
  private readonly validateStep: AdmissionObserver | undefined;
  private readonly runMutating = (attrs: AdmissionAttributes) => runPhase(this.mutating, 0, attrs);
  private readonly runValidating = (attrs: AdmissionAttributes) => runPhase(this.validating, 0, attrs);

  constructor(
    plugins: AdmissionPlugin[] = [],
    private readonly metrics?: AdmissionMetrics,
  ) {
    this.plugins = [];
    this.admitStep = metrics?.stepObserver('admit');
    this.validateStep = metrics?.stepObserver('validate');
    for (const p of plugins) this.add(p);
  }

  add(plugin: AdmissionPlugin): void {
    this.plugins.push(plugin);
    const measured = this.metrics && KUBE_PLUGINS.has(plugin.name) ? this.metrics : undefined;
    if (plugin.admit) {
      const phase: Phase = plugin.admit.bind(plugin);
      this.mutating.push(measured ? timed(phase, measured.controllerObserver(plugin.name, 'admit')) : phase);
    }
    if (plugin.validate) {
      const phase: Phase = plugin.validate.bind(plugin);
      this.validating.push(measured ? timed(phase, measured.controllerObserver(plugin.name, 'validate')) : phase);
    }
  }

  get names(): string[] {
    return this.plugins.map((p) => p.name);
  }

  admit(attrs: AdmissionAttributes): void | Promise<void> {
    if (this.admitStep) return observed(this.admitStep, attrs, this.runMutating);
    return runPhase(this.mutating, 0, attrs);
  }

  validate(attrs: AdmissionAttributes): void | Promise<void> {
    if (this.validateStep) return observed(this.validateStep, attrs, this.runValidating);
    return runPhase(this.validating, 0, attrs);
  }
}

/** A phase timed by `observe` (kube's pluginHandlerWithMetrics). */
function timed(phase: Phase, observe: AdmissionObserver): Phase {
  return (attrs) => observed(observe, attrs, phase);
}

/** Runs `phase`, then tells `observe` how long it took and whether it refused: synchronously unless the phase answers later. */
function observed(observe: AdmissionObserver, attrs: AdmissionAttributes, phase: Phase): void | Promise<void> {
  const start = performance.now();
  let r: void | Promise<void>;
  try {
    r = phase(attrs);
  } catch (e) {
    observe(attrs.operation, true, (performance.now() - start) / 1000);
    throw e;
  }
  if (r instanceof Promise) {
    return r.then(
      () => observe(attrs.operation, false, (performance.now() - start) / 1000),
      (e: unknown) => {
        observe(attrs.operation, true, (performance.now() - start) / 1000);
        throw e;
      },
    );
  }
  observe(attrs.operation, false, (performance.now() - start) / 1000);
}

/** Runs phases[from..] in order, synchronously until one returns a promise, then the rest after it. */
function runPhase(phases: Phase[], from: number, attrs: AdmissionAttributes): void | Promise<void> {
  for (let i = from; i < phases.length; i++) {
    const r = phases[i](attrs);
    if (r instanceof Promise) return r.then(() => runPhase(phases, i + 1, attrs));
  }
}
