import { describe, expect, it } from 'vitest';
import { canonicalContent, decodePublished, digestOf, encodeBody, type SharedConfigContent } from './shared-config.js';

const content: SharedConfigContent = {
  poolGroups: { titles: [7, 3, 3], contents: [12, 4] },
};

/** What the publish script does: prepend the version to the body. */
const publish = (version: number, body: string) => `{"version":${version},${body.slice(1)}`;

describe('shared config encoding', () => {
  it('puts the content in canonical order', () => {
    expect(canonicalContent(content)).toEqual({ poolGroups: { titles: [3, 7], contents: [4, 12] } });
  });

  it('gives equal digests to equal configs and different ones to different configs', () => {
    const reordered = { poolGroups: { titles: [3, 7], contents: [4, 12, 4] } };
    expect(digestOf(reordered)).toBe(digestOf(content));
    expect(digestOf({ poolGroups: { titles: [3], contents: [4, 12] } })).not.toBe(digestOf(content));
    expect(digestOf({ poolGroups: { titles: [3, 7], contents: [4] } })).not.toBe(digestOf(content));
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
