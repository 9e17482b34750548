// The floor of one more process hop: a keep-alive HTTP proxy with no logic at all (no routing, no authentication),
// adding a pre-signed principal header, with the same upstream client as the gateway (an undici pool). Started by
// gateway-latency.ts as its own process, like the gateway.
import http from 'node:http';
import { Pool } from 'undici';

const [target, principalHeader, token, portFile] = process.argv.slice(2) as [string, string, string, string];
const pool = new Pool(target, { connections: 64 });
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding']);
const server = http.createServer((req, res) => {
  const { authorization: _credential, host: _host, connection: _connection, ...headers } = req.headers;
  pool.stream(
    {
      method: req.method as 'GET',
      path: req.url ?? '/',
      headers: { ...headers, [principalHeader]: token } as Record<string, string>,
      body: req.method === 'GET' || req.method === 'HEAD' ? null : req,
    },
    ({ statusCode, headers: answer }) => {
      const out: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
      res.writeHead(statusCode, out);
      return res;
    },
    (error) => {
      if (error) res.destroy(error);
    },
  );
});
server.listen(0, '127.0.0.1', () => {
  const { writeFileSync } = process.getBuiltinModule('node:fs');
  writeFileSync(portFile, String((server.address() as { port: number }).port));
});
