// CustomResourceDefinition (apiextensions.k8s.io/v1) validation, worded and ordered the way
// kube-apiserver reports it.
//
// kube validates the internal form of the CRD: when every version carries the same schema,
// subresources or printer columns, conversion from v1 moves them to the top-level fields
// spec.validation, spec.subresources and spec.additionalPrinterColumns, and errors are reported
// there (e.g. "spec.validation.openAPIV3Schema.properties[spec].type"); only CRDs whose versions
// differ get "spec.versions[1].schema.openAPIV3Schema..." paths. selectableFields move up to
// spec.selectableFields only together with an identical schema. Conversion webhooks are
// reported under spec.conversion.webhookClientConfig / spec.conversion.conversionReviewVersions.
//
// Not covered here: generic ObjectMeta checks (the caller's validateObjectMeta), and the
// relaxations kube applies on update when the stored CRD already violates newer rules.
import { isDNS1035Label, isDNS1123Subdomain } from '../../validation/names.ts';
import { goStringSlice } from '../../go/fmt.ts';
import { goQuote } from '../../go/strconv.ts';
import { compileSchemaRules, evaluateRules, hasValidationRules, selectableFieldPath, validFieldPath } from './cel/index.ts';
import {
  compileVersionSchema,
  pruneValue,
  embeddedTypeMetaError,
  validateEmbeddedResources,
} from './schema-validator.ts';
import { forbiddenError, goValue, invalidError, notSupportedError, requiredError, tooManyError, duplicateError, type FieldError } from '../../validation/field.ts';
import { isPlainObject, semanticEqual } from '../../util/json.ts';
import { validateWebhookService, validateWebhookURL } from '../../validation/webhook-client-config.ts';
import { nonZero, structuralInitError, validateStructural } from './structural-schema.ts';

type Obj = Record<string, any>;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const arr = (v: unknown): any[] => (Array.isArray(v) ? v : []);
const q = goQuote;


/** A JSON value shown as the bad value of a field error (Go would print the internal struct). */
const jsonValue = (v: unknown): string => JSON.stringify(v) ?? 'null';

/** spec.versions as a bad value: Go's %#v for nil/empty, JSON otherwise (Go prints pointers). */
function versionsValue(v: unknown): string {
  if (!Array.isArray(v)) return '[]apiextensions.CustomResourceDefinitionVersion(nil)';
  if (v.length === 0) return '[]apiextensions.CustomResourceDefinitionVersion{}';
  return jsonValue(v);
}

// ---------------------------------------------------------------------------------------------
// Names.

function validateNames(names: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const plural = str(names.plural);
  const singular = str(names.singular);
  const kind = str(names.kind);
  const listKind = str(names.listKind);
  if (plural) {
    const e = isDNS1035Label(plural);
    if (e.length) errs.push(invalidError(`${path}.plural`, q(plural), e.join(',')));
  }
  if (singular) {
    const e = isDNS1035Label(singular);
    if (e.length) errs.push(invalidError(`${path}.singular`, q(singular), e.join(',')));
  }
  if (kind) {
    const e = isDNS1035Label(kind.toLowerCase());
    if (e.length) errs.push(invalidError(`${path}.kind`, q(kind), 'may have mixed case, but should otherwise match: ' + e.join(',')));
  }
  if (listKind) {
    const e = isDNS1035Label(listKind.toLowerCase());
    if (e.length) errs.push(invalidError(`${path}.listKind`, q(listKind), 'may have mixed case, but should otherwise match: ' + e.join(',')));
  }
  arr(names.shortNames).forEach((s, i) => {
    const e = isDNS1035Label(str(s));
    if (e.length) errs.push(invalidError(`${path}.shortNames[${i}]`, q(str(s)), e.join(',')));
  });
  if (kind && kind === listKind) errs.push(invalidError(`${path}.listKind`, q(listKind), 'kind and listKind may not be the same'));
  arr(names.categories).forEach((c, i) => {
    const e = isDNS1035Label(str(c));
    if (e.length) errs.push(invalidError(`${path}.categories[${i}]`, q(str(c)), e.join(',')));
  });
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Subresources, printer columns, conversion.

function validateSimpleJSONPath(s: string, path: string): FieldError[] {
  if (s.length === 0) return [invalidError(path, q(s), 'must not be empty')];
  if (s[0] !== '.') return [invalidError(path, q(s), 'must be a simple json path starting with .')];
  return [];
}

function validateSubresources(sub: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!isPlainObject(sub) || !isPlainObject(sub.scale)) return errs;
  const scale = sub.scale;
  const spec = str(scale.specReplicasPath);
  if (!spec) errs.push(requiredError(`${path}.scale.specReplicasPath`));
  else {
    const e = validateSimpleJSONPath(spec, `${path}.scale.specReplicasPath`);
    if (e.length) errs.push(...e);
    else if (!spec.startsWith('.spec.')) errs.push(invalidError(`${path}.scale.specReplicasPath`, q(spec), 'should be a json path under .spec'));
  }
  const status = str(scale.statusReplicasPath);
  if (!status) errs.push(requiredError(`${path}.scale.statusReplicasPath`));
  else {
    const e = validateSimpleJSONPath(status, `${path}.scale.statusReplicasPath`);
    if (e.length) errs.push(...e);
    else if (!status.startsWith('.status.')) errs.push(invalidError(`${path}.scale.statusReplicasPath`, q(status), 'should be a json path under .status'));
  }
  const sel = str(scale.labelSelectorPath);
  if (sel) {
    const e = validateSimpleJSONPath(sel, `${path}.scale.labelSelectorPath`);
    if (e.length) errs.push(...e);
    else if (!sel.startsWith('.spec.') && !sel.startsWith('.status.')) errs.push(invalidError(`${path}.scale.labelSelectorPath`, q(sel), 'should be a json path under either .spec or .status'));
  }
  return errs;
}

const PRINTER_COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const PRINTER_COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];

function validateColumn(col: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const c = isPlainObject(col) ? col : {};
  if (!str(c.name)) errs.push(requiredError(`${path}.name`));
  const type = str(c.type);
  if (!type) errs.push(requiredError(`${path}.type`, `must be one of ${PRINTER_COLUMN_TYPES.join(',')}`));
  else if (!PRINTER_COLUMN_TYPES.includes(type)) errs.push(invalidError(`${path}.type`, q(type), `must be one of ${PRINTER_COLUMN_TYPES.join(',')}`));
  const format = str(c.format);
  if (format && !PRINTER_COLUMN_FORMATS.includes(format)) errs.push(invalidError(`${path}.format`, q(format), `must be one of ${PRINTER_COLUMN_FORMATS.join(',')}`));
  const jp = str(c.jsonPath);
  if (!jp) errs.push(requiredError(`${path}.JSONPath`));
  else errs.push(...validateSimpleJSONPath(jp, `${path}.JSONPath`));
  return errs;
}

const ACCEPTED_REVIEW_VERSIONS = ['v1', 'v1beta1'];

function validateConversion(conv: unknown, path: string, preserveUnknownFields: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (!isPlainObject(conv)) return errs;
  const strategy = str(conv.strategy);
  if (strategy && strategy !== 'None' && preserveUnknownFields) {
    errs.push(invalidError(`${path}.strategy`, q(strategy), 'must be None if spec.preserveUnknownFields is true'));
  }
  if (!strategy) errs.push(requiredError(`${path}.strategy`));
  else if (strategy !== 'None' && strategy !== 'Webhook') errs.push(notSupportedError(`${path}.strategy`, q(strategy), ['None', 'Webhook']));
  const webhook = isPlainObject(conv.webhook) ? conv.webhook : undefined;
  const clientConfig = webhook && isPlainObject(webhook.clientConfig) ? webhook.clientConfig : undefined;
  const reviewVersions = webhook && Array.isArray(webhook.conversionReviewVersions) ? webhook.conversionReviewVersions.map(str) : undefined;
  if (strategy === 'Webhook') {
    const ccPath = `${path}.webhookClientConfig`;
    if (!clientConfig) errs.push(requiredError(ccPath, 'required when strategy is set to Webhook'));
    else {
      const hasURL = typeof clientConfig.url === 'string';
      const hasService = isPlainObject(clientConfig.service);
      if (hasURL === hasService) errs.push(requiredError(ccPath, 'exactly one of url or service is required'));
      else if (hasURL) errs.push(...validateWebhookURL(`${ccPath}.url`, clientConfig.url));
      else errs.push(...validateWebhookService(`${ccPath}.service`, clientConfig.service));
    }
    const rvPath = `${path}.conversionReviewVersions`;
    if (!reviewVersions || reviewVersions.length === 0) errs.push(requiredError(rvPath));
    else {
      const seen = new Set<string>();
      let accepted = false;
      reviewVersions.forEach((v, i) => {
        if (seen.has(v)) {
          errs.push(invalidError(`${rvPath}[${i}]`, q(v), 'duplicate version'));
          return;
        }
        seen.add(v);
        for (const m of isDNS1035Label(v)) errs.push(invalidError(`${rvPath}[${i}]`, q(v), m));
        if (ACCEPTED_REVIEW_VERSIONS.includes(v)) accepted = true;
      });
      if (!accepted) errs.push(invalidError(rvPath, goStringSlice(reviewVersions), `must include at least one of ${ACCEPTED_REVIEW_VERSIONS.join(', ')}`));
    }
  } else {
    if (clientConfig) errs.push(forbiddenError(`${path}.webhookClientConfig`, 'should not be set when strategy is not set to Webhook'));
    if (reviewVersions && reviewVersions.length > 0) errs.push(forbiddenError(`${path}.conversionReviewVersions`, 'should not be set when strategy is not set to Webhook'));
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------
// The structural-schema rules.

const OPENAPI_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);
const VALIDATION_REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];
const NEWLINE = /[\n\r]+/;

/** JSONSchemaProps field names (Go) by JSON key, for the status-subresource root check. */
const GO_FIELD: Record<string, string> = {
  id: 'ID',
  $schema: 'Schema',
  $ref: 'Ref',
  description: 'Description',
  type: 'Type',
  format: 'Format',
  title: 'Title',
  default: 'Default',
  maximum: 'Maximum',
  exclusiveMaximum: 'ExclusiveMaximum',
  minimum: 'Minimum',
  exclusiveMinimum: 'ExclusiveMinimum',
  maxLength: 'MaxLength',
  minLength: 'MinLength',
  pattern: 'Pattern',
  maxItems: 'MaxItems',
  minItems: 'MinItems',
  uniqueItems: 'UniqueItems',
  multipleOf: 'MultipleOf',
  enum: 'Enum',
  maxProperties: 'MaxProperties',
  minProperties: 'MinProperties',
  required: 'Required',
  items: 'Items',
  allOf: 'AllOf',
  oneOf: 'OneOf',
  anyOf: 'AnyOf',
  not: 'Not',
  properties: 'Properties',
  additionalProperties: 'AdditionalProperties',
  patternProperties: 'PatternProperties',
  dependencies: 'Dependencies',
  additionalItems: 'AdditionalItems',
  definitions: 'Definitions',
  externalDocs: 'ExternalDocs',
  example: 'Example',
  nullable: 'Nullable',
  'x-kubernetes-preserve-unknown-fields': 'XPreserveUnknownFields',
  'x-kubernetes-embedded-resource': 'XEmbeddedResource',
  'x-kubernetes-int-or-string': 'XIntOrString',
  'x-kubernetes-list-map-keys': 'XListMapKeys',
  'x-kubernetes-list-type': 'XListType',
  'x-kubernetes-map-type': 'XMapType',
  'x-kubernetes-validations': 'XValidations',
};
const ALLOWED_AT_ROOT_WITH_STATUS = ['Description', 'Type', 'Format', 'Title', 'Maximum', 'ExclusiveMaximum', 'Minimum', 'ExclusiveMinimum', 'MaxLength', 'MinLength', 'Pattern', 'MaxItems', 'MinItems', 'UniqueItems', 'MultipleOf', 'Required', 'Items', 'Properties', 'ExternalDocs', 'Example', 'XPreserveUnknownFields', 'XValidations'];

// ---------------------------------------------------------------------------------------------
// Defaults: pruned and valid.

function validateDefaults(s: Obj, path: string, insideMeta: boolean, isRoot: boolean, errs: FieldError[]): void {
  const embedded = isRoot || s['x-kubernetes-embedded-resource'] === true;
  if (embedded) insideMeta = false;
  if (s.default !== undefined && s.default !== null) {
    const dpath = `${path}.default`;
    const value = s.default;
    const before = errs.length;
    // kube: the pruning check stands alone; then TypeMeta coercion, else embedded ObjectMeta
    // validation (nested embedded resources too), else the schema.
    let metaOk = true;
    if (!insideMeta) {
      const pruned = JSON.parse(JSON.stringify(value));
      pruneValue(s, pruned, '', [], false);
      if (!semanticEqualStrict(pruned, value)) errs.push(invalidError(dpath, goValue(value), 'must not have unknown fields'));
      const embedded = s['x-kubernetes-embedded-resource'] === true;
      const coerceErr = embeddedTypeMetaError(s, value, dpath, embedded);
      const metaErrs = coerceErr ? [coerceErr] : validateEmbeddedResources(s, value, dpath, embedded);
      errs.push(...metaErrs);
      metaOk = metaErrs.length === 0;
    }
    if (metaOk) {
      try {
        errs.push(...compileVersionSchema(s, { isResourceRoot: false }).validate(value, { pathPrefix: dpath, schemaOnly: true }));
      } catch {
        // an unbuildable validator is reported by the caller
      }
    }
    if (errs.length === before && hasValidationRules(s)) {
      const rules = compileSchemaRules(s, { basePath: path, isResourceRoot: s['x-kubernetes-embedded-resource'] === true });
      if (rules.errors.length === 0) errs.push(...evaluateRules(rules, value, undefined, { basePath: dpath }));
    }
  }
  if (isPlainObject(s.items)) validateDefaults(s.items, `${path}.items`, insideMeta, false, errs);
  if (isPlainObject(s.properties)) {
    for (const [k, p] of Object.entries(s.properties)) {
      if (!isPlainObject(p)) continue;
      validateDefaults(p, `${path}.properties[${k}]`, insideMeta || (embedded && META_FIELDS.has(k)), false, errs);
    }
  }
}

function semanticEqualStrict(a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}
function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (isPlainObject(v)) return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
  return v;
}

// ---------------------------------------------------------------------------------------------
// The OpenAPI schema walk (ValidateCustomResourceDefinitionOpenAPISchema).

interface SSV {
  allowDefaults: boolean;
  disallowDefaultsReason: string;
  insideResourceMeta: boolean;
}

function ssvValidate(s: Obj, path: string, ssv: SSV, errs: FieldError[]): void {
  const type = s.type;
  if (typeof type === 'string' && type.length > 0 && !OPENAPI_TYPES.includes(type)) errs.push(notSupportedError(`${path}.type`, q(type), OPENAPI_TYPES));
  if (s.default !== undefined && s.default !== null && !ssv.allowDefaults) {
    errs.push(forbiddenError(`${path}.default`, `must not be set${ssv.disallowDefaultsReason ? ' ' + ssv.disallowDefaultsReason : ''}`));
  }
  if (str(s.id)) errs.push(forbiddenError(`${path}.id`, 'id is not supported'));
  if (s.additionalItems !== undefined && s.additionalItems !== null) errs.push(forbiddenError(`${path}.additionalItems`, 'additionalItems is not supported'));
  if (isPlainObject(s.patternProperties) && Object.keys(s.patternProperties).length) errs.push(forbiddenError(`${path}.patternProperties`, 'patternProperties is not supported'));
  if (isPlainObject(s.definitions) && Object.keys(s.definitions).length) errs.push(forbiddenError(`${path}.definitions`, 'definitions is not supported'));
  if (s.dependencies !== undefined && s.dependencies !== null) errs.push(forbiddenError(`${path}.dependencies`, 'dependencies is not supported'));
  if (s.$ref !== undefined && s.$ref !== null) errs.push(forbiddenError(`${path}.$ref`, '$ref is not supported'));
  if (type === 'null') errs.push(forbiddenError(`${path}.type`, 'type cannot be set to null, use nullable as an alternative'));
  if (Array.isArray(s.items) && s.items.length) errs.push(forbiddenError(`${path}.items`, 'items must be a schema object and not an array'));
  if (ssv.insideResourceMeta && s['x-kubernetes-embedded-resource'] === true) errs.push(forbiddenError(`${path}.x-kubernetes-embedded-resource`, 'must not be used inside of resource meta'));
}

function openAPISchema(s: unknown, path: string, ssv: SSV, isRoot: boolean, errs: FieldError[]): void {
  if (!isPlainObject(s)) return;
  ssvValidate(s, path, ssv, errs);
  if (s.uniqueItems === true) errs.push(forbiddenError(`${path}.uniqueItems`, 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  const props = isPlainObject(s.properties) ? s.properties : {};
  const hasProps = Object.keys(props).length > 0;
  if (s.additionalProperties !== undefined && s.additionalProperties !== null) {
    if (hasProps && (s.additionalProperties === false || isPlainObject(s.additionalProperties))) {
      errs.push(forbiddenError(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
    }
    const sub = ssv.insideResourceMeta ? { ...ssv, allowDefaults: false, disallowDefaultsReason: 'inside additionalProperties applying to object metadata' } : ssv;
    openAPISchema(s.additionalProperties, `${path}.additionalProperties`, sub, false, errs);
  }
  for (const [k, p] of Object.entries(props)) {
    let sub = ssv;
    if ((isRoot || s['x-kubernetes-embedded-resource'] === true) && META_FIELDS.has(k)) {
      sub = { ...sub, insideResourceMeta: true };
      if (isRoot) sub = { ...sub, allowDefaults: false, disallowDefaultsReason: `in top-level ${k}` };
    }
    openAPISchema(p, `${path}.properties[${k}]`, sub, false, errs);
  }
  openAPISchema(s.not, `${path}.not`, ssv, false, errs);
  arr(s.allOf).forEach((x, i) => openAPISchema(x, `${path}.allOf[${i}]`, ssv, false, errs));
  arr(s.oneOf).forEach((x, i) => openAPISchema(x, `${path}.oneOf[${i}]`, ssv, false, errs));
  arr(s.anyOf).forEach((x, i) => openAPISchema(x, `${path}.anyOf[${i}]`, ssv, false, errs));
  if (isPlainObject(s.definitions)) for (const [k, d] of Object.entries(s.definitions)) openAPISchema(d, `${path}.definitions[${k}]`, ssv, false, errs);
  if (isPlainObject(s.items)) openAPISchema(s.items, `${path}.items`, ssv, false, errs);
  else if (Array.isArray(s.items)) s.items.forEach((x, i) => openAPISchema(x, `${path}.items[${i}]`, ssv, false, errs));
  if (isPlainObject(s.dependencies)) for (const [k, d] of Object.entries(s.dependencies)) openAPISchema(d, `${path}.dependencies[${k}]`, ssv, false, errs);

  if (s['x-kubernetes-preserve-unknown-fields'] === false) errs.push(invalidError(`${path}.x-kubernetes-preserve-unknown-fields`, 'false', 'must be true or undefined'));
  const type = str(s.type);
  const mapType = s['x-kubernetes-map-type'];
  if (mapType !== undefined && mapType !== null && type !== 'object') {
    if (!type) errs.push(requiredError(`${path}.type`, 'must be object if x-kubernetes-map-type is specified'));
    else errs.push(invalidError(`${path}.type`, q(type), 'must be object if x-kubernetes-map-type is specified'));
  }
  if (mapType !== undefined && mapType !== null && mapType !== 'atomic' && mapType !== 'granular') errs.push(notSupportedError(`${path}.x-kubernetes-map-type`, goValue(mapType), ['atomic', 'granular']));
  const listType = s['x-kubernetes-list-type'];
  const hasListType = listType !== undefined && listType !== null;
  if (hasListType && type !== 'array') {
    if (!type) errs.push(requiredError(`${path}.type`, 'must be array if x-kubernetes-list-type is specified'));
    else errs.push(invalidError(`${path}.type`, q(type), 'must be array if x-kubernetes-list-type is specified'));
  } else if (listType === 'set' && isPlainObject(s.items)) {
    const is = s.items;
    if (is.type === 'array' && is['x-kubernetes-list-type'] !== undefined && is['x-kubernetes-list-type'] !== 'atomic') {
      errs.push(invalidError(`${path}.items.x-kubernetes-list-type`, goValue(is['x-kubernetes-list-type']), 'must be atomic as item of a list with x-kubernetes-list-type=set'));
    } else if (is.type === 'object' && is['x-kubernetes-map-type'] !== 'atomic') {
      errs.push(invalidError(`${path}.items.x-kubernetes-map-type`, is['x-kubernetes-list-type'] === undefined ? 'null' : goValue(is['x-kubernetes-list-type']), 'must be atomic as item of a list with x-kubernetes-list-type=set'));
    }
  }
  if (hasListType && listType !== 'atomic' && listType !== 'set' && listType !== 'map') errs.push(notSupportedError(`${path}.x-kubernetes-list-type`, goValue(listType), ['atomic', 'set', 'map']));
  const mapKeys = arr(s['x-kubernetes-list-map-keys']).map(str);
  if (mapKeys.length > 0) {
    if (!hasListType) errs.push(requiredError(`${path}.x-kubernetes-list-type`, 'must be map if x-kubernetes-list-map-keys is non-empty'));
    else if (listType !== 'map') errs.push(invalidError(`${path}.x-kubernetes-list-type`, goValue(listType), 'must be map if x-kubernetes-list-map-keys is non-empty'));
  }
  if (listType === 'map') {
    if (mapKeys.length === 0) errs.push(requiredError(`${path}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'));
    if (s.items === undefined || s.items === null) errs.push(requiredError(`${path}.items`, 'must have a schema if x-kubernetes-list-type is map'));
    if (Array.isArray(s.items)) errs.push(invalidError(`${path}.items`, jsonValue(s.items), 'must only have a single schema if x-kubernetes-list-type is map'));
    if (isPlainObject(s.items) && s.items.type !== 'object') errs.push(invalidError(`${path}.items.type`, q(str(s.items.type)), "must be object if parent array's x-kubernetes-list-type is map"));
    if (isPlainObject(s.items) && s.items.type === 'object') {
      const itemProps = isPlainObject(s.items.properties) ? s.items.properties : {};
      const seen = new Set<string>();
      for (const k of mapKeys) {
        const kp = itemProps[k];
        if (isPlainObject(kp)) {
          if (kp.type === 'array' || kp.type === 'object') errs.push(invalidError(`${path}.items.properties[${k}].type`, q(str(s.items.type)), "must be a scalar type if parent array's x-kubernetes-list-type is map"));
        } else {
          errs.push(invalidError(`${path}.x-kubernetes-list-map-keys`, goStringSlice(mapKeys), 'entries must all be names of item properties'));
        }
        if (seen.has(k)) errs.push(invalidError(`${path}.x-kubernetes-list-map-keys`, goStringSlice(mapKeys), 'must not contain duplicate entries'));
        seen.add(k);
      }
    }
  }
  // requireMapListKeysMapSetValidation
  if (isPlainObject(s.items) && (listType === 'set' || listType === 'map')) {
    if (s.items.nullable === true) errs.push(forbiddenError(`${path}.items.nullable`, `cannot be nullable when x-kubernetes-list-type is ${listType}`));
    if (listType === 'map') {
      const required = new Set(arr(s.items.required));
      const itemProps = isPlainObject(s.items.properties) ? s.items.properties : {};
      for (const k of mapKeys) {
        const kp = itemProps[k];
        if (!isPlainObject(kp)) continue;
        if (!required.has(k) && kp.default === undefined) errs.push(requiredError(`${path}.items.properties[${k}].default`, 'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property'));
        if (kp.nullable === true) errs.push(forbiddenError(`${path}.items.properties[${k}].nullable`, 'this property is in x-kubernetes-list-map-keys, so it cannot be nullable'));
      }
    }
  }
  // x-kubernetes-validations: the checks that need no compilation
  arr(s['x-kubernetes-validations']).forEach((r, i) => {
    const rule = isPlainObject(r) ? r : {};
    const rp = `${path}.x-kubernetes-validations[${i}]`;
    const ruleText = str(rule.rule);
    const message = str(rule.message);
    const trimmedRule = ruleText.trim();
    const trimmedMsg = message.trim();
    if (trimmedRule.length === 0) errs.push(requiredError(`${rp}.rule`, 'rule is not specified'));
    else if (message.length > 0 && trimmedMsg.length === 0) errs.push(invalidError(`${rp}.message`, q(message), 'message must be non-empty if specified'));
    else if (NEWLINE.test(trimmedMsg)) errs.push(invalidError(`${rp}.message`, q(message), 'message must not contain line breaks'));
    else if (NEWLINE.test(trimmedRule) && trimmedMsg.length === 0) errs.push(requiredError(`${rp}.message`, 'message must be specified if rule contains line breaks'));
    const me = str(rule.messageExpression);
    if (me.length > 0 && me.trim().length === 0) errs.push(requiredError(`${rp}.messageExpression`, 'messageExpression must be non-empty if specified'));
    if (rule.reason !== undefined && rule.reason !== null && !VALIDATION_REASONS.includes(str(rule.reason))) errs.push(notSupportedError(`${rp}.reason`, goValue(rule.reason), VALIDATION_REASONS));
    const fp = str(rule.fieldPath);
    if (fp.length > 0 && fp.trim().length === 0) errs.push(invalidError(`${rp}.fieldPath`, q(fp), 'fieldPath must be non-empty if specified'));
    if (NEWLINE.test(fp)) errs.push(invalidError(`${rp}.fieldPath`, q(fp), 'fieldPath must not contain line breaks'));
    if (fp.length > 0) {
      const r2 = validFieldPath(fp, s);
      if (r2.error) errs.push(invalidError(`${rp}.fieldPath`, q(fp), `fieldPath must be a valid path: ${r2.error}`));
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Selectable fields.

export const MaxSelectableFields = 8;

/** kube's ValidateCustomResourceSelectableFields against the version's (or the shared) schema. */
function validateSelectableFields(fields: unknown[], schema: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const unique = new Set<string>();
  fields.forEach((f, i) => {
    const jp = str(isPlainObject(f) ? f.jsonPath : undefined);
    const fp = `${path}[${i}].jsonPath`;
    if (jp === '') {
      errs.push(requiredError(fp));
      return;
    }
    const r = selectableFieldPath(jp, schema);
    if ('error' in r) {
      errs.push(invalidError(fp, q(jp), `is an invalid path: ${r.error}`));
      return;
    }
    if (r.root === 'metadata') errs.push(invalidError(fp, q(jp), 'must not point to fields in metadata'));
    const type = isPlainObject(r.schema) ? r.schema.type : undefined;
    if (type !== 'string' && type !== 'boolean' && type !== 'integer') {
      errs.push(invalidError(fp, q(jp), 'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.'));
    }
    if (unique.has(r.path)) errs.push(duplicateError(fp, q(jp)));
    else unique.add(r.path);
  });
  if (unique.size > MaxSelectableFields) errs.push(tooManyError(path, unique.size, MaxSelectableFields));
  return errs;
}

/** selectableFields of a version (or the hoisted ones), with kube's checks that a schema exists. */
function validateSelectableFieldsOf(fields: unknown[], container: unknown, topLevel: boolean, path: string, schemaPath: string): FieldError[] {
  if (fields.length === 0) return [];
  // kube's wording (sic); the top level only asks for spec.validation itself
  if (topLevel && !isPlainObject(container)) return [invalidError(path, '""', 'selectableFields may only be set when validations.schema is included')];
  if (!topLevel && !(isPlainObject(container) && isPlainObject(container.openAPIV3Schema))) {
    return [invalidError(path, '""', 'selectableFields may only be set when version.schema.openAPIV3Schema is not included')];
  }
  const errs: FieldError[] = [];
  const schema = isPlainObject(container) ? container.openAPIV3Schema : undefined;
  const initErr = isPlainObject(schema) ? structuralInitError(schema) : undefined;
  if (initErr) errs.push(invalidError(schemaPath, '""', initErr));
  errs.push(...validateSelectableFields(fields, initErr ? undefined : schema, path));
  return errs;
}

// ---------------------------------------------------------------------------------------------
// One schema (spec.validation or spec.versions[i].schema).

function validateCRValidation(container: unknown, statusEnabled: boolean, path: string, errsOut: FieldError[]): void {
  if (!isPlainObject(container)) return;
  const schema = container.openAPIV3Schema;
  if (!isPlainObject(schema)) return;
  const errs: FieldError[] = [];
  const sPath = `${path}.openAPIV3Schema`;
  if (statusEnabled) {
    for (const [k, v] of Object.entries(schema)) {
      if (!nonZero(v)) continue;
      const goName = GO_FIELD[k];
      if (goName === undefined) continue;
      if (goName === 'Type') {
        if (v !== 'object') {
          errs.push(invalidError(`${path}.openAPIV3Schema.type`, goValue(v), 'only "object" is allowed as the type at the root of the schema if the status subresource is enabled'));
          break;
        }
        continue;
      }
      if (!ALLOWED_AT_ROOT_WITH_STATUS.includes(goName)) {
        errs.push(invalidError(sPath, jsonValue(schema), `only [${ALLOWED_AT_ROOT_WITH_STATUS.join(' ')}] fields are allowed at the root of the schema if the status subresource is enabled`));
        break;
      }
    }
  }
  if (schema.nullable === true) errs.push(forbiddenError(`${path}.openAPIV3Schema.nullable`, 'nullable cannot be true at the root'));

  let celEnabled = false;
  const initErrs: FieldError[] = [];
  const initErr = structuralInitError(schema);
  if (initErr) initErrs.push(invalidError(sPath, '""', initErr));
  else {
    const structural = validateStructural(schema, sPath);
    if (structural.length) errs.push(...structural);
    else {
      const defaults: FieldError[] = [];
      validateDefaults(schema, sPath, false, true, defaults);
      if (defaults.length) errs.push(...defaults);
      else celEnabled = true;
    }
  }
  const schemaErrs: FieldError[] = [];
  openAPISchema(schema, sPath, { allowDefaults: true, disallowDefaultsReason: '', insideResourceMeta: false }, true, schemaErrs);
  errs.push(...schemaErrs);
  if (celEnabled) {
    const dirty = (nodePath: string) => schemaErrs.some((e) => e.field === nodePath || e.field.startsWith(nodePath + '.'));
    const rules = compileSchemaRules(schema, { basePath: sPath, skipNode: dirty });
    errs.push(...rules.errors);
  }
  if (errs.length === 0 && initErrs.length > 0) errs.push(...initErrs);
  // kube finally builds the schema validator ("error building validator: ..."); with RE2
  // patterns ajv cannot fail on a schema that got this far, and the caller compiles it anyway.
  errsOut.push(...errs);
}

// ---------------------------------------------------------------------------------------------
// The CRD.

const hasStatus = (sub: unknown): boolean => isPlainObject(sub) && sub.status !== undefined && sub.status !== null;

function schemaHas(s: unknown, pred: (s: Obj) => boolean): boolean {
  if (!isPlainObject(s)) return false;
  if (pred(s)) return true;
  const subs: unknown[] = [s.not, s.additionalProperties, s.additionalItems, ...arr(s.allOf), ...arr(s.anyOf), ...arr(s.oneOf)];
  if (Array.isArray(s.items)) subs.push(...s.items);
  else subs.push(s.items);
  for (const m of [s.properties, s.patternProperties, s.definitions, s.dependencies]) if (isPlainObject(m)) subs.push(...Object.values(m));
  return subs.some((x) => schemaHas(x, pred));
}

function validateDeprecationWarning(deprecated: boolean, warning: unknown): string[] {
  if (!deprecated && warning !== undefined && warning !== null) return ['can only be set for deprecated versions'];
  if (typeof warning !== 'string') return [];
  const errs: string[] = [];
  if (Buffer.byteLength(warning, 'utf8') > 256) errs.push('must be <= 256 characters long');
  if (warning.length === 0) errs.push('must not be an empty string');
  let i = 0;
  for (const ch of warning) {
    if (/[\p{Cc}]/u.test(ch)) {
      errs.push(`must only contain printable UTF-8 characters; control character found at index ${i}`);
      break;
    }
    if (/[\p{C}\p{Zl}\p{Zp}]/u.test(ch) || (/\p{Zs}/u.test(ch) && ch !== ' ')) {
      errs.push(`must only contain printable UTF-8 characters; non-printable character found at index ${i}`);
      break;
    }
    i += Buffer.byteLength(ch, 'utf8');
  }
  return errs;
}

function isProtectedGroup(group: string): boolean {
  return group === 'k8s.io' || group.endsWith('.k8s.io') || group === 'kubernetes.io' || group.endsWith('.kubernetes.io');
}

const APPROVAL_ANNOTATION = 'api-approved.kubernetes.io';

function approvalState(annotations: unknown): { state: 'missing' | 'bypassed' | 'approved' | 'invalid'; reason: string } {
  const a = isPlainObject(annotations) ? str(annotations[APPROVAL_ANNOTATION]) : '';
  if (a.length === 0) return { state: 'missing', reason: `protected groups must have approval annotation ${q(APPROVAL_ANNOTATION)}, see https://github.com/kubernetes/enhancements/pull/1111` };
  if (a.startsWith('unapproved')) return { state: 'bypassed', reason: `not approved: ${q(a)}` };
  try {
    const u = new URL(a);
    if (u.host && u.protocol) return { state: 'approved', reason: `approved in ${a}` };
  } catch {
    // fall through
  }
  return { state: 'invalid', reason: `protected groups must have approval annotation ${q(APPROVAL_ANNOTATION)} with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111` };
}

function isEstablished(crd: Obj): boolean {
  return arr(crd?.status?.conditions).some((c) => isPlainObject(c) && c.type === 'Established' && c.status === 'True');
}

/**
 * Validates an apiextensions.k8s.io/v1 CustomResourceDefinition (and, with `old`, the update
 * rules). Returns kube-apiserver's field errors in its order; an empty list means valid.
 */
export function validateCustomResourceDefinition(crd: any, old?: any): FieldError[] {
  const errs: FieldError[] = [];
  const c: Obj = isPlainObject(crd) ? crd : {};
  const meta: Obj = isPlainObject(c.metadata) ? c.metadata : {};
  const spec: Obj = isPlainObject(c.spec) ? c.spec : {};
  const names: Obj = isPlainObject(spec.names) ? spec.names : {};
  const group = str(spec.group);
  const versions: Obj[] = arr(spec.versions).map((v) => (isPlainObject(v) ? v : {}));
  const preserveUnknownFields = spec.preserveUnknownFields === true;

  // metadata.name: <plural>.<group> (DNS-subdomain and required checks are generic ObjectMeta validation)
  const name = str(meta.name);
  if (name && name !== `${str(names.plural)}.${group}`) errs.push(invalidError('metadata.name', q(name), 'must be spec.names.plural+"."+spec.group'));

  // The internal form: identical per-version schema/subresources/columns become top-level fields.
  const identical = (key: string) => versions.length > 0 && versions.every((v) => semanticEqual(v[key], versions[0][key]));
  const topValidation = identical('schema') ? versions[0]?.schema : undefined;
  const schemaHoisted = identical('schema');
  const topSubresources = identical('subresources') ? versions[0]?.subresources : undefined;
  const subresourcesHoisted = identical('subresources');
  const topColumns = identical('additionalPrinterColumns') ? arr(versions[0]?.additionalPrinterColumns) : [];
  const columnsHoisted = identical('additionalPrinterColumns');
  // selectableFields move up only together with the schema they refer to
  const selectableHoisted = schemaHoisted && identical('selectableFields');
  const versionSchema = (v: Obj) => (schemaHoisted ? undefined : v.schema);
  const versionSubresources = (v: Obj) => (subresourcesHoisted ? undefined : v.subresources);
  const hasTopSchema = isPlainObject(topValidation) && isPlainObject(topValidation.openAPIV3Schema);

  // spec.group
  if (!group) errs.push(requiredError('spec.group'));
  else {
    const e = isDNS1123Subdomain(group);
    if (e.length) errs.push(invalidError('spec.group', q(group), e.join(',')));
    else if (group.split('.').length < 2) errs.push(invalidError('spec.group', q(group), 'should be a domain with at least one dot'));
  }

  // spec.scope
  const scope = str(spec.scope);
  if (!scope) errs.push(requiredError('spec.scope'));
  else if (scope !== 'Cluster' && scope !== 'Namespaced') errs.push(notSupportedError('spec.scope', q(scope), ['Cluster', 'Namespaced']));

  // schemas are required (v1 requires an OpenAPI schema for every version)
  if (!hasTopSchema) {
    versions.forEach((v, i) => {
      const s = versionSchema(v);
      if (!isPlainObject(s) || !isPlainObject(s.openAPIV3Schema)) errs.push(requiredError(`spec.versions[${i}].schema.openAPIV3Schema`, 'schemas are required'));
    });
  }
  const anySchema = (pred: (s: Obj) => boolean) =>
    (hasTopSchema && schemaHas(topValidation.openAPIV3Schema, pred)) || versions.some((v) => isPlainObject(versionSchema(v)) && schemaHas(versionSchema(v).openAPIV3Schema, pred));
  if (anySchema((s) => s.default !== undefined && s.default !== null) && spec.preserveUnknownFields !== false && preserveUnknownFields) {
    errs.push(invalidError('spec.preserveUnknownFields', 'true', 'must be false in order to use defaults in the schema'));
  }

  // versions
  let storageCount = 0;
  const seenVersions = new Set<string>();
  let unique = true;
  versions.forEach((v, i) => {
    const vp = `spec.versions[${i}]`;
    if (v.storage === true) storageCount++;
    const vname = str(v.name);
    if (seenVersions.has(vname)) unique = false;
    seenVersions.add(vname);
    const ne = isDNS1035Label(vname);
    if (ne.length) errs.push(invalidError(`${vp}.name`, q(vname), ne.join(',')));
    for (const m of validateDeprecationWarning(v.deprecated === true, v.deprecationWarning)) errs.push(invalidError(`${vp}.deprecationWarning`, goValue(v.deprecationWarning), m));
    const subresources = subresourcesHoisted ? topSubresources : versionSubresources(v);
    validateCRValidation(versionSchema(v), hasStatus(subresources), `${vp}.schema`, errs);
    errs.push(...validateSubresources(versionSubresources(v), `${vp}.subresources`));
    if (!columnsHoisted) arr(v.additionalPrinterColumns).forEach((col, j) => errs.push(...validateColumn(col, `${vp}.additionalPrinterColumns[${j}]`)));
    // With identical schemas but different selectableFields the schema moved to spec.validation
    // and the versions' fields have none left to refer to: kube rejects them (as here).
    if (!selectableHoisted) errs.push(...validateSelectableFieldsOf(arr(v.selectableFields), versionSchema(v), false, `${vp}.selectableFields`, `${vp}.schema.openAPIV3Schema`));
  });
  if (!unique) errs.push(invalidError('spec.versions', versionsValue(spec.versions), 'must contain unique version names'));
  if (storageCount !== 1) errs.push(invalidError('spec.versions', versionsValue(spec.versions), 'must have exactly one version marked as storage version'));
  // spec.version is versions[0].name in the internal form
  if (versions.length > 0 && str(versions[0].name)) {
    const ve = isDNS1035Label(str(versions[0].name));
    if (ve.length) errs.push(invalidError('spec.version', q(str(versions[0].name)), ve.join(',')));
  }

  // names
  if (!str(names.plural)) errs.push(requiredError('spec.names.plural'));
  if (!str(names.singular)) errs.push(requiredError('spec.names.singular'));
  if (!str(names.kind)) errs.push(requiredError('spec.names.kind'));
  if (!str(names.listKind)) errs.push(requiredError('spec.names.listKind'));
  errs.push(...validateNames(names, 'spec.names'));

  // top-level (hoisted) schema, subresources and columns
  const anyStatus = hasStatus(topSubresources) || versions.some((v) => hasStatus(versionSubresources(v)));
  if (schemaHoisted) validateCRValidation(topValidation, anyStatus, 'spec.validation', errs);
  if (subresourcesHoisted) errs.push(...validateSubresources(topSubresources, 'spec.subresources'));
  if (columnsHoisted) topColumns.forEach((col, j) => errs.push(...validateColumn(col, `spec.additionalPrinterColumns[${j}]`)));
  if (selectableHoisted) {
    // kube reports a schema it cannot read at "spec.schema.openAPIV3Schema" here (sic)
    errs.push(...validateSelectableFieldsOf(arr(versions[0]?.selectableFields), topValidation, true, 'spec.selectableFields', 'spec.schema.openAPIV3Schema'));
  }

  // conversion
  errs.push(...validateConversion(spec.conversion, 'spec.conversion', preserveUnknownFields));

  // update rules
  if (isPlainObject(old)) {
    const oldSpec: Obj = isPlainObject(old.spec) ? old.spec : {};
    const oldNames: Obj = isPlainObject(oldSpec.names) ? oldSpec.names : {};
    if (isEstablished(old)) {
      if (str(spec.scope) !== str(oldSpec.scope)) errs.push(invalidError('spec.scope', q(str(spec.scope)), 'field is immutable'));
      if (str(names.kind) !== str(oldNames.kind)) errs.push(invalidError('spec.names.kind', q(str(names.kind)), 'field is immutable'));
    }
    if (group !== str(oldSpec.group)) errs.push(invalidError('spec.group', q(group), 'field is immutable'));
    if (str(names.plural) !== str(oldNames.plural)) errs.push(invalidError('spec.names.plural', q(str(names.plural)), 'field is immutable'));
  }
  // status
  const status: Obj = isPlainObject(c.status) ? c.status : {};
  if (isPlainObject(status.acceptedNames)) errs.push(...validateNames(status.acceptedNames, 'status.acceptedNames'));
  if (Array.isArray(status.storedVersions) && (status.storedVersions.length > 0 || old !== undefined)) {
    const stored: string[] = status.storedVersions.map(str);
    if (stored.length === 0) errs.push(invalidError('status.storedVersions', '[]string{}', 'must have at least one stored version'));
    else {
      const remaining = new Map<string, number>();
      stored.forEach((v, i) => remaining.set(v, i));
      for (const v of versions) {
        const has = remaining.has(str(v.name));
        if (v.storage === true && !has) errs.push(invalidError('status.storedVersions', jsonValue(v), `must have the storage version ${str(v.name)}`));
        if (has) remaining.delete(str(v.name));
      }
      for (const [v, i] of remaining) errs.push(invalidError(`status.storedVersions[${i}]`, q(v), 'must appear in spec.versions'));
    }
  }

  // API approval for protected groups
  if (isProtectedGroup(group)) {
    const now = approvalState(meta.annotations);
    const before = isPlainObject(old) ? approvalState(old?.metadata?.annotations).state : undefined;
    if (before !== now.state) {
      const field = `metadata.annotations[${APPROVAL_ANNOTATION}]`;
      const value = isPlainObject(meta.annotations) ? str(meta.annotations[APPROVAL_ANNOTATION]) : '';
      if (now.state === 'missing') errs.push(requiredError(field, now.reason));
      else if (now.state === 'invalid') errs.push(invalidError(field, q(value), now.reason));
    }
  }

  // spec.preserveUnknownFields may not be turned on
  if (preserveUnknownFields && !(isPlainObject(old) && old?.spec?.preserveUnknownFields === true)) {
    errs.push(invalidError('spec.preserveUnknownFields', 'true', 'cannot set to true, set x-preserve-unknown-fields to true in spec.versions[*].schema instead'));
  }

  return errs;
}

/**
 * ValidateCustomResourceDefinitionStatus, all a write of the status subresource is checked for
 * (ValidateUpdateCustomResourceDefinitionStatus): the accepted names. The spec is not looked at.
 */
export function validateCustomResourceDefinitionStatus(crd: any): FieldError[] {
  const status = isPlainObject(crd?.status) ? crd.status : {};
  return isPlainObject(status.acceptedNames) ? validateNames(status.acceptedNames, 'status.acceptedNames') : [];
}

/** The schema kube uses for a served version: the version's own, else the shared one. */
export function versionSchemaOf(crd: any, version: string): Obj | undefined {
  const v = arr(crd?.spec?.versions).find((x) => isPlainObject(x) && x.name === version);
  return isPlainObject(v?.schema?.openAPIV3Schema) ? v.schema.openAPIV3Schema : undefined;
}
