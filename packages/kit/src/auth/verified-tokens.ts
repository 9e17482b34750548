/**
 * Remembers principal tokens that verified, until they expire: the gateway re-uses one signed token per caller for a
 * while, so a service checks each signature once instead of on every request. Only a byte-identical token hits; a
 * token is never trusted past its `exp`.
 */
export function rememberVerified<P>(verify: (token: string) => Promise<{ principal: P; expiresAt: number }>, options: { max?: number; now?: () => number } = {}) {
  const max = options.max ?? 10_000;
  const now = options.now ?? Date.now;
  const known = new Map<string, { principal: P; expiresAt: number }>();
  return async (token: string): Promise<P> => {
    const hit = known.get(token);
    if (hit && hit.expiresAt > now()) return hit.principal;
    if (hit) known.delete(token);
    const verified = await verify(token);
    if (known.size >= max) known.delete(known.keys().next().value as string);
    known.set(token, verified);
    return verified.principal;
  };
}
