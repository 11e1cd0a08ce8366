/**
 * The shared config as published in Redis (pure): digest, encoding and decoding.
 *
 * Published form: one JSON string `{"version":N,"digest":"…","generatedAt":"…","generatedBy":"…","content":{…}}`.
 * The publish script prepends `"version":N` to the encoded body (so version and config change
 * together), and the keep-alive script finds the digest by pattern, so the body starts with the
 * digest and its content is encoded in a fixed key order.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { SharedConfigContent } from '../context.js';

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
  return createHash('sha1').update(JSON.stringify(canonicalContent(content))).digest('hex');
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
