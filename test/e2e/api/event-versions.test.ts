// Events are one kind served by two groups, as in kube: core/v1 and events.k8s.io/v1 read, list,
// watch and write the same objects, each in its own field names, with Go's zero fields written;
// validation follows the version the request came through.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invalidCauses, useTestServer } from '../../helpers/server.ts';
import { DNS1123_SUBDOMAIN, QUALIFIED_NAME_PART } from '../../helpers/kube-messages.ts';

const s = useTestServer();

const CORE = '/api/v1/namespaces/default/events';
const NEW = '/apis/events.k8s.io/v1/namespaces/default/events';

const coreEvent = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name },
  involvedObject: { kind: 'Pod', namespace: 'default', name: 'web', uid: 'u1' },
  reason: 'BackOff',
  message: 'Back-off restarting',
  source: { component: 'kubelet', host: 'n1' },
  firstTimestamp: '2026-11-20T10:00:00Z',
  lastTimestamp: '2026-11-20T10:05:00Z',
  count: 3,
  type: 'Warning',
});

const newEvent = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata: { name },
  eventTime: '2026-11-20T10:00:00.123456Z',
  reportingController: 'example.com/scheduler',
  reportingInstance: 'scheduler-1',
  action: 'Binding',
  reason: 'Scheduled',
  regarding: { kind: 'Pod', namespace: 'default', name: 'web' },
  note: 'assigned to n1',
  type: 'Normal',
  ...extra,
});

test('an event written through core/v1 reads through events.k8s.io/v1 with its fields renamed, and back', async () => {
  const created = await s.request('POST', CORE, { body: coreEvent('old.1') });
  assert.equal(created.status, 201, created.text);
  // Go writes the unset fields of a core event: its source ({}), the reporting ones ("").
  const core = created.json();
  assert.equal(core.eventTime, undefined);
  assert.equal(core.reportingComponent, '');
  assert.equal(core.reportingInstance, '');

  const got = await s.request('GET', `${NEW}/old.1`);
  assert.equal(got.status, 200, got.text);
  const e = got.json();
  // In events.k8s.io/v1's field order, as kube writes it.
  assert.deepEqual(Object.keys(e), ['kind', 'apiVersion', 'metadata', 'reason', 'regarding', 'note', 'type', 'deprecatedSource', 'deprecatedFirstTimestamp', 'deprecatedLastTimestamp', 'deprecatedCount']);
  assert.equal(e.apiVersion, 'events.k8s.io/v1');
  assert.deepEqual(e.regarding, { kind: 'Pod', namespace: 'default', name: 'web', uid: 'u1' });
  assert.equal(e.note, 'Back-off restarting');
  assert.deepEqual(e.deprecatedSource, { component: 'kubelet', host: 'n1' });
  assert.equal(e.deprecatedFirstTimestamp, '2026-11-20T10:00:00Z');
  assert.equal(e.deprecatedCount, 3);
  assert.equal(e.eventTime, undefined);
  assert.equal(e.metadata.resourceVersion, core.metadata.resourceVersion);
  assert.equal(e.metadata.uid, core.metadata.uid);
});

test('an event written through events.k8s.io/v1 is a core event too: one object, one resourceVersion sequence', async () => {
  const created = await s.request('POST', NEW, { body: newEvent('new.1') });
  assert.equal(created.status, 201, created.text);
  const e = created.json();
  assert.equal(e.apiVersion, 'events.k8s.io/v1');
  assert.deepEqual(e.deprecatedSource, {});
  assert.equal(e.deprecatedFirstTimestamp, undefined);
  assert.equal(e.eventTime, '2026-11-20T10:00:00.123456Z');

  const core = (await s.request('GET', `${CORE}/new.1`)).json();
  assert.deepEqual(Object.keys(core), ['kind', 'apiVersion', 'metadata', 'involvedObject', 'reason', 'message', 'source', 'type', 'eventTime', 'action', 'reportingComponent', 'reportingInstance']);
  assert.equal(core.message, 'assigned to n1');
  assert.equal(core.reportingComponent, 'example.com/scheduler');
  assert.deepEqual(core.involvedObject, { kind: 'Pod', namespace: 'default', name: 'web' });
  assert.deepEqual(core.source, {});
  assert.equal(core.firstTimestamp, undefined);
  assert.equal(core.metadata.resourceVersion, e.metadata.resourceVersion);

  // Both lists hold both events, at the same resourceVersion.
  const coreList = (await s.request('GET', CORE)).json();
  const newList = (await s.request('GET', NEW)).json();
  assert.deepEqual(coreList.items.map((i: any) => i.metadata.name).sort(), ['new.1', 'old.1']);
  assert.deepEqual(newList.items.map((i: any) => i.metadata.name).sort(), ['new.1', 'old.1']);
  assert.equal(coreList.metadata.resourceVersion, newList.metadata.resourceVersion);
  assert.ok(newList.items.every((i: any) => i.apiVersion === 'events.k8s.io/v1' && i.involvedObject === undefined && i.regarding.name === 'web'));
  assert.ok(coreList.items.every((i: any) => i.apiVersion === 'v1' && i.regarding === undefined && i.involvedObject.name === 'web'));

  // Field selectors in each group's own names find events written through the other.
  const byRegarding = (await s.request('GET', `${NEW}?fieldSelector=${encodeURIComponent('reportingController=example.com/scheduler')}`)).json();
  assert.deepEqual(byRegarding.items.map((i: any) => i.metadata.name), ['new.1']);
  const byInvolved = (await s.request('GET', `${CORE}?fieldSelector=${encodeURIComponent('source=kubelet')}`)).json();
  assert.deepEqual(byInvolved.items.map((i: any) => i.metadata.name), ['old.1']);
});

test('a watch through events.k8s.io/v1 sees events written through core/v1, converted', async () => {
  const rv = (await s.request('GET', NEW)).json().metadata.resourceVersion;
  const watching = s.watch(`${NEW}?watch=1&resourceVersion=${rv}`, (events) => events.length >= 2);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal((await s.request('POST', CORE, { body: coreEvent('old.2') })).status, 201);
  assert.equal((await s.request('DELETE', `${CORE}/old.2`)).status, 200);
  const { events } = await watching;
  assert.deepEqual(events.map((e) => [e.type, e.object.apiVersion, e.object.metadata.name, e.object.note]), [
    ['ADDED', 'events.k8s.io/v1', 'old.2', 'Back-off restarting'],
    ['DELETED', 'events.k8s.io/v1', 'old.2', 'Back-off restarting'],
  ]);
});

test('events.k8s.io/v1 writes get the strict rules, core/v1 ones the legacy rules; paths are the core fields', async () => {
  assert.deepEqual(await invalidCauses(s, 'POST', NEW, newEvent('bad.1', { eventTime: undefined, type: 'Odd', deprecatedCount: 2, series: { count: 1 } })), [
    ['series.count', 'Invalid value: "": should be at least 2'],
    ['series.lastObservedTime', 'Required value'],
    ['eventTime', 'Required value'],
    ['type', 'Invalid value: "": has invalid value: Odd'],
    ['count', 'Invalid value: "": needs to be unset'],
  ]);
  // (a new-style event may be about an object in another namespace)
  assert.deepEqual(await invalidCauses(s, 'POST', NEW, newEvent('bad.2', { reportingController: 'bad name!', reportingInstance: 'x'.repeat(129), action: '', regarding: { kind: 'Pod', name: 'p', namespace: 'other' } })), [
    ['reportingController', `Invalid value: "bad name!": ${QUALIFIED_NAME_PART}`],
    ['reportingInstance', 'Invalid value: "": can have at most 128 characters'],
    ['action', 'Required value'],
  ]);
  // Through core/v1 the same new-style event is named in core's words, and the strict rules do not apply.
  const coreNew = { ...coreEvent('bad.3'), eventTime: '2026-11-20T10:00:00.000001Z', reportingComponent: '', reportingInstance: 'i', action: 'A', firstTimestamp: undefined };
  assert.deepEqual(await invalidCauses(s, 'POST', CORE, coreNew), [
    ['reportingComponent', 'Required value'],
    ['reportingComponent', 'Invalid value: "": name part must be non-empty'],
    ['reportingComponent', `Invalid value: "": ${QUALIFIED_NAME_PART}`],
  ]);
  // An old-style core event about an object in another namespace.
  assert.deepEqual(await invalidCauses(s, 'POST', CORE, { ...coreEvent('bad.4'), involvedObject: { kind: 'Pod', namespace: 'kube-system', name: 'p' } }), [
    ['involvedObject.namespace', 'Invalid value: "kube-system": does not match event.namespace'],
  ]);
  // Only events.k8s.io/v1 holds the name to the DNS subdomain rule; core/v1 only keeps it path-safe.
  assert.deepEqual(await invalidCauses(s, 'POST', NEW, newEvent('Web_Pod.5')), [
    ['metadata.name', `Invalid value: "Web_Pod.5": ${DNS1123_SUBDOMAIN}`],
  ]);
  assert.deepEqual(await invalidCauses(s, 'POST', CORE, coreEvent('a%b')), [['metadata.name', `Invalid value: "a%b": may not contain '%'`]]);
  for (const name of ['bad.1', 'bad.2', 'bad.3', 'bad.4', 'Web_Pod.5']) assert.equal((await s.request('GET', `${CORE}/${name}`)).status, 404);
  const legacyName = await s.request('POST', CORE, { body: coreEvent('Web_Pod.5') });
  assert.equal(legacyName.status, 201, legacyName.text);
});

test('through events.k8s.io/v1 only the series of an event may change; through core/v1 more may', async () => {
  assert.equal((await s.request('POST', NEW, { body: newEvent('upd.1') })).status, 201);
  const cur = (await s.request('GET', `${NEW}/upd.1`)).json();
  assert.deepEqual(await invalidCauses(s, 'PUT', `${NEW}/upd.1`, { ...cur, note: 'changed', regarding: { kind: 'Pod', namespace: 'default', name: 'db' } }), [
    ['involvedObject', 'Invalid value: core.ObjectReference{Kind:"Pod", Namespace:"default", Name:"db", UID:"", APIVersion:"", ResourceVersion:"", FieldPath:""}: field is immutable'],
    ['message', 'Invalid value: "changed": field is immutable'],
  ]);
  const series = await s.request('PUT', `${NEW}/upd.1`, { body: { ...cur, series: { count: 2, lastObservedTime: '2026-11-20T10:01:00.000000Z' } } });
  assert.equal(series.status, 200, series.text);
  assert.equal(series.json().series.count, 2);
  // core/v1 clients (the old event recorder) update counts and times in place.
  const core = (await s.request('GET', `${CORE}/old.1`)).json();
  const bumped = await s.request('PUT', `${CORE}/old.1`, { body: { ...core, count: 4, lastTimestamp: '2026-11-20T10:06:00Z' } });
  assert.equal(bumped.status, 200, bumped.text);
  assert.equal((await s.request('GET', `${NEW}/old.1`)).json().deprecatedCount, 4);
});

test('deleting through one group deletes the event from both', async () => {
  assert.equal((await s.request('POST', CORE, { body: coreEvent('gone.1') })).status, 201);
  assert.equal((await s.request('DELETE', `${NEW}/gone.1`)).status, 200);
  assert.equal((await s.request('GET', `${CORE}/gone.1`)).status, 404);
  assert.equal((await s.request('GET', `${NEW}/gone.1`)).status, 404);
});

test('kubectl get events shows events written through events.k8s.io/v1', async () => {
  assert.equal((await s.request('POST', NEW, { body: newEvent('kc.1', { note: 'seen by kubectl' }) })).status, 201);
  const r = await s.kubectl(['get', 'events', '-n', 'default', '-o', 'wide']);
  assert.equal(r.code, 0, r.stderr);
  const line = r.stdout.split('\n').find((l) => l.includes('seen by kubectl'));
  assert.ok(line, r.stdout);
  assert.match(line!, /Normal\s+Scheduled\s+pod\/web\s+.*example\.com\/scheduler/);
});
