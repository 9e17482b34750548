import type { Logger } from '../log.ts';

export interface ChannelListener {
  stop(): Promise<void>;
}

/**
 * LISTENs to a Postgres notification channel on a connection of its own, re-made after a loss (a second later, for as
 * long as it takes). Notifications sent while the connection was down are lost: callers also poll.
 */
export async function listenToChannel(databaseUrl: string, channel: string, onNotification: (payload: string) => void, log: Logger): Promise<ChannelListener> {
  const { default: pg } = await import('pg');
  let client: InstanceType<typeof pg.Client> | undefined;
  let stopped = false;
  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: databaseUrl });
    next.on('notification', (message) => onNotification(message.payload ?? ''));
    next.on('error', (error) => {
      log.warn({ err: error, channel }, 'notifications: connection lost; reconnecting');
      client = undefined;
      const retry = () => {
        if (!stopped) connect().catch(() => setTimeout(retry, 1000).unref());
      };
      setTimeout(retry, 1000).unref();
    });
    await next.connect();
    await next.query(`LISTEN ${channel}`);
    client = next;
  };
  await connect();
  return {
    async stop() {
      stopped = true;
      await client?.end().catch(() => undefined);
    },
  };
}
