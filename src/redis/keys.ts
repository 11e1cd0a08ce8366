/**
 * Every Redis key the platform owns is built here, under one prefix (REDIS_PREFIX).
 *
 * Redis Cluster: keys that one Lua script or MULTI touches together share a hash tag ({...}),
 * so they live in one slot. BullMQ's keys all carry the tag `{<prefix>}` (its prefix), which keeps
 * every queue and flows across queues in one slot; the platform's own keys are spread over
 * the cluster by their own tags (per feed, per IP, per pool, per session).
 */
export type PoolType = 'titles' | 'contents';

export function createKeys(prefix: string) {
  const p = prefix;
  return {
    prefix: p,
    /** BullMQ's `prefix` option. */
    bullPrefix: `{${p}}`,

    // auth
    /** Logout blacklist entry of a token's session id (reference: users:ssid:{ssid}). */
    blacklistedSession: (ssid: string) => `${p}:users:ssid:{${ssid}}`,
    loginFailuresByUser: (username: string) => `${p}:login:fail:user:{${username.toLowerCase()}}`,
    loginFailuresByIp: (ip: string) => `${p}:login:fail:ip:{${ip}}`,

    // feeds
    feedLock: (feedId: number | string) => `${p}:tasklock:feed:{${feedId}}`,
    domainNextSlot: (domain: string) => `${p}:feeds:domain:{${domain}}`,

    // crawl, pipeline, scheduling
    itemState: (ipId: number | string, sourceId: string) => `${p}:item:{${ipId}}:${sourceId}`,
    proxyBreaker: () => `${p}:crawl:{proxy}:breaker`,
    leaderboardCache: (type: string, hours: number) => `${p}:cache:{leaderboard}:${type}:${hours}`,
    ipDetailCache: (ipId: number | string) => `${p}:cache:ip:{${ipId}}`,
    /** Bumped on every invalidation of one IP's detail cache; a fill only lands if it is unchanged. */
    ipDetailCacheVersion: (ipId: number | string) => `${p}:cache:ip:{${ipId}}:version`,
    /** Same for the leaderboards; the index lists every filled leaderboard key (same slot). */
    leaderboardCacheVersion: () => `${p}:cache:{leaderboard}:version`,
    leaderboardCacheIndex: () => `${p}:cache:{leaderboard}:keys`,
    /** Hash ipId → task id of the IP's current crawl chain link (pending, running, or its result in the pipeline). */
    crawlChain: () => `${p}:sched:{crawl}:chain`,

    // pools
    pool: (type: PoolType, groupId: number) => `${p}:pool:{${type}:${groupId}}`,
    poolRefillLock: (type: PoolType, groupId: number) => `${p}:pool:{${type}:${groupId}}:filling`,
    /** Consumed ids waiting to be marked in the DB; same slot as the pool, so pop is atomic. */
    poolConsumed: (type: PoolType, groupId: number) => `${p}:pool:{${type}:${groupId}}:consumed`,

    // messages
    sessionMessages: (sessionId: string) => `${p}:chat:session:{${sessionId}}:messages`,

    // cluster
    leader: () => `${p}:cluster:{leader}`,
    sharedConfig: () => `${p}:cluster:{config}`,
    sharedConfigVersion: () => `${p}:cluster:{config}:version`,
    instance: (instanceId: string) => `${p}:cluster:instance:{${instanceId}}`,
    instancesByRole: (role: string) => `${p}:cluster:role:{${role}}`,
  };
}

export type Keys = ReturnType<typeof createKeys>;
