/** Helpers shared by the feed tests. */
import type { Queue } from 'bullmq';
import { expect } from 'vitest';
import type { RedisClient } from '../../src/redis/connection.js';
import type { RoleName } from '../../src/runtime/roles.js';
import { startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.js';
import type { ApiClient } from '../support/http-client.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';

/**
 * A local feed server and a platform refreshing its feeds: the feeds worker and the API (or
 * `roles`), no spacing between requests to one host (its own tests set it) and no reconciler
 * rounds, plus `env`. `stop()` stops both.
 */
export async function startFeedPlatform(
  options: { env?: Record<string, string>; roles?: RoleName[]; hosts?: string[] } = {},
): Promise<{ t: TestPlatform; server: FeedServer; stop(): Promise<void> }> {
  const server = await startFeedServer(options.hosts ? { hosts: options.hosts } : {});
  try {
    const t = await startTestPlatform({
      roles: options.roles ?? ['feeds', 'api'],
      env: { FEED_DOMAIN_MIN_INTERVAL_MS: '0', FEED_RECONCILE_INTERVAL_SECONDS: '0', ...options.env },
    });
    return {
      t,
      server,
      stop: async () => {
        await t.stop();
        await server.stop();
      },
    };
  } catch (err) {
    await server.stop();
    throw err;
  }
}

export interface TaskView {
  task_id: string;
  queue: string;
  state: string;
  result?: any;
  failedReason?: string;
  attemptsMade: number;
  progress?: any;
  logs?: string[];
  logCount?: number;
}

/** Polls GET /api/tasks/:id until the task is completed or failed. */
export async function waitForTask(api: ApiClient, taskId: string, timeoutMs = 30_000): Promise<TaskView> {
  const read = async () => {
    const res = await api.get<TaskView>(`/api/tasks/${taskId}`);
    return res.status === 200 ? res.body : undefined;
  };
  await waitFor(async () => ['completed', 'failed'].includes((await read())?.state ?? ''), {
    timeoutMs,
    intervalMs: 100,
    message: `task ${taskId} did not finish`,
  });
  // GET /api/tasks reads the job, then its state: a job finishing in between shows the final
  // state with the job as it was just before. Once finished it no longer changes, so read again.
  return (await read())!;
}

/** Subscribes to a path of the feed server and waits for the feed's first refresh: the task, the feed and its articles (up to 100). */
export async function subscribeAndRefresh(t: TestPlatform, server: FeedServer, path: string) {
  const res = await t.api.post('/api/feeds', { url: server.url(path) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const task = await waitForTask(t.api, res.body.taskId);
  const feed = (await t.api.get(`/api/feeds/${res.body.id}`)).body;
  const articles = (await t.api.get(`/api/feeds/${res.body.id}/articles?limit=100`)).body.articles as any[];
  return { task, feed, articles };
}

/** Jobs of one feed in the given states. */
export async function jobsOfFeed(queue: Queue, feedId: number, states: ('delayed' | 'waiting' | 'prioritized' | 'active' | 'completed' | 'failed')[]) {
  const jobs = await queue.getJobs(states, 0, -1);
  return jobs.filter((j) => j && j.data.feedId === feedId);
}

/** Pending (not running) jobs of one feed. */
export function pendingJobsOfFeed(queue: Queue, feedId: number) {
  return jobsOfFeed(queue, feedId, ['delayed', 'waiting', 'prioritized']);
}

/** When a delayed job is due, read from BullMQ's delayed set (score = dueAt * 4096 + n; see src/queues/delayed-due.ts). */
export async function delayedDueAt(redis: RedisClient, queue: Queue, jobId: string): Promise<number | null> {
  const score = await redis.zscore(queue.keys.delayed!, jobId);
  return score === null ? null : Math.floor(Number(score) / 4096);
}
