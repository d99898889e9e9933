// The insides of a pod's volumes and volume mounts, in kube-apiserver 1.36's words and order:
// validateVolumeSource (one source each, in kube's order, then that source's fields) and the
// per-source functions it calls; ValidatePersistentVolumeClaimTemplate for generic ephemeral
// volumes; ValidateVolumeMounts for each container. validation.ts calls them from
// validateVolumes and validateContainer. The downward API selectors (validateObjectFieldSelector,
// validateContainerResourceFieldSelector) and validatePullPolicy live here too: env variables and
// containers use them as well.
//
// Options as kube-apiserver 1.36 sets them for a new object: projected token paths must be local
// (AllowNonLocalProjectedTokenPath false), an image volume needs a reference
// (AllowEmptyImageVolumeReference false), volumeAttributesClassName is checked (the
// VolumeAttributesClass gate is GA). The ClusterTrustBundleProjection and PodCertificateRequest
// gates are off by default, and kube then drops clusterTrustBundle and podCertificate projections
// from a new pod before validating it: they are not checked here (hearth keeps them in the stored
// object).
//
// A field the schema requires and the request leaves out is the schema walk's Required value, at
// the field's own path; these checks do not repeat it there. Where kube reports a missing field at
// another path (a downward API file's path at downwardAPI.path, a token's at projected.path, a
// gcePersistentDisk's pdName at persistentDisk.pdName) hearth reports it there too. kube prints a
// pointer nested in a struct it shows with %#v as an address; hearth prints the pointee.
import { isPlainObject, objectsOf as objects } from '../../../../util/json.ts';
import { canonicalQuantity, parseQuantity } from '../../../../util/quantity.ts';
import { validateAnnotations, validateLabels, validateLabelSelector } from '../../../../validation/object-meta.ts';
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName } from '../../../../validation/names.ts';
import { goStringSlice } from '../../../../go/fmt.ts';
import { goQuote } from '../../../../go/strconv.ts';
import { forbiddenError, goValue, invalidError, notSupportedError, requiredError, tooLongError, type FieldError } from '../../../../validation/field.ts';
import type { Obj } from '../../../strategy.ts';

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
const present = (v: unknown): boolean => v !== undefined && v !== null;
/** A Quantity's text (a JSON number is one too). */
const quantityText = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);

// ---------------------------------------------------------------------------------------------
// Paths and file modes.

/** validatePathNoBacksteps: no ".." element (one error however many). */
function validatePathNoBacksteps(errs: FieldError[], target: string, path: string): void {
  if (target.split('/').includes('..')) errs.push(invalidError(path, goQuote(target), "must not contain '..'"));
}

/** validateLocalDescendingPath: relative, without "..". */
export function validateLocalDescendingPath(errs: FieldError[], target: string, path: string): void {
  if (target.startsWith('/')) errs.push(invalidError(path, goQuote(target), 'must be a relative path'));
  validatePathNoBacksteps(errs, target, path);
}

/** ValidateLocalNonReservedPath: as above, and not starting with ".." (kube says so for ".." itself too). */
export function validateLocalNonReservedPath(errs: FieldError[], target: string, path: string): void {
  validateLocalDescendingPath(errs, target, path);
  if (target.startsWith('..') && !target.startsWith('../')) errs.push(invalidError(path, goQuote(target), "must not start with '..'"));
}

const FILE_MODE = 'must be a number between 0 and 0777 (octal), both inclusive';

/** A defaultMode or mode: 0 to 0777. */
function fileMode(errs: FieldError[], mode: unknown, path: string): void {
  if (typeof mode === 'number' && (mode < 0 || mode > 0o777)) errs.push(invalidError(path, goValue(mode), FILE_MODE));
}

// ---------------------------------------------------------------------------------------------
// Downward API selectors (env variables' valueFrom and downwardAPI volume files).

/** The fields ConvertDownwardAPIFieldLabel knows at all. */
const DOWNWARD_FIELD_LABELS = new Set(['metadata.annotations', 'metadata.labels', 'metadata.name', 'metadata.namespace', 'metadata.uid', 'spec.nodeName', 'spec.restartPolicy', 'spec.serviceAccountName', 'spec.schedulerName', 'status.phase', 'status.hostIP', 'status.hostIPs', 'status.podIP', 'status.podIPs', 'spec.host']);
/** validVolumeDownwardAPIFieldPathExpressions, sorted as kube lists them. */
const VOLUME_FIELD_PATHS = ['metadata.annotations', 'metadata.labels', 'metadata.name', 'metadata.namespace', 'metadata.uid'];

/**
 * validateObjectFieldSelector: an apiVersion and a fieldPath kube can convert; a subscripted
 * label or annotation names a qualified key; anything else is one of `expressions` (sorted).
 */
export function validateObjectFieldSelector(errs: FieldError[], ref: Obj, expressions: string[], path: string): void {
  const apiVersion = str(ref.apiVersion);
  const fieldPath = str(ref.fieldPath);
  if (apiVersion === '') return void errs.push(requiredError(`${path}.apiVersion`));
  if (fieldPath === '') {
    if (ref.fieldPath === '') errs.push(requiredError(`${path}.fieldPath`));
    return;
  }
  const subscripted = /^(.*)\['(.*)'\]$/.exec(fieldPath);
  let problem: string | undefined;
  if (apiVersion !== 'v1') problem = `unsupported pod version: ${apiVersion}`;
  else if (subscripted && subscripted[1] !== 'metadata.annotations' && subscripted[1] !== 'metadata.labels') problem = `field label does not support subscript: ${fieldPath}`;
  else if (!subscripted && !DOWNWARD_FIELD_LABELS.has(fieldPath)) problem = `field label not supported: ${fieldPath}`;
  if (problem) return void errs.push(invalidError(`${path}.fieldPath`, goQuote(fieldPath), `error converting fieldPath: ${problem}`));
  if (subscripted) {
    const key = subscripted[1] === 'metadata.annotations' ? subscripted[2].toLowerCase() : subscripted[2];
    for (const m of isQualifiedName(key)) errs.push(invalidError(path, goQuote(key), m));
    return;
  }
  const internal = fieldPath === 'spec.host' ? 'spec.nodeName' : fieldPath;
  if (!expressions.includes(internal)) errs.push(notSupportedError(`${path}.fieldPath`, goQuote(internal), expressions));
}

/** validContainerResourceFieldPathExpressions, sorted; requests.hugepages-* and limits.hugepages-* pass too. */
export const CONTAINER_RESOURCE_FIELDS = ['limits.cpu', 'limits.ephemeral-storage', 'limits.memory', 'requests.cpu', 'requests.ephemeral-storage', 'requests.memory'];
const BYTE_DIVISORS = new Set(['1', '1k', '1M', '1G', '1T', '1P', '1E', '1Ki', '1Mi', '1Gi', '1Ti', '1Pi', '1Ei']);
const BYTE_DIVISORS_TEXT = '1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei';

/**
 * validateContainerResourceFieldSelector: a volume's file names its container; a known resource;
 * then validateContainerResourceDivisor (a divisor kube allows for that resource, compared in its
 * canonical form).
 */
export function validateContainerResourceFieldSelector(errs: FieldError[], ref: Obj, path: string, volume: boolean): void {
  const resource = str(ref.resource);
  if (volume && str(ref.containerName) === '') errs.push(requiredError(`${path}.containerName`));
  else if (resource === '') {
    if (ref.resource === '') errs.push(requiredError(`${path}.resource`));
  } else if (!CONTAINER_RESOURCE_FIELDS.includes(resource) && !resource.startsWith('requests.hugepages-') && !resource.startsWith('limits.hugepages-')) {
    errs.push(notSupportedError(`${path}.resource`, goQuote(resource), CONTAINER_RESOURCE_FIELDS));
  }
  validateContainerResourceDivisor(errs, resource, ref.divisor, `${path}.divisor`);
}

/** validateContainerResourceDivisor: a divisor (in its canonical form) the resource allows; 0 is unset. */
function validateContainerResourceDivisor(errs: FieldError[], resource: string, divisor: unknown, path: string): void {
  const text = quantityText(divisor);
  const q = text === undefined ? undefined : parseQuantity(text);
  if (text === undefined || q === undefined || q.num === 0n) return;
  const canonical = canonicalQuantity(text) ?? text;
  const refuse = (detail: string) => errs.push(invalidError(path, goQuote(resource), `only divisor's values ${detail} are supported with the ${nounOf(resource)}`));
  if (resource === 'limits.cpu' || resource === 'requests.cpu') {
    if (canonical !== '1m' && canonical !== '1') refuse('1m and 1');
  } else if (nounOf(resource) !== '' && !BYTE_DIVISORS.has(canonical)) {
    refuse(BYTE_DIVISORS_TEXT);
  }
}

/** What kube calls the resource in a divisor's message ("" for one it does not check). */
function nounOf(resource: string): string {
  if (resource === 'limits.cpu' || resource === 'requests.cpu') return 'cpu resource';
  if (resource === 'limits.memory' || resource === 'requests.memory') return 'memory resource';
  if (resource === 'limits.ephemeral-storage' || resource === 'requests.ephemeral-storage') return 'local ephemeral storage resource';
  if (resource.startsWith('limits.hugepages-') || resource.startsWith('requests.hugepages-')) return 'hugepages resource';
  return '';
}

// ---------------------------------------------------------------------------------------------
// Pull policies (containers and image volumes).

/** The pull policies, as kube lists them. */
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];

/** validatePullPolicy: one of the policies, never empty (absent: defaulted, or the schema walk's). */
export function validatePullPolicy(errs: FieldError[], policy: unknown, path: string): void {
  if (!present(policy)) return;
  const text = String(policy);
  if (text === '') errs.push(requiredError(path));
  else if (!PULL_POLICIES.includes(text)) errs.push(notSupportedError(path, goQuote(text), PULL_POLICIES));
}

// ---------------------------------------------------------------------------------------------
// Volume sources.

interface SourceContext {
  /** The volume's path (spec.volumes[i]) and name. */
  at: string;
  name: string;
  /** The pod's name: known for a Pod, not for a template. */
  podName: string;
}

type SourceCheck = (errs: FieldError[], s: Obj, at: string, ctx: SourceContext) => void;

/**
 * Required for each of the fields that is empty (validateGlusterfsVolumeSource,
 * validateAzureFile, ...): of `schemaRequired` when present and empty (the schema walk reports
 * them absent), of `optional` when absent too.
 */
function requiredStrings(schemaRequired: string[], optional: string[] = []): SourceCheck {
  return (errs, s, at) => {
    for (const f of schemaRequired) if (s[f] === '') errs.push(requiredError(`${at}.${f}`));
    for (const f of optional) if (str(s[f]) === '') errs.push(requiredError(`${at}.${f}`));
  };
}

function emptyDir(errs: FieldError[], s: Obj, at: string): void {
  const text = quantityText(s.sizeLimit);
  const q = text === undefined ? undefined : parseQuantity(text);
  if (q !== undefined && q.num < 0n) errs.push(forbiddenError(`${at}.sizeLimit`, 'SizeLimit field must be a valid resource quantity'));
}

/** supportedHostPathTypes, sorted. */
const HOST_PATH_TYPES = ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket'];

function hostPath(errs: FieldError[], s: Obj, at: string): void {
  const p = str(s.path);
  if (p === '') {
    if (s.path === '') errs.push(requiredError(`${at}.path`));
    return;
  }
  validatePathNoBacksteps(errs, p, `${at}.path`);
  if (present(s.type) && !HOST_PATH_TYPES.includes(String(s.type))) errs.push(notSupportedError(`${at}.type`, goQuote(String(s.type)), HOST_PATH_TYPES));
}

function gitRepo(errs: FieldError[], s: Obj, at: string): void {
  if (s.repository === '') errs.push(requiredError(`${at}.repository`));
  validateLocalDescendingPath(errs, str(s.directory), `${at}.directory`);
}

/**
 * validateGCEPersistentDiskVolumeSource / validateAWSElasticBlockStoreVolumeSource: a disk and a
 * partition of 0 to 255 (the message says from 1). A gcePersistentDisk is checked at
 * "persistentDisk", where the schema walk does not report a missing pdName.
 */
function partitionedDisk(diskField: string, renamed: boolean): SourceCheck {
  return (errs, s, at) => {
    if (s[diskField] === '' || (renamed && s[diskField] === undefined)) errs.push(requiredError(`${at}.${diskField}`));
    if (typeof s.partition === 'number' && (s.partition < 0 || s.partition > 255)) errs.push(invalidError(`${at}.partition`, goValue(s.partition), 'must be between 1 and 255, inclusive'));
  };
}

/** validateKeyToPath: a key, a local path, a mode. */
function keyToPath(errs: FieldError[], kp: Obj, at: string): void {
  if (kp.key === '') errs.push(requiredError(`${at}.key`));
  if (kp.path === '') errs.push(requiredError(`${at}.path`));
  validateLocalNonReservedPath(errs, str(kp.path), `${at}.path`);
  fileMode(errs, kp.mode, `${at}.mode`);
}

/** validateSecretVolumeSource and validateConfigMapVolumeSource: named, a default mode, items. */
function keyedSource(errs: FieldError[], s: Obj, at: string, nameField: string): void {
  if (str(s[nameField]) === '') errs.push(requiredError(`${at}.${nameField}`));
  fileMode(errs, s.defaultMode, `${at}.defaultMode`);
  objects(s.items).forEach((kp, i) => keyToPath(errs, kp, `${at}.items[${i}]`));
}
function secret(errs: FieldError[], s: Obj, at: string): void {
  keyedSource(errs, s, at, 'secretName');
}
function configMap(errs: FieldError[], s: Obj, at: string): void {
  keyedSource(errs, s, at, 'name');
}

function nfs(errs: FieldError[], s: Obj, at: string): void {
  if (s.server === '') errs.push(requiredError(`${at}.server`));
  if (s.path === '') errs.push(requiredError(`${at}.path`));
  const p = str(s.path);
  if (!p.startsWith('/')) errs.push(invalidError(`${at}.path`, goQuote(p), 'must be an absolute path'));
}

const IQN = /iqn\.\d{4}-\d{2}\.([A-Za-z0-9.-]+)(:[^,;*&$|\t\n\f\r ]+)$/u;
const EUI = /^eui[^\n][A-Za-z0-9]{16}$/u;
const NAA = /^naa[^\n][A-Za-z0-9]{32}$/u;
const FORMAT_PREFIX = 'must be valid format starting with iqn, eui, or naa';

/** The iqn/eui/naa rule of an IQN or initiator name: "" when it holds, else kube's message. */
function iscsiNameProblem(name: string): string {
  if (name.startsWith('iqn')) return IQN.test(name) ? '' : 'must be valid format';
  if (name.startsWith('eui')) return EUI.test(name) ? '' : 'must be valid format';
  if (name.startsWith('naa')) return NAA.test(name) ? '' : 'must be valid format';
  return FORMAT_PREFIX;
}

function iscsi(errs: FieldError[], s: Obj, at: string): void {
  if (s.targetPortal === '') errs.push(requiredError(`${at}.targetPortal`));
  const iqn = str(s.iqn);
  if (iqn === '') {
    if (s.iqn === '') errs.push(requiredError(`${at}.iqn`));
  } else {
    const problem = iscsiNameProblem(iqn);
    if (problem) errs.push(invalidError(`${at}.iqn`, goQuote(iqn), problem));
  }
  if (typeof s.lun === 'number' && (s.lun < 0 || s.lun > 255)) errs.push(invalidError(`${at}.lun`, goValue(s.lun), 'must be between 0 and 255, inclusive'));
  if ((s.chapAuthDiscovery === true || s.chapAuthSession === true) && !present(s.secretRef)) errs.push(requiredError(`${at}.secretRef`));
  if (present(s.initiatorName)) {
    const initiator = str(s.initiatorName);
    const problem = iscsiNameProblem(initiator);
    if (problem) errs.push(invalidError(`${at}.initiatorname`, goQuote(initiator), problem));
  }
}

function flocker(errs: FieldError[], s: Obj, at: string): void {
  const name = str(s.datasetName);
  const uuid = str(s.datasetUUID);
  if (name === '' && uuid === '') errs.push(requiredError(at, 'one of datasetName and datasetUUID is required'));
  if (name !== '' && uuid !== '') errs.push(invalidError(at, '"resource"', 'datasetName and datasetUUID can not be specified simultaneously'));
  if (name.includes('/')) errs.push(invalidError(`${at}.datasetName`, goQuote(name), "must not contain '/'"));
}

/** validateRBDVolumeSource, validateCephFSVolumeSource: monitors, and for rbd an image. */
function monitorsAnd(fields: string[]): SourceCheck {
  return (errs, s, at) => {
    if (Array.isArray(s.monitors) && s.monitors.length === 0) errs.push(requiredError(`${at}.monitors`));
    for (const f of fields) if (s[f] === '') errs.push(requiredError(`${at}.${f}`));
  };
}

function cinder(errs: FieldError[], s: Obj, at: string): void {
  if (s.volumeID === '') errs.push(requiredError(`${at}.volumeID`));
  if (isPlainObject(s.secretRef) && str(s.secretRef.name) === '') errs.push(requiredError(`${at}.secretRef.name`));
}

/** Go's net.SplitHostPort succeeds: a host and a port after the last colon, brackets balanced. */
function isHostPort(hp: string): boolean {
  const colon = hp.lastIndexOf(':');
  if (colon < 0) return false;
  let from = 0;
  let portFrom = 0;
  if (hp.startsWith('[')) {
    const end = hp.indexOf(']');
    if (end < 0 || end + 1 !== colon) return false;
    from = 1;
    portFrom = end + 1;
  } else if (hp.slice(0, colon).includes(':')) return false;
  return !hp.slice(from).includes('[') && !hp.slice(portFrom).includes(']');
}

function quobyte(errs: FieldError[], s: Obj, at: string): void {
  const registry = str(s.registry);
  const PAIRS = 'must be a host:port pair or multiple pairs separated by commas';
  if (registry === '') {
    if (s.registry === '') errs.push(requiredError(`${at}.registry`, PAIRS));
  } else if (bytes(str(s.tenant)) >= 65) {
    errs.push(requiredError(`${at}.tenant`, 'must be a UUID and may not exceed a length of 64 characters'));
  } else {
    for (const pair of registry.split(',')) if (!isHostPort(pair)) errs.push(invalidError(`${at}.registry`, goQuote(registry), PAIRS));
  }
  if (s.volume === '') errs.push(requiredError(`${at}.volume`));
}

/**
 * validateDownwardAPIVolumeFile at `at` (kube's path has no items index): a local path; a fieldRef
 * (of the pod's metadata) or a resourceFieldRef (of a named container), not both; a mode.
 */
function downwardAPIFile(errs: FieldError[], f: Obj, at: string): void {
  // (the schema walk reports a missing path at items[i].path, kube here)
  if (str(f.path) === '') errs.push(requiredError(`${at}.path`));
  validateLocalNonReservedPath(errs, str(f.path), `${at}.path`);
  if (isPlainObject(f.fieldRef)) {
    validateObjectFieldSelector(errs, f.fieldRef, VOLUME_FIELD_PATHS, `${at}.fieldRef`);
    if (isPlainObject(f.resourceFieldRef)) errs.push(invalidError(at, '"resource"', 'fieldRef and resourceFieldRef can not be specified simultaneously'));
  } else if (isPlainObject(f.resourceFieldRef)) {
    validateContainerResourceFieldSelector(errs, f.resourceFieldRef, `${at}.resourceFieldRef`, true);
  } else {
    errs.push(requiredError(at, 'one of fieldRef and resourceFieldRef is required'));
  }
  fileMode(errs, f.mode, `${at}.mode`);
}

function downwardAPI(errs: FieldError[], s: Obj, at: string): void {
  fileMode(errs, s.defaultMode, `${at}.defaultMode`);
  for (const f of objects(s.items)) downwardAPIFile(errs, f, at);
}

function fc(errs: FieldError[], s: Obj, at: string): void {
  const wwns: unknown[] = Array.isArray(s.targetWWNs) ? s.targetWWNs : [];
  const wwids: unknown[] = Array.isArray(s.wwids) ? s.wwids : [];
  if (wwns.length === 0 && wwids.length === 0) errs.push(requiredError(`${at}.targetWWNs`, 'must specify either targetWWNs or wwids, but not both'));
  if (wwns.length !== 0 && wwids.length !== 0) errs.push(invalidError(`${at}.targetWWNs`, goStringSlice(wwns.map(str)), 'targetWWNs and wwids can not be specified simultaneously'));
  if (wwns.length !== 0) {
    if (!present(s.lun)) errs.push(requiredError(`${at}.lun`, 'lun is required if targetWWNs is specified'));
    else if (typeof s.lun === 'number' && (s.lun < 0 || s.lun > 255)) errs.push(invalidError(`${at}.lun`, goValue(s.lun), 'must be between 0 and 255, inclusive'));
  }
}

function flexVolume(errs: FieldError[], s: Obj, at: string): void {
  if (s.driver === '') errs.push(requiredError(`${at}.driver`));
  // (kube walks a Go map: hearth takes the keys sorted)
  const options: Obj = isPlainObject(s.options) ? s.options : {};
  for (const k of Object.keys(options).sort()) {
    const slash = k.indexOf('/');
    const domain = `.${(slash < 0 ? k : k.slice(0, slash)).toLowerCase()}`;
    if (domain.endsWith('.kubernetes.io') || domain.endsWith('.k8s.io')) errs.push(invalidError(`${at}.options[${k}]`, goQuote(k), 'kubernetes.io and k8s.io namespaces are reserved'));
  }
}

const CACHING_MODES = ['None', 'ReadOnly', 'ReadWrite'];
const DISK_KINDS = ['Dedicated', 'Managed', 'Shared'];

function azureDisk(errs: FieldError[], s: Obj, at: string): void {
  if (s.diskName === '') errs.push(requiredError(`${at}.diskName`));
  if (s.diskURI === '') errs.push(requiredError(`${at}.diskURI`));
  if (present(s.cachingMode) && !CACHING_MODES.includes(String(s.cachingMode))) errs.push(notSupportedError(`${at}.cachingMode`, goQuote(String(s.cachingMode)), CACHING_MODES));
  if (!present(s.kind)) return;
  const kind = String(s.kind);
  const uri = str(s.diskURI);
  if (!DISK_KINDS.includes(kind)) errs.push(notSupportedError(`${at}.kind`, goQuote(kind), DISK_KINDS));
  if (kind === 'Managed' && !uri.startsWith('/subscriptions/')) errs.push(notSupportedError(`${at}.diskURI`, goQuote(uri), ['/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}']));
  if (kind !== 'Managed' && !uri.startsWith('https://')) errs.push(notSupportedError(`${at}.diskURI`, goQuote(uri), ['https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd']));
}

function storageOS(errs: FieldError[], s: Obj, at: string): void {
  const name = str(s.volumeName);
  if (name === '') errs.push(requiredError(`${at}.volumeName`));
  else for (const m of isDNS1123Label(name)) errs.push(invalidError(`${at}.volumeName`, goQuote(name), m));
  const ns = str(s.volumeNamespace);
  if (ns !== '') for (const m of isDNS1123Label(ns)) errs.push(invalidError(`${at}.volumeNamespace`, goQuote(ns), m));
  if (isPlainObject(s.secretRef) && str(s.secretRef.name) === '') errs.push(requiredError(`${at}.secretRef.name`));
}

/** ValidateCSIDriverName: present, at most 63 bytes, a DNS subdomain in lower case. */
function csiDriverName(errs: FieldError[], driver: unknown, path: string): void {
  if (driver === undefined) return; // (the schema walk's Required)
  const name = str(driver);
  if (name === '') return void errs.push(requiredError(path));
  if (bytes(name) > 63) errs.push(tooLongError(path, 63));
  for (const m of isDNS1123Subdomain(name.toLowerCase())) errs.push(invalidError(path, goQuote(name), m));
}

function csi(errs: FieldError[], s: Obj, at: string): void {
  csiDriverName(errs, s.driver, `${at}.driver`);
  if (!isPlainObject(s.nodePublishSecretRef)) return;
  const name = str(s.nodePublishSecretRef.name);
  if (name === '') errs.push(requiredError(`${at}.nodePublishSecretRef.name`));
  // (kube names the field csi.name)
  else for (const m of isDNS1123Subdomain(name)) errs.push(invalidError(`${at}.name`, goQuote(name), m));
}

function ephemeral(errs: FieldError[], s: Obj, at: string, ctx: SourceContext): void {
  if (!isPlainObject(s.volumeClaimTemplate)) errs.push(requiredError(`${at}.volumeClaimTemplate`));
  else validatePersistentVolumeClaimTemplate(errs, s.volumeClaimTemplate, `${at}.volumeClaimTemplate`);
  if (ctx.podName === '' || ctx.name === '') return;
  const claim = `${ctx.podName}-${ctx.name}`;
  for (const m of isDNS1123Subdomain(claim)) errs.push(invalidError(`${ctx.at}.name`, goQuote(ctx.name), `PVC name ${goQuote(claim)}: ${m}`));
}

function image(errs: FieldError[], s: Obj, at: string): void {
  if (str(s.reference) === '') errs.push(requiredError(`${at}.reference`));
  validatePullPolicy(errs, s.pullPolicy, `${at}.pullPolicy`);
}

function projected(errs: FieldError[], s: Obj, at: string): void {
  fileMode(errs, s.defaultMode, `${at}.defaultMode`);
  validateProjectionSources(errs, objects(s.sources), at);
}

/**
 * validateProjectionSources: each source one kind, each checked; the paths of items, downward
 * API files, trust bundles and certificates unique across the volume (a collision is reported
 * at the projected volume, with the source's name or the path).
 */
function validateProjectionSources(errs: FieldError[], sources: Obj[], at: string): void {
  const paths = new Set<string>();
  const claim = (path: string, shown: string): void => {
    if (paths.has(path)) errs.push(invalidError(at, goQuote(shown), 'conflicting duplicate paths'));
    else paths.add(path);
  };
  sources.forEach((source, i) => {
    const srcAt = `${at}.sources[${i}]`;
    let kinds = 0;
    for (const kind of ['secret', 'configMap']) {
      const s = source[kind];
      if (!present(s)) continue;
      kinds++;
      const o: Obj = isPlainObject(s) ? s : {};
      if (str(o.name) === '') errs.push(requiredError(`${srcAt}.${kind}.name`));
      objects(o.items).forEach((kp, j) => {
        keyToPath(errs, kp, `${srcAt}.${kind}.items[${j}]`);
        if (str(kp.path) !== '') claim(kp.path, str(o.name));
      });
    }
    if (present(source.downwardAPI)) {
      kinds++;
      for (const f of objects(source.downwardAPI.items)) {
        downwardAPIFile(errs, f, `${srcAt}.downwardAPI`);
        if (str(f.path) !== '') claim(f.path, f.path);
      }
    }
    if (present(source.serviceAccountToken)) {
      kinds++;
      const t: Obj = isPlainObject(source.serviceAccountToken) ? source.serviceAccountToken : {};
      const seconds = typeof t.expirationSeconds === 'number' ? t.expirationSeconds : 0;
      const secondsAt = `${srcAt}.serviceAccountToken.expirationSeconds`;
      if (seconds < 600) errs.push(invalidError(secondsAt, goValue(seconds), 'may not specify a duration less than 10 minutes'));
      if (seconds > 2 ** 32) errs.push(invalidError(secondsAt, goValue(seconds), 'may not specify a duration larger than 2^32 seconds'));
      // (kube names the projected volume's path, not the token's)
      if (str(t.path) === '') errs.push(requiredError(`${at}.path`));
      else validateLocalNonReservedPath(errs, t.path, `${at}.path`);
    }
    // (clusterTrustBundle and podCertificate sources: behind gates off in 1.36, which drop them unchecked)
    if (kinds > 1) errs.push(forbiddenError(srcAt, 'may not specify more than 1 volume type per source'));
  });
}

const MORE_THAN_ONE = 'may not specify more than 1 volume type';

/**
 * The sources in the order validateVolumeSource looks at them: [field, the path kube names when
 * it is a second source, the path its own checks use, the checks]. kube misspells two of the
 * former and names one of the latter differently.
 */
const SOURCES: [string, string, string, SourceCheck][] = [
  ['emptyDir', 'emptyDir', 'emptyDir', emptyDir],
  ['hostPath', 'hostPath', 'hostPath', hostPath],
  ['gitRepo', 'gitRepo', 'gitRepo', gitRepo],
  ['gcePersistentDisk', 'gcePersistentDisk', 'persistentDisk', partitionedDisk('pdName', true)],
  ['awsElasticBlockStore', 'awsElasticBlockStore', 'awsElasticBlockStore', partitionedDisk('volumeID', false)],
  ['secret', 'secret', 'secret', secret],
  ['nfs', 'nfs', 'nfs', nfs],
  ['iscsi', 'iscsi', 'iscsi', iscsi],
  ['glusterfs', 'glusterfs', 'glusterfs', requiredStrings(['endpoints', 'path'])],
  ['flocker', 'flocker', 'flocker', flocker],
  ['persistentVolumeClaim', 'persistentVolumeClaim', 'persistentVolumeClaim', requiredStrings(['claimName'])],
  ['rbd', 'rbd', 'rbd', monitorsAnd(['image'])],
  ['cinder', 'cinder', 'cinder', cinder],
  ['cephfs', 'cephFS', 'cephfs', monitorsAnd([])],
  ['quobyte', 'quobyte', 'quobyte', quobyte],
  ['downwardAPI', 'downwarAPI', 'downwardAPI', downwardAPI],
  ['fc', 'fc', 'fc', fc],
  ['flexVolume', 'flexVolume', 'flexVolume', flexVolume],
  ['configMap', 'configMap', 'configMap', configMap],
  ['azureFile', 'azureFile', 'azureFile', requiredStrings(['secretName', 'shareName'])],
  ['vsphereVolume', 'vsphereVolume', 'vsphereVolume', requiredStrings(['volumePath'])],
  ['photonPersistentDisk', 'photonPersistentDisk', 'photonPersistentDisk', requiredStrings(['pdID'])],
  ['portworxVolume', 'portworxVolume', 'portworxVolume', requiredStrings(['volumeID'])],
  ['azureDisk', 'azureDisk', 'azureDisk', azureDisk],
  ['storageos', 'storageos', 'storageos', storageOS],
  ['projected', 'projected', 'projected', projected],
  ['scaleIO', 'scaleIO', 'scaleIO', requiredStrings(['gateway', 'system'], ['volumeName'])],
  ['csi', 'csi', 'csi', csi],
  ['ephemeral', 'ephemeral', 'ephemeral', ephemeral],
  ['image', 'image', 'image', image],
];

/**
 * validateVolumeSource for the volume `v` at `at` (spec.volumes[i]): the first source present is
 * checked, each further one is Forbidden, none at all is Required. `podName`: the pod's, for a
 * Pod (an ephemeral volume's claim is named after it), else "".
 */
export function validateVolumeSource(v: Obj, at: string, podName: string): FieldError[] {
  const errs: FieldError[] = [];
  const ctx: SourceContext = { at, name: str(v.name), podName };
  let sources = 0;
  for (const [field, extraAt, ownAt, check] of SOURCES) {
    const s = v[field];
    if (!present(s)) continue;
    if (sources > 0) errs.push(forbiddenError(`${at}.${extraAt}`, MORE_THAN_ONE));
    else {
      sources++;
      check(errs, isPlainObject(s) ? s : {}, `${at}.${ownAt}`, ctx);
    }
    // (kube checks this even of an iscsi that is a second source)
    if (field === 'iscsi' && isPlainObject(s) && present(s.initiatorName) && bytes(`${ctx.name}:${str(s.targetPortal)}`) > 64) {
      errs.push(invalidError(`${at}.name`, goQuote(ctx.name), 'Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.'));
    }
  }
  if (sources === 0) errs.push(requiredError(at, 'must specify a volume type'));
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Generic ephemeral volumes: the claim template.

/** The ObjectMeta fields a claim template's metadata may not set, as validateFieldAllowList names them. */
const TEMPLATE_META_FORBIDDEN: [string, string][] = [
  ['name', 'name'],
  ['generateName', 'generateName'],
  ['namespace', 'namespace'],
  ['selfLink', 'selfLink'],
  ['uid', 'uID'],
  ['resourceVersion', 'resourceVersion'],
  ['generation', 'generation'],
  ['creationTimestamp', 'creationTimestamp'],
  ['deletionTimestamp', 'deletionTimestamp'],
  ['deletionGracePeriodSeconds', 'deletionGracePeriodSeconds'],
  ['ownerReferences', 'ownerReferences'],
  ['finalizers', 'finalizers'],
  ['managedFields', 'managedFields'],
];

/** Whether a decoded ObjectMeta field differs from its Go zero value (an empty list is not nil). */
function metaFieldSet(key: string, v: unknown): boolean {
  if (!present(v)) return false;
  if (typeof v === 'string') return v !== '';
  if (typeof v === 'number') return key === 'deletionGracePeriodSeconds' || v !== 0;
  return true;
}

/**
 * ValidatePersistentVolumeClaimTemplate: ValidateTemplateObjectMeta (annotations and labels, and
 * nothing else) and ValidatePersistentVolumeClaimSpec.
 */
function validatePersistentVolumeClaimTemplate(errs: FieldError[], t: Obj, at: string): void {
  const meta: Obj = isPlainObject(t.metadata) ? t.metadata : {};
  errs.push(...validateAnnotations(meta.annotations, `${at}.metadata.annotations`));
  errs.push(...validateLabels(meta.labels, `${at}.metadata.labels`));
  for (const [key, goName] of TEMPLATE_META_FORBIDDEN) if (metaFieldSet(key, meta[key])) errs.push(forbiddenError(`${at}.metadata.${goName}`, 'cannot be set'));
  // (a missing spec is the schema walk's Required; kube checks it as an empty one)
  validatePersistentVolumeClaimSpec(errs, isPlainObject(t.spec) ? t.spec : {}, `${at}.spec`);
}

/** The access modes kube supports, sorted. */
const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
const VOLUME_MODES = ['Block', 'Filesystem'];

/** A *field.Path as %#v prints the struct it points to (its parents as their pointees). */
function goFieldPath(path: string): string {
  let out = '(*field.Path)(nil)';
  for (const m of path.matchAll(/([^.[\]]+)|\[([^\]]*)\]/g)) {
    const [name, index] = m[1] !== undefined ? [m[1], ''] : ['', m[2]];
    out = `field.Path{name:${goQuote(name)}, index:${goQuote(index)}, parent:${out}}`;
    out = `(*field.Path)(${out})`;
  }
  return out.slice('(*field.Path)('.length, -1);
}

/** validateDataSource / validateDataSourceRef. */
function validateDataSource(errs: FieldError[], ref: Obj, path: string, withNamespace: boolean): void {
  if (ref.name === '') errs.push(requiredError(`${path}.name`));
  if (ref.kind === '') errs.push(requiredError(`${path}.kind`));
  const group = str(ref.apiGroup);
  const kind = str(ref.kind);
  if (group === '' && kind !== 'PersistentVolumeClaim') errs.push(invalidError(path, goQuote(kind), "must be 'PersistentVolumeClaim' when referencing the default apiGroup"));
  if (group !== '') for (const m of isDNS1123Subdomain(group)) errs.push(invalidError(`${path}.apiGroup`, goQuote(group), m));
  const ns = str(ref.namespace);
  if (withNamespace && ns !== '') for (const m of isDNS1123Label(ns)) errs.push(invalidError(`${path}.namespace`, goQuote(ns), m));
}

/**
 * ValidatePersistentVolumeClaimSpec: access modes (one at least, known, ReadWriteOncePod alone),
 * the selector, a positive storage request, class names, the volume mode, the data source and
 * its reference (agreeing with each other).
 */
export function validatePersistentVolumeClaimSpec(errs: FieldError[], spec: Obj, path: string): void {
  const modes: string[] = Array.isArray(spec.accessModes) ? spec.accessModes.map(String) : [];
  if (modes.length === 0) errs.push(requiredError(`${path}.accessModes`, 'at least 1 access mode is required'));
  if (isPlainObject(spec.selector)) errs.push(...validateLabelSelector(spec.selector, `${path}.selector`));
  let onePod = false;
  let others = false;
  for (const mode of modes) {
    if (!ACCESS_MODES.includes(mode)) errs.push(notSupportedError(`${path}.accessModes`, goQuote(mode), ACCESS_MODES));
    else if (mode === 'ReadWriteOncePod') onePod = true;
    else others = true;
  }
  if (onePod && others) errs.push(forbiddenError(`${path}.accessModes`, 'may not use ReadWriteOncePod with other access modes'));
  const requests = isPlainObject(spec.resources) && isPlainObject(spec.resources.requests) ? spec.resources.requests : {};
  const storageAt = `${path}.resources[storage]`;
  const storage = quantityText(requests.storage);
  if (!Object.hasOwn(requests, 'storage')) errs.push(requiredError(storageAt));
  else if (storage !== undefined) {
    const q = parseQuantity(storage);
    if (q !== undefined && q.num <= 0n) errs.push(invalidError(storageAt, goQuote(canonicalQuantity(storage) ?? storage), 'must be greater than zero'));
  }
  const className = str(spec.storageClassName);
  if (className !== '') for (const m of isDNS1123Subdomain(className)) errs.push(invalidError(`${path}.storageClassName`, goQuote(className), m));
  if (present(spec.volumeMode) && !VOLUME_MODES.includes(String(spec.volumeMode))) errs.push(notSupportedError(`${path}.volumeMode`, goQuote(String(spec.volumeMode)), VOLUME_MODES));
  const source: Obj | undefined = isPlainObject(spec.dataSource) ? spec.dataSource : undefined;
  const sourceRef: Obj | undefined = isPlainObject(spec.dataSourceRef) ? spec.dataSourceRef : undefined;
  if (source) validateDataSource(errs, source, `${path}.dataSource`, false);
  if (sourceRef) validateDataSource(errs, sourceRef, `${path}.dataSourceRef`, true);
  if (sourceRef && str(sourceRef.namespace) !== '') {
    if (source) errs.push(invalidError(path, goFieldPath(`${path}.dataSource`), 'may not be specified when dataSourceRef.namespace is specified'));
  } else if (source && sourceRef && (source.apiGroup !== sourceRef.apiGroup || str(source.kind) !== str(sourceRef.kind) || str(source.name) !== str(sourceRef.name))) {
    errs.push(invalidError(path, goFieldPath(`${path}.dataSource`), 'must match dataSourceRef'));
  }
  const attributesClass = str(spec.volumeAttributesClassName);
  if (attributesClass !== '') for (const m of isDNS1123Subdomain(attributesClass)) errs.push(invalidError(`${path}.volumeAttributesClassName`, goQuote(attributesClass), m));
}

// ---------------------------------------------------------------------------------------------
// Volume mounts.

const MOUNT_PROPAGATIONS = ['Bidirectional', 'HostToContainer', 'None'];
const RECURSIVE_READ_ONLY = ['Disabled', 'Enabled', 'IfPossible'];

/**
 * ValidateVolumeMounts for the container `c`, its mounts at `path` (…containers[i].volumeMounts):
 * each names a valid volume (`volumes`), a unique mount path, nothing its volumeDevices use; a
 * local subPath or subPathExpr (not both); a known mount propagation (Bidirectional only for a
 * privileged container); recursiveReadOnly only on a read-only mount without propagation. kube
 * reports the subPath, subPathExpr, propagation and recursiveReadOnly rules at the list's path,
 * without the mount's index.
 */
export function validateVolumeMounts(errs: FieldError[], c: Obj, volumes: ReadonlySet<string>, path: string): void {
  const devices = new Map<string, string>();
  for (const d of objects(c.volumeDevices)) devices.set(str(d.name), str(d.devicePath));
  const devicePaths = new Set(devices.values());
  const privileged = isPlainObject(c.securityContext) && c.securityContext.privileged === true;
  const mountPaths = new Set<string>();
  objects(c.volumeMounts).forEach((m, i) => {
    const at = `${path}[${i}]`;
    const name = str(m.name);
    if (m.name === '') errs.push(requiredError(`${at}.name`));
    if (!volumes.has(name)) errs.push({ reason: 'FieldValueNotFound', field: `${at}.name`, message: `Not found: ${goQuote(name)}` });
    const mountPath = str(m.mountPath);
    if (m.mountPath === '') errs.push(requiredError(`${at}.mountPath`));
    if (mountPaths.has(mountPath)) errs.push(invalidError(`${at}.mountPath`, goQuote(mountPath), 'must be unique'));
    mountPaths.add(mountPath);
    if (devices.has(name)) errs.push(invalidError(`${at}.name`, goQuote(name), 'must not already exist in volumeDevices'));
    if (devicePaths.has(mountPath)) errs.push(invalidError(`${at}.mountPath`, goQuote(mountPath), 'must not already exist as a path in volumeDevices'));
    const subPath = str(m.subPath);
    const subPathExpr = str(m.subPathExpr);
    if (subPath !== '') validateLocalDescendingPath(errs, subPath, `${path}.subPath`);
    if (subPathExpr !== '') {
      if (subPath !== '') errs.push(invalidError(`${at}.subPathExpr`, goQuote(subPathExpr), 'subPathExpr and subPath are mutually exclusive'));
      validateLocalDescendingPath(errs, subPathExpr, `${path}.subPathExpr`);
    }
    const propagation = present(m.mountPropagation) ? String(m.mountPropagation) : undefined;
    if (propagation !== undefined) {
      if (!MOUNT_PROPAGATIONS.includes(propagation)) errs.push(notSupportedError(`${path}.mountPropagation`, goQuote(propagation), MOUNT_PROPAGATIONS));
      if (propagation === 'Bidirectional' && !privileged) errs.push(forbiddenError(`${path}.mountPropagation`, 'Bidirectional mount propagation is available only to privileged containers'));
    }
    if (!present(m.recursiveReadOnly)) return;
    const rro = String(m.recursiveReadOnly);
    if (rro === 'Enabled' || rro === 'IfPossible') {
      if (m.readOnly !== true) errs.push(forbiddenError(`${path}.recursiveReadOnly`, 'may only be specified when readOnly is true'));
      if (propagation !== undefined && propagation !== 'None') errs.push(forbiddenError(`${path}.recursiveReadOnly`, 'may only be specified when mountPropagation is None or not specified'));
    } else if (rro !== 'Disabled') {
      errs.push(notSupportedError(`${path}.recursiveReadOnly`, goQuote(rro), RECURSIVE_READ_ONLY));
    }
  });
}
