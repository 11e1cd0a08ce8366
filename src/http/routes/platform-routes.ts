/**
 * The platform's own routes: liveness (answered at once, never waiting on a dependency),
 * readiness (each dependency probed, through the dependency monitor), the Prometheus metrics (to
 * admins or the scrape token, or to anybody with METRICS_PUBLIC) and the OpenAPI document.
 */
import { z } from 'zod';
import type { Metrics } from '../../metrics/metrics.js';
import { staticToken } from '../authenticate.js';
import type { DependencyMonitor } from '../dependency-monitor.js';
import { RETRY_AFTER_SECONDS } from '../error-reply.js';
import { defineRoute, type AnyRoute } from '../route.js';

export interface PlatformRouteOptions {
  metrics: Metrics;
  monitor: DependencyMonitor;
  metricsPublic: boolean;
  /** A static bearer token for Prometheus scrapes of /metrics (an admin's token works too). */
  metricsToken?: string;
  /** The OpenAPI document as JSON text (built once, from every route); none, no route. */
  openapi?: () => string;
}

const dependencies = z.record(z.string(), z.enum(['up', 'down']));

export function platformRoutes(options: PlatformRouteOptions): AnyRoute[] {
  const { openapi } = options;
  return [
    defineRoute({
      method: 'get',
      path: '/healthz',
      tag: 'platform',
      access: 'public',
      summary: 'Liveness: the process answers.',
      responses: { 200: { description: 'alive', schema: z.object({ status: z.literal('ok') }) } },
      handler: () => ({ body: { status: 'ok' } }),
    }),
    defineRoute({
      method: 'get',
      path: '/readyz',
      tag: 'platform',
      access: 'public',
      summary:
        "Readiness: what the process's roles need answers (Redis; the database, but for a crawler-only process; the embedded services, in the process that runs them), each probe at most 2 s.",
      responses: {
        200: { description: 'ready', schema: z.object({ status: z.literal('ready'), dependencies }) },
        503: { description: 'not_ready, with Retry-After; `error.field` names the first dependency down' },
      },
      handler: async () => {
        const results = await options.monitor.check();
        const down = results.filter(([, up]) => !up).map(([name]) => name);
        const states = Object.fromEntries(results.map(([name, up]) => [name, up ? 'up' : 'down']));
        if (!down.length) return { body: { status: 'ready', dependencies: states } };
        return {
          status: 503,
          headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
          body: { error: { code: 'not_ready', message: `unavailable: ${down.join(', ')}`, field: down[0] }, dependencies: states },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/metrics',
      tag: 'platform',
      access: options.metricsPublic ? 'public' : 'admin',
      ...(options.metricsToken ? { staticCredential: staticToken(options.metricsToken) } : {}),
      summary: 'Prometheus metrics (text exposition): to admins, to METRICS_TOKEN as a bearer token, or to anybody with METRICS_PUBLIC=true.',
      responses: { 200: { description: 'Prometheus text' } },
      handler: async () => {
        const { contentType, body } = await options.metrics.render();
        return { text: body, headers: { 'content-type': contentType } };
      },
    }),
    ...(openapi
      ? [
          defineRoute({
            method: 'get',
            path: '/api/openapi.json',
            tag: 'platform',
            access: 'user',
            summary: 'This document.',
            responses: { 200: { description: 'OpenAPI 3.1' } },
            handler: () => ({ json: openapi() }),
          }),
        ]
      : []),
  ];
}
