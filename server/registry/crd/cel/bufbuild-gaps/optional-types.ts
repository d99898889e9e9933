// Gap: @bufbuild/cel has no optional values (cel-go's cel.OptionalTypes). Optionals are carried
// as marked maps { has, v } (opaque-values.ts) with optional.of/none/ofNonZeroValue, hasValue()
// and value(); or() and orValue() are lowered to conditionals and the optional syntax to internal
// functions (lowering.ts). kube's rules meet them as oldSelf under optionalOldSelf, and in
// format.named() and <format>.validate().
import { celFunc, celMethod, isCelList, isCelMap, isCelUint } from '@bufbuild/cel';
import { BOOL, DYN, MAP } from '../values.ts';
import { expectTag, tagOf, tagged } from './opaque-values.ts';

export const optNone = (): Map<string, any> => tagged('optional', { has: false });
export const optOf = (v: unknown): Map<string, any> => tagged('optional', { has: true, v });

/** cel-go's IsZeroValue, for optional.ofNonZeroValue. */
function isZeroValue(v: any): boolean {
  if (v === null || v === false || v === 0n || v === 0 || v === '') return true;
  if (isCelUint(v)) return v.value === 0n;
  if (v instanceof Uint8Array) return v.length === 0;
  if (isCelList(v)) return v.size === 0;
  if (isCelMap(v)) {
    const t = tagOf(v);
    if (t === 'optional') return v.get('has') !== true;
    return t === undefined && v.size === 0;
  }
  const m = v?.message;
  if (m && (m.$typeName === 'google.protobuf.Timestamp' || m.$typeName === 'google.protobuf.Duration')) return BigInt(m.seconds ?? 0) === 0n && Number(m.nanos ?? 0) === 0;
  return false;
}

/** optional values (oldSelf with optionalOldSelf, format.named, validate, optional.*) */
export const OPTIONAL_TYPES_LIBRARY = [
  celMethod('hasValue', MAP, [], BOOL, function () {
    return expectTag(this, 'optional', 'hasValue').get('has') === true;
  }),
  celMethod('value', MAP, [], DYN, function () {
    const o = expectTag(this, 'optional', 'value');
    if (o.get('has') !== true) throw new Error('optional.none() dereference');
    return o.get('v');
  }),
  // (or and orValue are lowered to a conditional: lowerForPlan)
  celFunc('optional.of', [DYN], MAP, (v: unknown) => optOf(v)),
  celFunc('optional.ofNonZeroValue', [DYN], MAP, (v: unknown) => (isZeroValue(v) ? optNone() : optOf(v))),
  celFunc('optional.none', [], MAP, () => optNone()),
];
