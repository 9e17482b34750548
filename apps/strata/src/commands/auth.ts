/** The strata CLI: `strata login` and `strata logout`. */
import type { Command} from 'commander';
import { Option } from 'commander';
import { ApiClient, ApiError } from '../client.ts';
import { writeConfig, type StoredConfig } from '../config.ts';
import { VERSION, ROLES, UsageError } from '../cli-types.ts';
import { readStdin } from '../args.ts';
import type { CommandContext } from '../context.ts';

export function registerAuth(program: Command, ctx: CommandContext): void {
  const { io, state, fetchImpl, stdinUse, globals, loadConfig, serverFrom, emit } = ctx;
  program
    .command('login')
    .description('sign in: get a token from the local stack\'s dev issuer (--email) or store one from the access proxy (--token)')
    .option('--email <email>', 'e-mail of the principal (dev issuer of the local stack)')
    .addOption(new Option('--role <role>', 'role asked from the dev issuer (default: the issuer\'s, restorer-admin on the local stack)').choices(ROLES))
    .option('--token <jwt>', 'access token from the real access proxy (e.g. `cloudflared access token --app URL`); "-" reads stdin')
    .action(async (opts: { email?: string; role?: string; token?: string }, cmd: Command) => {
      if (opts.email && opts.token) throw new UsageError('pass either --email (dev issuer) or --token, not both');
      if (!opts.email && !opts.token) throw new UsageError('pass --email E (local-stack dev issuer) or --token JWT');
      const { file, config } = await loadConfig();
      const server = serverFrom(globals(cmd).server, config);
      state.server = server;
      let token: string;
      let expiresAt: string | undefined;
      if (opts.token) {
        token = (opts.token === '-' ? await readStdin(io, stdinUse) : opts.token).trim();
        if (!token) throw new UsageError('the token is empty');
      } else {
        const client = new ApiClient({ server, token: undefined, fetch: fetchImpl, userAgent: `strata-cli/${VERSION}`, signal: io.signal });
        let answer: { token?: unknown; expiresAt?: unknown };
        try {
          answer = await client.request('POST', '/api/dev/token', {
            absolutePath: true,
            anonymous: true,
            json: opts.role ? { email: opts.email, role: opts.role } : { email: opts.email },
          });
        } catch (e) {
          if (e instanceof ApiError && e.status === 404) {
            throw new ApiError(404, `${server} has no dev token issuer (only the local stack has one); use --token with a token from the access proxy`);
          }
          throw e;
        }
        if (!answer || typeof answer.token !== 'string' || !answer.token) {
          throw new ApiError(0, 'the dev issuer answered without a token');
        }
        token = answer.token;
        expiresAt = typeof answer.expiresAt === 'string' ? answer.expiresAt : undefined;
      }
      const next: StoredConfig = { server, token };
      if (expiresAt) next.expiresAt = expiresAt;
      await writeConfig(file, next);
      const summary = { server, email: opts.email, role: opts.token ? undefined : opts.role, expiresAt, config: file };
      emit(cmd, summary, () => {
        const who = opts.email ? ` as ${opts.email}${opts.role ? ` (${opts.role})` : ''}` : '';
        const until = expiresAt ? `; token expires ${expiresAt}` : '';
        return `Logged in to ${server}${who}${until}.\nSaved to ${file}\n`;
      });
    });

  program
    .command('logout')
    .description('forget the stored token (the server stays configured)')
    .action(async (_opts: unknown, cmd: Command) => {
      const { file, config } = await loadConfig();
      if (!config.token) {
        emit(cmd, { server: config.server, loggedOut: false }, () => 'Not logged in.\n');
        return;
      }
      const next: StoredConfig = {};
      if (config.server) next.server = config.server;
      await writeConfig(file, next);
      emit(cmd, { server: config.server, loggedOut: true }, () => `Logged out of ${config.server ?? 'the server'}.\n`);
    });

}
