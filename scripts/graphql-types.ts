// Resolver types for a subgraph, from its `schema.graphql` (graphql-codegen: typescript + typescript-resolvers with
// Federation). Used by scripts/generate-types.ts; the output is checked in and checked for drift like the others.
import { readFile } from 'node:fs/promises';
import { codegen } from '@graphql-codegen/core';
import * as typescriptPlugin from '@graphql-codegen/typescript';
import * as resolversPlugin from '@graphql-codegen/typescript-resolvers';
import { getCachedDocumentNodeFromSchema } from '@graphql-codegen/plugin-helpers';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';

export interface SubgraphTypesOptions {
  /** Path of the subgraph's `schema.graphql`. */
  schemaFile: string;
  /** The file the types are written to (codegen resolves mapper imports relative to it). */
  outputFile: string;
  /** GraphQL type → the service's own type its resolvers return, as `./module.ts#Name`. */
  mappers: Record<string, string>;
  /** The resolvers' context, as `module#Name`; default Sigil's `SubgraphContext`. */
  contextType?: string;
}

/** What a subgraph's `createResolvers` must satisfy, including `__resolveReference` of each entity. */
export async function subgraphResolverTypes(options: SubgraphTypesOptions, header: string): Promise<string> {
  // Building the subgraph adds the Federation directives and `_entities` the resolvers plugin reads `@key` from.
  const schema = buildSubgraphSchema({ typeDefs: parse(await readFile(options.schemaFile, 'utf8')) });
  const output = await codegen({
    filename: options.outputFile,
    schema: getCachedDocumentNodeFromSchema(schema),
    schemaAst: schema,
    documents: [],
    // The base types keep the Federation types (`_Service`, `_entities` arguments) the resolver types refer to.
    plugins: [{ typescript: { federation: false } }, { 'typescript-resolvers': {} }],
    pluginMap: { typescript: typescriptPlugin, 'typescript-resolvers': resolversPlugin },
    pluginContext: {},
    config: {
      federation: true,
      useTypeImports: true,
      contextType: options.contextType ?? '@sigil/kit/graphql#SubgraphContext',
      mappers: options.mappers,
      enumsAsTypes: true,
      avoidOptionals: { field: true, inputValue: false, object: false, defaultValue: false },
      maybeValue: 'T | null',
      scalars: { ID: 'string' },
    },
  });
  return header + output;
}
