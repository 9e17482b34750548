import net from 'node:net';

export interface Dial {
  host: string;
  port: number;
  /** The address a name was looked up to (through the caller's own lookup), when it was a name. */
  resolved?: string;
}

export interface DialGuard {
  /** Every TCP connection this process tried to open since it was installed (or last cleared). */
  dials: Dial[];
  clear(): void;
  restore(): void;
}

const LOOPBACK = (address: string) => /^127\./.test(address) || address === '::1' || /^::ffff:127\./i.test(address);

type ConnectArgs = Parameters<net.Socket['connect']>;

/** The options object of `socket.connect(...)`, whichever form it was called in (net.connect passes its own array). */
function optionsOf(args: unknown[]): (net.TcpSocketConnectOpts & { path?: string }) | undefined {
  const first = args[0];
  if (Array.isArray(first)) return first[0] as net.TcpSocketConnectOpts;
  if (typeof first === 'object' && first !== null) return first as net.TcpSocketConnectOpts;
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) return { port: Number(first), host: typeof args[1] === 'string' ? args[1] : 'localhost' };
  return undefined;
}

/**
 * Records every TCP connection the process opens (`net.Socket.prototype.connect`, which `net.connect`, `tls.connect`
 * and undici all go through) and lets only loopback ones happen: a fetcher that dials anything else gets a socket
 * error instead, so a bug makes the test fail without sending a byte off this machine. A name is looked up through
 * the caller's own lookup (a pinned one) and its answer checked the same way; without one, no DNS is asked.
 */
export function installDialGuard(): DialGuard {
  const original = net.Socket.prototype.connect;
  const dials: Dial[] = [];
  function guarded(this: net.Socket, ...args: unknown[]): net.Socket {
    const options = optionsOf(args);
    if (!options || options.path) return original.apply(this, args as ConnectArgs);
    const dial: Dial = { host: options.host ?? 'localhost', port: Number(options.port) };
    dials.push(dial);
    if (net.isIP(dial.host)) {
      if (!LOOPBACK(dial.host)) {
        process.nextTick(() => this.destroy(new Error(`dial guard: refused to connect to ${dial.host}:${dial.port}`)));
        return this;
      }
    } else {
      const lookup = options.lookup;
      options.lookup = ((host: string, lookupOptions: object, callback: (error: Error | null, address?: unknown, family?: number) => void) => {
        if (!lookup) return callback(new Error(`dial guard: no DNS for ${host}`));
        lookup(host, lookupOptions as never, ((error: Error | null, address: unknown, family?: number) => {
          const first = Array.isArray(address) ? (address[0] as { address?: string } | undefined)?.address : (address as string | undefined);
          dial.resolved = first;
          if (error || first === undefined || LOOPBACK(first)) return callback(error, address, family);
          callback(new Error(`dial guard: ${host} resolved to ${first}, not loopback`));
        }) as never);
      }) as net.LookupFunction;
    }
    return original.apply(this, args as ConnectArgs);
  }
  net.Socket.prototype.connect = guarded as typeof original;
  return {
    dials,
    clear: () => void dials.splice(0),
    restore: () => {
      net.Socket.prototype.connect = original;
    },
  };
}

/** A TCP server on loopback that counts the connections it is offered (and closes them at once). */
export async function startTrap(): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
