import { mkdtemp, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startStack } from '@sigil/local-stack';
import { createPrincipalSigner, PRINCIPAL_HEADER, type InternalKeyPair, type Principal } from '@sigil/kit/auth';
const stateDir = await mkdtemp(path.join(tmpdir(), 'sigil-hold-'));
const stack = await startStack({ stateDir, env: process.env, namespace: `hold_${Date.now()}_`, logLevel: 'warn' });
try {
  const key = stack.seed.testApiKey;
  const created = await fetch(`${stack.gatewayUrl}/v1/templates`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'T' }) }).then((r) => r.json() as Promise<{ id: string }>);
  const keys = JSON.parse(await readFile(path.join(stateDir, 'internal-jwt-key.json'), 'utf8')) as InternalKeyPair;
  const sign = await createPrincipalSigner(keys.privateJwk);
  const principal: Principal = { kind: 'api_key', organizationId: stack.seed.organizationId, actorId: 'key_bench', apiKeyId: 'key_bench', mode: 'test', permissions: ['template:read'] };
  const token = await sign(principal);
  for (const p of stack.processes) console.log('PID', p.name, p.pid);
  if (process.env.WAIT_FILE) while (!existsSync(process.env.WAIT_FILE)) await new Promise((r) => setTimeout(r, 200));
  const n = Number(process.env.N ?? 1100);
  for (let i = 0; i < n; i++) await (await fetch(`${stack.serviceUrls.templates}/v1/templates/${created.id}`, { headers: { [PRINCIPAL_HEADER]: token } })).arrayBuffer();
  console.log('READY');
  await new Promise((r) => setTimeout(r, Number(process.env.HOLD_MS ?? 600000)));
} finally {
  await stack.stop();
}
