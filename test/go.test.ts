// Unit tests of server/go/: Go's vocabulary, checked against what Go itself prints or decides.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareStrings } from '../server/go/strings.ts';
import { goMapOrder, sortedMap } from '../server/go/map-order.ts';
import { customObjectOrder } from '../server/registry/store.ts';

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
