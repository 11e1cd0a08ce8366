/** `npm run start:role -- feeds,pools`: any set of roles in one process (ROLES also works). */
import { runProcess } from '../src/runtime/run.js';
import { parseRoles } from '../src/runtime/role-names.js';

const spec = process.argv[2] ?? process.env.ROLES;
if (!spec) {
  console.error('usage: npm run start:role -- <role>[,<role>...]   (roles: api, feeds, crawler, pipeline, pools, messages, cluster, all)');
  process.exit(2);
}
await runProcess(parseRoles(spec));
