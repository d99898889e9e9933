// The admission webhooks in memory: every MutatingWebhookConfiguration and
// ValidatingWebhookConfiguration, kept current by whoever feeds it the commit stream of the two
// kinds (server.ts), so that no request reads storage to learn which webhooks exist. As kube's
// mutating/validating webhook managers do, configurations are ordered by name and their webhooks
// flattened in that order, each with the uid `<configuration>/<webhook>/<index>` reinvocation
// tracks; match conditions are compiled once per configuration revision.
import { internalError } from '../../errors.ts';
import { labelSelectorFromObject, type LabelSelector } from '../../registry/selectors.ts';
import { compileConditions, type CompiledCondition } from './match-conditions.ts';
import { reviewVersionOf, type ReviewVersion } from './review.ts';

export type WebhookKind = 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';

/** One webhook of a configuration, with what dispatch needs read once. */
export interface WebhookAccessor {
  uid: string;
  configurationName: string;
  name: string;
  rules: unknown[];
  failurePolicy: 'Fail' | 'Ignore';
  matchPolicy: 'Exact' | 'Equivalent';
  /** The compiled selectors (a stored selector that does not compile throws kube's internal error). */
  namespaceSelector: () => LabelSelector;
  objectSelector: () => LabelSelector;
  sideEffects: string | undefined;
  timeoutSeconds: number;
  reinvocationPolicy: 'Never' | 'IfNeeded';
  reviewVersion: ReviewVersion | undefined;
  clientConfig: Record<string, unknown>;
  conditions: CompiledCondition[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A selector compiled once (an absent one selects everything, as kube's defaulting makes it). */
function compiledSelector(raw: unknown): () => LabelSelector {
  let selector: LabelSelector;
  try {
    selector = labelSelectorFromObject(raw ?? {});
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return () => {
      throw internalError(message);
    };
  }
  return () => selector;
}

function accessorsOf(config: Record<string, unknown>): WebhookAccessor[] {
  const name = isObject(config.metadata) && typeof config.metadata.name === 'string' ? config.metadata.name : '';
  const hooks: unknown[] = Array.isArray(config.webhooks) ? config.webhooks : [];
  return hooks.filter(isObject).map((h, i) => ({
    uid: `${name}/${String(h.name ?? '')}/${i}`,
    configurationName: name,
    name: typeof h.name === 'string' ? h.name : '',
    rules: Array.isArray(h.rules) ? h.rules : [],
    failurePolicy: h.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    matchPolicy: h.matchPolicy === 'Exact' ? 'Exact' : 'Equivalent',
    namespaceSelector: compiledSelector(h.namespaceSelector),
    objectSelector: compiledSelector(h.objectSelector),
    sideEffects: typeof h.sideEffects === 'string' ? h.sideEffects : undefined,
    timeoutSeconds: typeof h.timeoutSeconds === 'number' ? h.timeoutSeconds : 10,
    reinvocationPolicy: h.reinvocationPolicy === 'IfNeeded' ? 'IfNeeded' : 'Never',
    reviewVersion: reviewVersionOf(h.admissionReviewVersions),
    clientConfig: isObject(h.clientConfig) ? h.clientConfig : {},
    conditions: compileConditions(h.matchConditions),
  }));
}

class ConfigurationList {
  private readonly byName = new Map<string, WebhookAccessor[]>();
  private flat: readonly WebhookAccessor[] = [];

  upsert(config: unknown): void {
    if (!isObject(config) || !isObject(config.metadata) || typeof config.metadata.name !== 'string') return;
    this.byName.set(config.metadata.name, accessorsOf(config));
    this.rebuild();
  }

  remove(name: string): void {
    if (this.byName.delete(name)) this.rebuild();
  }

  get webhooks(): readonly WebhookAccessor[] {
    return this.flat;
  }

  private rebuild(): void {
    const names = [...this.byName.keys()].sort();
    this.flat = Object.freeze(names.flatMap((n) => this.byName.get(n)!));
  }
}

/** Both kinds' webhooks, in kube's order. */
export class WebhookConfigurationIndex {
  readonly mutating = new ConfigurationList();
  readonly validating = new ConfigurationList();

  private listOf(kind: WebhookKind): ConfigurationList {
    return kind === 'MutatingWebhookConfiguration' ? this.mutating : this.validating;
  }

  upsert(kind: WebhookKind, config: unknown): void {
    this.listOf(kind).upsert(config);
  }

  remove(kind: WebhookKind, name: string): void {
    this.listOf(kind).remove(name);
  }
}
