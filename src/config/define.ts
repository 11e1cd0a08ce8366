import { z } from 'zod';

/**
 * One setting: its environment variable, its schema (which also coerces the string from the
 * environment), its default as it appears in `.env.example`, and one line of documentation.
 */
export interface Setting<T = unknown> {
  env: string;
  schema: z.ZodType<T>;
  /** The default as written in the environment; undefined = optional, no default. */
  example: string | undefined;
  doc: string;
  /** Secret values are never logged and are masked in `describeConfig`. */
  secret?: boolean;
}

export type SettingGroup = Record<string, Setting>;
export type GroupValue<G extends SettingGroup> = { [K in keyof G]: G[K] extends Setting<infer T> ? T : never };

export function setting<T>(
  env: string,
  schema: z.ZodType<T>,
  example: string | number | boolean | undefined,
  doc: string,
  options: { secret?: boolean } = {},
): Setting<T> {
  return { env, schema, example: example === undefined ? undefined : String(example), doc, ...options };
}

export const int = (min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
export const num = (min = -Infinity, max = Infinity) => z.coerce.number().min(min).max(max);
export const str = () => z.string();
const BYTE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };
/** A size in bytes, as a number with an optional unit (kb = 1024 bytes): `1048576`, `512kb`, `1mb`. */
export const byteSize = () =>
  z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^\d+(\.\d+)?\s*(b|kb|mb|gb)?$/, 'must be a size like 1048576, 512kb or 1mb')
    .transform((v) => {
      const [, n, unit] = /^([\d.]+)\s*([a-z]*)$/.exec(v)!;
      return Math.floor(Number(n) * BYTE_UNITS[unit || 'b']!);
    });
export const optionalStr = () =>
  z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));
/** An integer, or undefined when unset (the setting's doc says what unset means). */
export const optionalInt = (min = 0, max = Number.MAX_SAFE_INTEGER) =>
  optionalStr()
    .transform((v) => (v === undefined ? undefined : Number(v)))
    .pipe(z.number().int().min(min).max(max).optional());
export const bool = () =>
  z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off']))
    .transform((v) => ['true', '1', 'yes', 'on'].includes(v));
export const list = () =>
  z
    .string()
    .optional()
    .transform((v) =>
      (v ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    );
export const oneOf = <T extends readonly [string, ...string[]]>(values: T) => z.enum(values);
