// What a service's resolvers build, each from its own module: graphql's index loads the whole library (129 modules,
// ~2.5 MiB of heap), which the process then only needs with its first GraphQL request (apollo.ts).
export { GraphQLError } from 'graphql/error/GraphQLError.js';
export { GraphQLScalarType } from 'graphql/type/definition.js';
