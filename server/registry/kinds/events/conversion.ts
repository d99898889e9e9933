// Events are one kind served by two groups: core/v1 and events.k8s.io/v1 read and write the same
// objects, kept in the core/v1 form (kube's storage for both is the core Event). The two
// versions name some fields differently; the rest carry over as they are. Also the zero values
// encoding/json writes for an Event's unset fields, applied as defaults (eventDefaults).
import { cloneJSON, isPlainObject } from '../../../util/json.ts';
import { type Defaulters } from '../../defaulting.ts';

export const CORE_EVENT_VERSION = 'v1';
export const EVENTS_V1_VERSION = 'events.k8s.io/v1';

/** events.k8s.io/v1 field → core/v1 field, for the fields whose names differ. */
const RENAMED: [string, string][] = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
  ['reportingController', 'reportingComponent'],
];

/**
 * The fields encoding/json writes even when unset, with the value it writes then: structs
 * (`omitempty` does not drop them) and strings without `omitempty`. Filled in so an event reads
 * back as kube serves it. (Unset times are left out, as everywhere in hearth: null decodes as absent.)
 */
const GO_ZEROS: Record<string, [string, () => unknown][]> = {
  [CORE_EVENT_VERSION]: [
    ['involvedObject', () => ({})],
    ['source', () => ({})],
    ['reportingComponent', () => ''],
    ['reportingInstance', () => ''],
  ],
  [EVENTS_V1_VERSION]: [
    ['regarding', () => ({})],
    ['deprecatedSource', () => ({})],
  ],
};

/** Scalar fields with `omitempty`: absent when zero. */
const OMITTED_WHEN_ZERO: Record<string, string[]> = {
  [CORE_EVENT_VERSION]: ['reason', 'message', 'count', 'type', 'action'],
  [EVENTS_V1_VERSION]: ['reportingController', 'reportingInstance', 'action', 'reason', 'note', 'type', 'deprecatedCount'],
};

/** Sets the fields Go writes for an unset value of an event of this version (see GO_ZEROS). */
export function fillEventZeros(event: Record<string, unknown>, apiVersion: string): void {
  for (const [field, zero] of GO_ZEROS[apiVersion] ?? []) if (event[field] === undefined) event[field] = zero();
}

/** A fresh copy of an event (either version) as apiVersion, with Go's zero fields filled in. */
export function convertEvent(obj: any, apiVersion: string): any {
  const out: Record<string, unknown> = isPlainObject(obj) ? cloneJSON(obj) : {};
  const from = out.apiVersion === EVENTS_V1_VERSION ? EVENTS_V1_VERSION : CORE_EVENT_VERSION;
  if (from !== apiVersion) {
    for (const [v1Name, coreName] of RENAMED) {
      const [src, dst] = apiVersion === CORE_EVENT_VERSION ? [v1Name, coreName] : [coreName, v1Name];
      const value = out[src];
      delete out[src];
      if (value !== undefined) out[dst] = value;
    }
    // Go copies a zero value across; where this version's field is `omitempty`, it is not written.
    for (const k of OMITTED_WHEN_ZERO[apiVersion] ?? []) if (out[k] === '' || out[k] === 0) delete out[k];
  }
  out.apiVersion = apiVersion;
  out.kind = 'Event';
  fillEventZeros(out, apiVersion);
  return out;
}

/** Events in both versions, by definition. */
export const eventDefaults: Defaulters = {
  // Events: not defaults but what encoding/json writes for their unset fields (see fillEventZeros)
  'io.k8s.api.core.v1.Event': (e) => fillEventZeros(e, CORE_EVENT_VERSION),
  'io.k8s.api.events.v1.Event': (e) => fillEventZeros(e, EVENTS_V1_VERSION),
};
