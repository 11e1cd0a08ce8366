/**
 * The shared config: its types (what a process runs on, ctx.sharedConfig) and its published form
 * in Redis (pure): digest, encoding and decoding.
 *
 * Published form: one JSON string `{"version":N,"digest":"…","generatedAt":"…","generatedBy":"…","content":{…}}`.
 * The publish script prepends `"version":N` to the encoded body (so version and config change
 * together), and the keep-alive script finds the digest by pattern, so the body starts with the
 * digest and its content is encoded in a fixed key order.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * The platform's runtime config computed from the DB, published by the leader. What it holds is
 * computed by the function the runtime wires in (src/runtime/shared-config-content.ts): the
 * coordination only moves it around.
 */
export interface SharedConfigContent {
  /** Group ids with rows available or reserved, per pool type (the pools check reads them). */
  poolGroups: { titles: number[]; contents: number[] };
}

export interface SharedConfigSnapshot {
  /** Published version; null when computed locally. */
  version: number | null;
  /** `shared`: read from Redis; `local`: computed from the DB by this process (Redis down or nothing published yet). */
  source: 'shared' | 'local';
  generatedAt: string;
  generatedBy: string;
  /** When this process loaded it. */
  loadedAt: string;
  digest: string;
  content: SharedConfigContent;
}

/** The shared config as a process runs on it (ctx.sharedConfig). */
export interface SharedConfigView {
  /** The config this process runs on (undefined only until the first load). */
  current(): SharedConfigSnapshot | undefined;
  /** Called with every newly loaded snapshot. */
  onChange(listener: (snapshot: SharedConfigSnapshot) => void): void;
  /** Checks the version now instead of at the next sync tick. */
  refresh(): Promise<void>;
}

export interface PublishedConfig {
  version: number;
  digest: string;
  generatedAt: string;
  generatedBy: string;
  content: SharedConfigContent;
}

/** The content in a canonical form: sorted ids, fixed key order. */
export function canonicalContent(content: SharedConfigContent): SharedConfigContent {
  const ids = (xs: number[]) => [...new Set(xs)].sort((a, b) => a - b);
  return {
    poolGroups: { titles: ids(content.poolGroups.titles), contents: ids(content.poolGroups.contents) },
  };
}

/** SHA-1 of the canonical content: equal configs have equal digests. */
export function digestOf(content: SharedConfigContent): string {
  return createHash('sha1')
    .update(JSON.stringify(canonicalContent(content)))
    .digest('hex');
}

/** The body the publish script stores after prepending the version. Starts with "{" and the digest. */
export function encodeBody(meta: { generatedAt: string; generatedBy: string }, content: SharedConfigContent): { body: string; digest: string } {
  const canonical = canonicalContent(content);
  const digest = digestOf(canonical);
  return {
    digest,
    body: JSON.stringify({ digest, generatedAt: meta.generatedAt, generatedBy: meta.generatedBy, content: canonical }),
  };
}

const publishedSchema = z.object({
  version: z.number().int(),
  digest: z.string().regex(/^[0-9a-f]{40}$/),
  generatedAt: z.string(),
  generatedBy: z.string(),
  content: z.object({
    poolGroups: z.object({ titles: z.array(z.number().int()), contents: z.array(z.number().int()) }),
  }),
});

/** Parses a published config; throws on anything malformed (a foreign writer, a truncated value). */
export function decodePublished(text: string): PublishedConfig {
  return publishedSchema.parse(JSON.parse(text));
}
