import request from 'supertest';
import { startTemplatesHarness } from './test/helpers.ts';
import { apiKeyPrincipal } from '@sigil/kit/testing';
process.env.TEST_LOG_LEVEL='error';
const h = await startTemplatesHarness('probe');
const res = await request(h.app).post('/v1/templates').set(await h.auth.headers(apiKeyPrincipal())).send({ name: 'x' });
console.log(res.status, res.body);
await h.close();
