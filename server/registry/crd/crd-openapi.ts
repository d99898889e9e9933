// The OpenAPI definitions kube-apiserver publishes for a CustomResourceDefinition: per served version
// with a schema, the kind (named after the reversed group, e.g. com.example.stable.v1.CronTab) and its
// list kind, in two forms.
//
// - The OpenAPI v3 form (also what the type model reads for patch, apply and field validation): the
//   version's structural schema with x-kubernetes-int-or-string unfolded into anyOf [integer, string],
//   metadata replaced by a $ref to ObjectMeta, apiVersion/kind as strings, embedded resources given
//   apiVersion/kind/metadata and required kind/apiVersion, x-kubernetes-group-version-kind, and
//   x-kubernetes-selectable-fields when the version declares selectable fields.
// - The OpenAPI v2 form: Swagger 2.0 and kubectl's v2 reader cannot take everything, so, as kube does,
//   allOf/anyOf/oneOf/not are dropped; a nullable field loses its type, items and properties (and is no
//   longer required by its parent); a preserve-unknown-fields field loses items, properties and an
//   object type; an array left without items loses its type; defaults are pruned; a root with
//   x-kubernetes-preserve-unknown-fields (or spec.preserveUnknownFields) publishes only
//   {type: object} plus the GVK; there are no selectable fields.
//
// Descriptions in the CRD's schema are kept; the generated apiVersion/kind/metadata/items fields carry
// none, like the built-in definitions this server publishes (they are stripped there too).
// Keys are sorted at every level, as in the built-in definitions.
import { isPlainObject } from '../../util/json.ts';

type Obj = Record<string, unknown>;

const nonEmptyString = (v: unknown): v is string => typeof v === 'string' && v !== '';
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

const OBJECT_META_REF = '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const LIST_META_REF = '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta';

export const GVK_EXTENSION = 'x-kubernetes-group-version-kind';
export const SELECTABLE_FIELDS_EXTENSION = 'x-kubernetes-selectable-fields';

export interface CrdVersionDefinitions {
  /** e.g. "com.example.stable.v1.CronTab": use as ResourceInfo.definition. */
  definition: string;
  /** e.g. "com.example.stable.v1.CronTabList". */
  listDefinition: string;
}

export interface CrdDefinitions {
  /** OpenAPI v3 form, keyed by definition name: what the type model and /openapi/v3 serve. */
  definitions: Record<string, unknown>;
  /** The same names in the form /openapi/v2 publishes. */
  v2Definitions: Record<string, unknown>;
  /** Served versions that have a schema; versions without one get no definitions (paths stay untyped). */
  byVersion: Record<string, CrdVersionDefinitions>;
}

/** kube's model name for a GVK: the group's DNS labels reversed, then version and kind. */
export function crdDefinitionName(group: string, version: string, kind: string): string {
  const g = group.split('.').reverse().join('.');
  return `${g}.${version}.${kind}`;
}

/** The definitions a CRD contributes, for every served version with a schema. */
export function crdDefinitions(crd: any): CrdDefinitions {
  const out: CrdDefinitions = { definitions: {}, v2Definitions: {}, byVersion: {} };
  const spec = isPlainObject(crd?.spec) ? crd.spec : {};
  const group = typeof spec.group === 'string' ? spec.group : '';
  const names = isPlainObject(spec.names) ? spec.names : {};
  const kind = typeof names.kind === 'string' ? names.kind : '';
  const listKind = nonEmptyString(names.listKind) ? names.listKind : `${kind}List`;
  const legacyPreserveUnknownFields = spec.preserveUnknownFields === true;
  if (!group || !kind) return out;

  for (const v of Array.isArray(spec.versions) ? spec.versions : []) {
    if (!isPlainObject(v) || v.served !== true || !nonEmptyString(v.name)) continue;
    const raw = isPlainObject(v.schema) ? v.schema.openAPIV3Schema : undefined;
    if (!isPlainObject(raw)) continue;
    const version = v.name;
    const definition = crdDefinitionName(group, version, kind);
    const listDefinition = crdDefinitionName(group, version, listKind);
    const gvk = [{ group, kind, version }];
    const listGvk = [{ group, kind: listKind, version }];
    const selectable = selectableFields(v);

    const schema = structural(raw);
    unfold(schema);

    const k3 = kubeNative(structuredClone(schema), false);
    k3[GVK_EXTENSION] = gvk;
    if (selectable) k3[SELECTABLE_FIELDS_EXTENSION] = selectable;
    const l3 = listSchema(definition, listGvk);
    if (selectable) l3[SELECTABLE_FIELDS_EXTENSION] = selectable;

    // Unknown fields at the root: kubectl's v2 reader would reject everything but the listed properties.
    const k2: Obj =
      schema['x-kubernetes-preserve-unknown-fields'] === true || legacyPreserveUnknownFields ? { type: 'object' } : kubeNative(toV2(structuredClone(schema)), true);
    k2[GVK_EXTENSION] = gvk;
    pruneDefaults(k2);
    const l2 = listSchema(definition, listGvk);

    out.definitions[definition] = sortKeys(k3);
    out.definitions[listDefinition] = sortKeys(l3);
    out.v2Definitions[definition] = sortKeys(k2);
    out.v2Definitions[listDefinition] = sortKeys(l2);
    out.byVersion[version] = { definition, listDefinition };
  }
  return out;
}

/** selectableFields as kube publishes them: [{fieldPath: "spec.color"}], leading dot trimmed. */
function selectableFields(v: Obj): Obj[] | undefined {
  if (!Array.isArray(v.selectableFields) || v.selectableFields.length === 0) return undefined;
  return v.selectableFields.map((f) => ({ fieldPath: (isPlainObject(f) && typeof f.jsonPath === 'string' ? f.jsonPath : '').replace(/^\./, '') }));
}

// ---------------------------------------------------------------------------------------------
// The structural schema as kube serializes it: only the fields its structural form carries, and
// Go's omitempty rules (no empty strings, false flags, empty lists or maps).

const NUMBER_FIELDS = ['maximum', 'minimum', 'maxLength', 'minLength', 'maxItems', 'minItems', 'multipleOf', 'maxProperties', 'minProperties'] as const;
const TRUE_FLAGS = ['nullable', 'exclusiveMaximum', 'exclusiveMinimum', 'uniqueItems', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource', 'x-kubernetes-int-or-string'] as const;
const JUNCTORS = ['allOf', 'anyOf', 'oneOf'] as const;

function structural(s: Obj): Obj {
  const out: Obj = {};
  for (const k of ['description', 'type', 'title', 'format', 'pattern'] as const) if (nonEmptyString(s[k])) out[k] = s[k];
  for (const k of ['default', 'example'] as const) if (s[k] !== undefined && s[k] !== null) out[k] = s[k];
  for (const k of TRUE_FLAGS) if (s[k] === true) out[k] = true;
  for (const k of NUMBER_FIELDS) if (isNumber(s[k])) out[k] = s[k];
  if (isPlainObject(s.externalDocs)) {
    const d: Obj = {};
    if (nonEmptyString(s.externalDocs.description)) d.description = s.externalDocs.description;
    if (nonEmptyString(s.externalDocs.url)) d.url = s.externalDocs.url;
    out.externalDocs = d;
  }
  if (Array.isArray(s.enum) && s.enum.length > 0) out.enum = s.enum;
  if (Array.isArray(s.required)) {
    const req = s.required.filter((r): r is string => typeof r === 'string');
    if (req.length) out.required = req;
  }
  for (const k of JUNCTORS) {
    const list = s[k];
    if (Array.isArray(list) && list.length > 0) out[k] = list.map((x) => structural(isPlainObject(x) ? x : {}));
  }
  if (isPlainObject(s.not)) out.not = structural(s.not);
  if (isPlainObject(s.items)) out.items = structural(s.items);
  if (isPlainObject(s.properties)) {
    const props: Obj = {};
    for (const [name, p] of Object.entries(s.properties)) if (isPlainObject(p)) props[name] = structural(p);
    if (Object.keys(props).length) out.properties = props;
  }
  if (isPlainObject(s.additionalProperties)) out.additionalProperties = structural(s.additionalProperties);
  else if (typeof s.additionalProperties === 'boolean') out.additionalProperties = s.additionalProperties;
  const keys = s['x-kubernetes-list-map-keys'];
  if (Array.isArray(keys) && keys.length > 0) out['x-kubernetes-list-map-keys'] = keys.filter((k): k is string => typeof k === 'string');
  if (typeof s['x-kubernetes-list-type'] === 'string') out['x-kubernetes-list-type'] = s['x-kubernetes-list-type'];
  if (typeof s['x-kubernetes-map-type'] === 'string') out['x-kubernetes-map-type'] = s['x-kubernetes-map-type'];
  const rules = s['x-kubernetes-validations'];
  if (Array.isArray(rules) && rules.length > 0) out['x-kubernetes-validations'] = rules.filter(isPlainObject).map(validationRule);
  return out;
}

/** A ValidationRule with Go's omitempty: rule always; message, messageExpression, reason, fieldPath when set; optionalOldSelf when given. */
function validationRule(r: Obj): Obj {
  const out: Obj = { rule: typeof r.rule === 'string' ? r.rule : '' };
  for (const k of ['message', 'messageExpression', 'reason', 'fieldPath'] as const) if (nonEmptyString(r[k])) out[k] = r[k];
  if (typeof r.optionalOldSelf === 'boolean') out.optionalOldSelf = r.optionalOldSelf;
  return out;
}

/** Calls fn on every structural node (root, properties, items, additionalProperties), parent first. */
function visit(s: Obj, fn: (s: Obj) => void): void {
  fn(s);
  if (isPlainObject(s.items)) visit(s.items, fn);
  if (isPlainObject(s.properties)) for (const p of Object.values(s.properties)) if (isPlainObject(p)) visit(p, fn);
  if (isPlainObject(s.additionalProperties)) visit(s.additionalProperties, fn);
}

const INT_OR_STRING_ANY_OF = JSON.stringify([{ type: 'integer' }, { type: 'string' }]);

/** kube's Unfold: an int-or-string node states its two types as anyOf unless it already does. */
function unfold(root: Obj): void {
  visit(root, (s) => {
    if (s['x-kubernetes-int-or-string'] !== true) return;
    if (JSON.stringify(s.anyOf) === INT_OR_STRING_ANY_OF) return;
    const allOf = Array.isArray(s.allOf) ? s.allOf : undefined;
    if (allOf && isPlainObject(allOf[0]) && JSON.stringify(allOf[0].anyOf) === INT_OR_STRING_ANY_OF) return;
    const pattern = JSON.parse(INT_OR_STRING_ANY_OF) as Obj[];
    if (s.anyOf === undefined) s.anyOf = pattern;
    else s.allOf = [{ anyOf: pattern }, ...(allOf ?? [])];
  });
}

/** kube's ToStructuralOpenAPIV2: remove what Swagger 2.0 and kubectl's v2 reader cannot cope with. */
function toV2(root: Obj): Obj {
  visit(root, (s) => {
    for (const k of JUNCTORS) delete s[k];
    delete s.not;
    if (s.nullable === true) {
      delete s.type;
      delete s.nullable;
      delete s.items;
      delete s.properties;
    }
    const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
    if (preserve) {
      delete s.items;
      delete s.properties;
    }
    if (s.items === undefined && s.type === 'array') delete s.type;
    if (preserve && s.type === 'object') delete s.type;
    // A nullable field cannot be required: v2 has no way to say null is fine.
    if (Array.isArray(s.required)) {
      let required = s.required as string[];
      if (isPlainObject(s.properties)) {
        const props = s.properties;
        required = required.filter((f) => !(isPlainObject(props[f]) && props[f].nullable === true));
      }
      if (isPlainObject(s.additionalProperties) && s.additionalProperties.nullable === true) required = [];
      if (required.length) s.required = required;
      else delete s.required;
    }
  });
  return root;
}

/** kube's buildKubeNative for a version with a schema: TypeMeta and ObjectMeta at the root and in embedded resources. */
function kubeNative(s: Obj, v2: boolean): Obj {
  s.properties = { ...(isPlainObject(s.properties) ? s.properties : {}), metadata: { $ref: OBJECT_META_REF }, apiVersion: { type: 'string' }, kind: { type: 'string' } };
  addEmbeddedProperties(s, v2);
  return s;
}

function addEmbeddedProperties(s: Obj, v2: boolean): void {
  if (isPlainObject(s.properties)) for (const p of Object.values(s.properties)) if (isPlainObject(p)) addEmbeddedProperties(p, v2);
  if (isPlainObject(s.items)) addEmbeddedProperties(s.items, v2);
  if (isPlainObject(s.additionalProperties)) addEmbeddedProperties(s.additionalProperties, v2);
  // In v2, listing properties next to preserved unknown fields makes kubectl reject the unknown ones.
  if (v2 && s['x-kubernetes-preserve-unknown-fields'] === true) return;
  if (s['x-kubernetes-embedded-resource'] !== true) return;
  s.properties = { ...(isPlainObject(s.properties) ? s.properties : {}), apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { $ref: OBJECT_META_REF } };
  const required = Array.isArray(s.required) ? [...(s.required as string[])] : [];
  if (!required.includes('kind')) required.push('kind');
  if (!required.includes('apiVersion')) required.push('apiVersion');
  s.required = required;
}

function listSchema(kindDefinition: string, gvk: Obj[]): Obj {
  return {
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: { type: 'string' },
      items: { type: 'array', items: { $ref: `#/definitions/${kindDefinition}` } },
      kind: { type: 'string' },
      metadata: { $ref: LIST_META_REF },
    },
    [GVK_EXTENSION]: gvk,
  };
}

/** /openapi/v2 carries no defaults for CRDs (kube prunes them so they merge with the built-in spec). */
function pruneDefaults(root: Obj): void {
  visit(root, (s) => {
    delete s.default;
  });
}

/** Keys sorted at every level (values inside default/example/enum too, as Go marshals maps). */
function sortKeys<T>(v: T): T {
  if (Array.isArray(v)) return v.map(sortKeys) as T;
  if (!isPlainObject(v)) return v;
  const out: Obj = {};
  for (const k of Object.keys(v).sort()) out[k] = sortKeys(v[k]);
  return out as T;
}
