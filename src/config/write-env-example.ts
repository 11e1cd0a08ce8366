/** `npm run config:example`: regenerates .env.example from the config schema. */
import { writeFileSync } from 'node:fs';
import { renderEnvExample } from './index.js';

writeFileSync(new URL('../../.env.example', import.meta.url), renderEnvExample());
console.log('.env.example written');
