// Lint for server/, scripts/, bench/ and test/ (npm run lint). `any` is a warning whose count may only go
// down: scripts/check-lint.mjs compares it with the number recorded in lint-baseline.json.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.bench/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { console: 'readonly', process: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setImmediate: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', performance: 'readonly', URL: 'readonly', TextDecoder: 'readonly', TextEncoder: 'readonly', structuredClone: 'readonly', queueMicrotask: 'readonly', AbortController: 'readonly', global: 'readonly', globalThis: 'readonly' } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'warn',
    },
  },
);
