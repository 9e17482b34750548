import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * Typed GraphQL documents from the gateway's API schema (gateway/api-schema.graphql, written by `npm run compose`):
 * every `graphql(...)` call in src/ is checked against it, and a query the schema does not allow fails the build.
 */
const config: CodegenConfig = {
  schema: '../../gateway/api-schema.graphql',
  documents: ['src/**/*.{ts,tsx}', '!src/gql/**'],
  ignoreNoDocuments: true,
  errorsOnly: true,
  generates: {
    'src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: { useTypeImports: true, enumsAsTypes: true, skipTypename: false },
    },
  },
};
export default config;
