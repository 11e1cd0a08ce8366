import type { ClusterView } from '../../coordination/wiring.js';
import { UnavailableError } from '../../errors.js';
import { defineRoute, type AnyRoute } from '../route.js';

export function clusterRoutes(cluster: ClusterView): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/cluster',
      tag: 'cluster',
      access: 'admin',
      summary: "The leader, the shared config version, each singleton work with its holder, the live instances and the answering instance's own view.",
      responses: {
        200: {
          description:
            '{leader, configVersion, leases, instances: [{id, roles, queues, lastSeen, settings, ...}], settingsDisagreements: [{setting, variants: [{digest, instances}]}], self, redis}',
        },
      },
      handler: async () => ({ body: await cluster.status() }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/cluster/config',
      tag: 'cluster',
      access: 'admin',
      summary: 'The shared config the answering instance runs on: version, source (shared or local), content.',
      responses: { 200: { description: 'snapshot' }, 503: { description: 'not loaded yet' } },
      handler: () => {
        const snapshot = cluster.config();
        if (!snapshot) throw new UnavailableError('config_not_loaded', 'the shared config has not been loaded yet');
        return { body: snapshot };
      },
    }),
  ];
}
