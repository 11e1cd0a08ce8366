import { z } from 'zod';
import { MAINTENANCE_TASK_NAME } from '../maintenance-task.js';

/** One run of a periodic task (the job name is the task name too). */
export const maintenancePayload = z.object({
  task: z.string().regex(MAINTENANCE_TASK_NAME, 'must be a task name (lower-case words joined by dashes)').max(100),
});
export type MaintenancePayload = z.infer<typeof maintenancePayload>;
