/**
 * Options of the platform's interactive Prisma transactions. Prisma's defaults (2 s to get a
 * connection, 5 s in all) turn a busy pool into errors: a burst of requests that each need a
 * short transaction (parallel subscriptions under the per-user feed limit, say) waits its turn
 * instead, as long as the pg pool itself would wait for a connection (10 s).
 */
export const INTERACTIVE_TRANSACTION = { maxWait: 10_000, timeout: 20_000 } as const;
