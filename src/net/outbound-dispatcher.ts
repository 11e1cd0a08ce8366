/**
 * The outbound policy applied to the connection itself: an undici dispatcher whose `connect`
 * resolves the host, checks every address it resolved to (outbound-policy.ts) and connects to
 * exactly those addresses, in order, until one answers. The check is made on each new connection,
 * so a name that resolves (or re-resolves, DNS rebinding) to 127.0.0.1 is refused at that
 * connection; an IP literal is checked as it is; a host name OUTBOUND_ALLOW names is connected
 * to as usual. Nothing is sent before the check: a refused destination sees no packet.
 *
 * Connections are pooled per origin by undici, so a redirect to another origin always opens (and
 * checks) a new connection. Use undici's own `fetch` with this dispatcher (same package version).
 *
 * For TLS the connection goes to the checked address while SNI and the certificate check use the
 * host name (undici's servername), exactly as a connection by name would.
 */
import { lookup } from 'node:dns/promises';
import { isIP, isIPv6 } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { assertAllowed, type OutboundPolicy } from './outbound-policy.js';

/** Every address a host name resolves to, in the order to try them. */
export type Resolver = (hostname: string) => Promise<string[]>;

/** The system's resolver (getaddrinfo: /etc/hosts, then DNS), as connections by name use. */
export const systemResolver: Resolver = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/**
 * The addresses `host` (a URL's host name: a name, an IPv4 address or a bracketed IPv6 address)
 * may be connected at, each one checked; throws DestinationNotAllowedError when the host is an
 * address that is refused or a name that resolves to any refused address. A name the policy
 * allows by name resolves unchecked; `undefined` then means "connect by name".
 */
export async function resolveAllowed(policy: OutboundPolicy, host: string, resolve: Resolver = systemResolver): Promise<string[] | undefined> {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIP(bare)) {
    assertAllowed(policy, isIPv6(bare) ? `[${bare}]` : bare, bare);
    return [bare];
  }
  if (policy.allowsHostName(bare)) return undefined;
  const addresses = await resolve(bare);
  if (addresses.length === 0) throw Object.assign(new Error(`${bare} has no address`), { code: 'ENOTFOUND' });
  // One refused address refuses the name: a public name does not also resolve to a private one.
  for (const address of addresses) assertAllowed(policy, bare, address);
  return addresses;
}

export interface OutboundDispatcherOptions {
  /** Default: the system resolver. Tests give a stub. */
  resolve?: Resolver;
  /** Opens the socket to a checked address. Default: undici's connector. Tests give one that records and never connects. */
  connector?: buildConnector.connector;
  /** Connect timeout per address (undici's default: 10 s). */
  connectTimeoutMs?: number;
}

/** The `connect` of a dispatcher that only reaches what `policy` allows. */
export function guardedConnector(policy: OutboundPolicy, options: OutboundDispatcherOptions = {}): buildConnector.connector {
  const resolve = options.resolve ?? systemResolver;
  const connector = options.connector ?? buildConnector({ timeout: options.connectTimeoutMs ?? 10_000 });
  return (opts, callback) => {
    resolveAllowed(policy, opts.hostname, resolve).then(
      (addresses) => {
        if (!addresses) return connector(opts, callback);
        const name = isIP(opts.hostname) ? undefined : opts.hostname;
        const attempt = (i: number) =>
          connector({ ...opts, hostname: addresses[i]!, servername: opts.servername ?? name }, (err, socket) => {
            if (err && i + 1 < addresses.length) attempt(i + 1);
            else if (err) callback(err, null);
            else callback(null, socket!);
          });
        attempt(0);
      },
      (err: Error) => callback(err, null),
    );
  };
}

/** An undici Agent (connection pools per origin) whose every connection goes through the policy. */
export function createOutboundDispatcher(policy: OutboundPolicy, options: OutboundDispatcherOptions = {}): Agent {
  return new Agent({ connect: guardedConnector(policy, options) });
}
