// How many processes each service of the local stack runs, and what the replicas are called.

/** The most replicas a stack on one machine runs of each service. */
export const MAX_REPLICAS = 8;

/** `envelopes` for a service's first replica (the name a one-replica stack always had), `envelopes#2` for the second. */
export const replicaName = (service: string, replica: number): string => (replica === 1 ? service : `${service}#${replica}`);

/** The replica count asked for: the option, else `STACK_REPLICAS`, else 1. */
export function replicaCountOf(option: number | undefined, env: NodeJS.ProcessEnv): number {
  const asked = option ?? (env.STACK_REPLICAS ? Number(env.STACK_REPLICAS) : 1);
  if (!Number.isInteger(asked) || asked < 1 || asked > MAX_REPLICAS) {
    throw new Error(`replicas must be a whole number from 1 to ${MAX_REPLICAS} (got ${option ?? env.STACK_REPLICAS})`);
  }
  return asked;
}

/** The gateway's SERVICE_URLS: one address per service as before, or the list of its replicas'. */
export function gatewayServiceUrls(replicaUrls: Record<string, string[]>): Record<string, string | string[]> {
  return Object.fromEntries(Object.entries(replicaUrls).map(([service, urls]) => [service, urls.length === 1 ? (urls[0] as string) : urls]));
}
