/** The strata CLI: `strata login` and `strata logout`. */
import type { Command} from 'commander';
import { Option } from 'commander';
import { writeConfig, type StoredConfig } from '../config.ts';
import { requestDevToken } from '../dev-issuer.ts';
import { VERSION, ROLES, UsageError } from '../cli-types.ts';
import { readStdin } from '../args.ts';
import type { CommandContext } from '../context.ts';
import { examples } from '../help.ts';

interface LoginOptions {
  email?: string;
  role?: (typeof ROLES)[number];
  token?: string;
}

/** Where the token comes from: the dev issuer (`--email`) or the access proxy (`--token`). */
function loginSource(opts: LoginOptions): { email: string } | { proxyToken: string } {
  if (opts.email && opts.token) throw new UsageError('pass either --email (dev issuer) or --token, not both');
  if (opts.email) return { email: opts.email };
  if (opts.token) return { proxyToken: opts.token };
  throw new UsageError('pass --email E (local-stack dev issuer) or --token JWT');
}

export function registerAuth(program: Command, ctx: CommandContext): void {
  const { io, state, fetchImpl, stdinUse, globals, loadConfig, serverFrom, emit } = ctx;
  program
    .command('login')
    .description('sign in: get a token from the local stack\'s dev issuer (--email) or store one from the access proxy (--token)')
    .option('--email <email>', 'e-mail of the principal (dev issuer of the local stack)')
    .addOption(new Option('--role <role>', 'role asked from the dev issuer (default: the issuer\'s, restorer-admin on the local stack)').choices(ROLES))
    .option('--token <jwt>', 'access token from the real access proxy (e.g. `cloudflared access token --app URL`); "-" reads stdin')
    .addHelpText('after', examples(
      ['strata login --server http://127.0.0.1:8080 --email dev@example.com', 'local stack: a token from its dev issuer'],
      ['strata login --server http://127.0.0.1:8080 --email ops@example.com --role operator'],
      ['cloudflared access token --app https://strata.example.com | strata login --server https://strata.example.com --token -'],
    ))
    .action(async (opts: LoginOptions, cmd: Command) => {
      const source = loginSource(opts);
      const { file, config } = await loadConfig();
      const server = serverFrom(globals(cmd).server, config);
      state.server = server;
      let token: string;
      let expiresAt: string | undefined;
      if ('proxyToken' in source) {
        token = (source.proxyToken === '-' ? await readStdin(io, stdinUse) : source.proxyToken).trim();
        if (!token) throw new UsageError('the token is empty');
      } else {
        const client = { server, fetch: fetchImpl, userAgent: `strata-cli/${VERSION}`, signal: io.signal };
        ({ token, expiresAt } = await requestDevToken(client, opts.role ? { email: source.email, role: opts.role } : { email: source.email }));
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
    .addHelpText('after', examples(['strata logout']))
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
