import { pino, type Logger } from 'pino';
import type { Config } from '../config/index.js';

export type { Logger };

/** Fields that must never reach a log line. */
const REDACT = [
  'password',
  '*.password',
  'token',
  '*.token',
  'authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
  '*.jwtSecret',
  '*.adminPassword',
];

/** The process logger: JSON lines, or pretty output in a terminal (LOG_PRETTY overrides). */
export function createLogger(config: Pick<Config, 'core' | 'derived'>, destination?: NodeJS.WritableStream): Logger {
  const pretty = config.core.logPretty === undefined ? Boolean(process.stdout.isTTY) : config.core.logPretty === 'true';
  const options = {
    level: config.core.logLevel,
    base: { instance: config.derived.instanceId },
    redact: { paths: REDACT, censor: '<hidden>' },
  };
  if (destination) return pino(options, destination as never);
  if (pretty) {
    return pino({
      ...options,
      transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,instance' } },
    });
  }
  return pino(options);
}

/** A logger that writes nothing (tests, benchmarks). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
