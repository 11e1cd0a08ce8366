/**
 * Runs a platform process until SIGTERM/SIGINT/SIGHUP: starts the roles, prints where to find
 * the API, then shuts down in order on the first signal, within a hard deadline
 * (WORKER_SHUTDOWN_GRACE_MS + STOP_MARGIN_MS; past it the unfinished steps are logged and left,
 * the embedded services are stopped anyway, and the process exits with code 1). A signal that
 * comes later than SIGNAL_ECHO_MS after the first forces the exit at once.
 *
 * An embedded service this process runs that died and could not be restarted stops the process
 * the same way, with a fatal log line naming the service and its log file, and exit code 1: a
 * process without its Redis or database must not look alive to a supervisor or liveness probe.
 *
 * The process creates files for its user only (umask 0077): DATA_DIR holds secrets, the browser
 * profiles included (src/services/private-data-dir.ts).
 *
 * Tracing, when on, starts before the platform's modules are loaded (the SDK patches pg and
 * ioredis as they are first imported): this file imports only the configuration and the logger,
 * and loads start-platform.ts once startTracing is done. Keep it that way.
 */
import { loadConfig } from '../config/index.js';
import { loadEnvFile } from '../config/env-file.js';
import { EXAMPLE_ADMIN_PASSWORD } from '../config/auth.js';
import { createLogger } from '../logging/logger.js';
import { startTracing } from '../tracing/start-tracing.js';
import type { PlatformHandle } from './start-platform.js';
import type { RoleName } from './role-names.js';
import { toError } from '../errors.js';

/** Time the stop gets beyond the workers' grace period (the API, leases, connections, services). */
export const STOP_MARGIN_MS = 5_000;
/** Copies of one stop request arriving within this time of the first are the same request. */
export const SIGNAL_ECHO_MS = 1_000;

export async function runProcess(roles: readonly RoleName[]): Promise<void> {
  process.umask(0o077);
  loadEnvFile();
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    console.error(`configuration error: ${toError(err).message}`);
    process.exit(2);
  }
  const logger = createLogger(config);
  const deadlineMs = config.queues.workerShutdownGraceMs + STOP_MARGIN_MS;
  let platform: PlatformHandle | undefined;

  // One stop request, however it arrives: a terminal's Ctrl-C reaches the whole foreground
  // process group (npm, the set-up launcher and this process), and the launcher forwards its copy
  // too, so the same request lands here several times within a few milliseconds. Copies within
  // SIGNAL_ECHO_MS of the first are that same request; a signal after it (a second Ctrl-C
  // pressed later) forces the exit. A signal during the start is honoured once the start is done
  // (the handlers are in place before anything is started, so no service is left running).
  let firstSignalAt = 0;
  let failed = false;
  const stop = (p: PlatformHandle) =>
    p.stop({ deadlineMs }).then(
      (inTime) => process.exit(inTime && !failed ? 0 : 1),
      (err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  const onSignal = (signal: NodeJS.Signals) => {
    const now = Date.now();
    if (firstSignalAt === 0) {
      firstSignalAt = now;
      logger.info({ signal, deadlineMs }, platform ? 'shutting down' : 'shutting down once the start is done');
      if (platform) void stop(platform);
      return;
    }
    if (now - firstSignalAt < SIGNAL_ECHO_MS) return;
    logger.warn({ signal }, 'second signal: exiting now (active jobs are retried as stalled)');
    platform?.signalServicesStop();
    process.exit(1);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('SIGHUP', onSignal);
  // A promise nobody awaits that rejects (a library's background call) is logged, not a crash of
  // every role of the process. Puppeteer's TargetCloseError is the common benign one: a page or
  // browser closed (a crawl ended, the crawler stopping) while a stealth evasion still talked to it.
  process.on('unhandledRejection', (reason) => {
    const err = toError(reason);
    if (err.name === 'TargetCloseError') logger.warn({ err: err.message }, 'a browser page closed under a pending browser call');
    else logger.error({ err }, 'unhandled promise rejection');
  });

  try {
    const tracing = await startTracing({ config, roles, logger });
    const { startPlatform } = await import('./start-platform.js');
    platform = await startPlatform({ roles, config, logger, ...(tracing ? { tracing } : {}) });
  } catch (err) {
    logger.fatal({ err }, `failed to start: ${toError(err).message}`);
    await new Promise((r) => setTimeout(r, 100));
    process.exit(1);
  }
  const lines = [
    `worker-platform started (roles: ${roles.join(', ')}; instance ${platform.ctx.instanceId}${platform.embedded === 'attached' ? '; attached to the embedded services of a running platform process' : ''})`,
  ];
  if (platform.apiUrl) {
    const u = platform.apiUrl;
    const password = config.auth.adminPassword === EXAMPLE_ADMIN_PASSWORD ? EXAMPLE_ADMIN_PASSWORD : '<the value of ADMIN_PASSWORD>';
    lines.push(
      `  API          ${u}/api   (OpenAPI: ${u}/api/openapi.json)`,
      `  Bull Board   ${u}/admin/queues`,
      `  Health       ${u}/healthz  ${u}/readyz`,
      `  Metrics      ${u}/metrics`,
      `  Log in       user "${config.auth.adminUsername}", password "${password}"`,
      `               curl -s -X POST ${u}/api/auth/login -H 'content-type: application/json' -d '{"username":"${config.auth.adminUsername}","password":"..."}'`,
    );
  } else {
    // A worker-only process serves these only (src/runtime/process-http.ts).
    const u = platform.httpUrl;
    lines.push(`  Health       ${u}/healthz  ${u}/readyz`, `  Metrics      ${u}/metrics   (an admin's token, METRICS_TOKEN, or METRICS_PUBLIC=true)`);
  }
  console.log(lines.join('\n'));
  const started = platform;
  void started.servicesLost.then((lost) => {
    failed = true;
    logger.fatal(
      { service: lost.service, log: lost.logFile, attempts: lost.attempts, err: lost.reason },
      `the embedded ${lost.service} died and could not be restarted (${lost.attempts} attempts): stopping with exit code 1; read ${lost.logFile}`,
    );
    if (firstSignalAt !== 0) return; // already stopping: it exits with 1 now
    firstSignalAt = Date.now();
    void stop(started);
  });
  if (firstSignalAt !== 0) void stop(platform);
}
