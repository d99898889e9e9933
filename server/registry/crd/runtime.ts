// What serving one version of a CustomResourceDefinition needs at request time: the REST
// resource (a ResourceInfo the catalog indexes like a built-in) plus the compiled schema, CEL
// rules, printer, selectable fields, scale paths, deprecation warning and converter. Schemas
// and rules compile on first use and are shared by every later request (and by later CRD
// revisions whose spec did not change), so installing many CRDs costs little at start-up.
import type { ResourceInfo, TypeNode, TablePrinter, CustomResourceVersion, ScalePaths } from '../../schema/types.ts';
import { TypeModel } from '../../schema/model.ts';
import { compareKubeVersions } from '../../schema/catalog.ts';
import { compileVersionSchema, type CompiledSchema } from './schema-validator.ts';
import { compileSchemaRules, evaluateRules, hasValidationRules, type CompiledSchemaRules } from './cel/index.ts';
import { crdTablePrinter } from '../printers/crd.ts';
import { converterFor } from './conversion.ts';
import { fieldErrorText, type FieldError } from '../../validation/field.ts';
import { compileSelectableFields, compileSimpleJsonPath } from './jsonpath.ts';
import { isPlainObject } from '../../util/json.ts';

type Obj = Record<string, any>;

export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';
const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const SUBRESOURCE_VERBS = ['get', 'patch', 'update'];

/** Schema errors that keep CEL rules from running (kube's hasBlockingErr). */
const BLOCKING_REASONS = new Set<FieldError['reason']>(['FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTooLong', 'FieldValueTooMany', 'FieldValueTypeInvalid']);
const RULES_NOT_CHECKED: FieldError = {
  reason: 'FieldValueInvalid',
  field: '<nil>',
  message: 'Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
};

function hasBlockingError(errs: FieldError[]): boolean {
  for (const e of errs) if (BLOCKING_REASONS.has(e.reason)) return true;
  return false;
}

/**
 * One served version as this runtime builds it: the contract the rest of the server reads through
 * ResourceInfo.custom (CustomResourceVersion in schema/types.ts), with the full types of its
 * compiled schema and CEL rules, for validate() here and for tests and benchmarks.
 */
export interface CustomResourceRuntime extends CustomResourceVersion {
  /** openAPIV3Schema validator/pruner/defaulter of this version. */
  compiled(): CompiledSchema;
  /** x-kubernetes-validations of this version (undefined when there are none). */
  rules(): CompiledSchemaRules | undefined;
}

/** A REST resource a CRD serves, its `custom` typed as this runtime builds it. */
export interface CustomResourceInfo extends ResourceInfo {
  custom: CustomResourceRuntime;
}

interface Compiled {
  compiled?: CompiledSchema;
  rules?: CompiledSchemaRules | null;
  typeNode?: TypeNode;
  printer?: TablePrinter;
}

/** Compiled artefacts by schema text: CRD revisions that leave a version's schema alone reuse them. */
const compiledBySchema = new Map<string, Compiled>();
const MAX_COMPILED = 2000;

function compiledFor(key: string): Compiled {
  let c = compiledBySchema.get(key);
  if (!c) {
    if (compiledBySchema.size >= MAX_COMPILED) compiledBySchema.delete(compiledBySchema.keys().next().value!);
    compiledBySchema.set(key, (c = {}));
  }
  return c;
}

export function servedVersions(crd: any): Obj[] {
  return (Array.isArray(crd?.spec?.versions) ? crd.spec.versions : []).filter((v: unknown) => isPlainObject(v) && v.served === true);
}

export function storageVersionOf(crd: any): string {
  const v = (crd?.spec?.versions ?? []).find((x: any) => isPlainObject(x) && x.storage === true);
  return v?.name ?? '';
}

/** The names a CRD is served under: the accepted ones once the CRD is established, else the spec's. */
function namesOf(crd: any): Obj {
  const accepted = crd?.status?.acceptedNames;
  return isPlainObject(accepted) && accepted.plural ? accepted : crd?.spec?.names ?? {};
}

/** The REST resources a CRD serves, one per served version. */
export function customResourceInfos(crd: any): CustomResourceInfo[] {
  const spec = crd.spec ?? {};
  const group: string = spec.group;
  const names = namesOf(crd);
  const storageVersion = storageVersionOf(crd);
  const terminating = !!crd.metadata?.deletionTimestamp;
  const served = servedVersions(crd);
  const converter = converterFor(crd);
  return served.map((v) => {
    const schema: Obj | undefined = isPlainObject(v.schema?.openAPIV3Schema) ? v.schema.openAPIV3Schema : undefined;
    const columns = Array.isArray(v.additionalPrinterColumns) ? v.additionalPrinterColumns : [];
    const cache = compiledFor(JSON.stringify([schema ?? null, columns]));
    const sub = isPlainObject(v.subresources) ? v.subresources : {};
    const scaleSpec = isPlainObject(sub.scale) ? sub.scale : undefined;
    const scale: ScalePaths | undefined = scaleSpec && {
      specReplicas: compileSimpleJsonPath(scaleSpec.specReplicasPath),
      statusReplicas: compileSimpleJsonPath(scaleSpec.statusReplicasPath),
      labelSelector: scaleSpec.labelSelectorPath ? compileSimpleJsonPath(scaleSpec.labelSelectorPath) : undefined,
    };
    const selectable = (Array.isArray(v.selectableFields) ? v.selectableFields : []).map((f: any) => String(f?.jsonPath ?? '')).filter(Boolean);
    const namespaced = spec.scope === 'Namespaced';
    const selectableOf = compileSelectableFields(selectable);
    const subresources: ResourceInfo['subresources'] = {};
    if (isPlainObject(sub.status)) subresources.status = { verbs: SUBRESOURCE_VERBS };
    if (scale) subresources.scale = { verbs: SUBRESOURCE_VERBS, kind: 'Scale', group: 'autoscaling', version: 'v1' };
    const custom: CustomResourceRuntime = {
      crdName: crd.metadata.name,
      group,
      version: v.name,
      kind: names.kind,
      storageVersion,
      terminating,
      hasStatus: isPlainObject(sub.status),
      scale,
      selectableFields: selectable,
      fields(obj) {
        const out = selectableOf(obj);
        out['metadata.name'] = obj?.metadata?.name ?? '';
        if (namespaced) out['metadata.namespace'] = obj?.metadata?.namespace ?? '';
        return out;
      },
      deprecationWarning: v.deprecated === true ? (typeof v.deprecationWarning === 'string' ? v.deprecationWarning : defaultDeprecationWarning(group, names.kind, v.name, served)) : undefined,
      converter,
      compiled() {
        return (cache.compiled ??= compileVersionSchema(schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }));
      },
      rules() {
        if (cache.rules === undefined) cache.rules = schema && hasValidationRules(schema) ? compileSchemaRules(schema, { basePath: '' }) : null;
        return cache.rules ?? undefined;
      },
      typeNode() {
        return (cache.typeNode ??= typeNodeOf(schema));
      },
      printer() {
        return (cache.printer ??= crdTablePrinter(columns));
      },
      validate(obj, old, warnings) {
        // With the stored object, errors on what did not change are forgiven (kube's ratcheting).
        const errs = this.compiled().validate(obj, old === undefined ? {} : { oldObject: old });
        const rules = this.rules();
        if (!rules) return errs;
        // As kube: CEL rules only run on objects whose shape the schema accepted.
        if (hasBlockingError(errs)) errs.push(RULES_NOT_CHECKED);
        else {
          const ratcheted: FieldError[] = [];
          const ruleErrs = evaluateRules(rules, obj, old, { warnings: ratcheted });
          for (const e of ratcheted) warnings?.push(fieldErrorText(e));
          if (ruleErrs.length) errs.push(...ruleErrs);
        }
        return errs;
      },
    };
    return {
      group,
      version: v.name,
      resource: names.plural,
      kind: names.kind,
      listKind: names.listKind ?? `${names.kind}List`,
      singularName: names.singular ?? String(names.kind ?? '').toLowerCase(),
      namespaced,
      verbs: ALL_VERBS,
      ...(Array.isArray(names.shortNames) && names.shortNames.length ? { shortNames: names.shortNames } : {}),
      ...(Array.isArray(names.categories) && names.categories.length ? { categories: names.categories } : {}),
      ...(Object.keys(subresources).length ? { subresources } : {}),
      storageVersion,
      custom,
    };
  });
}

/** kube's default: the version is deprecated; name the newest served version at least as stable, if any. */
function defaultDeprecationWarning(group: string, kind: string, version: string, served: Obj[]): string {
  const base = `${group}/${version} ${kind} is deprecated`;
  const level = (v: string) => (/^v\d+$/.test(v) ? 2 : /beta/.test(v) ? 1 : /alpha/.test(v) ? 0 : -1);
  const candidates = served
    .map((v) => String(v.name))
    .filter((n) => n !== version && level(n) >= level(version) && compareKubeVersions(n, version) < 0)
    .filter((n) => served.find((v) => v.name === n)?.deprecated !== true)
    .sort(compareKubeVersions);
  return candidates.length ? `${base}; use ${group}/${candidates[0]} ${kind}` : base;
}

/** The version's schema for patch/apply/field validation, with metadata as the built-in ObjectMeta. */
function typeNodeOf(schema: Obj | undefined): TypeNode {
  const root: Obj = schema ? { ...schema } : { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  root.properties = {
    ...(isPlainObject(root.properties) ? root.properties : {}),
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { $ref: `#/definitions/${OBJECT_META}` },
  };
  if (root.type === undefined) root.type = 'object';
  return TypeModel.loadBuiltins().fromSchema(root);
}

/** Status a freshly written CRD carries: names accepted, established, storage version recorded. */
export function establishedStatus(crd: any, previous: any | undefined, now: string): Obj {
  const status: Obj = isPlainObject(previous) ? structuredClone(previous) : {};
  const names = { ...(crd.spec?.names ?? {}) };
  status.acceptedNames = names;
  const conditions: Obj[] = Array.isArray(status.conditions) ? status.conditions.filter(isPlainObject) : [];
  setCondition(conditions, { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' }, now);
  setCondition(conditions, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }, now);
  status.conditions = conditions;
  const stored: string[] = Array.isArray(status.storedVersions) ? status.storedVersions.filter((s: unknown) => typeof s === 'string') : [];
  const storage = storageVersionOf(crd);
  if (storage && !stored.includes(storage)) stored.push(storage);
  status.storedVersions = stored;
  return status;
}

/** Sets a condition, keeping lastTransitionTime when the status does not change. */
export function setCondition(conditions: Obj[], c: { type: string; status: string; reason: string; message: string }, now: string): void {
  const i = conditions.findIndex((x) => x.type === c.type);
  const existing = i >= 0 ? conditions[i] : undefined;
  const next = { type: c.type, status: c.status, lastTransitionTime: existing && existing.status === c.status ? existing.lastTransitionTime : now, reason: c.reason, message: c.message };
  if (i >= 0) conditions[i] = next;
  else conditions.push(next);
}

export function isEstablished(crd: any): boolean {
  return (crd?.status?.conditions ?? []).some((c: any) => c?.type === 'Established' && c.status === 'True');
}
