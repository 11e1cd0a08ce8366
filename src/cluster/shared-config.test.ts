import { describe, expect, it } from 'vitest';
import type { SharedConfigContent } from '../context.js';
import { canonicalContent, decodePublished, digestOf, encodeBody } from './shared-config.js';

const content: SharedConfigContent = {
  poolGroups: { titles: [7, 3, 3], contents: [] },
  ips: [
    { id: 9, keyword: 'b', weight: 1.5, intervalSeconds: 3600 },
    { id: 2, keyword: 'a', weight: 1, intervalSeconds: 7200 },
  ],
};

/** What the publish script does: prepend the version to the body. */
const publish = (version: number, body: string) => `{"version":${version},${body.slice(1)}`;

describe('shared config encoding', () => {
  it('puts the content in canonical order', () => {
    expect(canonicalContent(content)).toEqual({
      poolGroups: { titles: [3, 7], contents: [] },
      ips: [
        { id: 2, keyword: 'a', weight: 1, intervalSeconds: 7200 },
        { id: 9, keyword: 'b', weight: 1.5, intervalSeconds: 3600 },
      ],
    });
  });

  it('gives equal digests to equal configs and different ones to different configs', () => {
    const reordered = { poolGroups: { titles: [3, 7], contents: [] }, ips: [...content.ips].reverse() };
    expect(digestOf(reordered)).toBe(digestOf(content));
    expect(digestOf({ ...content, poolGroups: { titles: [3], contents: [] } })).not.toBe(digestOf(content));
    expect(digestOf({ ...content, ips: [{ ...content.ips[0]!, intervalSeconds: 60 }, content.ips[1]!] })).not.toBe(digestOf(content));
  });

  it('round-trips through the published form, digest first so the keep-alive script can find it', () => {
    const { body, digest } = encodeBody({ generatedAt: '2026-01-01T00:00:00.000Z', generatedBy: 'host-1' }, content);
    expect(body.startsWith(`{"digest":"${digest}"`)).toBe(true);
    const stored = publish(12, body);
    expect(/"digest":"([0-9a-f]+)"/.exec(stored)?.[1]).toBe(digest);
    expect(decodePublished(stored)).toEqual({
      version: 12,
      digest,
      generatedAt: '2026-01-01T00:00:00.000Z',
      generatedBy: 'host-1',
      content: canonicalContent(content),
    });
  });

  it('refuses a malformed value', () => {
    expect(() => decodePublished('{"version":1}')).toThrow();
    expect(() => decodePublished('not json')).toThrow();
  });
});
