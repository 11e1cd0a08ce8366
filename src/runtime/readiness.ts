/**
 * What GET /readyz probes in a process: what its roles need, and nothing they do not.
 *
 *   redis               always: every role takes its jobs there, and every process runs the
 *                       coordination (leases, registry) on it;
 *   database            for the roles that use PostgreSQL: all but the crawler, whose crawls
 *                       never touch it (a crawler-only process stays ready through a database
 *                       outage and keeps crawling; the pipeline stores the results);
 *   embedded-redis,     in the process that owns DATA_DIR's embedded services only: each one as
 *   embedded-postgres   its supervisor sees it (down while it is being restarted or once given up),
 *                       so the owner's readiness shows a restart in progress by name.
 */
import type { PlatformContext } from '../context.js';
import type { DependencyProbe } from '../http/app.js';
import type { ServiceStatus } from '../services/supervised-service.js';
import type { RoleName } from './roles.js';

/** The roles that read or write PostgreSQL while they run. */
export const DATABASE_ROLES: ReadonlySet<RoleName> = new Set<RoleName>(['cluster', 'feeds', 'pipeline', 'pools', 'messages', 'api']);

export function readinessProbes(
  ctx: Pick<PlatformContext, 'redis' | 'db'>,
  roles: readonly RoleName[],
  embeddedStatus: () => ServiceStatus[],
): DependencyProbe[] {
  const probes: DependencyProbe[] = [{ name: 'redis', check: async () => (await ctx.redis.ping()) === 'PONG' }];
  if (roles.some((r) => DATABASE_ROLES.has(r))) probes.push({ name: 'database', check: () => ctx.db.ping() });
  for (const { service } of embeddedStatus()) {
    probes.push({ name: `embedded-${service}`, check: async () => embeddedStatus().find((s) => s.service === service)?.up ?? false });
  }
  return probes;
}
