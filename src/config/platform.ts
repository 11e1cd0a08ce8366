import { z } from 'zod';
import { parseBlock } from '../net/ip-address.js';
import { bool, byteSize, int, list, num, oneOf, optionalInt, optionalStr, setting, str } from './define.js';

/** false/true/a number of proxy hops (HTTP_TRUST_PROXY) as a hop count: false = 0, true = 1. */
const proxyHops = () =>
  z
    .string()
    .trim()
    .toLowerCase()
    .refine((v) => /^(true|false|yes|no|on|off|\d{1,2})$/.test(v), 'must be false, true or a number of proxy hops (0-99)')
    .transform((v) => (['true', 'yes', 'on'].includes(v) ? 1 : ['false', 'no', 'off'].includes(v) ? 0 : Number(v)));

/** Addresses and CIDR blocks, each checked. */
const blockList = () =>
  list().superRefine((entries, ctx) => {
    for (const entry of entries) if (!parseBlock(entry)) ctx.addIssue({ code: 'custom', message: `"${entry}" is not an IP address or CIDR block` });
  });

/** Process-wide settings: environment, logging, data directory. */
export const coreSettings = {
  nodeEnv: setting('NODE_ENV', oneOf(['development', 'production', 'test']), 'development', 'Runtime environment; production refuses example secrets.'),
  instanceId: setting('INSTANCE_ID', optionalStr(), undefined, 'This process in the cluster registry; default <hostname>-<pid>.'),
  dataDir: setting(
    'DATA_DIR',
    str(),
    './data',
    'Where the embedded Redis and PostgreSQL keep their data, with services.json (their ports and generated passwords); all of it for its owner only (folders 0700, files 0600). Processes started with the same DATA_DIR attach to the running services.',
  ),
  embeddedRestartAttempts: setting(
    'EMBEDDED_RESTART_ATTEMPTS',
    int(0, 100),
    8,
    'Attempts to restart an embedded redis-server or PostgreSQL that died (backoff 0.25 s doubling to 8 s: 8 attempts take about 32 s) before the process that runs it gives up and exits non-zero.',
  ),
  logLevel: setting('LOG_LEVEL', oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'info', 'pino log level.'),
  logPretty: setting('LOG_PRETTY', optionalStr(), undefined, 'true/false: human-readable logs; default: pretty when stdout is a terminal.'),
  installMissing: setting('INSTALL_MISSING', bool(), true, 'Install a missing redis-server/chromium/postgresql with apt-get (Debian/Ubuntu as root).'),
};

/** The HTTP server every process runs: the API's, or health, readiness and metrics only in a worker-only process. */
export const httpSettings = {
  host: setting(
    'HOST',
    str(),
    '127.0.0.1',
    "Address the process's HTTP server listens on (the API, or health, readiness and metrics in a worker-only process).",
  ),
  port: setting(
    'PORT',
    int(0, 65535),
    3000,
    "Port of the process's HTTP server (0 = any free port, printed at start). In use: the start fails, except for a worker-only process outside production, which takes any free port and prints it.",
  ),
  bodyLimit: setting('HTTP_BODY_LIMIT', byteSize(), '1mb', 'Largest accepted JSON body (bytes, or with a unit: 512kb, 1mb; kb = 1024 bytes).'),
  trustProxy: setting(
    'HTTP_TRUST_PROXY',
    proxyHops(),
    false,
    'Behind reverse proxies without HTTP_TRUSTED_PROXIES: true (one proxy) or how many proxies stand in front; the client address is then the X-Forwarded-For entry that many hops from the right. Only when nothing reaches the API but through them (docs/security.md).',
  ),
  trustedProxies: setting(
    'HTTP_TRUSTED_PROXIES',
    blockList(),
    '',
    'Comma-separated addresses and CIDR blocks of the reverse proxies in front (10.0.0.5, 10.0.0.0/8): from a peer among them the client address is the right-most X-Forwarded-For entry not among them. Preferred over HTTP_TRUST_PROXY.',
  ),
  metricsPublic: setting('METRICS_PUBLIC', bool(), false, 'Serve /metrics without any token (only behind a network that keeps it private).'),
  metricsToken: setting(
    'METRICS_TOKEN',
    optionalStr().refine((v) => v === undefined || v.length >= 32, 'must be at least 32 characters'),
    undefined,
    'Static bearer token Prometheus may scrape /metrics with (at least 32 characters); a user token works too.',
    { secret: true },
  ),
  shutdownGraceMs: setting('HTTP_SHUTDOWN_GRACE_MS', int(0), 10000, 'How long in-flight requests may run after SIGTERM.'),
  accessLog: setting('HTTP_ACCESS_LOG', bool(), true, 'Log one line per request.'),
  outageDeadlineMs: setting(
    'HTTP_OUTAGE_DEADLINE_MS',
    int(500),
    5000,
    'A request still unanswered this long while Redis or the database is down (the dependency monitor) is answered 503 naming it, with Retry-After.',
  ),
  requestDeadlineMs: setting(
    'HTTP_REQUEST_DEADLINE_MS',
    int(0),
    60000,
    'Any request still unanswered this long is answered 503 `request_timeout`, whatever the dependencies (0 = no limit).',
  ),
  dependencyCheckMs: setting(
    'HTTP_DEPENDENCY_CHECK_MS',
    int(100),
    1000,
    'How often the dependency monitor probes Redis and the database (each probe at most 2 s).',
  ),
  maxConnections: setting(
    'HTTP_MAX_CONNECTIONS',
    int(1),
    10000,
    'Open connections at most; past it the oldest idle one is closed for a new one, or the new one refused. Kept under the open-file limit minus HTTP_FD_RESERVE.',
  ),
  maxConnectionsPerAddress: setting(
    'HTTP_MAX_CONNECTIONS_PER_ADDRESS',
    int(0),
    256,
    "Open connections per client address (the peer's, never X-Forwarded-For) at most, handled as HTTP_MAX_CONNECTIONS (0 = no limit; raise it behind a reverse proxy).",
  ),
  fdReserve: setting('HTTP_FD_RESERVE', int(0), 1024, 'Open files kept for everything but client connections (Redis, PostgreSQL, logs, Chromium).'),
  headersTimeoutMs: setting(
    'HTTP_HEADERS_TIMEOUT_MS',
    int(1000),
    10000,
    "How long a client may take to send a request's headers before its connection is closed (408).",
  ),
  receiveTimeoutMs: setting(
    'HTTP_RECEIVE_TIMEOUT_MS',
    int(1000),
    30000,
    'How long a client may take to send a whole request, body included, before its connection is closed (408).',
  ),
  keepAliveTimeoutMs: setting(
    'HTTP_KEEP_ALIVE_TIMEOUT_MS',
    int(0),
    65000,
    "How long an idle kept-alive connection stays open (keep it above a fronting proxy's upstream idle timeout, nginx's 60 s).",
  ),
};

/**
 * Redis: one server (REDIS_URL), the master of a Sentinel group (REDIS_SENTINELS +
 * REDIS_SENTINEL_NAME) or a Redis Cluster (REDIS_CLUSTER_NODES), one of the three; without any the
 * platform starts its own redis-server. loadConfig refuses contradictory combinations.
 */
export const redisSettings = {
  url: setting('REDIS_URL', optionalStr(), undefined, 'redis://[:password@]host:port/db; unset = embedded redis-server under DATA_DIR.', { secret: true }),
  clusterNodes: setting('REDIS_CLUSTER_NODES', optionalStr(), undefined, 'Comma-separated host:port seeds of a Redis Cluster (instead of REDIS_URL).'),
  sentinels: setting(
    'REDIS_SENTINELS',
    optionalStr(),
    undefined,
    'Comma-separated host:port of the Redis Sentinels watching the master (instead of REDIS_URL); needs REDIS_SENTINEL_NAME.',
  ),
  sentinelName: setting('REDIS_SENTINEL_NAME', optionalStr(), undefined, 'The master group name the sentinels monitor (sentinel monitor <name> ...).'),
  password: setting(
    'REDIS_PASSWORD',
    optionalStr(),
    undefined,
    'Password of the Redis data nodes with REDIS_SENTINELS or REDIS_CLUSTER_NODES (REDIS_URL carries its own).',
    { secret: true },
  ),
  sentinelPassword: setting('REDIS_SENTINEL_PASSWORD', optionalStr(), undefined, "The sentinels' own password (their requirepass), when they have one.", {
    secret: true,
  }),
  replicaAcks: setting(
    'REDIS_REPLICA_ACKS',
    int(0, 16),
    0,
    'Replicas that must acknowledge each write that must not be lost (message appends, pool pops, chain job adds; Redis WAIT) before it is answered; 0 = no wait (asynchronous replication: a failover may lose the last writes, docs/operations.md).',
  ),
  replicaAckTimeoutMs: setting(
    'REDIS_REPLICA_ACK_TIMEOUT_MS',
    int(1, 60000),
    200,
    'How long such a write waits for its replicas; with fewer by then it is not answered as safe (a message goes to the DB, a pop is put back, a job add fails with 503 / is retried).',
  ),
  prefix: setting('REDIS_PREFIX', str().regex(/^[A-Za-z0-9_-]+$/), 'wp', 'Prefix of every key the platform owns.'),
  connectTimeoutMs: setting('REDIS_CONNECT_TIMEOUT_MS', int(100), 5000, 'Connect timeout of each Redis connection.'),
  commandTimeoutMs: setting('REDIS_COMMAND_TIMEOUT_MS', int(50), 2000, 'Timeout of a request-path Redis command before the fallback path is taken.'),
  queueCommandTimeoutMs: setting(
    'REDIS_QUEUE_COMMAND_TIMEOUT_MS',
    int(50),
    3000,
    "Timeout of a command on the queues' connection (adding jobs, the job console, Bull Board): a frozen Redis fails it instead of holding it.",
  ),
  serverBin: setting('REDIS_SERVER_BIN', str(), 'redis-server', 'redis-server binary for the embedded Redis.'),
};

/** PostgreSQL. Without DATABASE_URL the platform runs a private PostgreSQL server under DATA_DIR. */
export const databaseSettings = {
  url: setting(
    'DATABASE_URL',
    optionalStr(),
    undefined,
    'postgresql://user:pass@host:port/db; unset = embedded PostgreSQL under DATA_DIR (started by the first process, attached to by the others).',
    { secret: true },
  ),
  poolSize: setting('DATABASE_POOL_SIZE', int(1, 500), 10, 'Connections per process.'),
  statementTimeoutMs: setting('DATABASE_STATEMENT_TIMEOUT_MS', int(0), 30000, 'Statement timeout per query (0 = none).'),
  connectTimeoutMs: setting(
    'DATABASE_CONNECT_TIMEOUT_MS',
    int(100),
    10000,
    'How long a query waits for a pooled connection, or for a new one to connect, before it fails as the database being unavailable (a request is answered 503 sooner, HTTP_OUTAGE_DEADLINE_MS, once the database is seen down).',
  ),
  queryTimeoutMs: setting(
    'DATABASE_QUERY_TIMEOUT_MS',
    optionalInt(0),
    undefined,
    "Client-side limit of a query's answer, for a frozen server (which never enforces its statement timeout); above DATABASE_STATEMENT_TIMEOUT_MS. Unset = that timeout + 5 s; 0 = none.",
  ),
  migrateOnStart: setting('DATABASE_MIGRATE_ON_START', bool(), true, 'Apply pending migrations when a process starts.'),
};

/** BullMQ defaults shared by every queue; a queue may override them in its registry entry. */
export const queueSettings = {
  attempts: setting('JOB_ATTEMPTS', int(1, 100), 3, 'Attempts per job before it lands in the failed set (dead jobs).'),
  backoffMs: setting('JOB_BACKOFF_MS', int(0), 1000, 'First retry delay; doubles each attempt, with jitter.'),
  backoffJitter: setting('JOB_BACKOFF_JITTER', num(0, 1), 0.5, 'Random fraction (0..1) taken off each backoff delay.'),
  keepCompletedSeconds: setting('JOB_KEEP_COMPLETED_SECONDS', int(0), 86400, 'How long completed jobs (and their results) are kept.'),
  keepFailedSeconds: setting('JOB_KEEP_FAILED_SECONDS', int(0), 604800, 'How long failed jobs (dead jobs) are kept.'),
  workerConcurrency: setting('WORKER_CONCURRENCY', int(1, 1000), 10, 'Default jobs at once per worker process and queue.'),
  workerShutdownGraceMs: setting('WORKER_SHUTDOWN_GRACE_MS', int(0), 30000, 'On SIGTERM, how long active jobs may finish before they are handed back.'),
  lockDurationMs: setting('WORKER_LOCK_DURATION_MS', int(1000), 30000, 'Job lock; a worker silent this long is considered stalled.'),
  stalledIntervalMs: setting('WORKER_STALLED_INTERVAL_MS', int(1000), 30000, 'How often stalled jobs are looked for and handed to another worker.'),
  maxStalledCount: setting(
    'WORKER_MAX_STALLED_COUNT',
    int(0, 1000),
    3,
    "How many times one job may be handed back as stalled (its lock expired: its worker died, was stopped past the grace period, or Redis froze or failed over under it) before it fails; counted over the job's life. Higher rides out more outages; a job that kills its worker runs up to this many times more before it fails.",
  ),
  shards: setting(
    'QUEUE_SHARDS',
    int(1, 256),
    1,
    'Partitions of each hot queue family (crawl with its results, feed refresh, message persist), each its own BullMQ queue and hash tag: spreads them over a Redis Cluster. Changing it drains the old partitions (docs/queue-partitions.md).',
  ),
  workerShards: setting(
    'WORKER_SHARDS',
    str(),
    'all',
    'The partitions of the current layout this process consumes: "all", or indexes and ranges like "0-3,5". Partitions of an older layout are always drained.',
  ),
};
