import { describe, expectTypeOf, it } from 'vitest';
import type { components, operations } from '@sigil/proto/api/sigil';
import type { operations as strata } from '@sigil/proto/api/strata';
import type { OperationRequest } from '../src/api/operation-types.ts';

// Checked by the type checker (`npm run typecheck`): each line fails the build when the request types drift.
describe('the request of an operation, typed from the generated contract', () => {
  it('names the path parameters, as strings, and has none where the path has none', () => {
    expectTypeOf<OperationRequest<operations['getTemplateVersion']>['params']>().toEqualTypeOf<{ id: string; version: string }>();
    expectTypeOf<OperationRequest<operations['listTemplates']>['params']>().toEqualTypeOf<Record<string, never>>();
    expectTypeOf<OperationRequest<strata['getTarget']>['params']>().toEqualTypeOf<{ ns: string; name: string }>();
  });

  it('types the query as documented (coerced), and has none where the operation takes none', () => {
    expectTypeOf<OperationRequest<operations['listTemplates']>['query']['limit']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<OperationRequest<operations['getTemplateVersionDocument']>['query']['edited']>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<OperationRequest<operations['createTemplate']>['query']>().toEqualTypeOf<Record<string, never>>();
  });

  it('types a JSON body, a multipart body and bytes; an optional body may be absent', () => {
    expectTypeOf<OperationRequest<operations['createTemplate']>['body']>().toEqualTypeOf<components['schemas']['CreateTemplate']>();
    expectTypeOf<OperationRequest<operations['declineSigning']>['body']>().toEqualTypeOf<components['schemas']['DeclineSigning'] | undefined>();
    expectTypeOf<OperationRequest<operations['uploadSigningAttachment']>['body']>().toEqualTypeOf<components['schemas']['UploadSigningAttachment']>();
    expectTypeOf<OperationRequest<operations['uploadTemplateFile']>['body']>().toEqualTypeOf<Buffer>();
    expectTypeOf<OperationRequest<operations['getTemplate']>['body']>().toEqualTypeOf<undefined>();
  });
});
