import { z } from 'zod';

/** Periodic housekeeping run by the leader. */
export const maintenancePayload = z.object({ task: z.string().min(1) });
export type MaintenancePayload = z.infer<typeof maintenancePayload>;
