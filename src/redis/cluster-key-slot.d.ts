// Types of cluster-key-slot (ioredis's own slot function; the package ships none).
declare module 'cluster-key-slot' {
  /** The Redis Cluster slot (0 … 16383) of a key, by its hash tag when it has one. */
  export default function calculateSlot(key: string): number;
}
