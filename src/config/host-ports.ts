/** Lists of `host:port` in a setting (REDIS_SENTINELS, REDIS_CLUSTER_NODES), parsed where the settings are checked. */

export interface HostPort {
  host: string;
  port: number;
}

/** `host:port,host:port` (IPv6 as `[::1]:26379`); throws naming `variable` when an entry is not one. */
export function parseHostPorts(variable: string, spec: string): HostPort[] {
  const entries = spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!entries.length) throw new Error(`${variable}: no host:port given`);
  return entries.map((entry) => {
    const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(entry);
    const port = Number(m?.[3]);
    if (!m || port < 1 || port > 65_535) throw new Error(`${variable}: "${entry}" is not host:port`);
    return { host: m[1] ?? m[2]!, port };
  });
}
