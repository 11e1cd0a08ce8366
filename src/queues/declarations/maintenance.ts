import { z } from 'zod';
import { declareQueue } from '../declare-queue.js';

/** A maintenance task's name (its job scheduler's id and its jobs' name): lower-case words joined by dashes. */
export const MAINTENANCE_TASK_NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/** One run of a periodic task (the job name is the task name too). */
export const maintenancePayload = z.object({
  task: z.string().regex(MAINTENANCE_TASK_NAME, 'must be a task name (lower-case words joined by dashes)').max(100),
});
export type MaintenancePayload = z.infer<typeof maintenancePayload>;

export const maintenanceQueues = {
  maintenance: declareQueue({
    name: 'maintenance',
    family: 'maintenance',
    role: 'cluster',
    description: 'Periodic platform work: one job scheduler per task, run by the leader (reconciliations, shared config, registry and retention trims).',
    payload: maintenancePayload,
    // Its concurrency is one slot per task, set by the leader's worker (src/coordination/maintenance-worker.ts).
  }),
};
