/**
 * The process roles by name, without their code: what a process entry (workers/*.ts) needs
 * before it loads the platform (run.ts loads it once tracing, when on, has started).
 */

/** Process roles, in start order (start-platform.ts stops them together, under one deadline). */
export const ROLE_NAMES = ['cluster', 'feeds', 'crawler', 'pipeline', 'pools', 'messages', 'api'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];

export function parseRoles(spec: string): RoleName[] {
  const names = spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.includes('all')) return [...ROLE_NAMES];
  for (const n of names) {
    if (!(ROLE_NAMES as readonly string[]).includes(n)) throw new Error(`unknown role "${n}"; roles: ${ROLE_NAMES.join(', ')}, all`);
  }
  return ROLE_NAMES.filter((r) => names.includes(r));
}
