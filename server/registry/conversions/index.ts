// Built-in kinds served in more than one version, or by more than one group, are kept once: rows
// hold the storage version, and reads and writes in another version convert, as kube-apiserver's
// scheme converts through its internal version. Conversions are synchronous and never fail.
import { TypeModel } from '../../schema/model.ts';
import { goJsonOrder } from '../../schema/go-order.ts';
import { defaultsFor } from '../strategies/defaulting.ts';
import { convertHorizontalPodAutoscaler } from '../kinds/autoscaling/horizontalpodautoscalers/conversion.ts';
import { convertEvent, CORE_EVENT_VERSION, EVENTS_V1_VERSION } from '../kinds/events/conversion.ts';

export interface KindConversion {
  /** The qualified resource the rows are kept under, whichever group serves them. */
  storageResource: string;
  storageApiVersion: string;
  kind: string;
  /** The definition of each served apiVersion (for the Go field order of converted objects). */
  definitions: Readonly<Record<string, string>>;
  /** A fresh object: obj (in whatever version its apiVersion names) as apiVersion. */
  convert(obj: any, apiVersion: string): any;
}

const BY_RESOURCE = new Map<string, KindConversion>();

function register(groupResources: string[], conversion: KindConversion): void {
  for (const gr of groupResources) BY_RESOURCE.set(gr, conversion);
}

register(['autoscaling/horizontalpodautoscalers'], {
  storageResource: 'horizontalpodautoscalers.autoscaling',
  storageApiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  definitions: {
    'autoscaling/v2': 'io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler',
    'autoscaling/v1': 'io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler',
  },
  convert: convertHorizontalPodAutoscaler,
});

register(['/events', 'events.k8s.io/events'], {
  storageResource: 'events',
  storageApiVersion: CORE_EVENT_VERSION,
  kind: 'Event',
  definitions: { [CORE_EVENT_VERSION]: 'io.k8s.api.core.v1.Event', [EVENTS_V1_VERSION]: 'io.k8s.api.events.v1.Event' },
  convert: convertEvent,
});

/** How a built-in resource's objects are kept, when they are kept in another form than served. */
export function conversionOf(group: string, resource: string): KindConversion | undefined {
  return BY_RESOURCE.get(`${group}/${resource}`);
}

/** obj converted to apiVersion (and defaulted as that version, if asked), its fields in the order kube writes them: a fresh object. */
export function convertTo(conversion: KindConversion, obj: any, apiVersion: string, defaulted = false): any {
  const out = conversion.convert(obj, apiVersion);
  const definition = conversion.definitions[apiVersion];
  if (!definition) return out;
  if (defaulted) defaultsFor(definition)?.(out);
  return goJsonOrder(TypeModel.loadBuiltins().node(definition), out);
}
