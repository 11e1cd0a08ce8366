import { spawnTsProcess, type PlatformProcess } from './processes.js';

/** Starts test/fixtures/job-worker.ts as its own process. */
export function spawnJobWorker(env: NodeJS.ProcessEnv): Promise<PlatformProcess> {
  return spawnTsProcess('test/fixtures/job-worker.ts', [], env, {
    name: 'job worker',
    ready: (out) => out.includes('worker-platform started'),
    startTimeoutMs: 30_000,
  });
}
