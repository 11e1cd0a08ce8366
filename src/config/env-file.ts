import { existsSync } from 'node:fs';

/** Loads `.env` from the working directory when present; real environment variables win. */
export function loadEnvFile(file = '.env'): void {
  if (existsSync(file)) process.loadEnvFile(file);
}
