// The baselines of bench:pools (bench/pools.ts): a bare server whose one route does only RPOP.
// Plain JavaScript run on plain node, as the platform's production build (dist/) is, so that neither
// side pays for tsx's on-the-fly transform (its helpers run on every closure made).
//   node bench/bare-pop-server.mjs <express|http> <redisUrl> <list key> [log]
// prints `listening <port>`. With `log`, one line per request written to stdout as pino does (an
// asynchronous write).
import { write } from 'node:fs';
import http from 'node:http';
import express from 'express';
import { Redis } from 'ioredis';

const [kind, redisUrl, key, log] = process.argv.slice(2);
const logLines = log === 'log';
const redis = new Redis(redisUrl);
const ignore = () => undefined;

async function pop(res) {
  const raw = await redis.rpop(key);
  if (raw === null) {
    res.statusCode = 404;
    res.end('{"error":{"code":"pool_empty"}}');
    return;
  }
  const item = JSON.parse(raw);
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.end(JSON.stringify({ ...item, source: 'pool' }));
  if (logLines) write(1, `{"level":30,"msg":"request","path":"/pop","status":200,"id":${item.id}}\n`, ignore);
}

function failed(res) {
  res.statusCode = 500;
  res.end();
}

let server;
if (kind === 'express') {
  const app = express();
  app.post('/pop', (_req, res, next) => {
    pop(res).catch(next);
  });
  server = http.createServer(app);
} else {
  server = http.createServer((req, res) => {
    req.resume();
    pop(res).catch(() => failed(res));
  });
}
server.keepAliveTimeout = 65_000;
// An orderly exit on SIGTERM, so that --cpu-prof writes its profile.
process.once('SIGTERM', () => process.exit(0));
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
