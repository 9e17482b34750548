import { readFileSync } from 'node:fs';
import { buildSchema, isObjectType } from 'graphql';
import { expect, it } from 'vitest';
import { EMBEDDED_TYPES, KEYED_BY_NAME } from '../src/graphcache.ts';

/**
 * graphcache needs a key for every object type: one without an `id` must be listed as embedded, or the cache warns and
 * cannot normalise what contains it. The list follows the API schema the app is built against.
 */
it('lists every object type of the API schema that has no id, and no other', () => {
  const schema = buildSchema(readFileSync(new URL('../../../gateway/api-schema.graphql', import.meta.url), 'utf8'));
  const keyedByName = new Set(KEYED_BY_NAME);
  // A template field's id (`signature_1`) is unique within its version only: keyed by it, two templates would share one.
  const idWithinParent = ['TemplateField'];
  const withoutId = Object.values(schema.getTypeMap())
    .filter((type) => isObjectType(type) && !type.name.startsWith('__') && !['Query', 'Mutation', 'Subscription'].includes(type.name))
    .filter((type) => isObjectType(type) && !('id' in type.getFields()) && !keyedByName.has(type.name))
    .map((type) => type.name);
  expect([...EMBEDDED_TYPES].sort()).toEqual([...withoutId, ...idWithinParent].sort());
});
