/**
 * The roles' job schedulers, kept by the leader (src/coordination/job-scheduler-keeper.ts), on
 * one process with the cluster and pools roles:
 *
 * - the pools role upserts `pools-check` when it starts, with the period its queue declares;
 * - a scheduler Redis lost comes back by the leader's `job-schedulers-keep` task (its runs are
 *   jobs on `maintenance` saying what they put back), counted in wp_job_schedulers_recreated_total;
 * - a scheduler whose queue no live process consumes (no messages role: `message-persist-sweep`)
 *   is left to the first process of its role: the leader does not add work nobody takes.
 */
import type { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { waitFor } from '../support/wait.js';

describe('job schedulers kept by the leader', () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await startTestPlatform({
      roles: ['cluster', 'pools'],
      env: { INSTANCE_ID: 'keeper-1', LEADER_TTL_MS: '3000', INSTANCE_TTL_MS: '3000', POOL_CHECK_INTERVAL_MS: '4000', JOB_SCHEDULER_CHECK_MS: '300' },
    });
  });
  afterAll(async () => {
    await t?.stop();
  });

  const keeperRuns = async (): Promise<Job[]> =>
    (await t.platform.ctx.queues.queue('maintenance').getJobs(['completed'], 0, -1)).filter((j) => j?.name === 'job-schedulers-keep');

  it('puts back a job scheduler Redis lost, with its declared period, and says so', async () => {
    const refill = t.platform.ctx.queues.queue('poolRefill');
    const first = await waitFor(() => refill.getJobScheduler('pools-check'), { message: 'pools-check not upserted at start' });
    expect(first.every).toBe(4000);
    expect(first.template?.data).toEqual({ kind: 'check' });

    await refill.removeJobScheduler('pools-check');
    const back = await waitFor(() => refill.getJobScheduler('pools-check'), { message: 'pools-check not put back' });
    expect(back).toMatchObject({ every: 4000, name: 'check' });
    const run = await waitFor(async () => (await keeperRuns()).find((j) => j.returnvalue?.putBack?.includes('pools-check')), {
      message: 'no keeper run reported the put-back',
    });
    expect(run.processedBy).toBe('cluster@keeper-1');
    expect((await t.platform.ctx.queues.queue('maintenance').getJobLogs(run.id!)).logs).toEqual(['put back: pools-check']);
    const metrics = (await t.platform.ctx.metrics.render()).body;
    expect(metrics).toMatch(/^wp_job_schedulers_recreated_total\{queue="pool-refill",scheduler="pools-check"\} 1$/m);
  });

  it('leaves a scheduler whose queue no live process consumes to the first process of its role', async () => {
    const run = await waitFor(async () => (await keeperRuns()).find((j) => j.returnvalue?.unconsumed === 1), { message: 'no keeper run' });
    expect(run.returnvalue.putBack).not.toContain('message-persist-sweep');
    expect(await t.platform.ctx.queues.queue('messagePersist', 0).getJobScheduler('message-persist-sweep')).toBeFalsy();
  });
});
