// The environment rules compile in: @bufbuild/cel's standard library with the strings extension,
// each Kubernetes library (lists, regex, sets, urls, ip, cidr, quantity, semver, format), what
// fills @bufbuild/cel's gaps at runtime (ext.Lists, cel.@mapInsert, optional values, the internal
// functions the lowering calls), and the functions two libraries declare on their own types —
// string() of an IP and of a CIDR; isGreaterThan, isLessThan and compareTo of a Quantity and of a
// Semver — one function each here, as both types are carried as maps
// (bufbuild-gaps/opaque-values.ts). Its variables are self and oldSelf.
import { celEnv, celFunc, celMethod, type CelEnv } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { AUTHZ_LIBRARY } from './authz.ts';
import { JSON_PATCH_LIBRARY } from './jsonpatch.ts';
import { EXT_LISTS_LIBRARY } from './bufbuild-gaps/ext-lists.ts';
import { OPTIONAL_SYNTAX_FUNCS, PAIRS_FUNCS } from './bufbuild-gaps/lowering.ts';
import { TWO_VAR_COMPREHENSION_FUNCS } from './bufbuild-gaps/macros.ts';
import { expectTag, tagOf } from './bufbuild-gaps/opaque-values.ts';
import { OPTIONAL_TYPES_LIBRARY } from './bufbuild-gaps/optional-types.ts';
import { CIDR_LIBRARY } from './cidr.ts';
import { FORMAT_LIBRARY } from './format.ts';
import { IP_LIBRARY } from './ip.ts';
import { LISTS_LIBRARY } from './lists.ts';
import { QUANTITY_LIBRARY, cmpRat, ratOf } from './quantity.ts';
import { REGEX_LIBRARY } from './regex.ts';
import { SEMVER_LIBRARY, cmpSemver } from './semver.ts';
import { SETS_LIBRARY } from './sets.ts';
import { URLS_LIBRARY } from './urls.ts';
import { BOOL, DYN, INT, MAP, STRING } from './values.ts';

/** string() of an IP or a CIDR. */
const STRING_OF_IP_OR_CIDR = [
  celFunc('string', [MAP], STRING, (v) => {
    const t = tagOf(v);
    if (t === 'ip') return String(v.get('addr'));
    if (t === 'cidr') return `${v.get('addr')}/${v.get('bits')}`;
    throw new Error('no such overload: string');
  }),
];

/** isGreaterThan/isLessThan/compareTo are shared by Quantity and Semver. */
function compareOrdered(a: any, b: any, fn: string): number {
  if (tagOf(a) === 'semver') return cmpSemver(a, expectTag(b, 'semver', fn));
  return cmpRat(ratOf(a), ratOf(b));
}

/** isGreaterThan, isLessThan and compareTo of a Quantity or a Semver. */
const ORDERED = [
  celMethod('isGreaterThan', MAP, [MAP], BOOL, function (o) {
    return compareOrdered(this, o, 'isGreaterThan') > 0;
  }),
  celMethod('isLessThan', MAP, [MAP], BOOL, function (o) {
    return compareOrdered(this, o, 'isLessThan') < 0;
  }),
  celMethod('compareTo', MAP, [MAP], INT, function (o) {
    return BigInt(compareOrdered(this, o, 'compareTo'));
  }),
];

/** Everything on top of the standard library and the strings extension, in registration order. */
const K8S_FUNCS = [
  ...LISTS_LIBRARY,
  ...REGEX_LIBRARY,
  ...SETS_LIBRARY,
  ...URLS_LIBRARY,
  ...IP_LIBRARY,
  ...CIDR_LIBRARY,
  ...STRING_OF_IP_OR_CIDR,
  ...QUANTITY_LIBRARY,
  ...ORDERED,
  ...SEMVER_LIBRARY,
  ...FORMAT_LIBRARY,
  ...AUTHZ_LIBRARY,
  ...JSON_PATCH_LIBRARY,
  ...EXT_LISTS_LIBRARY,
  ...TWO_VAR_COMPREHENSION_FUNCS,
  ...PAIRS_FUNCS,
  ...OPTIONAL_TYPES_LIBRARY,
  ...OPTIONAL_SYNTAX_FUNCS,
];
let baseEnv: CelEnv | undefined;
export function env(): CelEnv {
  if (!baseEnv) baseEnv = celEnv({ funcs: [...strings, ...K8S_FUNCS], variables: { self: DYN, oldSelf: DYN } });
  return baseEnv;
}
