// The fields an Event offers to field selectors, through core/v1 (involvedObject.*) and through
// events.k8s.io/v1 (regarding.*), read from either shape.
import { stringField as s, type KindFields } from '../../strategy.ts';

/** Core events, read from either the core/v1 or the events.k8s.io/v1 shape. */
function coreEventParts(o: any) {
  const inv = o?.involvedObject ?? o?.regarding ?? {};
  const reporting = s(o?.reportingComponent) || s(o?.reportingController);
  const sourceComponent = s(o?.source?.component) || s(o?.deprecatedSource?.component);
  return {
    kind: s(inv.kind),
    namespace: s(inv.namespace),
    name: s(inv.name),
    uid: s(inv.uid),
    apiVersion: s(inv.apiVersion),
    resourceVersion: s(inv.resourceVersion),
    fieldPath: s(inv.fieldPath),
    reason: s(o?.reason),
    reporting,
    source: sourceComponent || reporting,
    type: s(o?.type),
  };
}

/**
 * The field set of an event as one version names it: the object it is about under
 * involvedObject (core/v1) or regarding (events.k8s.io/v1), its reporter as reportingComponent
 * or reportingController.
 */
function eventFieldsAs(object: string, reporting: string): (o: any) => Record<string, string> {
  return (o) => {
    const e = coreEventParts(o);
    return {
      [`${object}.kind`]: e.kind,
      [`${object}.namespace`]: e.namespace,
      [`${object}.name`]: e.name,
      [`${object}.uid`]: e.uid,
      [`${object}.apiVersion`]: e.apiVersion,
      [`${object}.resourceVersion`]: e.resourceVersion,
      [`${object}.fieldPath`]: e.fieldPath,
      reason: e.reason,
      [reporting]: e.reporting,
      source: e.source,
      type: e.type,
    };
  };
}

/** Events through core/v1. */
export const coreEventFieldSet: KindFields = {
  accepted: [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
    'metadata.namespace',
    'metadata.name',
  ],
  fields: eventFieldsAs('involvedObject', 'reportingComponent'),
};

/** Events through events.k8s.io/v1. */
export const eventsV1FieldSet: KindFields = {
  accepted: [
    'reason',
    'regarding.kind',
    'regarding.namespace',
    'regarding.name',
    'regarding.uid',
    'regarding.apiVersion',
    'regarding.resourceVersion',
    'regarding.fieldPath',
    'reportingController',
    'source',
    'type',
    'metadata.namespace',
    'metadata.name',
  ],
  fields: eventFieldsAs('regarding', 'reportingController'),
};
