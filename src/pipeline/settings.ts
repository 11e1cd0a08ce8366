import type { Config } from '../config/index.js';

/** The pipeline's and scheduler's settings (src/config/pipeline.ts), as passed down. */
export type PipelineSettings = Config['pipeline'];
