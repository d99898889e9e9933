import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  compileJsonPath,
  compileSelectableFields,
  compileSimpleJsonPath,
  jsonPathParseError,
  JsonPathError,
  printResults,
} from '../../../../server/registry/crd/jsonpath.ts';
import { goJsonMarshal } from '../../../../server/go/json.ts';
import { goSprint, goFloat } from '../../../../server/go/fmt.ts';

/** Evaluates a template the way client-go's Execute prints it. */
function execute(template: string, input: unknown, allowMissingKeys = false): string {
  const p = compileJsonPath(template, { template: true, allowMissingKeys });
  return p.findResults(input).map(printResults).join('');
}

function executeError(template: string, input: unknown, allowMissingKeys = false): string {
  const p = compileJsonPath(template, { template: true, allowMissingKeys });
  try {
    p.findResults(input);
  } catch (e) {
    assert.ok(e instanceof JsonPathError, `${template}: ${e}`);
    return e.message;
  }
  return 'nil';
}

const nodes = {
  kind: 'List',
  items: [
    {
      kind: 'None',
      metadata: { name: '127.0.0.1', labels: { 'kubernetes.io/hostname': '127.0.0.1' } },
      status: { capacity: { cpu: '4' }, ready: true, addresses: [{ type: 'LegacyHostIP', address: '127.0.0.1' }] },
    },
    {
      kind: 'None',
      metadata: { name: '127.0.0.2', labels: { 'kubernetes.io/hostname': '127.0.0.2' } },
      status: {
        capacity: { cpu: '8' },
        ready: false,
        addresses: [
          { type: 'LegacyHostIP', address: '127.0.0.2' },
          { type: 'another', address: '127.0.0.3' },
        ],
      },
    },
  ],
  users: [
    { name: 'myself', user: {} },
    { name: 'e2e', user: { username: 'admin', password: 'secret' } },
  ],
};

const types = {
  bools: [true, false, true, false],
  integers: [1, 2, 3, 4],
  floats: [1.0, 2.2, 3.3, 4.0],
  strings: ['one', 'two', 'three', 'four'],
  interfaces: [true, 'one', 1, 1.1],
  maps: [
    { name: 'one', value: 1 },
    { name: 'two', value: 2.02 },
    { name: 'three', value: 3.03 },
    { name: 'four', value: 4.04 },
  ],
};

const containers = { spec: { containers: ['fake0', 'fake1', 'fake2', 'fake3', 'fake4', 'fake5'].map((name) => ({ name })) } };
const four = { spec: { containers: containers.spec.containers.slice(0, 4) } };

test('evaluation and printing match client-go (template, input, output)', () => {
  const cases: [string, unknown, string][] = [
    // plain text and quoted text
    ['hello jsonpath', null, 'hello jsonpath'],
    ['{"{"}', null, '{'],
    ['hello {.kind}', nodes, 'hello List'],
    // fields, maps and lists print as compact JSON with sorted keys
    ['{.items[0].status.capacity}', nodes, '{"cpu":"4"}'],
    ['{.bools}', types, '[true,false,true,false]'],
    ['{.floats}', types, '[1,2.2,3.3,4]'],
    ['{.interfaces}', types, '[true,"one",1,1.1]'],
    ['{.maps[0]}', types, '{"name":"one","value":1}'],
    ['{.maps[1].value}', types, '2.02'],
    // indices, negative indices, slices, steps
    ['{ .bools[0] }', types, 'true'],
    ['{ .bools[-1] }', types, 'false'],
    ['{ .integers[-2] }', types, '3'],
    ['{ .strings[0:2] }', types, 'one two'],
    ['{ .strings[:2] }', types, 'one two'],
    ['{ .strings[:4:2] }', types, 'one three'],
    ['{ .maps[1::2] }', types, '{"name":"two","value":2.02} {"name":"four","value":4.04}'],
    ['{.spec.containers[0].name}', four, 'fake0'],
    ['{.spec.containers[0:0].name}', four, ''],
    ['{.spec.containers[0:-1].name}', four, 'fake0 fake1 fake2'],
    ['{.spec.containers[-1:].name}', four, 'fake3'],
    ['{.spec.containers[-4].name}', four, 'fake0'],
    ['{.spec.containers[5:5].name}', four, ''],
    ['{.spec.containers[-5:-5].name}', four, ''],
    ['{.spec.containers[1:4:2].name}', containers, 'fake1 fake3'],
    ['{.spec.containers[0:6:5].name}', containers, 'fake0 fake5'],
    ['{.spec.containers[0:6:].name}', containers, 'fake0 fake1 fake2 fake3 fake4 fake5'],
    ['{.spec.containers[].name}', four, 'fake0'], // "[]" is [0:1] in client-go
    // wildcards and unions
    ['{.items[*].metadata.name}', nodes, '127.0.0.1 127.0.0.2'],
    ['{.items[*].status.addresses[*].address}', nodes, '127.0.0.1 127.0.0.2 127.0.0.3'],
    ['{.items[0].status.*}', nodes, '[{"address":"127.0.0.1","type":"LegacyHostIP"}] {"cpu":"4"} true'],
    ['{[1,3,4]}', [0, 1, 2, 3, 4], '1 3 4'],
    ["{.items[*]['metadata.name', 'status.capacity']}", nodes, '127.0.0.1 127.0.0.2 {"cpu":"4"} {"cpu":"8"}'],
    // bracket names: single quotes, text re-parsed as a dotted path
    ["{[0]['id']}", [{ id: 'i1' }], 'i1'],
    ["{['items'][1]['kind']}", nodes, 'None'],
    ["{['a.b']}", { a: { b: 'nested' }, 'a.b': 'flat' }, 'nested'],
    ["{['a\\.b']}", { a: { b: 'nested' }, 'a.b': 'flat' }, 'flat'],
    ['{.items[0].metadata.labels.kubernetes\\.io/hostname}', nodes, '127.0.0.1'],
    ['{$.kind}', nodes, 'List'],
    // recursive descent
    ['{..}', [1, 2, 3], '[1,2,3]'],
    ['{..address}', nodes, '127.0.0.1 127.0.0.2 127.0.0.3'],
    ['{...address}', nodes, '127.0.0.1 127.0.0.2 127.0.0.3'],
    ['{..name}', nodes, '127.0.0.1 127.0.0.2 myself e2e'],
    // filters
    ['{.users[?(@.name=="e2e")].user.password}', nodes, 'secret'],
    ["{.users[?(@.name=='e2e')].user.username}", nodes, 'admin'],
    ['{.users[?(@.name!="e2e")].name}', nodes, 'myself'],
    ['{.items[?(@.metadata.labels.kubernetes\\.io/hostname=="127.0.0.1")].kind}', nodes, 'None'],
    ['{.items[?(@..ready==true)].metadata.name}', nodes, '127.0.0.1'],
    ['{[?(@<5)]}', [2, 6, 3, 7], '2 3'],
    ['{[?(@<=3)]}', [2, 6, 3, 7], '2 3'],
    ['{[?(@>3)]}', [2, 6, 3, 7], '6 7'],
    ['{[?(@>=6)]}', [2, 6, 3, 7], '6 7'],
    ['{[?(@>1.5)]}', [1.25, 2.5, 3.75], '2.5 3.75'],
    ['{[?(@<"b")]}', ['c', 'a', 'b'], 'a'],
    ['{[?(@<"\uffff")]}', ['\u{1F600}', 'a'], 'a'], // Go orders strings by code point, not UTF-16 unit
    ['{.m.*}', { m: { '\u{1F600}': 1, '\uffff': 2, b: 3 } }, '3 2 1'],
    ['{[?(@.z)].id}', [{ id: 'i1', z: 1 }, { id: 'i2' }, { id: 'i3', z: null }], 'i1 i3'],
    ['{.a[?(@.x == "()")].y}', { a: [{ x: '()', y: 1 }, { x: ')', y: 2 }] }, '1'],
    ['{.a[?(@.x == "(\\"\\")")].y}', { a: [{ x: '("")', y: 1 }] }, '1'],
    // range / end
    ['{range .items[*]}{.metadata.name}, {end}{.kind}', nodes, '127.0.0.1, 127.0.0.2, List'],
    ['{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}', nodes, '[127.0.0.1, {"cpu":"4"}] [127.0.0.2, {"cpu":"8"}] '],
    ['{range .items[*]}{range .status.addresses[*]}{.address}, {end}{end}', nodes, '127.0.0.1, 127.0.0.2, 127.0.0.3, '],
    ['{range .items[*]}{.metadata.name}{"\\t"}{end}', nodes, '127.0.0.1\t127.0.0.2\t'],
    // scalars print with Go's %v; JSON null inside results prints "null"
    ['{.f}', { f: 1234567.5 }, '1.2345675e+06'],
    ['{.f}', { f: 0.00001 }, '1e-05'],
    ['{.n}', { n: null }, 'null'],
    ['{.html}', { html: { s: '<a&b>' } }, '{"s":"\\u003ca\\u0026b\\u003e"}'],
  ];
  for (const [template, input, want] of cases) assert.equal(execute(template, input), want, template);
});

test('filters in kube CRD columns tolerate missing keys when allowMissingKeys is on', () => {
  const data = { items: [{ metadata: { name: 'pod1', annotations: { color: 'blue' } } }, { metadata: { name: 'pod2' } }, { metadata: { name: 'pod4', annotations: { color: 'blue' } } }] };
  const t = '{.items[?(@.metadata.annotations.color=="blue")].metadata.name}';
  assert.equal(execute(t, data, true), 'pod1 pod4');
  assert.equal(executeError(t, data, false), 'annotations is not found');
  assert.equal(execute('{.hello}', nodes, true), '');
  assert.equal(executeError('{.hello}', nodes, false), 'hello is not found');
});

test('evaluation errors carry client-go messages', () => {
  const cases: [string, unknown, string][] = [
    ['{hello}', nodes, 'unrecognized identifier hello'],
    ['{.items[0].metadata[0]}', nodes, 'map[string]interface {} is not array or slice'],
    ['{.kind[0]}', nodes, 'string is not array or slice'],
    ['{.items[?(@.x<>10)]}', { items: [{ x: 1 }] }, 'unrecognized filter operator <>'],
    ['{range .items[*]}{@}{end}{end}', { items: [1] }, 'not in range, nothing to end'],
    ['{.spec.containers[-5].name}', four, 'array index out of bounds: index -1, length 4'],
    ['{.spec.containers[4].name}', four, 'array index out of bounds: index 4, length 4'],
    ['{.spec.containers[3:1].name}', four, 'starting index 3 is greater than ending index 1'],
    ['{.spec.containers[0:6:0].name}', containers, 'step must be > 0'],
    ['{.spec.containers[0:6:-1].name}', containers, 'step must be > 0'],
    ['{.m[?(@.a=="x")]}', { m: { a: 'x', b: 2 } }, 'map[a:x b:2] is not array or slice and cannot be filtered'],
    ['{[?(@<5.0)]}', [2, 6], 'incompatible types for comparison'],
    ['{[?(@<"5")]}', [2, 6], 'incompatible types for comparison'],
    ['{[?(@<true)]}', [true], 'invalid type for comparison'],
    ['{[?(@==1)]}', [[1]], 'invalid type for comparison'],
    ['{[?(@.a==1)]}', [{ a: null }], 'invalid type for comparison'],
    ['{[?(@.*==1)]}', [{ a: 1, b: 2 }], 'can only compare one element at a time'],
  ];
  for (const [template, input, want] of cases) assert.equal(executeError(template, input, true), want, template);
});

test('parse errors match client-go', () => {
  const cases: [string, string][] = [
    ['{.hello', 'unclosed action'],
    ['{*}', "unrecognized character in action: U+002A '*'"],
    ['{.a\t}', 'unrecognized character in action: U+0009'],
    ['{+12.3.0}', 'cannot parse number +12.3.0'],
    ['{[1}', 'unterminated array'],
    ['{[?(.price]}', 'unterminated filter'],
    ['{[?(@.a=="b")}', 'unclosed array expect ]'],
    ['{........}', 'invalid multiple recursive descent'],
    ['{..*}', "unrecognized character in action: U+002A '*'"],
    ['{.a["b"]}', 'invalid array index "b"'],
    ['{.a[x]}', 'invalid array index x'],
    ['{.a[-]}', 'array index - is not a number'],
    ['{.a[99999999999999999999]}', 'array index 99999999999999999999 is not a number'],
    ['{"abc}', 'unterminated quoted string'],
    ["{'a\\\"'}", `unquote string 'a\\"' error invalid syntax`],
    ['{.a\n}', 'unclosed action'],
    ['{.a[?(@.b=="x"', 'unterminated filter'],
  ];
  for (const [template, want] of cases) {
    assert.throws(() => compileJsonPath(template, { template: true }), (e: unknown) => e instanceof JsonPathError && e.message === want, template);
  }
  // jsonPathParseError wraps a CRD path in braces, as kube does
  assert.equal(jsonPathParseError('.spec.replicas'), undefined);
  assert.equal(jsonPathParseError(".metadata['name']"), undefined);
  assert.equal(jsonPathParseError('.status.conditions[?(@.type=="Ready")].status'), undefined);
  assert.equal(jsonPathParseError('.spec[0'), 'unterminated array');
  assert.equal(jsonPathParseError('.spec}{.x'), undefined, 'a path can close its brace and open another, like in kube');
  // quoted text unescapes like Go's strconv, \x adding raw UTF-8 bytes
  assert.equal(execute('{"a\\tb\\u00e9\\xc3\\xa9\\101"}', null), 'a\tbééA');
});

test('find returns the first result set as plain JSON values', () => {
  const obj = { spec: { replicas: 3, ratio: 0.5, tags: ['a', 'b'], on: false, none: null }, status: { conditions: [{ type: 'Ready', status: 'True' }] } };
  const cases: [string, unknown[]][] = [
    ['.spec.replicas', [3]],
    ['.spec.ratio', [0.5]],
    ['.spec.tags', [['a', 'b']]],
    ['.spec.tags[*]', ['a', 'b']],
    ['.spec.on', [false]],
    ['.spec.none', [null]],
    ['.spec.missing', []],
    ['.spec.replicas.deeper', []],
    ['.spec.none.deeper', []],
    ['.status.conditions[?(@.type=="Ready")].status', ['True']],
    ['.spec.tags[0]}{.spec.replicas', ['a']],
    ['.spec.replicas 2.0', [2]],
    ['.spec.tags[0].*', [97]], // the bytes of a string, as client-go yields them
  ];
  for (const [expr, want] of cases) assert.deepEqual(compileJsonPath(expr).find(obj), want, expr);
  assert.deepEqual(compileJsonPath('.spec.tags[0]}{.spec.replicas').findResults(obj), [['a'], [3]]);
  assert.deepEqual(compileJsonPath('.spec.replicas').findResults(null), [[]]);
  assert.equal(compileJsonPath('.spec.replicas').expr, '.spec.replicas');
  // a compiled path is reusable across objects (and a range template evaluates afresh each time)
  const p = compileJsonPath('{range .items[*]}{.n}{end}', { template: true });
  for (let i = 0; i < 3; i++) assert.equal(p.findResults({ items: [{ n: 1 }, { n: 2 }] }).map(printResults).join(''), '12');
});

test('Go value formatting', () => {
  const floats: [number, string][] = [
    [1.5, '1.5'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [123456.5, '123456.5'],
    [1234567.5, '1.2345675e+06'],
    [-2.5e-7, '-2.5e-07'],
    [1e21, '1e+21'],
    [1e100, '1e+100'],
    [0, '0'],
  ];
  for (const [f, want] of floats) assert.equal(goFloat(f), want, String(f));
  assert.equal(goSprint({ b: [1, 'x', null], a: { c: true } }), 'map[a:map[c:true] b:[1 x <nil>]]');
  assert.equal(goSprint(2.5), '2.5');
  assert.equal(goJsonMarshal({ z: 1, a: [1.5, 1e-7, 'q"<'], m: null }), '{"a":[1.5,1e-7,"q\\"\\u003c"],"m":null,"z":1}');
  assert.equal(goJsonMarshal('\u2028'), '"\\u2028"');
  assert.equal(printResults(['a', 1, { k: 'v' }, [1], null, true]), 'a 1 {"k":"v"} [1] null true');
});

test('simple paths: unstructured Nested* / SetNestedField semantics for scale', () => {
  const spec = compileSimpleJsonPath('.spec.replicas');
  assert.deepEqual(spec.fields, ['spec', 'replicas']);
  assert.deepEqual(spec.getInt64({ spec: { replicas: 3 } }), { value: 3, found: true });
  assert.deepEqual(spec.getInt64({ spec: {} }), { value: 0, found: false });
  assert.deepEqual(spec.getInt64({ spec: null }), { value: 0, found: false });
  assert.deepEqual(spec.getInt64({}), { value: 0, found: false });
  const errs: [unknown, string][] = [
    [{ spec: { replicas: 1.5 } }, '.spec.replicas accessor error: 1.5 is of the type float64, expected int64'],
    [{ spec: { replicas: '3' } }, '.spec.replicas accessor error: 3 is of the type string, expected int64'],
    [{ spec: { replicas: null } }, '.spec.replicas accessor error: <nil> is of the type <nil>, expected int64'],
    [{ spec: 'x' }, '.spec.replicas accessor error: x is of the type string, expected map[string]interface{}'],
    [{ spec: [1, 2] }, '.spec.replicas accessor error: [1 2] is of the type []interface {}, expected map[string]interface{}'],
  ];
  for (const [obj, want] of errs) assert.throws(() => spec.getInt64(obj), (e: unknown) => e instanceof JsonPathError && e.message === want, want);

  const sel = compileSimpleJsonPath('.status.selector');
  assert.deepEqual(sel.getString({ status: { selector: 'app=x' } }), { value: 'app=x', found: true });
  assert.deepEqual(sel.getString({ status: {} }), { value: '', found: false });
  assert.throws(() => sel.getString({ status: { selector: { matchLabels: {} } } }), /\.status\.selector accessor error: map\[matchLabels:map\[\]\] is of the type map\[string\]interface \{\}, expected string/);
  assert.deepEqual(sel.get({ status: { selector: null } }), { value: null, found: true });

  const deep = compileSimpleJsonPath('.spec.scale.replicas');
  const obj: Record<string, any> = { spec: { other: 1, scale: null } };
  deep.set(obj, 5);
  assert.deepEqual(obj, { spec: { other: 1, scale: { replicas: 5 } } });
  const empty: Record<string, any> = {};
  deep.set(empty, 2);
  assert.deepEqual(empty, { spec: { scale: { replicas: 2 } } });
  assert.throws(() => deep.set({ spec: { scale: 'x' } }, 1), (e: unknown) => e instanceof JsonPathError && e.message === 'value cannot be set because .spec.scale is not a map[string]interface{}');
  assert.throws(() => deep.set({ spec: [] }, 1), /value cannot be set because \.spec is not a map\[string\]interface\{\}/);
});

test('selectable fields: fmt.Sprint of the single value, "" when missing', () => {
  const fieldSet = compileSelectableFields(['.spec.color', '.spec.size', '.spec.enabled', '.status.phase']);
  assert.deepEqual(fieldSet({ spec: { color: 'blue', size: 3, enabled: true } }), { 'spec.color': 'blue', 'spec.size': '3', 'spec.enabled': 'true', 'status.phase': '' });
  assert.deepEqual(fieldSet({ spec: { color: null, size: 2.5 } }), { 'spec.color': '', 'spec.size': '2.5', 'spec.enabled': '', 'status.phase': '' });
  assert.throws(() => compileSelectableFields(['.spec.list[*]'])({ spec: { list: [1, 2] } }), { message: 'unexpectedly received more than one JSON path result' });
  assert.throws(() => compileSelectableFields(['.spec[0'])({}), { message: 'unexpected error parsing jsonPath: unterminated array' });
  assert.throws(() => compileSelectableFields(['.spec.x[5]'])({ spec: { x: [1] } }), { message: 'unexpected error finding value with jsonPath: array index out of bounds: index 5, length 1' });
});
