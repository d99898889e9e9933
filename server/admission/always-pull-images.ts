// AlwaysPullImages (kube's plugin/pkg/admission/alwayspullimages, off by default): every
// container of a new pod (init, regular and ephemeral) gets imagePullPolicy Always, so a pod
// can use a private image only with credentials to pull it, never from a node's cache. An update
// that brings no image the pod did not already have is left alone. The validating phase refuses
// a container whose policy a later plugin changed back.
import type { AdmissionAttributes, AdmissionPlugin } from './types.ts';
import { newForbidden } from './forbidden.ts';
import { list, rec, str, type Json } from './json-fields.ts';
import { ApiError } from '../errors.ts';

export const ALWAYS_PULL_IMAGES = 'AlwaysPullImages';
const FIELDS = ['initContainers', 'containers', 'ephemeralContainers'];

/** pods.VisitContainersWithPath: each container with its path, in kube's order. */
function containersWithPath(spec: Json): [Json, string][] {
  return FIELDS.flatMap((field) => list(spec[field]).map((c, i): [Json, string] => [rec(c), `spec.${field}[${i}]`]));
}

function ignored(a: AdmissionAttributes): boolean {
  if (a.info.resource !== 'pods' || a.info.group !== '' || a.subresource) return true;
  if (a.operation === 'CREATE') return false;
  if (a.operation !== 'UPDATE') return true;
  // isUpdateWithNoNewImages
  const oldImages = new Set(containersWithPath(rec(rec(a.oldObject).spec)).map(([c]) => str(c.image)));
  return containersWithPath(rec(rec(a.object).spec)).every(([c]) => oldImages.has(str(c.image)));
}

export function alwaysPullImages(): AdmissionPlugin {
  return {
    name: ALWAYS_PULL_IMAGES,
    admit(a) {
      if (ignored(a)) return;
      for (const [c] of containersWithPath(rec(rec(a.object).spec))) c.imagePullPolicy = 'Always';
    },
    validate(a) {
      if (ignored(a)) return;
      const errors = containersWithPath(rec(rec(a.object).spec))
        .filter(([c]) => c.imagePullPolicy !== 'Always')
        .map(([c, path]) => newForbidden(a, `${path}.imagePullPolicy: Unsupported value: ${JSON.stringify(str(c.imagePullPolicy))}: supported values: "Always"`).message);
      if (!errors.length) return;
      // kube returns an aggregate of the Forbidden errors, which is no API status: a 500 whose message is the aggregate's.
      throw new ApiError(500, '', errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`);
    },
  };
}
