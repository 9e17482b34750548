/** What a handler is handed of a request: the path parameters, the query and the body. */
export interface RequestShape {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
}

type Given<T> = [NonNullable<T>] extends [never] ? false : true;

type ParamsOf<O> = O extends { parameters: { path?: infer Path } }
  ? Given<Path> extends true
    ? { [Name in keyof NonNullable<Path>]: string }
    : Record<string, never>
  : Record<string, string>;

type QueryOf<O> = O extends { parameters: { query?: infer Query } } ? (Given<Query> extends true ? NonNullable<Query> : Record<string, never>) : Record<string, unknown>;

type ContentOf<C> = 'application/json' extends keyof C ? C['application/json'] : 'multipart/form-data' extends keyof C ? C['multipart/form-data'] : Buffer;

type BodyOf<O> = O extends { requestBody?: infer Body }
  ? Given<Body> extends true
    ? (NonNullable<Body> extends { content: infer C } ? ContentOf<C> : unknown) | (O extends { requestBody: unknown } ? never : undefined)
    : undefined
  : unknown;

/**
 * The request of one operation of the types openapi-typescript generated from a contract (`operations[id]`), as the
 * builder hands it over once the document has validated it: the path parameters by name, as the strings they arrived
 * as (nothing converts them); the query coerced to its documented types (defaults are not filled in); the JSON body
 * (a YAML one arrives as its JSON value), the fields of a multipart body (its file through `uploadedFile`), or the
 * bytes of any other media type; undefined when the body is optional and absent.
 */
export type OperationRequest<O> = { params: ParamsOf<O>; query: QueryOf<O>; body: BodyOf<O> };
