import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { ResourceCatalog } from '../../../server/schema/catalog.ts';
import { TypeModel } from '../../../server/schema/model.ts';
import { OpenApi } from '../../../server/http/openapi.ts';
import {
  OPENAPI_V2_PROTOBUF,
  OPENAPI_V2_PROTOBUF_ALT,
  OPENAPI_V2_PROTOBUF_CONTENT_TYPE,
  encodeOpenApiV2Document,
  openApiV2ProtobufContentType,
  toYaml,
  wantsOpenApiV2Protobuf,
} from '../../../server/http/openapi-v2-proto.ts';
import { dbl, ld, sint, str, vint } from '../../helpers/protobuf-wire.ts';

// ---------------------------------------------------------------------------------------------
// A small generic protobuf reader: every field of a message, by number, in wire order.

type Field = { wireType: number; varint?: bigint; bytes?: Buffer; fixed64?: Buffer };

class Msg {
  readonly fields = new Map<number, Field[]>();
  constructor(readonly buf: Buffer) {
    let pos = 0;
    const varint = (): bigint => {
      let result = 0n;
      let shift = 0n;
      for (;;) {
        if (pos >= buf.length) throw new Error('truncated varint');
        const b = buf[pos++]!;
        result |= BigInt(b & 0x7f) << shift;
        if ((b & 0x80) === 0) return result;
        shift += 7n;
        if (shift > 63n) throw new Error('varint too long');
      }
    };
    while (pos < buf.length) {
      const key = Number(varint());
      const field = key >>> 3;
      const wireType = key & 7;
      assert.ok(field > 0, 'field number 0');
      let f: Field;
      if (wireType === 0) f = { wireType, varint: varint() };
      else if (wireType === 1) {
        f = { wireType, fixed64: buf.subarray(pos, pos + 8) };
        pos += 8;
      } else if (wireType === 2) {
        const len = Number(varint());
        if (pos + len > buf.length) throw new Error('truncated length-delimited field');
        f = { wireType, bytes: buf.subarray(pos, pos + len) };
        pos += len;
      } else throw new Error(`unexpected wire type ${wireType}`);
      const list = this.fields.get(field) ?? [];
      list.push(f);
      this.fields.set(field, list);
    }
  }
  all(n: number): Field[] {
    return this.fields.get(n) ?? [];
  }
  has(n: number): boolean {
    return this.fields.has(n);
  }
  msg(n: number): Msg | undefined {
    const f = this.all(n).at(-1);
    if (!f) return undefined;
    assert.equal(f.wireType, 2, `field ${n} is not length-delimited`);
    return new Msg(f.bytes!);
  }
  msgs(n: number): Msg[] {
    return this.all(n).map((f) => {
      assert.equal(f.wireType, 2);
      return new Msg(f.bytes!);
    });
  }
  str(n: number): string {
    const f = this.all(n).at(-1);
    if (!f) return '';
    assert.equal(f.wireType, 2);
    return f.bytes!.toString('utf8');
  }
  strs(n: number): string[] {
    return this.all(n).map((f) => f.bytes!.toString('utf8'));
  }
  bool(n: number): boolean {
    const f = this.all(n).at(-1);
    if (!f) return false;
    assert.equal(f.wireType, 0);
    return f.varint !== 0n;
  }
  int(n: number): bigint {
    const f = this.all(n).at(-1);
    return f ? BigInt.asIntN(64, f.varint!) : 0n;
  }
  double(n: number): number {
    const f = this.all(n).at(-1);
    if (!f) return 0;
    assert.equal(f.wireType, 1);
    return f.fixed64!.readDoubleLE(0);
  }
}

/** repeated Named* { name = 1; value = 2 } as a Map of name -> value message. */
function named(list: Msg[]): Map<string, Msg> {
  const out = new Map<string, Msg>();
  for (const m of list) out.set(m.str(1), m.msg(2)!);
  return out;
}

/** repeated NamedAny vendor_extension -> name -> Any.yaml (field 2) */
function extensions(list: Msg[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of list) out.set(m.str(1), m.msg(2)!.str(2));
  return out;
}

// Field numbers from gnostic openapiv2/OpenAPIv2.proto (package openapi.v2).
const DOC = { swagger: 1, info: 2, paths: 8, definitions: 9, security: 12, securityDefinitions: 13 };
const PATH_ITEM = { get: 2, put: 3, post: 4, delete: 5, patch: 8, parameters: 9 };
const OP = { tags: 1, description: 3, operationId: 5, produces: 6, consumes: 7, parameters: 8, responses: 9, schemes: 10, ext: 13 };
const SCHEMA = { ref: 1, format: 2, description: 4, required: 19, enum: 20, additionalProperties: 21, type: 22, items: 23, allOf: 24, properties: 25, ext: 31 };

let cached: { json: any; bytes: Buffer; doc: Msg } | undefined;
function realDocument(): { json: any; bytes: Buffer; doc: Msg } {
  if (!cached) {
    const catalog = ResourceCatalog.loadBuiltins();
    const o = new OpenApi(catalog, TypeModel.loadBuiltins(), catalog.kubernetesVersion);
    const json = JSON.parse(o.v2().body.toString('utf8'));
    const bytes = encodeOpenApiV2Document(json);
    cached = { json, bytes, doc: new Msg(bytes) };
  }
  return cached;
}

/** Decode a ParametersItem into a flat description. */
function describeParam(item: Msg): { kind: string; name: string; in: string; type: string; required: boolean; uniqueItems: boolean; ref?: string } {
  if (item.has(2)) {
    const ref = item.msg(2)!;
    return { kind: 'ref', name: '', in: '', type: '', required: false, uniqueItems: false, ref: ref.str(1) };
  }
  const p = item.msg(1)!;
  if (p.has(1)) {
    const body = p.msg(1)!;
    return { kind: 'body', name: body.str(2), in: body.str(3), type: '', required: body.bool(4), uniqueItems: false };
  }
  const nb = p.msg(2)!;
  if (nb.has(3)) {
    const q = nb.msg(3)!; // QueryParameterSubSchema: required 1, in 2, description 3, name 4, type 6, unique_items 20
    return { kind: 'query', name: q.str(4), in: q.str(2), type: q.str(6), required: q.bool(1), uniqueItems: q.bool(20) };
  }
  if (nb.has(4)) {
    const q = nb.msg(4)!; // PathParameterSubSchema: required 1, in 2, description 3, name 4, type 5, unique_items 19
    return { kind: 'path', name: q.str(4), in: q.str(2), type: q.str(5), required: q.bool(1), uniqueItems: q.bool(19) };
  }
  throw new Error('unexpected NonBodyParameter oneof');
}

// ---------------------------------------------------------------------------------------------

test('the real v2 document: swagger, info, security', () => {
  const { json, doc } = realDocument();
  assert.equal(doc.str(DOC.swagger), '2.0');
  const info = doc.msg(DOC.info)!;
  assert.equal(info.str(1), 'Kubernetes');
  assert.equal(info.str(2), json.info.version);
  assert.match(info.str(2), /^v1\.\d+/);

  // securityDefinitions: BearerToken is an ApiKeySecurity (oneof field 2).
  const secDefs = named(doc.msg(DOC.securityDefinitions)!.msgs(1));
  const bearer = secDefs.get('BearerToken')!.msg(2)!;
  assert.equal(bearer.str(1), 'apiKey');
  assert.equal(bearer.str(2), 'authorization');
  assert.equal(bearer.str(3), 'header');
  // security: [{BearerToken: []}] -> SecurityRequirement{NamedStringArray{name, StringArray{}}}
  const reqs = doc.msgs(DOC.security);
  assert.equal(reqs.length, 1);
  const pair = reqs[0]!.msgs(1)[0]!;
  assert.equal(pair.str(1), 'BearerToken');
  assert.ok(pair.has(2), 'an empty StringArray is still present');
  assert.deepEqual(pair.msg(2)!.strs(1), []);
});

test('the real v2 document: every path and definition is there, in order', () => {
  const { json, doc } = realDocument();
  const paths = doc.msg(DOC.paths)!.msgs(2).map((m) => m.str(1));
  assert.deepEqual(paths, Object.keys(json.paths));
  const defs = doc.msg(DOC.definitions)!.msgs(1).map((m) => m.str(1));
  assert.deepEqual(defs, Object.keys(json.definitions));
});

test('deployment patch operation: parameters, responses and extensions', () => {
  const { doc } = realDocument();
  const paths = named(doc.msg(DOC.paths)!.msgs(2));
  const item = paths.get('/apis/apps/v1/namespaces/{namespace}/deployments/{name}')!;
  assert.ok(item, 'deployment item path present');
  const patch = item.msg(PATH_ITEM.patch)!;
  assert.ok(patch, 'patch operation present');
  assert.equal(patch.str(OP.operationId), 'patchAppsV1NamespacedDeployment');
  assert.deepEqual(patch.strs(OP.tags), ['apps_v1']);
  assert.deepEqual(patch.strs(OP.schemes), ['https']);
  assert.ok(patch.strs(OP.consumes).includes('application/strategic-merge-patch+json'));
  assert.ok(patch.strs(OP.produces).includes('application/json'));

  const params = patch.msgs(OP.parameters).map(describeParam);
  const fv = params.find((p) => p.name === 'fieldValidation');
  assert.deepEqual(fv, { kind: 'query', name: 'fieldValidation', in: 'query', type: 'string', required: false, uniqueItems: true });
  const body = params.find((p) => p.kind === 'body')!;
  assert.deepEqual(body, { kind: 'body', name: 'body', in: 'body', type: '', required: true, uniqueItems: false });
  // The body parameter's schema is a $ref to meta/v1 Patch.
  const bodyMsg = patch.msgs(OP.parameters).find((m) => m.msg(1)?.has(1))!.msg(1)!.msg(1)!;
  assert.equal(bodyMsg.msg(5)!.str(SCHEMA.ref), '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch');
  assert.equal(params.find((p) => p.name === 'force')!.type, 'boolean');

  // Path-level parameters are PathParameterSubSchema with required = true.
  const pathParams = item.msgs(PATH_ITEM.parameters).map(describeParam);
  assert.deepEqual(
    pathParams.filter((p) => p.kind === 'path').map((p) => [p.name, p.required, p.type]),
    [
      ['name', true, 'string'],
      ['namespace', true, 'string'],
    ],
  );
  assert.ok(pathParams.some((p) => p.kind === 'query' && p.name === 'pretty'));

  // Responses: 200/201 with a Schema $ref, 401 without schema.
  const codes = named(patch.msg(OP.responses)!.msgs(1));
  assert.deepEqual([...codes.keys()], ['200', '201', '401']);
  const ok = codes.get('200')!.msg(1)!; // ResponseValue.response
  assert.equal(ok.str(1), 'OK');
  assert.equal(ok.msg(2)!.msg(1)!.str(SCHEMA.ref), '#/definitions/io.k8s.api.apps.v1.Deployment');
  const unauthorized = codes.get('401')!.msg(1)!;
  assert.equal(unauthorized.str(1), 'Unauthorized');
  assert.equal(unauthorized.has(2), false);

  // Operation-level GVK is a single YAML map (what kubectl's query-param verifier unmarshals).
  const ext = extensions(patch.msgs(OP.ext));
  assert.equal(ext.get('x-kubernetes-action'), 'patch\n');
  assert.equal(ext.get('x-kubernetes-group-version-kind'), 'group: apps\nkind: Deployment\nversion: v1\n');
  assert.deepEqual(parseYaml(ext.get('x-kubernetes-group-version-kind')!), { group: 'apps', kind: 'Deployment', version: 'v1' });

  // The collection path: list/create/deletecollection; create takes fieldValidation too.
  const coll = paths.get('/apis/apps/v1/namespaces/{namespace}/deployments')!;
  assert.ok(coll.has(PATH_ITEM.get) && coll.has(PATH_ITEM.post) && coll.has(PATH_ITEM.delete));
  assert.equal(coll.has(PATH_ITEM.patch), false);
  const post = coll.msg(PATH_ITEM.post)!;
  assert.ok(post.msgs(OP.parameters).map(describeParam).some((p) => p.kind === 'query' && p.name === 'fieldValidation'));
});

test('operations carry kube-style GVK extensions: every patch op in the JSON is found in the protobuf', () => {
  const { json, doc } = realDocument();
  const paths = named(doc.msg(DOC.paths)!.msgs(2));
  let count = 0;
  for (const [p, item] of Object.entries<any>(json.paths)) {
    if (!item.patch) continue;
    const op = paths.get(p)!.msg(PATH_ITEM.patch)!;
    const gvk = parseYaml(extensions(op.msgs(OP.ext)).get('x-kubernetes-group-version-kind')!);
    assert.deepEqual(gvk, item.patch['x-kubernetes-group-version-kind'], p);
    count++;
  }
  assert.ok(count > 50, `${count} patch operations`);
});

test('Deployment definition: properties, type, GVK extension', () => {
  const { doc } = realDocument();
  const defs = named(doc.msg(DOC.definitions)!.msgs(1));
  const dep = defs.get('io.k8s.api.apps.v1.Deployment')!;
  assert.deepEqual(dep.msg(SCHEMA.type)!.strs(1), ['object']);
  const props = named(dep.msg(SCHEMA.properties)!.msgs(1));
  assert.ok(props.has('spec') && props.has('status') && props.has('metadata'));
  assert.equal(props.get('spec')!.str(SCHEMA.ref), '#/definitions/io.k8s.api.apps.v1.DeploymentSpec');
  assert.deepEqual(props.get('kind')!.msg(SCHEMA.type)!.strs(1), ['string']);
  const ext = extensions(dep.msgs(SCHEMA.ext));
  const yaml = ext.get('x-kubernetes-group-version-kind')!;
  assert.equal(yaml, '- group: apps\n  kind: Deployment\n  version: v1\n');
  assert.deepEqual(parseYaml(yaml), [{ group: 'apps', kind: 'Deployment', version: 'v1' }]);

  // The core group is the empty string, which YAML must quote.
  const cm = extensions(defs.get('io.k8s.api.core.v1.ConfigMap')!.msgs(SCHEMA.ext)).get('x-kubernetes-group-version-kind')!;
  assert.equal(cm, '- group: ""\n  kind: ConfigMap\n  version: v1\n');
});

test('definitions: required, items, additionalProperties, list/patch extensions, format', () => {
  const { json, doc } = realDocument();
  const defs = named(doc.msg(DOC.definitions)!.msgs(1));
  const podSpec = defs.get('io.k8s.api.core.v1.PodSpec')!;
  assert.deepEqual(podSpec.strs(SCHEMA.required), json.definitions['io.k8s.api.core.v1.PodSpec'].required);
  const props = named(podSpec.msg(SCHEMA.properties)!.msgs(1));
  const containers = props.get('containers')!;
  assert.deepEqual(containers.msg(SCHEMA.type)!.strs(1), ['array']);
  const items = containers.msg(SCHEMA.items)!.msgs(1);
  assert.equal(items.length, 1);
  assert.equal(items[0]!.str(SCHEMA.ref), '#/definitions/io.k8s.api.core.v1.Container');
  const ext = extensions(containers.msgs(SCHEMA.ext));
  assert.equal(ext.get('x-kubernetes-patch-merge-key'), 'name\n');
  assert.equal(ext.get('x-kubernetes-patch-strategy'), 'merge\n');
  assert.equal(ext.get('x-kubernetes-list-type'), 'map\n');
  assert.equal(ext.get('x-kubernetes-list-map-keys'), '- name\n');

  // additionalProperties as a schema (AdditionalPropertiesItem.schema = 1).
  const nodeSelector = props.get('nodeSelector')!;
  const ap = nodeSelector.msg(SCHEMA.additionalProperties)!;
  assert.ok(ap.has(1));
  assert.deepEqual(ap.msg(1)!.msg(SCHEMA.type)!.strs(1), ['string']);

  // format survives.
  const meta = named(defs.get('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta')!.msg(SCHEMA.properties)!.msgs(1));
  const generation = meta.get('generation')!;
  assert.equal(generation.str(SCHEMA.format), 'int64');

  // x-kubernetes-unions: a list of maps with a nested map.
  const seccomp = extensions(defs.get('io.k8s.api.core.v1.SeccompProfile')!.msgs(SCHEMA.ext)).get('x-kubernetes-unions')!;
  assert.deepEqual(parseYaml(seccomp), json.definitions['io.k8s.api.core.v1.SeccompProfile']['x-kubernetes-unions']);
});

test('every vendor extension YAML reads back to the JSON value', () => {
  const { json } = realDocument();
  let n = 0;
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k.startsWith('x-')) {
          assert.deepEqual(parseYaml(toYaml(v)), v, k);
          n++;
        } else visit(v);
      }
    }
  };
  visit(json);
  assert.ok(n > 1000, `${n} extensions`);
});

test('hand-built document: oneofs, scalars and the fields the real document lacks', () => {
  const bytes = encodeOpenApiV2Document({
    swagger: '2.0',
    info: { title: 'T', version: '1', description: 'd', contact: { name: 'c' }, license: { name: 'Apache-2.0' }, 'x-info': 1 },
    host: 'h',
    basePath: '/b',
    consumes: ['application/json'],
    paths: {
      'x-paths-ext': true,
      '/p': {
        $ref: '#/r',
        parameters: [{ $ref: '#/parameters/shared' }, { in: 'header', name: 'X-H', type: 'string' }, { in: 'formData', name: 'f', type: 'file', required: true }],
        get: {
          deprecated: true,
          responses: { default: { $ref: '#/responses/err' }, '204': { description: 'none', headers: { 'X-Rate': { type: 'integer', description: 'rate' } } } },
        },
        put: {
          parameters: [{ in: 'query', name: 'limit', type: 'integer', minimum: -5, maximum: 1.5, default: 10, enum: [1, 2], items: { type: 'string', maxLength: 3 } }],
          responses: { '200': { description: 'file', schema: { type: 'file' } } },
        },
      },
    },
    definitions: {
      A: {
        type: ['string', 'null'],
        additionalProperties: false,
        enum: ['a', 'yes', ''],
        default: { k: [1, 'two'] },
        maxLength: 4,
        minLength: -1,
        readOnly: true,
        allOf: [{ $ref: '#/definitions/B' }],
        items: [{ type: 'integer' }, { type: 'string' }],
        properties: {},
      },
    },
    parameters: { shared: { in: 'query', name: 's', type: 'boolean' } },
    responses: { err: { description: 'error' } },
    tags: [{ name: 'tag1', description: 'td' }],
    externalDocs: { url: 'https://x' },
    'x-top': 'v',
  });
  const doc = new Msg(bytes);
  assert.equal(doc.str(3), 'h');
  assert.equal(doc.str(4), '/b');
  assert.deepEqual(doc.strs(6), ['application/json']);
  const info = doc.msg(2)!;
  assert.equal(info.str(3), 'd');
  assert.equal(info.msg(5)!.str(1), 'c');
  assert.equal(info.msg(6)!.str(1), 'Apache-2.0');
  assert.equal(extensions(info.msgs(7)).get('x-info'), '1\n');
  assert.equal(extensions(doc.msgs(16)).get('x-top'), 'v\n');
  assert.equal(doc.msg(15)!.str(2), 'https://x');
  assert.equal(doc.msgs(14)[0]!.str(1), 'tag1');

  const paths = doc.msg(8)!;
  assert.equal(extensions(paths.msgs(1)).get('x-paths-ext'), 'true\n');
  const p = named(paths.msgs(2)).get('/p')!;
  assert.equal(p.str(1), '#/r');
  const [ref, header, form] = p.msgs(9);
  assert.equal(ref!.msg(2)!.str(1), '#/parameters/shared');
  const h = header!.msg(1)!.msg(2)!.msg(1)!; // HeaderParameterSubSchema: name 4, type 5
  assert.equal(h.str(4), 'X-H');
  assert.equal(h.str(5), 'string');
  const f = form!.msg(1)!.msg(2)!.msg(2)!; // FormDataParameterSubSchema: required 1, name 4, type 6
  assert.equal(f.bool(1), true);
  assert.equal(f.str(6), 'file');

  const get = p.msg(2)!;
  assert.equal(get.bool(11), true);
  const responses = named(get.msg(9)!.msgs(1));
  assert.equal(responses.get('default')!.msg(2)!.str(1), '#/responses/err');
  const noContent = responses.get('204')!.msg(1)!;
  const rate = named(noContent.msg(3)!.msgs(1)).get('X-Rate')!;
  assert.equal(rate.str(1), 'integer');
  assert.equal(rate.str(18), 'rate');

  const put = p.msg(3)!;
  const q = put.msgs(8)[0]!.msg(1)!.msg(2)!.msg(3)!; // QueryParameterSubSchema
  assert.equal(q.str(6), 'integer');
  assert.equal(q.double(11), 1.5); // maximum
  assert.equal(q.double(13), -5); // minimum
  assert.equal(q.msg(10)!.str(2), '10\n'); // default
  assert.deepEqual(q.msgs(21).map((a) => a.str(2)), ['1\n', '2\n']); // enum
  const qi = q.msg(8)!; // PrimitivesItems: type 1, max_length 10
  assert.equal(qi.str(1), 'string');
  assert.equal(qi.int(10), 3n);
  const file = named(put.msg(9)!.msgs(1)).get('200')!.msg(1)!.msg(2)!;
  assert.ok(file.has(2), 'type: file is a FileSchema');
  assert.equal(file.msg(2)!.str(6), 'file');

  const a = named(doc.msg(9)!.msgs(1)).get('A')!;
  assert.deepEqual(a.msg(22)!.strs(1), ['string', 'null']);
  const ap = a.msg(21)!;
  assert.equal(ap.has(2), true, 'additionalProperties: false is written (oneof member)');
  assert.equal(ap.bool(2), false);
  assert.deepEqual(a.msgs(20).map((x) => x.str(2)), ['a\n', 'yes\n', '""\n']);
  assert.equal(a.msg(5)!.str(2), 'k:\n  - 1\n  - two\n');
  assert.equal(a.int(11), 4n);
  assert.equal(a.int(12), -1n); // negative int64: ten-byte two's complement varint
  assert.equal(a.bool(27), true);
  assert.equal(a.msgs(24)[0]!.str(1), '#/definitions/B');
  assert.equal(a.msg(23)!.msgs(1).length, 2);
  assert.ok(a.has(25), 'empty properties are still present');
  assert.equal(a.msg(25)!.fields.size, 0);

  const shared = named(doc.msg(10)!.msgs(1)).get('shared')!;
  assert.equal(shared.msg(2)!.msg(3)!.str(6), 'boolean');
  assert.equal(named(doc.msg(11)!.msgs(1)).get('err')!.str(1), 'error');
});

test('exact bytes: proto3 omissions, oneofs, negative and large int64, long and multi-byte strings, large nested messages', () => {
  const doc = {
    swagger: '2.0',
    info: { title: 'T'.repeat(50), version: '', 'x-a': 'b' },
    host: 'é'.repeat(42),
    basePath: '日'.repeat(42),
    schemes: ['https', ''],
    paths: { '/big': { get: { description: 'z'.repeat(20_000), responses: { '200': { description: 'ok' } } } } },
    definitions: {
      A: {
        description: 'x'.repeat(300),
        type: 'object',
        maximum: 2.5,
        minimum: 0,
        exclusiveMaximum: true,
        uniqueItems: false,
        maxLength: 5,
        minLength: -3,
        maxItems: 3.7,
        maxProperties: 2 ** 40,
        additionalProperties: false,
        items: { type: 'string' },
        'x-ext': { a: 1 },
      },
      B: { type: ['string', 'null'], required: ['a', ''], enum: ['a', 1], additionalProperties: { type: 'string' } },
    },
    'x-top': [1],
  };
  const any = (field: number, v: unknown) => ld(field, str(2, toYaml(v)));
  const ext = (field: number, name: string, v: unknown) => ld(field, str(1, name), any(2, v));
  const typeItem = (...types: string[]) => ld(22, ...types.map((t) => str(1, t)));
  const schemaA = Buffer.concat([
    str(4, 'x'.repeat(300)),
    dbl(7, 2.5),
    vint(8, 1),
    vint(11, 5),
    sint(12, -3n),
    vint(14, 3),
    vint(17, 2 ** 40),
    ld(21, vint(2, 0)),
    typeItem('object'),
    ld(23, ld(1, typeItem('string'))),
    ext(31, 'x-ext', { a: 1 }),
  ]);
  const schemaB = Buffer.concat([str(19, 'a'), ld(19), any(20, 'a'), any(20, 1), ld(21, ld(1, typeItem('string'))), typeItem('string', 'null')]);
  const expected = Buffer.concat([
    str(1, '2.0'),
    ld(2, str(1, 'T'.repeat(50)), ext(7, 'x-a', 'b')),
    str(3, 'é'.repeat(42)),
    str(4, '日'.repeat(42)),
    str(5, 'https'),
    ld(5),
    ld(8, ld(2, str(1, '/big'), ld(2, ld(2, str(3, 'z'.repeat(20_000)), ld(9, ld(1, str(1, '200'), ld(2, ld(1, str(1, 'ok'))))))))),
    ld(9, ld(1, str(1, 'A'), ld(2, schemaA)), ld(1, str(1, 'B'), ld(2, schemaB))),
    ext(16, 'x-top', [1]),
  ]);
  assert.deepEqual(encodeOpenApiV2Document(doc), expected);
});

test('toYaml matches yaml.v3 block style', () => {
  assert.equal(toYaml('atomic'), 'atomic\n');
  assert.equal(toYaml(true), 'true\n');
  assert.equal(toYaml(null), 'null\n');
  assert.equal(toYaml(10), '10\n');
  assert.equal(toYaml(-0.1), '-0.1\n');
  assert.equal(toYaml(''), '""\n');
  assert.equal(toYaml('true'), '"true"\n');
  assert.equal(toYaml('10'), '"10"\n');
  assert.equal(toYaml('1:1'), '1:1\n'); // yaml.v3 only quotes base-60 lookalikes for Go strings, not for nodes
  assert.equal(toYaml('-'), "'-'\n");
  assert.equal(toYaml('b: c'), "'b: c'\n");
  assert.equal(toYaml('Hello #comment'), "'Hello #comment'\n");
  assert.equal(toYaml('2015-02-24T18:19:39Z'), '"2015-02-24T18:19:39Z"\n');
  assert.equal(toYaml('merge,retainKeys'), 'merge,retainKeys\n');
  assert.equal(toYaml('<foo>'), '<foo>\n');
  assert.equal(toYaml('你好'), '你好\n');
  assert.equal(toYaml({}), '{}\n');
  assert.equal(toYaml([]), '[]\n');
  assert.equal(toYaml({ v: ['A', 'B'] }), 'v:\n  - A\n  - B\n');
  assert.equal(toYaml({ v: ['A', 'B\nC'] }), 'v:\n  - A\n  - |-\n    B\n    C\n');
  assert.equal(toYaml({ v: ['A', 1, { B: [2, 3] }] }), 'v:\n  - A\n  - 1\n  - B:\n      - 2\n      - 3\n');
  assert.equal(toYaml({ a: { b: 'c' } }), 'a:\n    b: c\n');
  assert.equal(toYaml({ a: { b: [{ c: 1, d: 2 }] } }), 'a:\n    b:\n      - c: 1\n        d: 2\n');
  assert.equal(toYaml({ a: null, b: {}, c: [] }), 'a: null\nb: {}\nc: []\n');
  assert.equal(toYaml([{ group: '', kind: 'ConfigMap', version: 'v1' }]), '- group: ""\n  kind: ConfigMap\n  version: v1\n');
  assert.equal(toYaml([['a', 'b'], 'c']), '- - a\n  - b\n- c\n');
});

test('toYaml output always reads back to the same value', () => {
  const values: unknown[] = [
    'plain',
    ' leading',
    'trailing ',
    "it's",
    'say "hi"',
    'a: b',
    '- x',
    '? q',
    '#x',
    'x #y',
    '---',
    '...',
    '@at',
    '`tick',
    '%pct',
    '&a',
    '*a',
    '!t',
    '|p',
    '>f',
    '[x]',
    '{x}',
    'a,b',
    'tab\there',
    'bell\x07',
    'nl\n',
    'two\n\n',
    '\nlead',
    'line one\nline two',
    'space \nbreak',
    '0x1F',
    '0o17',
    '1_000',
    '+1',
    '.5',
    '1e3',
    'null',
    '~',
    'NULL',
    'False',
    '.inf',
    '<<',
    'yes',
    'off',
    '2001-12-14',
    'emoji 😀',
    '\u2028sep',
    'nbsp\u00a0x',
    'bom\ufeff',
    { 'key: with colon': 1, '': 2, 'true': 3, nested: { deeper: { list: [{ a: [] }, [1, [2, 3]], 'x'] } } },
    [{ rule: 'self.size() > 0 && self.all(x, x != "")', message: 'must not be empty: "x"' }],
    { multi: 'a\nb\n', 'k\nk': 'v' },
    1.5e300,
    -7,
    [null, true, false, 0],
  ];
  for (const v of values) assert.deepEqual(parseYaml(toYaml(v)), v, JSON.stringify(v));
});

test('encoding is deterministic and reasonably fast', () => {
  const { json, bytes } = realDocument();
  const t0 = performance.now();
  const again = encodeOpenApiV2Document(json);
  const ms = performance.now() - t0;
  assert.ok(again.equals(bytes));
  assert.ok(bytes.length > 100_000);
  assert.ok(ms < 2000, `encoding took ${ms.toFixed(0)}ms`);
});

test('wantsOpenApiV2Protobuf and the Content-Type to answer with', () => {
  assert.equal(OPENAPI_V2_PROTOBUF, 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf');
  assert.equal(wantsOpenApiV2Protobuf(OPENAPI_V2_PROTOBUF), true);
  assert.equal(wantsOpenApiV2Protobuf('application/com.github.proto-openapi.spec.v2.v1.0+protobuf'), true);
  assert.equal(wantsOpenApiV2Protobuf(`${OPENAPI_V2_PROTOBUF}, application/json`), true);
  assert.equal(wantsOpenApiV2Protobuf(`application/json;q=0.5, ${OPENAPI_V2_PROTOBUF}`), true);
  assert.equal(wantsOpenApiV2Protobuf(`${OPENAPI_V2_PROTOBUF.toUpperCase()}`), true);
  assert.equal(wantsOpenApiV2Protobuf('application/json'), false);
  assert.equal(wantsOpenApiV2Protobuf('application/json, */*'), false);
  assert.equal(wantsOpenApiV2Protobuf(`application/json, ${OPENAPI_V2_PROTOBUF}`), false);
  assert.equal(wantsOpenApiV2Protobuf(`${OPENAPI_V2_PROTOBUF};q=0, application/json`), false);
  assert.equal(wantsOpenApiV2Protobuf('*/*'), false);
  assert.equal(wantsOpenApiV2Protobuf('application/vnd.kubernetes.protobuf'), false);
  assert.equal(wantsOpenApiV2Protobuf(''), false);
  assert.equal(wantsOpenApiV2Protobuf(undefined), false);
  // kube answers both spellings with the "@"-free one: Go's mime.ParseMediaType rejects "@" in a subtype.
  assert.equal(OPENAPI_V2_PROTOBUF_CONTENT_TYPE, 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
  assert.equal(openApiV2ProtobufContentType(OPENAPI_V2_PROTOBUF), OPENAPI_V2_PROTOBUF_CONTENT_TYPE);
  assert.equal(openApiV2ProtobufContentType(OPENAPI_V2_PROTOBUF_ALT), OPENAPI_V2_PROTOBUF_CONTENT_TYPE);
  assert.doesNotMatch(OPENAPI_V2_PROTOBUF_CONTENT_TYPE, /@/);
  assert.equal(openApiV2ProtobufContentType('application/json'), undefined);
});
