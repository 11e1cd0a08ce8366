import { z } from 'zod';
import type { AuthService } from '../../auth/auth-service.js';
import { defineRoute, type AnyRoute } from '../route.js';

export const loginBody = z.strictObject({
  username: z.string().min(1).max(64),
  password: z.string().min(1).max(1024),
});
const loginReply = z.object({ token: z.string(), expiresAt: z.string() });

export function authRoutes(auth: AuthService): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/auth/login',
      tag: 'auth',
      summary: 'Exchange a username and password for an API token.',
      auth: false,
      body: loginBody,
      responses: { 200: { description: 'token', schema: loginReply }, 401: { description: 'unknown user or wrong password' }, 429: { description: 'too many failed logins' } },
      handler: async ({ body, req }) => ({ body: await auth.login(body.username, body.password, req.ip ?? 'unknown') }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/auth/logout',
      tag: 'auth',
      summary: 'Log the token out: it is refused from now on until it would have expired.',
      responses: { 204: { description: 'logged out' } },
      handler: async ({ auth: info }) => {
        await auth.logout({ userId: info!.userId, username: info!.username, sessionId: info!.sessionId, exp: info!.exp });
        return { status: 204 };
      },
    }),
  ];
}
