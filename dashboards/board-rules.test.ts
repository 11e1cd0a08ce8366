import { describe, expect, it } from 'vitest';
import { addOptions, addRefusal, checkDataEdit, cleanRefusal, queueActionRefusal, removeRefusal } from './board-rules.js';

const CRAWL = { ipId: 7, keyword: 'k', taskId: 'ip7-0000aaaa', pagesOnSale: 1, pagesSold: 1 };

describe('board rules', () => {
  it('refuses adds to chained and platform-only queues only', () => {
    expect(addRefusal('crawl')).toMatchObject({ code: 'chained_queue', field: 'queueName' });
    expect(addRefusal('crawlResult')).toMatchObject({ code: 'chained_queue' });
    expect(addRefusal('feedRefresh')).toMatchObject({ code: 'chained_queue' });
    expect(addRefusal('maintenance')).toMatchObject({ code: 'platform_queue' });
    for (const key of ['poolRefill', 'poolConsumed', 'messagePersist'] as const) expect(addRefusal(key), key).toBeUndefined();
  });

  it('takes delay and priority, and other options only at the queue default', () => {
    const defaults = { attempts: 3, backoff: { type: 'exponential', delay: 1000 } };
    expect(addOptions({ delay: 5, priority: 2, attempts: 3, backoff: { type: 'exponential', delay: 1000 } }, defaults)).toEqual({ delay: 5, priority: 2 });
    expect(addOptions({ delay: 0, priority: 0 }, defaults)).toEqual({});
    expect(() => addOptions({ attempts: 4 }, defaults)).toThrow(expect.objectContaining({ field: 'options.attempts' }));
    expect(() => addOptions({ backoff: { type: 'fixed', delay: 1000 } }, defaults)).toThrow(expect.objectContaining({ field: 'options.backoff' }));
    expect(() => addOptions({ jobId: 'x' }, defaults)).toThrow(expect.objectContaining({ field: 'options.jobId' }));
    for (const bad of [-1, 1.5, '5', 31 * 86_400_000])
      expect(() => addOptions({ delay: bad }, defaults), String(bad)).toThrow(expect.objectContaining({ field: 'options.delay' }));
    expect(() => addOptions({ priority: 2_097_153 }, defaults)).toThrow(expect.objectContaining({ field: 'options.priority' }));
  });

  it('refuses edits of the fields the platform writes, naming the first', () => {
    expect(() => checkDataEdit('crawl', CRAWL, { ...CRAWL, pagesOnSale: 3 })).not.toThrow();
    for (const field of ['ipId', 'taskId', 'keyword'] as const)
      expect(() => checkDataEdit('crawl', CRAWL, { ...CRAWL, [field]: field === 'ipId' ? 8 : 'other' }), field).toThrow(
        expect.objectContaining({ code: 'platform_field', field: `jobData.${field}` }),
      );
    const refresh = { feedId: 1, trigger: 'periodic' };
    expect(() => checkDataEdit('feedRefresh', refresh, { ...refresh })).not.toThrow();
    expect(() => checkDataEdit('feedRefresh', refresh, { ...refresh, domain: 'example.com' })).toThrow(expect.objectContaining({ field: 'jobData.domain' }));
    expect(() => checkDataEdit('maintenance', { task: 'a' }, { task: 'b' })).toThrow(expect.objectContaining({ field: 'jobData.task' }));
    expect(() => checkDataEdit('poolConsumed', { type: 'titles', groupId: 1 }, { type: 'contents', groupId: 2 })).not.toThrow();
  });

  it('refuses removing a chained job until it is over, and queue-wide drops of chains and schedulers', () => {
    for (const state of ['delayed', 'waiting', 'prioritized', 'active', 'waiting-children']) expect(removeRefusal('crawl', state), state).toBeDefined();
    for (const state of ['completed', 'failed']) expect(removeRefusal('feedRefresh', state), state).toBeUndefined();
    expect(removeRefusal('poolRefill', 'delayed')).toBeUndefined();
    expect(cleanRefusal('crawl', 'delayed')).toMatchObject({ field: 'queueStatus' });
    expect(cleanRefusal('crawl', 'failed')).toBeUndefined();
    expect(cleanRefusal('messagePersist', 'wait')).toBeUndefined();
    expect(queueActionRefusal('crawl', 'obliterate')).toMatchObject({ code: 'chained_queue' });
    expect(queueActionRefusal('maintenance', 'empty')).toMatchObject({ code: 'platform_queue' });
    expect(queueActionRefusal('poolConsumed', 'empty')).toBeUndefined();
    expect(queueActionRefusal('crawlResult', 'remove-unprocessed-children')).toMatchObject({ code: 'chained_job' });
    expect(queueActionRefusal('maintenance', 'remove-scheduler')).toMatchObject({ field: 'schedulerId' });
    expect(queueActionRefusal('poolRefill', 'update-scheduler')).toBeUndefined();
  });
});
