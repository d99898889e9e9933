// The legacy-token tracking ConfigMap keeps its `since` only while it parses as
// Go's "2006-01-02" date; anything else is set again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isGoDate } from '../../../server/controllers/legacy-token-tracking.ts';

test("the tracking ConfigMap's date: Go's 2006-01-02 layout, real days only", () => {
  assert.ok(isGoDate('2024-02-29'));
  assert.ok(isGoDate('2026-12-31'));
  for (const bad of ['2023-02-29', '2024-13-01', '2024-04-31', '2024-1-01', '2024-01-01T00:00:00Z', 'yesterday', '', undefined]) assert.equal(isGoDate(bad), false, String(bad));
});
