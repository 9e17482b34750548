// The floor of one more process hop: a keep-alive HTTP proxy with no logic at all (no routing, no authentication),
// adding a pre-signed principal header. Started by gateway-latency.ts as its own process, like the gateway.
import http from 'node:http';

const [target, principalHeader, token, portFile] = process.argv.slice(2) as [string, string, string, string];
const upstream = new URL(target);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const server = http.createServer((req, res) => {
  const { authorization: _credential, ...headers } = req.headers;
  const forwarded = http.request(
    { hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, agent, headers: { ...headers, host: upstream.host, [principalHeader]: token } },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  req.pipe(forwarded);
});
server.listen(0, '127.0.0.1', () => {
  const { writeFileSync } = process.getBuiltinModule('node:fs');
  writeFileSync(portFile, String((server.address() as { port: number }).port));
});
