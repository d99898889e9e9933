// --admission-control-config-file: an AdmissionConfiguration (apiserver.config.k8s.io/v1 or
// v1alpha1, or the older apiserver.k8s.io/v1alpha1) naming each plugin's configuration, inline
// (`configuration`) or in a file (`path`, relative to this file's folder), as apiserver's
// ReadAdmissionConfiguration and ConfigFor read it. The plugin decodes and validates what it is
// given itself, at start, with its own messages; a plugin nothing names gets undefined.
// kube's fallback for the legacy unversioned ImagePolicyWebhook/PodNodeSelector files is left
// out: hearth has neither plugin.
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import YAML from 'yaml';
import { KUBE_YAML } from '../go/yaml.ts';
import { goQuote } from '../go/strconv.ts';

const API_VERSIONS = ['apiserver.config.k8s.io/v1', 'apiserver.config.k8s.io/v1alpha1', 'apiserver.k8s.io/v1alpha1'];
const KIND = 'AdmissionConfiguration';

export interface AdmissionConfig {
  /** The named plugin's configuration object (decoded from JSON or YAML), or undefined. */
  configurationOf(plugin: string): unknown;
}

/** No file: no plugin has a configuration. */
export const NO_ADMISSION_CONFIG: AdmissionConfig = { configurationOf: () => undefined };

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseDocument(text: string, file: string): unknown {
  try {
    return YAML.parse(text, KUBE_YAML);
  } catch (e) {
    throw new Error(`unable to read admission control configuration from ${goQuote(file)}: error converting YAML to JSON: yaml: ${(e as Error).message.split('\n')[0]}`);
  }
}

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const reason = err.code === 'ENOENT' ? 'no such file or directory' : err.code === 'EACCES' ? 'permission denied' : err.code === 'EISDIR' ? 'is a directory' : err.message;
    throw new Error(`${what}: open ${file}: ${reason}`);
  }
}

/** Reads and checks the file now; plugin files named by `path` are read here too, so a missing one fails the start. */
export function readAdmissionConfiguration(file: string): AdmissionConfig {
  const text = readText(file, `unable to read admission control configuration from ${goQuote(file)}`);
  const doc = parseDocument(text, file);
  if (!isObj(doc)) throw new Error(`unable to read admission control configuration from ${goQuote(file)}: not an object`);
  const apiVersion = typeof doc.apiVersion === 'string' ? doc.apiVersion : '';
  const kind = typeof doc.kind === 'string' ? doc.kind : '';
  if (!kind) throw new Error(`Object 'Kind' is missing in '${JSON.stringify(doc)}'`);
  if (!API_VERSIONS.includes(apiVersion) || kind !== KIND) throw new Error(`no kind ${goQuote(kind)} is registered for version ${goQuote(apiVersion)}`);
  const plugins = new Map<string, unknown>();
  const entries = doc.plugins === undefined || doc.plugins === null ? [] : doc.plugins;
  if (!Array.isArray(entries)) throw new Error(`unable to read admission control configuration from ${goQuote(file)}: plugins: must be a list`);
  const base = dirname(file);
  for (const [i, entry] of entries.entries()) {
    if (!isObj(entry) || typeof entry.name !== 'string') throw new Error(`unable to read admission control configuration from ${goQuote(file)}: plugins[${i}].name: must be a string`);
    // kube's ConfigFor takes the first entry naming a plugin.
    if (plugins.has(entry.name)) continue;
    if (entry.configuration !== undefined && entry.configuration !== null) {
      plugins.set(entry.name, entry.configuration);
    } else if (typeof entry.path === 'string' && entry.path !== '') {
      const pluginFile = isAbsolute(entry.path) ? entry.path : join(base, entry.path);
      plugins.set(entry.name, parseDocument(readText(pluginFile, `couldn't open admission plugin configuration ${pluginFile}`), pluginFile));
    }
  }
  return { configurationOf: (plugin) => plugins.get(plugin) };
}
