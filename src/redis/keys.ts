/**
 * Every Redis key the platform owns is built here, under one prefix (REDIS_PREFIX).
 *
 * Redis Cluster: keys that one Lua script or MULTI touches together share a hash tag ({...}),
 * so they live in one slot. BullMQ's keys carry the tag of their queue family or partition (its
 * prefix, src/queues/layout.ts; `{<prefix>}` on a single Redis without partitions), so a flow's
 * queues share a slot and families and partitions spread; the platform's own keys are spread over
 * the cluster by their own tags (per feed, per IP, per pool, per session).
 */
export type PoolType = 'titles' | 'contents';

export function createKeys(prefix: string) {
  const p = prefix;
  return {
    prefix: p,
    /** BullMQ's `prefix` option on a single Redis without partitions (see src/queues/layout.ts for the others). */
    bullPrefix: `{${p}}`,

    // auth
    /** Logout blacklist entry of a token's session id (reference: users:ssid:{ssid}). */
    blacklistedSession: (ssid: string) => `${p}:users:ssid:{${ssid}}`,
    /** Failed logins from one client address in the current window (src/auth/login-rate-limit.ts). */
    loginAddressAttempts: (address: string) => `${p}:login:address:{${address}}`,
    /** Failed logins of one user name from one client address (same slot as its address's: one script counts both). */
    loginAttempts: (username: string, address: string) => `${p}:login:address:{${address}}:user:${username.toLowerCase()}`,
    /**
     * The state of a user's credentials (tokens): "<token version>:<role>", "<token version>:disabled",
     * or "0:missing" (see src/auth/credential-state.ts). Its own slot: checked beside the blacklist key.
     */
    userCredential: (userId: number) => `${p}:auth:user:{${userId}}`,
    /** The state of an API key: "1" while active, "2:revoked" (src/auth/credential-state.ts). */
    apiKeyCredential: (keyId: number) => `${p}:auth:key:{${keyId}}`,

    // feeds
    feedLock: (feedId: number | string) => `${p}:tasklock:feed:{${feedId}}`,
    domainNextSlot: (domain: string) => `${p}:feeds:domain:{${domain}}`,
    /** Jobs waiting for their turn at a domain (same slot as domainNextSlot: one script touches both). */
    domainLine: (domain: string) => `${p}:feeds:domain:{${domain}}:line`,

    // tracing
    /** The trace a delayed job brought forward runs its work in (src/queues/trace-handover.ts); short-lived. */
    traceHandover: (queue: string, jobId: string) => `${p}:trace-handover:{${queue}}:${jobId}`,

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
    /**
     * ipId → task id of the IP's current crawl (pending, running, or its result in the pipeline),
     * in hashes of 100 IPs each (bucket = floor(ipId / 100)), small enough for Redis's compact
     * listpack encoding; the set lists the buckets in use.
     */
    crawlChain: (bucket: number) => `${p}:sched:{crawl}:chain:${bucket}`,
    crawlChainBuckets: () => `${p}:sched:{crawl}:buckets`,

    // queues
    /** Partition counts (QUEUE_SHARDS) of the queue layouts in use or still draining (src/queues/recorded-layouts.ts). */
    queueLayouts: () => `${p}:queues:{layouts}`,

    // pools
    pool: (type: PoolType, groupId: number) => `${p}:pool:{${type}:${groupId}}`,
    poolRefillLock: (type: PoolType, groupId: number) => `${p}:pool:{${type}:${groupId}}:filling`,
    /** Consumed ids waiting to be marked in the DB; same slot as the pool, so pop is atomic. */
    poolConsumed: (type: PoolType, groupId: number) => `${p}:pool:{${type}:${groupId}}:consumed`,

    // messages
    sessionMessages: (sessionId: string) => `${p}:chat:session:{${sessionId}}:messages`,
    /** Accepted messages waiting to be written to the DB (write-behind), one list per shard. */
    messagePersistBuffer: (shard: number) => `${p}:messages:persist:{persist-${shard}}`,
    /** The lease of the drain working on a buffer; same slot, so claim and acknowledge are atomic. */
    messagePersistLock: (shard: number) => `${p}:messages:persist:{persist-${shard}}:lock`,
    /** Buffer entries the DB refused one by one (kept for inspection, never retried by themselves). */
    messagePersistDead: (shard: number) => `${p}:messages:persist:{persist-${shard}}:dead`,

    // cluster
    /** Lease of one singleton task (value "<instance>#<token>@<owner>", lease-scripts.ts); its fencing-token counter shares the slot. */
    lease: (work: string) => `${p}:cluster:lease:{${work}}`,
    leaseToken: (work: string) => `${p}:cluster:lease:{${work}}:token`,
    /** Shared config and its version live in the slot of the leader's lease (task `cluster`): publishing checks the lease. */
    sharedConfig: () => `${p}:cluster:config:{cluster}`,
    sharedConfigVersion: () => `${p}:cluster:config:{cluster}:version`,
    /** Instance registry, one slot: index (id → lastSeen), details (TTL), membership per queue. */
    instanceIndex: () => `${p}:cluster:{registry}:instances`,
    instance: (instanceId: string) => `${p}:cluster:{registry}:instance:${instanceId}`,
    instancesByQueue: (queue: string) => `${p}:cluster:{registry}:queue:${queue}`,
    /** The membership keys in use, so the leader's cleanup can trim them all. */
    membershipIndex: () => `${p}:cluster:{registry}:memberships`,
  };
}

export type Keys = ReturnType<typeof createKeys>;
