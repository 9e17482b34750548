import { readdirSync, readFileSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

// Boundaries: a service never imports another service's code (shared code is a package, what crosses a wire is a
// contract in proto/); packages and apps import no service; tests reach other packages by their name only.
const services = readdirSync('services', { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => ({ dir: entry.name, name: JSON.parse(readFileSync(`services/${entry.name}/package.json`, 'utf8')).name }));
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const packageImport = (list) => ({
  regex: `^(${list.map((s) => escape(s.name)).join('|')})(/|$)`,
  message: 'Services never import each other: share a package (packages/*) or a contract (proto/).',
});
const relativeInto = (folders) => ({
  regex: `^(\\.\\./)+(${folders.map(escape).join('|')})(/|$)`,
  message: 'Import other packages by their name, never by a relative path into their folder.',
});

// A process loads only what it uses: running code imports proto by subpath, never its barrel (tests and scripts may;
// a type import loads nothing).
const noProtoBarrel = (files) => ({
  files,
  rules: {
    '@typescript-eslint/no-restricted-imports': [
      'error',
      {
        paths: [
          {
            name: '@sigil/proto',
            message: 'Import the subpath that exports it (@sigil/proto/strata, /resources, ...): the barrel loads every contract.',
            allowTypeImports: true,
          },
        ],
      },
    ],
  },
});
const restrict = (files, patterns) => ({ files, rules: { 'no-restricted-imports': ['error', { patterns }] } });

const boundaryRules = [
  ...services.map((service) => {
    const others = services.filter((s) => s.dir !== service.dir);
    const patterns = [packageImport([...others, { name: '@sigil/gateway' }]), relativeInto(['services', 'gateway', 'packages', ...others.map((s) => s.dir)])];
    return restrict([`services/${service.dir}/**/*.ts`], patterns);
  }),
  noProtoBarrel(['services/*/src/**/*.ts', 'gateway/src/**/*.ts', 'packages/*/src/**/*.ts', 'apps/*/src/**/*.ts', 'infra/local/src/**/*.ts']),
  ...(() => {
    const patterns = [packageImport(services), relativeInto(['services', 'gateway', 'packages', 'apps', 'proto', 'infra'])];
    return [restrict(['gateway/**/*.ts', 'packages/**/*.ts', 'apps/**/*.ts', 'proto/**/*.ts', 'infra/**/*.ts'], patterns)];
  })(),
  {
    files: ['test/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [relativeInto(['services', 'gateway', 'packages', 'apps', 'proto', 'infra'])] }] },
  },
];

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/generated/**', '**/gen/**', '**/gql/**', '**/dist/**', '.local/**', '.turbo/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'warn',
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  // The hosted signing page runs in browsers, as plain ES modules served as they are.
  { files: ['apps/signing-page/public/**/*.js', 'apps/verify-page/public/**/*.js', 'apps/hosted-pages/public/**/*.js'], languageOptions: { globals: { ...globals.browser }, sourceType: 'module' } },
  // The dashboard runs in browsers (React, bundled by Vite).
  { files: ['apps/dashboard/src/**/*.{ts,tsx}'], languageOptions: { globals: { ...globals.browser } } },
  ...boundaryRules,
);
