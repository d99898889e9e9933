// The core API group (v1): pods/ and services/ have folders of their own; ConfigMaps and Secrets
// (config.ts), Namespaces, Nodes, PersistentVolumes with their claims, and ReplicationControllers
// one file each. This file holds the core kinds with a few lines each: PodTemplates (validated as
// pods' templates are), LimitRanges' item defaults, Endpoints' port protocol. Imports as
// kinds/index.ts says.
import type { Obj, Strategy } from '../../strategy.ts';
import { validatePodTemplate } from './pods/validation.ts';
import { absent, CORE, protocolTCP, type Defaulters } from '../../defaulting.ts';
import { isPlainObject } from '../../../util/json.ts';

export const podTemplateStrategy: Strategy = { validate: (pt) => validatePodTemplate(pt.template, 'template') };

function limitRangeItem(item: Obj): void {
  if (item.type !== 'Container') return;
  if (absent(item.default)) item.default = {};
  if (absent(item.defaultRequest)) item.defaultRequest = {};
  const def = item.default;
  const req = item.defaultRequest;
  if (!isPlainObject(def) || !isPlainObject(req)) return;
  if (isPlainObject(item.max)) for (const [k, v] of Object.entries(item.max)) if (!(k in def)) def[k] = v;
  for (const [k, v] of Object.entries(def)) if (!(k in req)) req[k] = v;
  if (isPlainObject(item.min)) for (const [k, v] of Object.entries(item.min)) if (!(k in req)) req[k] = v;
}

/** LimitRanges and Endpoints, by definition. */
export const coreDefaults: Defaulters = {
  [`${CORE}LimitRangeItem`]: limitRangeItem,
  [`${CORE}EndpointPort`]: protocolTCP,
};
