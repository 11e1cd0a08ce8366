/**
 * Users and API keys (admins only): create, list, change a user's role, disabled flag or password
 * (ending its earlier tokens), and create, list or revoke API keys.
 */
import { z } from 'zod';
import type { Accounts } from '../../auth/accounts.js';
import type { ApiKeys } from '../../auth/api-keys.js';
import { roleSchema } from '../../auth/roles.js';
import { EXAMPLE_ADMIN_PASSWORD } from '../../config/auth.js';
import { defineRoute, idParam, INT32_MAX, type AnyRoute } from '../route.js';

/** bcrypt reads the first 72 bytes of a password only: a longer one would be checked by its prefix. */
const PASSWORD_MAX_BYTES = 72;
export const newPassword = z
  .string()
  .min(8, 'must be at least 8 characters')
  .refine((p) => Buffer.byteLength(p) <= PASSWORD_MAX_BYTES, `must be at most ${PASSWORD_MAX_BYTES} bytes (UTF-8)`)
  // So that no new account holds it (a production start disables those that do).
  .refine((p) => p !== EXAMPLE_ADMIN_PASSWORD, 'must not be the example password');

const username = z.string().regex(/^[A-Za-z0-9._@-]{1,64}$/, 'must be 1 to 64 letters, digits, ".", "_", "@" or "-"');

const createUserBody = z.strictObject({ username, password: newPassword, role: roleSchema.default('user') });
const patchUserBody = z
  .strictObject({ role: roleSchema.optional(), disabled: z.boolean().optional(), password: newPassword.optional() })
  .refine((b) => b.role !== undefined || b.disabled !== undefined || b.password !== undefined, {
    message: 'give role, disabled and/or password',
    path: ['(body)'],
  });
const userParams = z.object({ id: idParam });
const userReply = z.object({ id: z.number(), username: z.string(), role: roleSchema, disabled: z.boolean(), createdAt: z.string(), updatedAt: z.string() });

const createKeyBody = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(100),
  role: roleSchema.default('user'),
  userId: z.number({ message: 'must be an integer id' }).int('must be an integer id').min(1).max(INT32_MAX).optional(),
});
const keyParams = z.object({ id: idParam });
const keyReply = z.object({ id: z.number(), name: z.string(), userId: z.number(), role: roleSchema, createdAt: z.string(), revokedAt: z.string().nullable() });

export function userRoutes(accounts: Accounts, apiKeys: ApiKeys): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/users',
      tag: 'users',
      access: 'admin',
      summary: 'Create a user (role "user" unless given).',
      body: createUserBody,
      responses: { 201: { description: 'the user', schema: userReply }, 409: { description: 'username_taken' } },
      handler: async ({ body }) => ({ status: 201, body: await accounts.create(body) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/users',
      tag: 'users',
      access: 'admin',
      summary: 'Every user.',
      responses: { 200: { description: 'users', schema: z.object({ users: z.array(userReply) }) } },
      handler: async () => ({ body: { users: await accounts.list() } }),
    }),
    defineRoute({
      method: 'patch',
      path: '/api/users/:id',
      tag: 'users',
      access: 'admin',
      summary:
        "Change a user's role, disabled flag or password: every token of the user issued before is refused from now on; disabling (or taking the admin role) revokes its (admin) API keys.",
      params: userParams,
      body: patchUserBody,
      responses: {
        200: { description: 'the user', schema: userReply },
        404: { description: 'no such user' },
        409: { description: 'last_admin: the last enabled admin' },
      },
      handler: async ({ params, body }) => ({ body: await accounts.update(params.id, body) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/api-keys',
      tag: 'users',
      access: 'admin',
      summary:
        "Create an API key for a user (yourself unless userId is given) with a role no higher than the user's. The answer's `key` is shown only this once; send it as `Authorization: Bearer <key>`.",
      body: createKeyBody,
      responses: {
        201: { description: 'the key, with its text', schema: keyReply.extend({ key: z.string() }) },
        404: { description: 'no such user' },
        409: { description: 'the user is disabled' },
      },
      handler: async ({ body, auth }) => ({
        status: 201,
        body: await apiKeys.create({ name: body.name, role: body.role, userId: body.userId ?? auth!.userId }),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/api-keys',
      tag: 'users',
      access: 'admin',
      summary: 'Every API key (never its text).',
      responses: { 200: { description: 'keys', schema: z.object({ keys: z.array(keyReply) }) } },
      handler: async () => ({ body: { keys: await apiKeys.list() } }),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/api-keys/:id',
      tag: 'users',
      access: 'admin',
      summary: 'Revoke an API key: refused from now on, everywhere.',
      params: keyParams,
      responses: { 204: { description: 'revoked' }, 404: { description: 'no such key' } },
      handler: async ({ params }) => {
        await apiKeys.revoke(params.id);
        return { status: 204 };
      },
    }),
  ];
}
