/** Every role in one process: what `npm start` runs (the embedded default needs this). */
import { runProcess } from '../src/runtime/run.js';
import { ROLE_NAMES } from '../src/runtime/role-names.js';

await runProcess(ROLE_NAMES);
