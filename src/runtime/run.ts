/**
 * Runs a platform process until SIGTERM/SIGINT: starts the roles, prints where to find the API,
 * then shuts down in order on the first signal (a second signal exits at once).
 */
import { loadConfig } from '../config/index.js';
import { loadEnvFile } from '../config/env-file.js';
import { EXAMPLE_ADMIN_PASSWORD } from '../config/auth.js';
import { createLogger } from '../logging/logger.js';
import { startPlatform } from './start-platform.js';
import type { RoleName } from './roles.js';

export async function runProcess(roles: readonly RoleName[]): Promise<void> {
  loadEnvFile();
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    console.error(`configuration error: ${(err as Error).message}`);
    process.exit(2);
  }
  const logger = createLogger(config);
  let platform;
  try {
    platform = await startPlatform({ roles, config, logger });
  } catch (err) {
    logger.fatal({ err }, `failed to start: ${(err as Error).message}`);
    await new Promise((r) => setTimeout(r, 100));
    process.exit(1);
  }
  const lines = [`worker-platform started (roles: ${roles.join(', ')}; instance ${platform.ctx.instanceId})`];
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
  }
  console.log(lines.join('\n'));

  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    logger.info({ signal }, 'shutting down');
    platform.stop().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
