// Unit tests of server/go/: Go's vocabulary, checked against what Go itself prints or decides.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareStrings, splitN, toGoString, trimSpace } from '../../../server/go/strings.ts';
import { goAtoi, goQuote, goRuneU, parseInt64, parseUint64, unquoteExtend } from '../../../server/go/strconv.ts';
import { goMapOrder, sortedMap } from '../../../server/go/map-order.ts';
import { customObjectOrder } from '../../../server/registry/object-order.ts';
import { goJsonMarshal, goJsonString, goJsonText } from '../../../server/go/json.ts';
import { parseRequestURIError } from '../../../server/go/url.ts';
import { goYamlKeyOrder, kubeYaml } from '../../../server/go/yaml.ts';
import { daysIn, formatRFC3339, goDuration, goTime, parseGoDuration, parseRFC3339, ZERO_TIME } from '../../../server/go/time.ts';
import { GoByte, GoFloat, goFloat, goNumber, goReflectKind, goSharpV, goSprint, goStringSlice, goTypeName } from '../../../server/go/fmt.ts';

// U+E000 (a private-use BMP character) and U+1F600 (😀, a surrogate pair in UTF-16): Go's UTF-8
// bytes are EE 80 80 and F0 9F 98 80, so U+E000 comes first; JS's UTF-16 units are E000 and D83D,
// so < puts 😀 first. This is where the two orders part.
const BMP_HIGH = '\ue000';
const ASTRAL = '\u{1F600}';

test('compareStrings is Go\'s strings.Compare: code point (UTF-8 byte) order', () => {
  assert.ok(ASTRAL < BMP_HIGH, 'JS orders by UTF-16 unit');
  assert.equal(compareStrings(BMP_HIGH, ASTRAL), -1);
  assert.equal(compareStrings(ASTRAL, BMP_HIGH), 1);
  assert.equal(compareStrings('a' + BMP_HIGH, 'a' + ASTRAL), -1);
  assert.equal(compareStrings('abc', 'abd'), -1);
  assert.equal(compareStrings('ab', 'abc'), -1);
  assert.equal(compareStrings('B', 'a'), -1);
  assert.equal(compareStrings('x', 'x'), 0);
  // A lone surrogate counts as its own code point: above U+D7FF, below U+E000.
  assert.equal(compareStrings('\ud800', '\ud7ff'), 1);
  assert.equal(compareStrings('\ud800', BMP_HIGH), -1);
  assert.deepEqual(['b', ASTRAL, BMP_HIGH, 'a', '\uffff'].sort(compareStrings), ['a', 'b', BMP_HIGH, '\uffff', ASTRAL]);
});

test('Go map order sorts keys by code point (a fidelity fix: it sorted by UTF-16 unit)', () => {
  const m = { [ASTRAL]: 1, [BMP_HIGH]: 2, a: { [ASTRAL]: 3, [BMP_HIGH]: 4 } };
  const sorted = goMapOrder(m);
  assert.deepEqual(Object.keys(sorted), ['a', BMP_HIGH, ASTRAL]);
  assert.deepEqual(Object.keys(sorted.a), [BMP_HIGH, ASTRAL]);
  assert.equal(JSON.stringify(sorted), `{"a":{"${BMP_HIGH}":4,"${ASTRAL}":3},"${BMP_HIGH}":2,"${ASTRAL}":1}`);
  // In order already: the same object back, no copy.
  const inOrder = { a: 1, [BMP_HIGH]: 2, [ASTRAL]: 3 };
  assert.equal(goMapOrder(inOrder), inOrder);
  assert.equal(sortedMap(inOrder), inOrder);
});

test('a custom object is written with its top level and metadata in Go map order', () => {
  const obj = { metadata: { labels: { [ASTRAL]: 'x', [BMP_HIGH]: 'y' }, name: 'n' }, kind: 'K', [ASTRAL]: 1, [BMP_HIGH]: 2, apiVersion: 'v' };
  const out = customObjectOrder(obj);
  assert.deepEqual(Object.keys(out), ['apiVersion', 'kind', 'metadata', BMP_HIGH, ASTRAL]);
  assert.deepEqual(Object.keys(out.metadata.labels), [BMP_HIGH, ASTRAL]);
  const same = { apiVersion: 'v', kind: 'K', metadata: { name: 'n' } };
  assert.equal(customObjectOrder(same), same);
});

test('%v of decoded JSON: sorted map keys, Go kinds, and integral numbers as int64 or as any int', () => {
  assert.equal(goSprint({ b: [1, 'x', true, null], a: { c: 1.5 } }), 'map[a:map[c:1.5] b:[1 x true <nil>]]');
  assert.equal(goSprint(1e6 + 0.5), '1.0000005e+06');
  assert.equal(goSprint(new GoFloat(2)), '2');
  assert.equal(goSprint(new GoByte(97)), '97');
  // Beyond int64, kube decodes a float64; the 'integral' call sites print the digits.
  assert.equal(goSprint(1e19), '1e+19');
  assert.equal(goSprint(1e19, 'integral'), '10000000000000000000');
  assert.equal(goTypeName(1e19), 'float64');
  assert.equal(goTypeName(1e19, 'integral'), 'int64');
  assert.equal(goReflectKind([1]), 'slice');
  assert.equal(goReflectKind({}), 'map');
  assert.equal(goReflectKind(null), 'nil');
  assert.equal(goReflectKind(1.5, 'integral'), 'float64');
});

test('%v and %#v sort map keys by code point, as fmt does (a fidelity fix for the merge patch copy and %#v)', () => {
  const m = { [ASTRAL]: 1, [BMP_HIGH]: 2 };
  assert.equal(goSprint(m, 'integral'), `map[${BMP_HIGH}:2 ${ASTRAL}:1]`);
  assert.equal(goSharpV(m), `map[string]interface {}{"\\ue000":2, "${ASTRAL}":1}`); // U+E000 is no graphic character: %q escapes it
});

test('float64 as %v prints it: strconv\'s exponent rule, also right next to the powers of ten (a fidelity fix)', () => {
  assert.equal(goFloat(123456.5), '123456.5');
  assert.equal(goFloat(1234567.5), '1.2345675e+06');
  assert.equal(goFloat(0.0001), '0.0001');
  assert.equal(goFloat(0.00001), '1e-05');
  // The merge patch's copy took the exponent from Math.log10, which rounds these to the next power.
  assert.equal(goFloat(999999.9999999999), '999999.9999999999');
  assert.equal(goFloat(0.00009999999999999999), '9.999999999999999e-05');
  assert.equal(goSprint(999999.9999999999, 'integral'), '999999.9999999999');
  assert.equal(goNumber(3), '3');
  assert.equal(goNumber(-0), '0');
  assert.equal(goNumber(1e21), '1e+21');
});

test('%#v and %T of a []string and unstructured values', () => {
  assert.equal(goStringSlice(['a', 'b"']), '[]string{"a", "b\\""}');
  assert.equal(goStringSlice(undefined), '[]string(nil)');
  assert.equal(goSharpV([1, 'x', null]), '[]interface {}{1, "x", interface {}(nil)}');
  assert.equal(goTypeName([]), '[]interface {}');
  assert.equal(goTypeName({}), 'map[string]interface {}');
  assert.equal(goTypeName(undefined), '<nil>');
});

test('json.Marshal: compact, map keys sorted by code point, HTML characters escaped', () => {
  assert.equal(goJsonMarshal({ b: 1, a: ['<&>', 0.5, -0, null], [ASTRAL]: true, [BMP_HIGH]: false }), `{"a":["\\u003c\\u0026\\u003e",0.5,0,null],"b":1,"${BMP_HIGH}":false,"${ASTRAL}":true}`);
  assert.equal(goJsonMarshal('a\u2028b'), '"a\\u2028b"');
  assert.equal(goJsonMarshal(1e21), '1e+21');
  assert.equal(goJsonMarshal(1e-7), '1e-7');
  assert.equal(goJsonText('{"a":"x"}'), '{"a":"x"}');
});

test('RFC 3339 as time.Parse reads it and metav1.Time writes it', () => {
  assert.deepEqual(parseRFC3339('2024-02-29T23:59:59Z'), { ms: Date.UTC(2024, 1, 29, 23, 59, 59), fraction: '' });
  assert.deepEqual(parseRFC3339('2024-01-01T1:02:03,5+01:30'), { ms: Date.UTC(2023, 11, 31, 23, 32, 3), fraction: '5' });
  for (const bad of ['2023-02-29T00:00:00Z', '2024-01-01t00:00:00Z', '2024-01-01T00:00:00z', '2024-01-01T24:00:00Z', '2024-01-01 00:00:00Z', '2024-01-01T00:00:00+25:00', '2024-01-01']) {
    assert.equal(parseRFC3339(bad), undefined, bad);
  }
  assert.equal(formatRFC3339(Date.UTC(2024, 4, 1, 10, 0, 0, 999)), '2024-05-01T10:00:00Z');
  assert.equal(formatRFC3339(ZERO_TIME), '0001-01-01T00:00:00Z');
  assert.throws(() => formatRFC3339(NaN), RangeError);
  assert.equal(goTime('2024-01-02T03:04:05.500000Z'), '2024-01-02 03:04:05.5 +0000 UTC');
  assert.equal(goTime(undefined), '0001-01-01 00:00:00 +0000 UTC');
  assert.equal(daysIn(1900, 2), 28);
  assert.equal(daysIn(2000, 2), 29);
});

test('durations: time.ParseDuration and Duration.String', () => {
  assert.equal(parseGoDuration('1h30m'), 5.4e12);
  assert.equal(parseGoDuration('-1.5s'), -1.5e9);
  assert.equal(parseGoDuration('.5us'), 500);
  assert.equal(parseGoDuration('0'), 0);
  assert.equal(parseGoDuration('5'), 'time: missing unit in duration "5"');
  assert.equal(parseGoDuration('5d'), 'time: unknown unit "d" in duration "5d"');
  assert.equal(parseGoDuration('1é'), 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"');
  assert.equal(parseGoDuration(''), 'time: invalid duration ""');
  assert.equal(parseGoDuration('3000000h'), 'time: invalid duration "3000000h"');
  assert.equal(goDuration(90_000), '1m30s');
  assert.equal(goDuration(3_600_000), '1h0m0s');
  assert.equal(goDuration(1500), '1.5s');
});

test('go-yaml v2 key order: letters by code point (a fidelity fix: it compared UTF-16 units), digits by value', () => {
  const FULLWIDTH_A = '\uff21'; // a letter from U+E000 up
  const DESERET_I = '\u{10400}'; // a letter beyond U+FFFF
  assert.equal(goYamlKeyOrder(FULLWIDTH_A, DESERET_I), -1);
  assert.equal(goYamlKeyOrder(DESERET_I, FULLWIDTH_A), 1);
  assert.equal(kubeYaml({ [DESERET_I]: 1, [FULLWIDTH_A]: 2 }), `${FULLWIDTH_A}: 2\n${DESERET_I}: 1\n`);
  assert.deepEqual(['a10', 'b', 'a2', '_x', 'a'].sort(goYamlKeyOrder), ['_x', 'a', 'a2', 'a10', 'b']);
});

test('Go strings are UTF-8: a lone surrogate is U+FFFD, also once marshalled', () => {
  assert.equal(toGoString('a\ud800b\u{1F600}'), 'a\ufffdb\u{1F600}');
  assert.equal(goJsonString('<\udc00>'), '"\\u003c\ufffd\\u003e"');
});

test('url.ParseRequestURI: its error texts', () => {
  assert.equal(parseRequestURIError('https://example.com/a?b'), undefined);
  assert.equal(parseRequestURIError('/path'), undefined);
  assert.equal(parseRequestURIError(''), 'parse "": empty url');
  assert.equal(parseRequestURIError('http://[::1'), 'parse "http://[::1": missing \']\' in host');
  assert.equal(parseRequestURIError('http://a b'), 'parse "http://a b": invalid character " " in host name');
});

test('strconv and strings helpers: ParseInt, ParseUint, Atoi, Unquote, SplitN, TrimSpace', () => {
  assert.equal(parseInt64('-9223372036854775808'), -(2n ** 63n));
  assert.equal(parseInt64('9223372036854775808'), 'value out of range');
  assert.equal(parseInt64('1e3'), 'invalid syntax');
  assert.equal(parseUint64('18446744073709551615'), 2n ** 64n - 1n);
  assert.equal(parseUint64('18446744073709551616'), 'value out of range');
  assert.equal(parseUint64('-1'), 'invalid syntax');
  assert.equal(goAtoi('+42'), 42);
  assert.equal(goAtoi('4.2'), undefined);
  assert.equal(unquoteExtend("'a\\x41\\u00e9'"), 'aAé');
  assert.equal(unquoteExtend('"a'), undefined);
  assert.deepEqual(splitN('1.2.3.4', '.', 3), ['1', '2', '3.4']);
  assert.deepEqual(splitN('1', '.', 3), ['1']);
  assert.equal(trimSpace('\u0085 x \u00a0'), 'x');
  assert.equal(trimSpace('\ufeffx'), '\ufeffx');
  assert.equal(goQuote('a"\n\u00e9\u200b'), '"a\\"\\n\u00e9\\u200b"');
  assert.equal(goRuneU(0x2a), "U+002A '*'");
});
