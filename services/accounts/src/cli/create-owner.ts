/**
 * Creates an organization with its first owner without going through the API:
 *
 *   node services/accounts/src/cli/create-owner.ts --email a@b.c --name "A" --organization "Acme" \
 *     [--password ...] [--api-key test|live] [--json]
 *
 * Reads DATABASE_URL and applies the accounts migrations first. Prints the organization id (and the
 * generated password when none was given, and a new API key's secret with --api-key). Exit code 1 on failure,
 * for example when the e-mail already has an account.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ROLE_PERMISSIONS } from '@sigil/kit/auth';
import { isAppError } from '@sigil/kit/errors';
import { loadConfig } from '@sigil/kit/config';
import { migrate } from '@sigil/kit/db';
import { insertApiKey } from '../api-keys.ts';
import { createOwnerConfig } from '../config.ts';
import { createDb } from '../db.ts';
import { createOrganizationService } from '../organizations.ts';
import { createPasswordHasher, generatePassword } from '../passwords.ts';

const USAGE = 'Usage: create-owner --email <email> --name <name> --organization <name> [--password <password>] [--api-key test|live] [--json]';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      organization: { type: 'string' },
      password: { type: 'string' },
      'api-key': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const { email, name, organization } = values;
  const apiKeyMode = values['api-key'];
  if (!email || !name || !organization) {
    console.error(USAGE);
    return 2;
  }
  if (apiKeyMode !== undefined && apiKeyMode !== 'test' && apiKeyMode !== 'live') {
    console.error('--api-key must be test or live');
    return 2;
  }
  if (values.password !== undefined && values.password.length < 12) {
    console.error('--password must be at least 12 characters');
    return 2;
  }
  let databaseUrl: string;
  try {
    databaseUrl = loadConfig(createOwnerConfig).DATABASE_URL;
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }

  await migrate(databaseUrl, path.resolve(import.meta.dirname, '../../../../prisma/accounts/migrations'));
  const db = createDb(databaseUrl);
  try {
    const password = values.password ?? generatePassword();
    const created = await createOrganizationService({ db, passwords: createPasswordHasher() }).createWithOwner({ organizationName: organization, name, email, password });
    const key = apiKeyMode
      ? await db.$transaction((tx) =>
          insertApiKey(
            tx,
            { organizationId: created.organization.id, userId: created.user.id, permissions: ROLE_PERMISSIONS.owner },
            { name: `${apiKeyMode === 'live' ? 'Live' : 'Test'} key`, mode: apiKeyMode },
            // A one-shot command, its own composition root like main.ts: the key is created now, on the wall clock.
            new Date(),
          ),
        )
      : undefined;
    const output = {
      organizationId: created.organization.id,
      userId: created.user.id,
      email: created.user.email,
      ...(values.password === undefined ? { password } : {}),
      ...(key ? { apiKeyId: key.id, apiKey: key.secret } : {}),
    };
    if (values.json) console.log(JSON.stringify(output));
    else for (const [field, value] of Object.entries(output)) console.log(`${field}=${value}`);
    return 0;
  } catch (error) {
    console.error(isAppError(error) ? error.message : error);
    return 1;
  } finally {
    await db.$disconnect();
  }
}

process.exitCode = await main();
