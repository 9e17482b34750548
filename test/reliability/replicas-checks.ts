// What the two-replica tests read besides the API: a service's database, the stack's inbox, which process holds a
// connection, and a webhook receiver that can hold a request open.
import { readdir, readFile, readlink } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { startTestStack, type TestStack } from '../e2e/stack.ts';

/**
 * The shared end-to-end stack with two processes of every service: STACK_REPLICAS is read by the stack from the
 * environment startTestStack passes on (and restored after, since test files share workers). The webhook timeout,
 * and with it the delivery lease, is 2 s (lease 6 s) so the kill test waits little.
 */
export async function startReplicaStack(): Promise<TestStack> {
  const saved = { STACK_REPLICAS: process.env.STACK_REPLICAS, STACK_WEBHOOK_TIMEOUT_MS: process.env.STACK_WEBHOOK_TIMEOUT_MS };
  Object.assign(process.env, { STACK_REPLICAS: '2', STACK_WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS) });
  try {
    return await startTestStack();
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

export const WEBHOOK_TIMEOUT_MS = 2_000;
/** The webhooks service's lease on a claimed delivery (services/webhooks/src/main.ts: max(5 s, 3 timeouts)). */
export const WEBHOOK_LEASE_MS = Math.max(5_000, 3 * WEBHOOK_TIMEOUT_MS);

type SigilService = 'accounts' | 'templates' | 'envelopes' | 'signing' | 'evidence' | 'webhooks' | 'billing';

/** SQL against one Sigil service's database of the stack (named as the local stack names them). */
export async function serviceSql<R extends pg.QueryResultRow>(stack: TestStack, service: SigilService, text: string, params: unknown[] = []): Promise<R[]> {
  const url = new URL(stack.infra.postgres.adminUrl);
  url.pathname = `/${stack.namespace}sigil_${service}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return (await client.query<R>(text, params)).rows;
  } finally {
    await client.end();
  }
}

export interface InboxMessage {
  to: string[];
  subject: string;
  text: string;
}

/** Every message the stack's SMTP sink holds for these addresses (the sink is shared by the run's stacks). */
export async function inboxFor(stack: TestStack, addresses: readonly string[]): Promise<InboxMessage[]> {
  const messages = (await (await fetch(`${stack.infra.smtp.inboxUrl}/messages`)).json()) as InboxMessage[];
  return messages.filter((message) => message.to.some((to) => addresses.includes(to)));
}

export interface ReceivedHook {
  id: string;
  type: string;
  body: string;
  /** The sender's end of the connection: which process sent it (`senderPid`). */
  remotePort: number;
  at: number;
}

export interface Receiver {
  url: string;
  port: number;
  hooks: ReceivedHook[];
  close(): void;
}

/**
 * A webhook receiver on loopback. `hold(hook)` true leaves that request unanswered (its sender is killed meanwhile);
 * every other request is answered 204.
 */
export async function startReceiver(hold: (hook: ReceivedHook) => boolean = () => false): Promise<Receiver> {
  const hooks: ReceivedHook[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const hook = { id: String(req.headers['webhook-id']), type: (JSON.parse(body) as { type: string }).type, body, remotePort: req.socket.remotePort ?? 0, at: Date.now() };
      hooks.push(hook);
      if (!hold(hook)) res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    hooks,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/**
 * Which of `pids` owns the TCP connection from local port `senderPort` to `receiverPort` on loopback: the socket's
 * inode from /proc/net/tcp, then the process whose descriptors include it.
 */
export async function senderPid(senderPort: number, receiverPort: number, pids: readonly number[]): Promise<number | undefined> {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  const lines = (await readFile('/proc/net/tcp', 'utf8')).split('\n').slice(1);
  const inode = lines
    .map((line) => line.trim().split(/\s+/))
    .find((fields) => fields[1]?.endsWith(`:${hex(senderPort)}`) && fields[2]?.endsWith(`:${hex(receiverPort)}`))?.[9];
  if (!inode) return undefined;
  for (const pid of pids) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')) === `socket:[${inode}]`) return pid;
  }
  return undefined;
}

/** Whether a process with this pid still runs. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
