/**
 * What Microsoft Entra sends that is not quite SCIM, made SCIM before SCIMMY reads it: booleans as strings
 * (`"active": "False"`, `"primary": "True"`, in a resource, a PATCH value or an object of attributes without a path)
 * and operation names in capitals (`"op": "Replace"`). Everything else (ops without `path` whose value is an object of
 * attributes, `emails[type eq "work"].value` paths, member removal by value) SCIMMY handles as sent.
 */

/** Attributes of type boolean in the User and Group schemas (and their sub-attributes) that Entra sends as strings. */
const BOOLEAN_ATTRIBUTE = /(^|[.:\]])(active|primary)$/i;

function asBoolean(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const word = value.trim().toLowerCase();
  return word === 'true' ? true : word === 'false' ? false : value;
}

/** A copy of a resource (or an object of attributes) with its boolean attributes made booleans. */
export function normalizeAttributes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalizeAttributes);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([key, inner]) => [key, BOOLEAN_ATTRIBUTE.test(key) ? asBoolean(inner) : normalizeAttributes(inner)]),
  );
}

interface Operation {
  op?: unknown;
  path?: unknown;
  value?: unknown;
}

/** A PatchOp message with lower-case op names and boolean values where a boolean attribute is meant. */
export function normalizePatch(message: unknown): unknown {
  if (!message || typeof message !== 'object' || !Array.isArray((message as { Operations?: unknown }).Operations)) return message;
  const operations = ((message as { Operations: Operation[] }).Operations).map((operation) => {
    if (!operation || typeof operation !== 'object') return operation;
    const op = typeof operation.op === 'string' ? operation.op.toLowerCase() : operation.op;
    const path = typeof operation.path === 'string' ? operation.path.trim() : undefined;
    const value = path !== undefined && BOOLEAN_ATTRIBUTE.test(path) ? asBoolean(operation.value) : normalizeAttributes(operation.value);
    return { ...operation, op, ...(operation.value !== undefined ? { value } : {}) };
  });
  return { ...(message as object), Operations: operations };
}
