/** `npm run config:example`: regenerates .env.example and docs/configuration.md from the config schema. */
import { writeFileSync } from 'node:fs';
import { renderConfigDoc, renderEnvExample } from './index.js';

writeFileSync(new URL('../../.env.example', import.meta.url), renderEnvExample());
writeFileSync(new URL('../../docs/configuration.md', import.meta.url), renderConfigDoc());
console.log('.env.example and docs/configuration.md written');
