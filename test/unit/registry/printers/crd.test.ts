import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  cellForJSONValue,
  crdTablePrinter,
  OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION,
  OBJECT_META_NAME_DESCRIPTION,
  parseQueryTime,
} from '../../../../server/registry/printers/crd.ts';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const S = 1000;
const M = 60 * S;
const H = 60 * M;
const ago = (ms: number) => new Date(NOW - ms).toISOString().replace('.000Z', 'Z');

// null cells are what kubectl renders as "<none>"; "" renders blank.

test('header: Name, then each column with its type, format, description and priority', () => {
  const p = crdTablePrinter([
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', description: 'Desired replicas' },
    { name: 'Ready', type: 'string', format: 'byte', jsonPath: '.status.conditions[?(@.type=="Ready")].status', priority: 1 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ]);
  assert.equal(p.error, undefined);
  assert.deepEqual(p.columns, [
    { name: 'Name', type: 'string', format: 'name', description: OBJECT_META_NAME_DESCRIPTION, priority: 0 },
    { name: 'Replicas', type: 'integer', format: '', description: 'Desired replicas', priority: 0 },
    {
      name: 'Ready',
      type: 'string',
      format: 'byte',
      description: 'Custom resource definition column (in JSONPath format): .status.conditions[?(@.type=="Ready")].status',
      priority: 1,
    },
    { name: 'Age', type: 'date', format: '', description: 'Custom resource definition column (in JSONPath format): .metadata.creationTimestamp', priority: 0 },
  ]);
  assert.match(OBJECT_META_NAME_DESCRIPTION, /^Name must be unique within a namespace\. Is required when creating resources/);
});

test('no additionalPrinterColumns: kube serves Name and a date Age column', () => {
  for (const cols of [undefined, null, []]) {
    const p = crdTablePrinter(cols);
    assert.deepEqual(p.columns, [
      { name: 'Name', type: 'string', format: 'name', description: OBJECT_META_NAME_DESCRIPTION, priority: 0 },
      { name: 'Age', type: 'date', format: '', description: OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, priority: 0 },
    ]);
    assert.deepEqual(p.cells({ metadata: { name: 'w', creationTimestamp: ago(3 * H + 25 * M) } }, NOW), ['w', '3h25m']);
    assert.deepEqual(p.cells({ metadata: { name: 'w' } }, NOW), ['w', null]);
  }
});

test('cells by column type (jsonPath, type, object, expected cell)', () => {
  const obj = {
    metadata: { name: 'demo', creationTimestamp: ago(12 * H + 30 * M), labels: { b: '2', a: '1' } },
    spec: {
      replicas: 3,
      ratio: 0.75,
      big: 3.99,
      negative: -2.5,
      enabled: true,
      text: 'hello',
      numText: '42',
      empty: '',
      none: null,
      servers: [{ hosts: ['foo'] }, { hosts: ['bar', 'baz'] }],
      html: '<b>&',
      when: ago(90 * S),
      future: new Date(NOW + 5 * M).toISOString(),
      offset: '2025-06-01T13:00:00+02:00',
      shortHour: '2025-06-01T9:00:00Z',
      fraction: '2025-06-01T11:58:59.876543219Z',
      comma: '2025-06-01T11:59:00,5Z',
      zero: '0001-01-01T00:00:00Z',
      nullText: 'null',
      lower: '2025-06-01t11:00:00z',
      badDay: '2025-02-30T00:00:00Z',
      badHour: '2025-06-01T24:00:00Z',
      dateOnly: '2025-06-01',
      ancient: '1700-01-01T00:00:00Z',
    },
    status: {
      conditions: [
        { type: 'Synced', status: 'False' },
        { type: 'Ready', status: 'True' },
      ],
    },
  };
  const cases: [string, string, unknown][] = [
    // string: printed as client-go's jsonpath prints one value
    ['.spec.text', 'string', 'hello'],
    ['.spec.empty', 'string', ''],
    ['.spec.replicas', 'string', '3'],
    ['.spec.ratio', 'string', '0.75'],
    ['.spec.enabled', 'string', 'true'],
    ['.spec.servers[1].hosts', 'string', '["bar","baz"]'],
    ['.metadata.labels', 'string', '{"a":"1","b":"2"}'],
    ['.spec.servers[*].hosts', 'string', '["foo"]'], // only the first result is used
    ['.spec.html', 'string', '<b>&'],
    ['.spec.none', 'string', '<no value>'],
    ['.spec.missing', 'string', null],
    ['.status.conditions[?(@.type=="Ready")].status', 'string', 'True'],
    ['.status.conditions[?(@.type=="Gone")].status', 'string', null],
    ['.status.conditions[5].status', 'string', null], // evaluation error: out of bounds
    ['.spec.text[0]', 'string', null], // evaluation error: string is not an array
    // integer: integers as is, fractional numbers truncated, anything else null
    ['.spec.replicas', 'integer', 3],
    ['.spec.big', 'integer', 3],
    ['.spec.negative', 'integer', -2],
    ['.spec.numText', 'integer', null],
    ['.spec.enabled', 'integer', null],
    ['.spec.none', 'integer', null],
    ['.spec.missing', 'integer', null],
    // number
    ['.spec.replicas', 'number', 3],
    ['.spec.ratio', 'number', 0.75],
    ['.spec.text', 'number', null],
    // boolean
    ['.spec.enabled', 'boolean', true],
    ['.spec.text', 'boolean', null],
    ['.spec.replicas', 'boolean', null],
    // date: RFC 3339 (as Go's time.Parse reads it) to an age
    ['.metadata.creationTimestamp', 'date', '12h'],
    ['.spec.when', 'date', '90s'],
    ['.spec.future', 'date', '<invalid>'],
    ['.spec.offset', 'date', '60m'],
    ['.spec.shortHour', 'date', '3h'],
    ['.spec.fraction', 'date', '60s'],
    ['.spec.comma', 'date', '59s'],
    ['.spec.empty', 'date', '<unknown>'],
    ['.spec.nullText', 'date', '<unknown>'],
    ['.spec.zero', 'date', '<unknown>'],
    ['.spec.text', 'date', '<invalid>'],
    ['.spec.lower', 'date', '<invalid>'],
    ['.spec.badDay', 'date', '<invalid>'],
    ['.spec.badHour', 'date', '<invalid>'],
    ['.spec.dateOnly', 'date', '<invalid>'],
    ['.spec.ancient', 'date', '292y'], // time.Since saturates at the largest Duration
    ['.spec.replicas', 'date', null],
    ['.spec.none', 'date', null],
    // a type kube does not know
    ['.spec.text', 'object', null],
  ];
  for (const [jsonPath, type, want] of cases) {
    const p = crdTablePrinter([{ name: 'C', type, jsonPath }]);
    assert.deepEqual(p.cells(obj, NOW), ['demo', want], `${type} ${jsonPath}`);
  }
});

test('one compiled printer serves many objects; a missing name is ""', () => {
  const p = crdTablePrinter([
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
  ]);
  assert.deepEqual(p.cells({ metadata: { name: 'a' }, spec: { replicas: 1 }, status: { phase: 'Running' } }, NOW), ['a', 1, 'Running']);
  assert.deepEqual(p.cells({ metadata: { name: 'b' }, spec: {} }, NOW), ['b', null, null]);
  assert.deepEqual(p.cells({}, NOW), ['', null, null]);
  assert.equal(p.cells({}, NOW).length, p.columns.length);
});

test('a column that does not parse ends the column list, with kube\'s message', () => {
  const p = crdTablePrinter([
    { name: 'Good', type: 'string', jsonPath: '.spec.a' },
    { name: 'Bad', type: 'string', jsonPath: '.spec[0' },
    { name: 'After', type: 'string', jsonPath: '.spec.b' },
  ]);
  assert.equal(p.error, 'unrecognized column definition ".spec[0"');
  assert.deepEqual(p.columns.map((c) => c.name), ['Name', 'Good']);
  assert.deepEqual(p.cells({ metadata: { name: 'x' }, spec: { a: 'A', b: 'B' } }, NOW), ['x', 'A']);
  // the v1beta1 field spelling is read too
  assert.deepEqual(crdTablePrinter([{ name: 'Old', type: 'string', JSONPath: '.spec.a' }]).cells({ metadata: { name: 'x' }, spec: { a: 'A' } }, NOW), ['x', 'A']);
});

test('cellForJSONValue and parseQueryTime directly', () => {
  assert.equal(cellForJSONValue('integer', 42, NOW), 42);
  assert.equal(cellForJSONValue('integer', 3.14, NOW), 3);
  assert.equal(cellForJSONValue('number', 42, NOW), 42);
  assert.equal(cellForJSONValue('number', true, NOW), null);
  assert.equal(cellForJSONValue('string', 'foo', NOW), 'foo');
  assert.equal(cellForJSONValue('string', 42, NOW), null);
  assert.equal(cellForJSONValue('date', new Date(NOW + 12 * H + 30 * M).toISOString(), NOW), '<invalid>');
  assert.equal(cellForJSONValue('unknown', 'foo', NOW), null);
  assert.equal(parseQueryTime('2024-02-29T23:59:59Z'), Date.parse('2024-02-29T23:59:59Z'));
  assert.equal(parseQueryTime('2023-02-29T00:00:00Z'), undefined);
  assert.equal(parseQueryTime('2024-01-01T00:00:00-24:00'), Date.parse('2024-01-02T00:00:00Z'));
  assert.equal(parseQueryTime('2024-01-01T00:00:00+25:00'), undefined);
  assert.equal(parseQueryTime('0099-01-01T00:00:00Z'), new Date('0099-01-01T00:00:00Z').getTime()); // not 1999, as Date.UTC would read it
});
