/**
 * Signs a principal once and re-uses the token for half its 60 s lifetime: an EdDSA signature per request is the
 * biggest cost the gateway adds, and services remember a verified token until it expires. A token handed out has at
 * least 30 s to live, far more than any request needs to reach its service.
 */
export function reuseSignedTokens<P>(sign: (principal: P) => Promise<string>, options: { reuseMs?: number; max?: number; now?: () => number } = {}) {
  const reuseMs = options.reuseMs ?? 30_000;
  const max = options.max ?? 10_000;
  const now = options.now ?? Date.now;
  const tokens = new Map<string, { token: Promise<string>; until: number }>();
  return (principal: P): Promise<string> => {
    const key = JSON.stringify(principal);
    const known = tokens.get(key);
    if (known && known.until > now()) return known.token;
    if (known) tokens.delete(key);
    if (tokens.size >= max) tokens.delete(tokens.keys().next().value as string);
    const token = sign(principal);
    tokens.set(key, { token, until: now() + reuseMs });
    token.catch(() => tokens.delete(key));
    return token;
  };
}
