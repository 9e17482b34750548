/** The strata CLI: `strata connect` (also `strata sandbox connect`), a local port forwarded to an exposed sandbox through the gateway. */
import type { Command } from 'commander';
import { ApiError, expectData } from '@strata/client';
import { ExitCode, UsageError, VERSION } from '../cli-types.ts';
import { examples } from '../help.ts';
import { intArg } from '../args.ts';
import type { CommandContext } from '../context.ts';
import { openTunnelSocket, startLocalTunnel } from '../tunnel.ts';

export function registerConnect(program: Command, ctx: CommandContext): void {
  defineConnect(program.command('connect'), ctx, 'strata connect');
  const sandbox = program.commands.find((command) => command.name() === 'sandbox');
  if (sandbox) defineConnect(sandbox.command('connect'), ctx, 'strata sandbox connect');
}

function defineConnect(command: Command, ctx: CommandContext, usage: string): void {
  const { out, err, io, globals, connect } = ctx;
  command
    .description('open a local port forwarded to an exposed sandbox (TCP over WebSocket through the gateway), until Ctrl-C')
    .argument('<sandbox>', 'NAME of the sandbox (created with --expose)')
    .option('--port <port>', 'local port to listen on (default: any free port)', intArg(0, 65535), 0)
    .option('--address <host>', 'local address to listen on', '127.0.0.1')
    .addHelpText('after', examples(
      [`${usage} orders-sbx-1a2b3c`, 'then: psql "postgres://strata@127.0.0.1:PORT/orders" with the password of `strata sandbox credentials`'],
      [`${usage} orders-sbx-1a2b3c --port 15432`],
    ))
    .action(async (name: string, opts: { port: number; address: string }, cmd: Command) => {
      const c = await connect(cmd);
      const { sandbox } = await expectData(c.api.GET('/sandboxes/{name}', { params: { path: { name } } }));
      if (!sandbox) throw new ApiError(404, `sandbox ${name} was not found`);
      if (!sandbox.connect) throw new UsageError(`sandbox ${name} is not exposed (or not Ready: it is ${sandbox.phase}); create one with \`strata sandbox create TARGET --expose\``);
      const options = { server: c.server, token: c.token, sandbox: name, host: opts.address, port: opts.port, userAgent: `strata-cli/${VERSION}`, onEvent: (line: string) => err(`${line}\n`) };
      // One tunnel first: a refusal (role, phase) is said now, not at the first connection.
      try {
        (await openTunnelSocket(options)).close();
      } catch (error) {
        err(`error: the tunnel was refused: ${(error as Error).message}\n`);
        throw new ExitCode(1);
      }
      const tunnel = await startLocalTunnel(options);
      const where = { sandbox: name, engine: sandbox.engine ?? '', host: opts.address, port: tunnel.port, database: sandbox.database ?? '' };
      if (globals(cmd).output === 'text') {
        const url = sandbox.engine === 'mysql' ? `mysql -h ${where.host} -P ${where.port} -u strata -p ${where.database}` : `psql "postgres://strata@${where.host}:${where.port}/${where.database}"`;
        out(`forwarding ${where.host}:${where.port} to sandbox ${name} (Ctrl-C stops)\nconnect with: ${url}\npassword:     strata sandbox credentials ${name}\n`);
      } else out(JSON.stringify(where) + '\n');
      await new Promise<void>((resolve) => {
        if (io.signal?.aborted) return resolve();
        io.signal?.addEventListener('abort', () => resolve(), { once: true });
      });
      await tunnel.close();
    });
}
