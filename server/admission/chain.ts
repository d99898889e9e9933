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

/** A phase's plugins, and (with metrics) the observer of each of kube's plugins among them. */
interface Steps {
  phases: Phase[];
  observers: (AdmissionObserver | undefined)[];
}

export class AdmissionChain {
  private readonly plugins: AdmissionPlugin[];
  private readonly mutating: Steps = { phases: [], observers: [] };
  private readonly validating: Steps = { phases: [], observers: [] };
  private readonly admitStep: AdmissionObserver | undefined;
  private readonly validateStep: AdmissionObserver | undefined;

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
      this.mutating.phases.push(plugin.admit.bind(plugin));
      this.mutating.observers.push(measured?.controllerObserver(plugin.name, 'admit'));
    }
    if (plugin.validate) {
      this.validating.phases.push(plugin.validate.bind(plugin));
      this.validating.observers.push(measured?.controllerObserver(plugin.name, 'validate'));
    }
  }

  get names(): string[] {
    return this.plugins.map((p) => p.name);
  }

  admit(attrs: AdmissionAttributes): void | Promise<void> {
    if (this.admitStep) return runMeasured(this.mutating, this.admitStep, attrs);
    return runPhase(this.mutating.phases, 0, attrs);
  }

  validate(attrs: AdmissionAttributes): void | Promise<void> {
    if (this.validateStep) return runMeasured(this.validating, this.validateStep, attrs);
    return runPhase(this.validating.phases, 0, attrs);
  }
}

/** Runs phases[from..] in order, synchronously until one returns a promise, then the rest after it. */
function runPhase(phases: Phase[], from: number, attrs: AdmissionAttributes): void | Promise<void> {
  for (let i = from; i < phases.length; i++) {
    const r = phases[i](attrs);
    if (r instanceof Promise) return r.then(() => runPhase(phases, i + 1, attrs));
  }
}

/**
 * runPhase measured as kube's WithStepMetrics and WithControllerMetrics measure it: the whole
 * phase, and each plugin, refused or not. One clock read per plugin (a plugin ends when the
 * next starts); still synchronous until a plugin answers later.
 */
function runMeasured(steps: Steps, step: AdmissionObserver, attrs: AdmissionAttributes): void | Promise<void> {
  const start = performance.now();
  const ended = (rejected: boolean, at: number) => step(attrs.operation, rejected, (at - start) / 1000);
  let r: void | Promise<void>;
  try {
    r = runMeasuredFrom(steps, 0, attrs, start);
  } catch (e) {
    ended(true, performance.now());
    throw e;
  }
  if (r instanceof Promise) {
    return r.then(
      () => ended(false, performance.now()),
      (e: unknown) => {
        ended(true, performance.now());
        throw e;
      },
    );
  }
  ended(false, performance.now());
}

function runMeasuredFrom(steps: Steps, from: number, attrs: AdmissionAttributes, startedAt: number): void | Promise<void> {
  const { phases, observers } = steps;
  let t = startedAt;
  for (let i = from; i < phases.length; i++) {
    const observe = observers[i];
    let r: void | Promise<void>;
    try {
      r = phases[i](attrs);
    } catch (e) {
      observe?.(attrs.operation, true, (performance.now() - t) / 1000);
      throw e;
    }
    if (r instanceof Promise) {
      const began = t;
      return r.then(
        () => {
          const now = performance.now();
          observe?.(attrs.operation, false, (now - began) / 1000);
          return runMeasuredFrom(steps, i + 1, attrs, now);
        },
        (e: unknown) => {
          observe?.(attrs.operation, true, (performance.now() - began) / 1000);
          throw e;
        },
      );
    }
    const now = performance.now();
    observe?.(attrs.operation, false, (now - t) / 1000);
    t = now;
  }
}
