// What the environment declares, as the checker sees it: the identifiers that name types, the
// string methods with their signatures, result types and costs, and the methods and global
// functions of each library (a call of any other name is an undeclared reference).
import { sizeOf, strCost } from './cost.ts';
import { FORMATS } from './format.ts';
import { T, listOf, type CT, type Kind } from './types.ts';

export const TYPE_IDENTS = new Set(['int', 'uint', 'double', 'string', 'bool', 'bytes', 'list', 'map', 'null_type', 'type']);

// (no prototype: rule text names methods, and `constructor` or `toString` must not find Object's)
export const STRING_METHODS: Record<string, { args: Kind[][]; result: (recv: CT) => CT; cost: (recv: CT, args: CT[]) => number }> = Object.create(null);
function defStr(name: string, args: Kind[][], result: (recv: CT) => CT, cost?: (recv: CT, args: CT[]) => number): void {
  STRING_METHODS[name] = { args, result, cost: cost ?? ((r) => 1 + strCost(sizeOf(r))) };
}
defStr('contains', [['string']], () => T.bool, (r, a) => 1 + strCost(sizeOf(r)) * strCost(sizeOf(a[0])));
defStr('startsWith', [['string']], () => T.bool, (_r, a) => 1 + strCost(sizeOf(a[0])));
defStr('endsWith', [['string']], () => T.bool, (_r, a) => 1 + strCost(sizeOf(a[0])));
defStr('matches', [['string']], () => T.bool, (r, a) => 1 + strCost(sizeOf(r)) * strCost(sizeOf(a[0]), 0.25));
defStr('size', [], () => T.int, () => 1);
defStr('charAt', [['int']], () => ({ ...T.string, max: 1 }));
defStr('indexOf', [['string'], ['string', 'int']], () => T.int);
defStr('lastIndexOf', [['string'], ['string', 'int']], () => T.int);
defStr('lowerAscii', [], (r) => ({ ...T.string, max: sizeOf(r) }));
defStr('upperAscii', [], (r) => ({ ...T.string, max: sizeOf(r) }));
defStr('trim', [], (r) => ({ ...T.string, max: sizeOf(r) }));
defStr('replace', [['string', 'string'], ['string', 'string', 'int']], (r) => ({ ...T.string, max: sizeOf(r) * 2 }));
defStr('split', [['string'], ['string', 'int']], (r) => listOf({ ...T.string, max: sizeOf(r) }, sizeOf(r)));
defStr('substring', [['int'], ['int', 'int']], (r) => ({ ...T.string, max: sizeOf(r) }));
defStr('format', [['list']], (r) => ({ ...T.string, max: sizeOf(r) * 2 }));
defStr('find', [['string']], (r) => ({ ...T.string, max: sizeOf(r) }), (r, a) => 1 + strCost(sizeOf(r)) * strCost(sizeOf(a[0]), 0.25));
defStr('findAll', [['string'], ['string', 'int']], (r) => listOf({ ...T.string, max: sizeOf(r) }, sizeOf(r)), (r, a) => 1 + strCost(sizeOf(r)) * strCost(sizeOf(a[0]), 0.25));

export const TIMESTAMP_GETTERS = new Set(['getFullYear', 'getMonth', 'getDayOfYear', 'getDayOfMonth', 'getDate', 'getDayOfWeek', 'getHours', 'getMinutes', 'getSeconds', 'getMilliseconds']);
export const DURATION_GETTERS = new Set(['getHours', 'getMinutes', 'getSeconds', 'getMilliseconds']);
export const URL_GETTERS = new Set(['getScheme', 'getHost', 'getHostname', 'getPort', 'getEscapedPath']);
export const IP_PREDICATES = new Set(['isUnspecified', 'isLoopback', 'isLinkLocalMulticast', 'isLinkLocalUnicast', 'isGlobalUnicast']);
export const LIST_METHODS = new Set(['size', 'join', 'isSorted', 'sum', 'min', 'max', 'indexOf', 'lastIndexOf', 'slice', 'flatten', 'sort', 'reverse', 'distinct', '@sortByAssociatedKeys']);
export const QUANTITY_METHODS = new Set(['isInteger', 'asInteger', 'asApproximateFloat', 'sign', 'add', 'sub', 'isGreaterThan', 'isLessThan', 'compareTo']);
export const SEMVER_METHODS = new Set(['major', 'minor', 'patch', 'isGreaterThan', 'isLessThan', 'compareTo']);
export const CIDR_METHODS = new Set(['containsIP', 'containsCIDR', 'ip', 'masked', 'prefixLength']);
export const OPTIONAL_METHODS = new Set(['hasValue', 'value', 'orValue', 'or']);
/** The authorizer library's methods (admission policies' `authorizer`). */
export const AUTHZ_METHODS = new Set(['path', 'group', 'serviceAccount', 'resource', 'subresource', 'namespace', 'name', 'check', 'allowed', 'reason', 'errored', 'error']);
/** Element types ext.Lists' sort and sortBy accept (cel-go's comparableTypes). */
export const SORTABLE = new Set<Kind>(['int', 'uint', 'double', 'bool', 'duration', 'timestamp', 'string', 'bytes', 'dyn']);
export const ALL_METHODS = new Set([
  ...Object.keys(STRING_METHODS),
  ...TIMESTAMP_GETTERS,
  ...URL_GETTERS,
  'getQuery',
  'family',
  ...IP_PREDICATES,
  ...LIST_METHODS,
  ...QUANTITY_METHODS,
  ...SEMVER_METHODS,
  ...CIDR_METHODS,
  ...OPTIONAL_METHODS,
  ...AUTHZ_METHODS,
  'validate',
]);
export const GLOBALS = new Set([
  'size',
  'matches',
  'int',
  'uint',
  'double',
  'string',
  'bytes',
  'bool',
  'dyn',
  'type',
  'duration',
  'timestamp',
  'url',
  'isURL',
  'ip',
  'isIP',
  'ip.isCanonical',
  'cidr',
  'isCIDR',
  'quantity',
  'isQuantity',
  'sets.contains',
  'sets.equivalent',
  'sets.intersects',
  'semver',
  'isSemver',
  ...Object.keys(FORMATS).map((name) => `format.${name}`),
  'format.named',
  'optional.of',
  'optional.ofNonZeroValue',
  'optional.none',
  'lists.range',
]);
