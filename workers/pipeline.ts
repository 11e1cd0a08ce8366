/** The pipeline role as its own process. */
import { runProcess } from '../src/runtime/run.js';

await runProcess(['pipeline']);
