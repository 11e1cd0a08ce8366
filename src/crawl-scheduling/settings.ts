import type { Config } from '../config/index.js';

/** The crawl scheduler's settings (src/config/pipeline.ts: SCHEDULER_* and the weight and interval rules), as passed down. */
export type SchedulingSettings = Config['pipeline'];
