/**
 * The caps on the API server's open connections: at most `max` in all and `perAddress` from one
 * client address (the peer's address: a forwarded header is the client's to choose).
 *
 * A connection is idle while none of its requests is in progress: before its first request's
 * headers are in (a slow-header client looks like this) and between kept-alive requests. A new
 * connection over a cap takes the place of the oldest idle connection under that cap (the
 * address's own for the per-address cap, any for the total one), which is closed; with none idle,
 * the new connection is refused (closed at once). So a flood of idle or slow-header connections
 * makes room for each newcomer, /healthz included, instead of locking everybody out until the
 * header or keep-alive timeouts close them; a request in progress is never cut.
 *
 * Counted at scrape: wp_http_connections_refused_total{cap}, wp_http_connections_evicted_total{cap}
 * (cap: total | per_address) and wp_http_connections_open.
 *
 * Invariants: a connection is counted from its 'connection' event until it closes or is evicted
 * (evicted ones are uncounted at once, not when their close comes); it is in the idle sets exactly
 * while it is counted and has no request in progress, ordered by the time it became idle.
 */
import type http from 'node:http';
import type { Socket } from 'node:net';
import { OrderedList, type OrderedEntry } from '../lib/ordered-list.js';
import type { Metrics } from '../metrics/metrics.js';

export interface ConnectionCaps {
  /** Open connections at most. */
  max: number;
  /** Per client address at most; 0 = no per-address cap. */
  perAddress: number;
}

type Cap = 'total' | 'per_address';

interface Connection {
  socket: Socket;
  address: string;
  /** Its address's entry in byAddress (there while the connection is counted). */
  here: AddressConnections;
  /** Requests in progress (more than one when a client pipelines). */
  active: number;
  counted: boolean;
  /** Its places in the idle lists (all, its address's) while idle. */
  idleAll?: OrderedEntry<Connection> | undefined;
  idleHere?: OrderedEntry<Connection> | undefined;
}

interface AddressConnections {
  count: number;
  idle: OrderedList<Connection>;
}

export class ConnectionGuard {
  private open = 0;
  /** Idle connections, the longest idle first (lists, not Sets: every request leaves and re-enters them, see ordered-list.ts). */
  private readonly idle = new OrderedList<Connection>();
  private readonly byAddress = new Map<string, AddressConnections>();
  private readonly bySocket = new WeakMap<Socket, Connection>();
  private readonly refused: Record<Cap, number> = { total: 0, per_address: 0 };
  private readonly evicted: Record<Cap, number> = { total: 0, per_address: 0 };

  constructor(private readonly caps: ConnectionCaps) {}

  /** Applies the caps to `server`'s connections and counts in `metrics`. */
  attach(server: http.Server, metrics?: Metrics): void {
    server.on('connection', (socket: Socket) => this.connected(socket));
    server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      const conn = this.bySocket.get(req.socket);
      if (!conn) return;
      this.began(conn);
      res.once('close', () => this.ended(conn));
    });
    if (!metrics) return;
    const refused = metrics.counter('wp_http_connections_refused_total', 'New HTTP connections refused over a cap (none of that cap idle to close).', ['cap']);
    const evicted = metrics.counter('wp_http_connections_evicted_total', 'Idle HTTP connections closed to make room for a new one over a cap.', ['cap']);
    const open = metrics.gauge('wp_http_connections_open', 'Open HTTP connections of the API server.');
    let shown = { refused: { total: 0, per_address: 0 }, evicted: { total: 0, per_address: 0 } };
    metrics.onScrape(async () => {
      for (const cap of ['total', 'per_address'] as const) {
        refused.inc({ cap }, this.refused[cap] - shown.refused[cap]);
        evicted.inc({ cap }, this.evicted[cap] - shown.evicted[cap]);
      }
      shown = { refused: { ...this.refused }, evicted: { ...this.evicted } };
      open.set(this.open);
    });
  }

  /** Open connections now. */
  get count(): number {
    return this.open;
  }

  private connected(socket: Socket): void {
    const address = socket.remoteAddress;
    if (address === undefined) return; // already gone
    let mine = this.byAddress.get(address);
    if (this.caps.perAddress && mine && mine.count >= this.caps.perAddress && !this.makeRoom(mine.idle.first(), 'per_address', socket)) return;
    if (this.open >= this.caps.max && !this.makeRoom(this.idle.first(), 'total', socket)) return;
    if (!mine) this.byAddress.set(address, (mine = { count: 0, idle: new OrderedList() }));
    const conn: Connection = { socket, address, here: mine, active: 0, counted: true };
    this.bySocket.set(socket, conn);
    this.open++;
    mine.count++;
    this.becomeIdle(conn);
    socket.once('close', () => this.uncount(conn));
  }

  /** Closes `victim` to make room under `cap`; with no victim, refuses `newcomer`. True when there is room. */
  private makeRoom(victim: Connection | undefined, cap: Cap, newcomer: Socket): boolean {
    if (!victim) {
      this.refused[cap]++;
      newcomer.destroy();
      return false;
    }
    this.evicted[cap]++;
    this.uncount(victim);
    victim.socket.destroy();
    return true;
  }

  private began(conn: Connection): void {
    if (conn.active++ > 0 || !conn.counted) return;
    this.leaveIdle(conn);
  }

  private ended(conn: Connection): void {
    if (--conn.active > 0 || !conn.counted || conn.socket.destroyed) return;
    // Idle again: the newest idle one (last to be closed for a newcomer).
    this.becomeIdle(conn);
  }

  private becomeIdle(conn: Connection): void {
    if (conn.idleAll) return; // idle already: it keeps its place
    conn.idleAll = this.idle.add(conn);
    conn.idleHere = conn.here.idle.add(conn);
  }

  private leaveIdle(conn: Connection): void {
    if (conn.idleAll) this.idle.remove(conn.idleAll);
    if (conn.idleHere) conn.here.idle.remove(conn.idleHere);
    conn.idleAll = conn.idleHere = undefined;
  }

  private uncount(conn: Connection): void {
    if (!conn.counted) return;
    conn.counted = false;
    this.open--;
    this.leaveIdle(conn);
    if (--conn.here.count === 0) this.byAddress.delete(conn.address);
  }
}
