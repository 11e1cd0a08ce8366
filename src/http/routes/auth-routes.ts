import { z } from 'zod';
import type { Accounts } from '../../auth/accounts.js';
import type { AuthService } from '../../auth/auth-service.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { newPassword } from './user-routes.js';

export const loginBody = z.strictObject({
  username: z.string().min(1).max(64),
  password: z.string().min(1).max(1024),
});
const loginReply = z.object({ token: z.string(), expiresAt: z.string() });
const passwordBody = z.strictObject({
  currentPassword: z.string().min(1).max(1024),
  newPassword,
});

export function authRoutes(auth: AuthService, accounts: Accounts): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/auth/login',
      tag: 'auth',
      summary: 'Exchange a username and password for an API token (at most LOGIN_RATE_LIMIT_MAX failures per window per user name and client address).',
      access: 'public',
      body: loginBody,
      responses: {
        200: { description: 'token', schema: loginReply },
        401: { description: 'unknown user, wrong password, or disabled user' },
        429: { description: 'too many failed logins' },
      },
      handler: async ({ body, ip }) => ({ body: await auth.login(body.username, body.password, ip) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/auth/logout',
      tag: 'auth',
      summary: 'Log the token out: it is refused from now on until it would have expired.',
      access: 'user',
      responses: { 204: { description: 'logged out' }, 400: { description: 'not_a_session: an API key (revoke it instead)' } },
      handler: async ({ auth: info }) => {
        await auth.logout(info!);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/auth/password',
      tag: 'auth',
      summary: 'Change your own password; every token issued before (this one too) is refused from now on.',
      access: 'user',
      body: passwordBody,
      responses: {
        204: { description: 'changed; log in again' },
        400: { description: 'wrong_password (field currentPassword), or a new password that is too short or long' },
        429: { description: 'too many wrong current passwords' },
      },
      handler: async ({ auth: info, body, ip }) => {
        await accounts.changeOwnPassword(info!.userId, body.currentPassword, body.newPassword, ip);
        return { status: 204 };
      },
    }),
  ];
}
