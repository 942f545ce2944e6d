// A trivial webhook receiver in its own process: reads the body, answers 200. Prints `{"port":N}`.
import http from 'node:http';

process.on('SIGTERM', () => process.exit(0));
let received = 0;
const server = http.createServer((req, res) => {
  if (req.method === 'GET') return void res.end(JSON.stringify({ received }));
  req.resume();
  req.on('end', () => {
    received++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
