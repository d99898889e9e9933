// The storage codec: objects stored as JSON (CBOR for older rows and BigInt values), lazily
// decoded rows, and stored rows served as JSON that must give exactly the bytes JSON.stringify
// gives for the decoded object, with Go's escapes (goJsonText; apiVersion/kind set as the store
// serves them): JSON rows copied with those values replaced, CBOR rows transcoded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeObject, encodeObjectCbor, decodeObject, transcodeToJson, JsonOut, StoredRow } from '../../../../server/storage/rows/codec.ts';
import { goJsonText } from '../../../../server/go/json.ts';

/** What the object path serves: decode, set apiVersion/kind (present()), JSON.stringify, Go's escapes. */
function viaObject(data: Uint8Array, apiVersion: string, kind: string): string {
  const o = decodeObject(data);
  o.apiVersion = apiVersion;
  o.kind = kind;
  return goJsonText(JSON.stringify(o));
}

type Encode = (obj: unknown) => Uint8Array;

function transcoded(obj: unknown, apiVersion = 'v1', kind = 'ConfigMap', encodeRow: Encode = encodeObject): { ok: boolean; json: string; expected: string } {
  const data = encodeRow(obj);
  const out = new JsonOut(8); // tiny: growth is exercised too
  out.text('['); // something before: a failed transcode must leave it alone
  const ok = transcodeToJson(data, out, apiVersion, kind);
  const text = out.bytes().toString('utf8');
  assert.ok(text.startsWith('['));
  return { ok, json: text.slice(1), expected: viaObject(data, apiVersion, kind) };
}

test('served JSON of a stored row (JSON or CBOR) equals JSON.stringify of the decoded object, with Go\'s escapes', () => {
  const objects: unknown[] = [
    { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', namespace: 'ns', labels: { app: 'x' } }, data: { k: 'v' } },
    // served in another version: both replaced in place
    { kind: 'HorizontalPodAutoscaler', apiVersion: 'autoscaling/v2', metadata: { name: 'h' }, spec: { maxReplicas: 3 } },
    // absent apiVersion/kind are added at the end, apiVersion first (as present() assigns them)
    { metadata: { name: 'a' } },
    { kind: 'X', metadata: { name: 'a' } },
    { apiVersion: 'v0', metadata: {} },
    {},
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'esc' },
      data: {
        quote: 'a"b',
        backslash: 'a\\b',
        controls: '\u0000\u0001\b\t\n\u000b\f\r\u001f\u007f',
        unicode: 'é ü 日本 😀 \u2028\u2029 \ufffd',
        html: 'a<b> && c',
        empty: '',
        long: 'x'.repeat(5000) + '"' + 'y'.repeat(100),
        '': 'empty key',
        'ключ': 'значение',
      },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'n', generation: 7, annotations: {} },
      spec: {
        replicas: 0,
        big: 4294967295,
        bigger: 4294967296,
        huge: 2 ** 53 - 1,
        neg: -1,
        negBig: -4294967296,
        negHuger: -(2 ** 40),
        float: 0.1,
        negFloat: -2.5e-300,
        exp: 1e21,
        tiny: 5e-324,
        negZero: -0,
        bools: [true, false],
        nul: null,
        arr: [[], [[1]], {}, [null, 'a', 1.5]],
        objs: [{ a: { b: { c: { d: [1, 2, 3] } } } }],
      },
      // integer-like keys come first in a JS object and stay so through the codec
      data: { b: 1, '10': 2, '2': 3, a: 4 },
    },
    { apiVersion: 'v1', kind: 'List', items: Array.from({ length: 300 }, (_, i) => ({ i, name: `item-${i}` })) },
  ];
  for (const encodeRow of [encodeObject, encodeObjectCbor]) {
    for (const o of objects) {
      for (const [apiVersion, kind] of [['v1', 'ConfigMap'], ['apps/v1', 'Deployment'], ['g/v2', 'X']]) {
        const r = transcoded(o, apiVersion, kind, encodeRow);
        assert.equal(r.ok, true, JSON.stringify(o).slice(0, 200));
        assert.equal(r.json, r.expected);
      }
    }
  }
});

test('objects are stored as JSON text; BigInt values and older CBOR rows still decode', () => {
  const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'é' } };
  const data = encodeObject(obj);
  assert.equal(Buffer.from(data).toString('utf8'), goJsonText(JSON.stringify(obj)));
  assert.equal(data.byteLength, data.buffer.byteLength, 'a buffer of its own');
  assert.deepEqual(decodeObject(data), obj);
  assert.deepEqual(decodeObject(encodeObjectCbor(obj)), obj);
  const big = { metadata: { name: 'b' }, n: 2n ** 64n - 1n };
  const bigData = encodeObject(big);
  assert.notEqual(bigData[0], 0x7b, 'CBOR, which holds a BigInt');
  assert.deepEqual(decodeObject(bigData), big);
});

test('managedFields with shared (frozen) FieldsV1 are stored exactly as JSON.stringify writes them, with Go\'s escapes', () => {
  const frozenDeep = <T extends object>(o: T): T => {
    for (const v of Object.values(o)) if (typeof v === 'object' && v !== null) frozenDeep(v);
    return Object.freeze(o);
  };
  // Large enough to be written apart (a small FieldsV1 is written natively with the rest).
  const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f:key-${i}`, {}]));
  const shared = frozenDeep({ 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:data': { 'f:k"ey': {}, 'f:é\u2028': {}, ...many } });
  assert.ok(JSON.stringify(shared).length > 1024);
  const entry = (manager: string, fieldsV1: unknown, extra: Record<string, unknown> = {}) => ({ manager, operation: 'Update', apiVersion: 'v1', time: '2026-11-23T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1, ...extra });
  const object = (managedFields: unknown, before: Record<string, unknown> = {}) => ({
    ...before,
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'a', labels: { app: 'x' }, managedFields, resourceVersion: '7', annotations: { note: 'after the list' } },
    data: { k: 'v' },
  });
  const cases: unknown[] = [
    object([entry('a', shared)]),
    object([entry('a', shared), entry('b', { 'f:data': {} }), entry('c', shared, { subresource: 'status' })]),
    // The same frozen FieldsV1 again (now from the cache), under other keys around it.
    object([entry('b', shared, { fieldsV1: undefined }), entry('c', shared)], { spec: { managedFields: 'not metadata' } }),
    object([entry('a', frozenDeep({}))]),
    // What JSON.stringify writes its own way: undefined members, a Date, non-record entries.
    object([entry('a', shared, { time: undefined })]),
    object([entry('a', shared), { manager: 'd', time: new Date(0), fieldsV1: shared }]),
    object([entry('a', shared), null]),
    object([entry('a', shared), , entry('b', shared)]), // eslint-disable-line no-sparse-arrays
    object([entry('a', Object.freeze(Object.assign(Object.create(null), { 'f:x': {} })))]),
    object([]),
    object([entry('a', { 'f:fresh': {} })]),
    { ...object([entry('a', shared)]), __proto__: null },
    // Members JSON.stringify does not write.
    (() => {
      const o = object([]);
      Object.defineProperty(o.metadata, 'managedFields', { value: [entry('a', shared)], enumerable: false });
      return o;
    })(),
    (() => {
      const o = object([entry('a', shared)]);
      const meta = o.metadata;
      delete (o as { metadata?: unknown }).metadata;
      Object.defineProperty(o, 'metadata', { value: meta, enumerable: false });
      return o;
    })(),
  ];
  for (const c of cases) assert.equal(Buffer.from(encodeObject(c)).toString('utf8'), goJsonText(JSON.stringify(c)));
  // Only frozen FieldsV1 are remembered: one that is not may change between writes.
  const own: Record<string, unknown> = { 'f:data': {} };
  const changing = object([entry('a', shared), entry('b', own)]);
  assert.equal(Buffer.from(encodeObject(changing)).toString('utf8'), goJsonText(JSON.stringify(changing)));
  own['f:binaryData'] = {};
  assert.equal(Buffer.from(encodeObject(changing)).toString('utf8'), goJsonText(JSON.stringify(changing)));
  // The marker never leaks, whatever a client writes where the list was.
  const text = Buffer.from(encodeObject(object([entry('a', shared)]))).toString('utf8');
  assert.ok(!text.includes('hearth:'), text);
});

test('CBOR transcoding gives up (appending nothing) on what only the decoder reproduces', () => {
  const cases: unknown[] = [
    { metadata: { name: 'a' }, when: new Date(0) }, // a tag
    { metadata: { name: 'a' }, bytes: Buffer.from('ab') }, // a byte string
    { metadata: { name: 'a' }, u: undefined }, // left out by JSON.stringify
    { metadata: { name: 'a' }, s: 'lone \ud800 surrogate' },
    JSON.parse('{"metadata":{"name":"a"},"x":{"__proto__":{"y":1}}}'),
  ];
  for (const o of cases) {
    const r = transcoded(o, 'v1', 'ConfigMap', encodeObjectCbor);
    assert.equal(r.ok, false, JSON.stringify(o));
    assert.equal(r.json, '');
  }
  // undefined in an array is null in both
  const arr = transcoded({ metadata: {}, a: [undefined, 1] }, 'v1', 'ConfigMap', encodeObjectCbor);
  assert.equal(arr.ok, true);
  assert.equal(arr.json, arr.expected);
});

test('random JSON values are served exactly from JSON and CBOR rows', () => {
  let seed = 42;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const chars = ['a', 'Z', '0', ' ', '"', '\\', '\n', '\u0003', 'é', '日', '😀', '/', '\u007f'];
  const str = () => Array.from({ length: Math.floor(rand() * 12) }, () => chars[Math.floor(rand() * chars.length)]).join('');
  const value = (depth: number): unknown => {
    const r = rand();
    if (depth > 4 || r < 0.3) {
      const k = Math.floor(rand() * 6);
      return [str(), Math.floor(rand() * 1e6) - 5e5, rand() * 1e10 - 5e9, true, null, 2 ** Math.floor(rand() * 60)][k];
    }
    if (r < 0.6) return Array.from({ length: Math.floor(rand() * 5) }, () => value(depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(rand() * 6); i > 0; i--) o[rand() < 0.2 ? String(Math.floor(rand() * 20)) : str()] = value(depth + 1);
    return o;
  };
  for (let i = 0; i < 2000; i++) {
    const o: Record<string, unknown> = { kind: 'K', apiVersion: 'g/v1', metadata: { name: str() }, spec: value(0) };
    // top-level apiVersion/kind anywhere, or absent
    if (rand() < 0.3) delete o.kind;
    if (rand() < 0.3) delete o.apiVersion;
    if (rand() < 0.3) o.kind = o.kind ?? 'K';
    for (const encodeRow of [encodeObject, encodeObjectCbor]) {
      const r = transcoded(o, rand() < 0.5 ? 'g/v2' : 'g/v1', 'K', encodeRow);
      assert.equal(r.ok, true);
      assert.equal(r.json, r.expected);
    }
  }
});

test('StoredRow decodes on first use only, once', () => {
  const data = encodeObject({ metadata: { name: 'a' } });
  const row = new StoredRow(3, 'uid-1', data);
  assert.equal(row.rv, 3);
  assert.equal(row.uid, 'uid-1');
  const first = row.object;
  assert.deepEqual(first, { metadata: { name: 'a' } });
  assert.equal(row.object, first);
  row.object = { replaced: true };
  assert.deepEqual(row.object, { replaced: true });
});
