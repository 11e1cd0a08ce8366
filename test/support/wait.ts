import { setTimeout as sleep } from 'node:timers/promises';

/** Polls `check` until it returns a truthy value or `timeoutMs` passes. */
export async function waitFor<T>(
  check: () => Promise<T> | T,
  options: { timeoutMs?: number; intervalMs?: number; message?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`${options.message ?? 'condition not met'} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await sleep(options.intervalMs ?? 100);
  }
}
