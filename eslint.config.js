// Lint: typescript-eslint's recommended rules plus the dependency direction of the codebase:
// workers/ → runtime/http → domains → shared infrastructure, never the reverse, and no domain
// importing another (what two domains share is infrastructure: coordination, revocation, lib, ...)
// but where BUILDS_ON says so, one way only.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const DOMAINS = ['auth', 'feeds', 'crawl', 'crawl-scheduling', 'pipeline', 'pools', 'messages'];
// The result pipeline moves the crawl chains on (the closed loop) and writes the IP row: it builds on crawl scheduling.
const BUILDS_ON = { pipeline: ['crawl-scheduling'] };
const INFRA = ['config', 'logging', 'metrics', 'net', 'redis', 'db', 'queues', 'services', 'setup', 'lib', 'coordination', 'revocation'];
const domainImports = DOMAINS.map((d) => `**/${d}/**`);
// src/tracing is wired in by the runtime only: the platform's code makes no tracing calls of its own.
const upperLayers = ['**/http/**', '**/runtime/**', '**/tracing/**', '**/workers/**', '**/dashboards/**', '**/test/**', '**/bench/**'];
// Later blocks replace the rule for their files, so each lists the general patterns too.

export default tseslint.config(
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly', process: 'readonly' } } },
  { ignores: ['node_modules/', 'dist/', 'data/', 'src/generated/', '.tmp/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        performance: 'readonly',
        fetch: 'readonly',
        Blob: 'readonly',
        structuredClone: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-empty-object-type': 'off',
      'no-console': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/workers/**', '**/test/**', '**/bench/**'], message: 'production code must not import entry points, tests or benchmarks' }] },
      ],
    },
  },
  {
    // Shared infrastructure knows no domain and no upper layer.
    files: [...INFRA.map((d) => `src/${d}/**/*.ts`), 'src/errors.ts', 'src/context.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: [...domainImports, ...upperLayers], message: 'infrastructure must not depend on domains or upper layers' }] },
      ],
    },
  },
  // Domains use infrastructure, never another domain, the HTTP layer, the runtime or entry points.
  ...DOMAINS.map((domain) => ({
    files: [`src/${domain}/**/*.ts`],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: upperLayers, message: 'domains must not depend on the HTTP layer, the runtime or entry points' },
            {
              group: DOMAINS.filter((d) => d !== domain && !(BUILDS_ON[domain] ?? []).includes(d)).map((d) => `**/${d}/**`),
              message: `a domain must not import another domain (${domain}); move what they share to infrastructure`,
            },
          ],
        },
      ],
    },
  })),
);
