import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/index.js';
import { differencesFrom, fleetSettingDigests, settingDisagreements, settingVariants } from './fleet-settings.js';

const config = (env: Record<string, string> = {}) => loadConfig({ ...env });

describe('fleet settings', () => {
  it('registers a digest of each setting the roles use, never the value', () => {
    const c = config({ OUTBOUND_ALLOW: '10.0.0.0/8,feeds.intranet' });
    const feeds = fleetSettingDigests(c, ['feeds']);
    expect(Object.keys(feeds)).toEqual(['OUTBOUND_ALLOW']);
    expect(feeds.OUTBOUND_ALLOW).toMatch(/^[0-9a-f]{12}$/);
    expect(JSON.stringify(feeds)).not.toContain('intranet');
    expect(Object.keys(fleetSettingDigests(c, ['crawler'])).sort()).toEqual(['CRAWL_BASE_URL', 'CRAWL_SITE', 'OUTBOUND_ALLOW']);
    // Roles whose jobs do not depend on them register none.
    expect(fleetSettingDigests(c, ['api', 'pools', 'messages', 'pipeline', 'cluster'])).toEqual({});
  });

  it('gives one digest to one value however it is written, and another to another value', () => {
    const digestOf = (allow: string) => fleetSettingDigests(config({ OUTBOUND_ALLOW: allow }), ['feeds']).OUTBOUND_ALLOW;
    expect(digestOf('feeds.intranet, 10.0.0.0/8')).toBe(digestOf('10.0.0.0/8,Feeds.Intranet'));
    expect(digestOf('10.0.0.0/8')).not.toBe(digestOf('10.0.0.0/8,feeds.intranet'));
    expect(digestOf('')).not.toBe(digestOf('127.0.0.1'));
  });

  it('lists the settings the instances disagree on, each value with its instances, the most used first', () => {
    const allowed = fleetSettingDigests(config({ OUTBOUND_ALLOW: '127.0.0.1' }), ['crawler']);
    const none = fleetSettingDigests(config(), ['feeds']);
    const instances = [
      { id: 'a', settings: allowed },
      { id: 'b', settings: { OUTBOUND_ALLOW: allowed.OUTBOUND_ALLOW! } },
      { id: 'c', settings: none },
      { id: 'd', settings: {} }, // an api process: uses none
      { id: 'e' }, // an older process: registers none
    ];
    expect(settingDisagreements(instances)).toEqual([
      {
        setting: 'OUTBOUND_ALLOW',
        variants: [
          { digest: allowed.OUTBOUND_ALLOW, instances: ['a', 'b'] },
          { digest: none.OUTBOUND_ALLOW, instances: ['c'] },
        ],
      },
    ]);
    expect(settingVariants(instances)).toEqual({ OUTBOUND_ALLOW: 2, CRAWL_SITE: 1, CRAWL_BASE_URL: 1 });
    expect(settingDisagreements(instances.slice(0, 2))).toEqual([]);
  });

  it('tells a joining process which of its settings differ, and from which instances', () => {
    const allowed = fleetSettingDigests(config({ OUTBOUND_ALLOW: '127.0.0.1' }), ['feeds']);
    const none = fleetSettingDigests(config(), ['feeds', 'crawler']);
    const others = [
      { id: 'owner', settings: { ...fleetSettingDigests(config({ OUTBOUND_ALLOW: '127.0.0.1' }), ['crawler']) } },
      { id: 'feeds-2', settings: allowed },
      { id: 'api-only', settings: {} },
    ];
    expect(differencesFrom({ id: 'me', settings: none }, others)).toEqual([{ setting: 'OUTBOUND_ALLOW', instances: ['feeds-2', 'owner'] }]);
    expect(differencesFrom({ id: 'me', settings: allowed }, others)).toEqual([]);
    // Itself, already registered, is not another instance.
    expect(differencesFrom({ id: 'feeds-2', settings: none }, [{ id: 'feeds-2', settings: allowed }])).toEqual([]);
  });
});
