// Gap: @bufbuild/cel has no custom value types (its objects are protobuf messages). The Kubernetes
// libraries' opaque types — URL, IP, CIDR, Quantity, Semver, NamedFormat — and cel-go's optional
// values are carried as CEL maps marked with a reserved key; the checker still types them apart
// (types.ts). Their functions are declared on map(dyn, dyn) and check the mark (expectTag),
// failing with "no such overload" as cel-go does on a value of another type. Goes when the
// library can declare opaque types.
import { isCelMap } from '@bufbuild/cel';

/** Marker key of the opaque values (URL, IP, CIDR, Quantity, optional) carried as CEL maps. */
const TAG = '\u0000k8s';

export function tagged(kind: string, fields: Record<string, unknown>): Map<string, any> {
  const m = new Map<string, any>([[TAG, kind]]);
  for (const [k, v] of Object.entries(fields)) m.set(k, v);
  return m;
}
export function tagOf(v: unknown): string | undefined {
  return isCelMap(v) ? (v.get(TAG) as string | undefined) : undefined;
}
export function expectTag(v: unknown, kind: string, fn: string): any {
  if (tagOf(v) !== kind) throw new Error(`no such overload: ${fn}`);
  return v;
}
