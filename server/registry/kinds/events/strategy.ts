// Events as kube validates them (ValidateEventCreate, ValidateEventUpdate): every event passes
// the legacy rules; one written through events.k8s.io/v1 also the strict ones (an event time, a
// type of Normal or Warning, none of the deprecated fields, and on update nothing but its series
// may change). kube validates the core form whichever group the request came through, so its
// field paths are the core ones (message, involvedObject, count ...), except that the
// reporting controller is named as the request's version names it.
import type { Obj, Strategy } from '../../strategy.ts';
import { deepEqual, isPlainObject } from '../../../util/json.ts';
import { isDNS1123Subdomain, isQualifiedName } from '../../../validation/names.ts';
import { goTime } from '../../../go/time.ts';
import { goQuote } from '../../../go/strconv.ts';
import { invalidError, requiredError, type FieldError } from '../../../validation/field.ts';
import { convertEvent, CORE_EVENT_VERSION } from './conversion.ts';

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {});
/** A time that is set (Go's zero time is written as null). */
const isSet = (t: unknown): boolean => typeof t === 'string' && t !== '';

const REPORTING_INSTANCE_LENGTH_LIMIT = 128;
const ACTION_LENGTH_LIMIT = 128;
const REASON_LENGTH_LIMIT = 128;
const NOTE_LENGTH_LIMIT = 1024;

/** Go's length of a string: its UTF-8 bytes. */
const byteLength = (s: string): number => Buffer.byteLength(s, 'utf8');

/** The event in its core form, and whether the request came through core/v1 (legacy rules only). */
function coreForm(event: Obj): { e: Obj; legacy: boolean } {
  const legacy = event.apiVersion === CORE_EVENT_VERSION;
  return { e: legacy ? event : convertEvent(event, CORE_EVENT_VERSION), legacy };
}

function legacyErrors(e: Obj, legacy: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const reportingField = legacy ? 'reportingComponent' : 'reportingController';
  const ns = str(e.metadata?.namespace);
  const involvedNs = str(obj(e.involvedObject).namespace);
  const notMatching = () => invalidError('involvedObject.namespace', goQuote(involvedNs), 'does not match event.namespace');
  if (!isSet(e.eventTime)) {
    // An old-style event: its namespace is the involved object's (or default, for old clients).
    if (involvedNs === '' ? ns !== '' && ns !== 'default' : ns !== involvedNs) errs.push(notMatching());
  } else {
    if (involvedNs === '' && ns !== 'default' && ns !== 'kube-system') errs.push(notMatching());
    const controller = str(e.reportingComponent);
    if (controller === '') errs.push(requiredError(reportingField));
    for (const m of isQualifiedName(controller)) errs.push(invalidError(reportingField, goQuote(controller), m));
    const instance = str(e.reportingInstance);
    if (instance === '') errs.push(requiredError('reportingInstance'));
    if (byteLength(instance) > REPORTING_INSTANCE_LENGTH_LIMIT) errs.push(invalidError('reportingInstance', '""', `can have at most ${REPORTING_INSTANCE_LENGTH_LIMIT} characters`));
    const action = str(e.action);
    if (action === '') errs.push(requiredError('action'));
    if (byteLength(action) > ACTION_LENGTH_LIMIT) errs.push(invalidError('action', '""', `can have at most ${ACTION_LENGTH_LIMIT} characters`));
    const reason = str(e.reason);
    if (reason === '') errs.push(requiredError('reason'));
    if (byteLength(reason) > REASON_LENGTH_LIMIT) errs.push(invalidError('reason', '""', `can have at most ${REASON_LENGTH_LIMIT} characters`));
    if (byteLength(str(e.message)) > NOTE_LENGTH_LIMIT) errs.push(invalidError('message', '""', `can have at most ${NOTE_LENGTH_LIMIT} characters`));
  }
  for (const m of isDNS1123Subdomain(ns)) errs.push(invalidError('namespace', goQuote(ns), m));
  return errs;
}

function seriesErrors(e: Obj): FieldError[] {
  if (!isPlainObject(e.series)) return [];
  const errs: FieldError[] = [];
  const count = typeof e.series.count === 'number' ? e.series.count : 0;
  if (count < 2) errs.push(invalidError('series.count', '""', 'should be at least 2'));
  if (!isSet(e.series.lastObservedTime)) errs.push(requiredError('series.lastObservedTime'));
  return errs;
}

function validateEvent(event: Obj): FieldError[] {
  const { e, legacy } = coreForm(event);
  const errs = legacyErrors(e, legacy);
  if (legacy) return errs;
  errs.push(...seriesErrors(e));
  if (!isSet(e.eventTime)) errs.push(requiredError('eventTime'));
  const type = str(e.type);
  if (type !== 'Normal' && type !== 'Warning') errs.push(invalidError('type', '""', `has invalid value: ${type}`));
  if (isSet(e.firstTimestamp)) errs.push(invalidError('firstTimestamp', '""', 'needs to be unset'));
  if (isSet(e.lastTimestamp)) errs.push(invalidError('lastTimestamp', '""', 'needs to be unset'));
  if (typeof e.count === 'number' && e.count !== 0) errs.push(invalidError('count', '""', 'needs to be unset'));
  const source = obj(e.source);
  if (str(source.component) !== '' || str(source.host) !== '') errs.push(invalidError('source', '""', 'needs to be unset'));
  return errs;
}

/** An object reference as Go's %#v prints the internal core.ObjectReference. */
function goObjectReference(v: unknown): string {
  if (!isPlainObject(v)) return 'null';
  const f = (k: string) => goQuote(str(v[k]));
  return `core.ObjectReference{Kind:${f('kind')}, Namespace:${f('namespace')}, Name:${f('name')}, UID:${f('uid')}, APIVersion:${f('apiVersion')}, ResourceVersion:${f('resourceVersion')}, FieldPath:${f('fieldPath')}}`;
}

/** Each field, as ValidateImmutableField prints its new value. */
const IMMUTABLE: [string, (v: unknown) => string][] = [
  ['involvedObject', goObjectReference],
  ['reason', (v) => goQuote(str(v))],
  ['message', (v) => goQuote(str(v))],
  ['source', (v) => `core.EventSource{Component:${goQuote(str(obj(v).component))}, Host:${goQuote(str(obj(v).host))}}`],
  ['firstTimestamp', goTime],
  ['lastTimestamp', goTime],
  ['count', (v) => String(typeof v === 'number' ? v : 0)],
  // kube checks the reason twice, and reports it twice.
  ['reason', (v) => goQuote(str(v))],
  ['type', (v) => goQuote(str(v))],
  ['eventTime', goTime],
  ['action', (v) => goQuote(str(v))],
  ['related', goObjectReference],
  ['reportingController', (v) => goQuote(str(v))],
  ['reportingInstance', (v) => goQuote(str(v))],
];

/** The core field each immutable field's value is read from (the path printed is kube's). */
const CORE_FIELD: Record<string, string> = { reportingController: 'reportingComponent' };

/** A zero value as the core form writes it and Go compares it: unset. */
const zeroed = (v: unknown): unknown => (v === null || v === '' || v === 0 || (isPlainObject(v) && Object.keys(v).length === 0) ? undefined : v);

function validateEventUpdate(event: Obj, old: Obj): FieldError[] {
  const { e, legacy } = coreForm(event);
  const errs = legacyErrors(e, legacy);
  if (legacy) return errs;
  const { e: o } = coreForm(old);
  if (!deepEqual(zeroed(e.series) ?? null, zeroed(o.series) ?? null)) errs.push(...seriesErrors(e));
  for (const [field, print] of IMMUTABLE) {
    const k = CORE_FIELD[field] ?? field;
    if (!deepEqual(zeroed(e[k]) ?? null, zeroed(o[k]) ?? null)) errs.push(invalidError(field, print(e[k]), 'field is immutable'));
  }
  return errs;
}

/** Events through core/v1 and through events.k8s.io/v1: one strategy, on the core form. */
export const eventStrategy: Strategy = { reportsRequired: true, validate: validateEvent, validateUpdate: (o: Obj, old: Obj) => validateEventUpdate(o, old) };
