/**
 * Connections to brokers and databases through Bun's built-in clients: raw TCP/TLS sockets (the
 * MQTT source's lean transport), Redis, and SQL servers. Their policy allows private addresses:
 * a broker or a database is normally on the same host or network, and what speaks to it is a
 * broker protocol, not a request a user shapes byte by byte to reach a local web service. They
 * are here, next to the guarded clients, so that this folder is the only place in lib/ that opens
 * a connection (test/outbound.test.ts) and any later policy for brokers has one place to go.
 */
import { RedisClient, SQL, type SocketOptions, type TCPSocketConnectOptions } from "bun";

/** A TCP (or TLS) socket to `opts.hostname:opts.port` with `opts.socket`'s handlers (Bun.connect). */
export function openSocket<T>(opts: TCPSocketConnectOptions<T> & SocketOptions<T>): Promise<Bun.Socket<T>> {
  return Bun.connect(opts);
}

/** A Redis client of `url` (it connects at `connect()` or its first command). */
export function openRedis(url: string, opts: Bun.RedisOptions): RedisClient {
  return new RedisClient(url, opts);
}

/** A SQL client (PostgreSQL, MySQL/MariaDB, SQLite) of `options` (it connects at its first query). */
export function openSql(options: SQL.Options): SQL {
  return new SQL(options);
}
