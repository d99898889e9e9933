// Lint for server/, scripts/, bench/ and test/ (npm run lint). `any` is a warning whose count may only
// go down: npm run lint fails above the count in its --max-warnings (lower it as `any`s go).
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
      // A leading underscore marks a binding unused on purpose (a base method's parameters, a
      // rest destructuring that drops keys), as TypeScript's own noUnusedParameters reads it.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
);
