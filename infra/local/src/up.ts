// `npm start`: the whole platform on this machine, with embedded defaults for whatever the environment does not name.
import path from 'node:path';
import { DEFAULT_STATE_DIR } from './infra.ts';
import { startStack } from './stack.ts';
import { applyQuickstartOnce } from './quickstart.ts';
import { parseArgs } from 'node:util';

const started = performance.now();
const stateDir = process.env.SIGIL_STATE_DIR ?? path.join(DEFAULT_STATE_DIR, 'stack');
console.log(`Starting the Sigil and Strata platform (state in ${stateDir}) ...`);
// `npm start -- --replicas 2`: every service runs that many processes (STACK_REPLICAS says the same).
const { values: args } = parseArgs({ options: { replicas: { type: 'string' } } });
const replicas = args.replicas === undefined ? undefined : Number(args.replicas);
const stack = await startStack({ stateDir, log: (line) => console.log(`  ${line}`), gatewayPort: Number(process.env.GATEWAY_PORT ?? 8080), logLevel: process.env.LOG_LEVEL ?? 'info', replicas });
const quickstart = await applyQuickstartOnce({ stateDir, gatewayUrl: stack.gatewayUrl, demo: stack.demo, env: process.env }).catch((error: unknown) => `failed: ${(error as Error).message}`);
const seconds = ((performance.now() - started) / 1000).toFixed(1);

console.log(`
Sigil and Strata are running (started in ${seconds} s).

  Dashboard        ${stack.gatewayUrl}/app (sign in with the owner below, or create an organization)
  Strata console   ${stack.gatewayUrl}/console (sign in with any e-mail and pick a role: the dev issuer stands in for the access proxy)
  Strata quickstart ${quickstart}
  Gateway (REST)   ${stack.gatewayUrl}/v1
  GraphQL          ${stack.gatewayUrl}/graphql
  OpenAPI          ${stack.gatewayUrl}/v1/openapi.json
${Object.entries(stack.replicaUrls).map(([name, urls]) => `  ${name.padEnd(16)} ${urls.join(' ')}`).join('\n')}
  Signing page     ${stack.gatewayUrl}/sign (opened by a signing session's url)
  Webhooks         public https endpoints, and on this machine also http://127.0.0.1:* and http://localhost:*
  Identity provider ${stack.localIdp.url} for SSO without a real IdP (docs/local-idp.md): no passwords, local only
                   SAML metadata URL ${stack.localIdp.samlMetadataUrl}
                   OpenID issuer ${stack.localIdp.oidcIssuer}, client ${stack.localIdp.oidcClientId} / ${stack.localIdp.oidcClientSecret}
                   (SSO providers: public https, and on this machine also http://127.0.0.1:* and http://localhost:*)
  Verify page      ${stack.gatewayUrl}/verify (anyone checks a sealed PDF there, or: npx sigil-verify file.pdf --url ${stack.gatewayUrl})
  Strata API       ${stack.gatewayUrl}/api/v1 (OpenAPI ${stack.gatewayUrl}/api/v1/openapi.yaml)
  Postgres         ${redact(stack.infra.postgres.adminUrl)} (${stack.infra.postgres.source})
  MariaDB          ${redact(stack.infra.mysql.adminUrl)} (${stack.infra.mysql.source})
  NATS JetStream   ${stack.infra.nats.url} (${stack.infra.nats.source})
  S3               ${stack.infra.s3.endpoint} (${stack.infra.s3.source})
  Mail inbox       ${stack.infra.smtp.inboxUrl}/messages (SMTP ${stack.infra.smtp.host}:${stack.infra.smtp.port}, ${stack.infra.smtp.source})
  Logs             ${path.join(stateDir, 'logs')}

  Organization     ${stack.seed.organizationId}
  Owner sign-in    ${stack.seed.ownerEmail} / ${stack.seed.ownerPassword}
  Test API key     ${stack.seed.testApiKey}

Try:  curl -H "Authorization: Bearer ${stack.seed.testApiKey}" ${stack.gatewayUrl}/v1/templates
      npx strata login --server ${stack.gatewayUrl} --email you@example.com   (then: strata apply -f ..., see docs/strata.md)
Press Ctrl-C to stop.`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    console.log('\nStopping ...');
    await stack.stop();
    process.exit(0);
  });
}

function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}
