// Lint: typescript-eslint's recommended rules plus the dependency direction of the codebase, in
// layers, lowest first: a module imports its own layer and those below it, never one above (the
// base layers config, lib, redis, db and services know nothing of queues, coordination, domains,
// HTTP or the runtime), and no domain imports another (what two domains share goes below them:
// coordination, revocation, lib, ...) but where BUILDS_ON says so, one way only. Tests and `cli-*`
// entry points are exempt. The order is argued in docs/architecture.md ("Source layout").
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const DOMAINS = ['auth', 'feeds', 'crawl', 'crawl-scheduling', 'pipeline', 'pools', 'messages'];
// The result pipeline moves the crawl chains on (the closed loop) and writes the IP row: it builds on crawl scheduling.
const BUILDS_ON = { pipeline: ['crawl-scheduling'] };
/** Folders of src/ (and `context.js`, a file), lowest layer first; `dashboards` and `workers` are top-level folders. */
const LAYERS = [
  ['errors', 'net', 'metrics', 'setup'],
  ['config'],
  ['logging'],
  ['lib'],
  ['redis'],
  ['db'],
  ['services'],
  ['revocation'],
  ['queues'],
  ['coordination'],
  ['context'],
  [...DOMAINS, 'jobs'],
  ['http'],
  ['tracing'],
  ['dashboards'],
  ['runtime'],
  ['workers'],
];
const FILE_MODULES = new Set(['errors', 'context']);
const TOP_LEVEL = new Set(['dashboards', 'workers']);
const importsOf = (name) => (FILE_MODULES.has(name) ? [`**/${name}.js`] : [`**/${name}/**`]);
const filesOf = (name) => (FILE_MODULES.has(name) ? [`src/${name}.ts`] : TOP_LEVEL.has(name) ? [`${name}/**/*.ts`] : [`src/${name}/**/*.ts`]);
const EXEMPT = ['**/*.test.ts', 'src/**/cli-*.ts', 'src/config/write-env-example.ts'];
const NO_TESTS = { group: ['**/test/**', '**/bench/**'], message: 'production code must not import tests or benchmarks' };
// Later blocks replace the rule for their files, so each lists every pattern it needs.
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
  // Any module of src/, a folder not yet in LAYERS included: no tests, benchmarks or entry points.
  {
    files: ['src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { ...NO_TESTS, group: [...NO_TESTS.group, '**/workers/**'], message: 'production code must not import entry points, tests or benchmarks' },
          ],
        },
      ],
    },
  },
  // Each layer: nothing from the layers above it; a domain, no other domain either.
  ...LAYERS.flatMap((layer, i) => {
    const above = LAYERS.slice(i + 1).flat();
    return layer.map((name) => ({
      files: filesOf(name),
      ignores: EXEMPT,
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: [
              NO_TESTS,
              ...(above.length
                ? [{ group: above.flatMap(importsOf), message: `${name} must not import a layer above its own (${above[0]}, …; LAYERS in eslint.config.js)` }]
                : []),
              ...(DOMAINS.includes(name)
                ? [
                    {
                      group: DOMAINS.filter((d) => d !== name && !(BUILDS_ON[name] ?? []).includes(d)).flatMap(importsOf),
                      message: `a domain must not import another domain (${name}); move what they share below the domains`,
                    },
                  ]
                : []),
            ],
          },
        ],
      },
    }));
  }),
);
