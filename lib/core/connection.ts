/**
 * The state of one connection as the nodes using it report it (connectionStatus and the last
 * connection times in a node's metrics). Sources, sinks and shared connections all report
 * through it.
 */
import type { NodeMetrics } from "./metrics.ts";

/**
 * Connection state changes, reported into a node's connection metrics (rest-api.md §6.2). A
 * shared (named) connection links the reporters of the nodes using it: they follow its state
 * while attached. A node attached or linked later takes the state as it is, with the real times
 * of the last connection, disconnection and try.
 */
export class ConnectionReporter {
  private readonly nodes: NodeMetrics[] = [];
  private readonly links: ConnectionReporter[] = [];
  status: -1 | 0 | 1 = 0;
  connectedAt = 0;
  disconnectedAt = 0;
  triedAt = 0;
  /** The message of the last disconnection. */
  lastMessage = "";

  attach(m: NodeMetrics): void {
    this.nodes.push(m);
    this.write(m);
  }

  detach(m: NodeMetrics): void {
    const i = this.nodes.indexOf(m);
    if (i >= 0) this.nodes.splice(i, 1);
  }

  /** `r` follows this reporter from now on, starting from the current state. */
  link(r: ConnectionReporter): void {
    this.links.push(r);
    r.follow(this, false);
  }

  unlink(r: ConnectionReporter): void {
    const i = this.links.indexOf(r);
    if (i >= 0) this.links.splice(i, 1);
  }

  connecting(): void {
    this.status = 0;
    this.triedAt = Date.now();
    this.publish(false);
  }

  connected(): void {
    this.status = 1;
    this.connectedAt = this.triedAt = Date.now();
    this.publish(false);
  }

  /**
   * The connection is gone; a lost connection counts one exception on the node (rules-and-sinks.md
   * §9). `retrying`: the client reconnects by itself, so the state is 0 (connecting), as eKuiper
   * shows it while it retries; otherwise −1 (disconnected).
   */
  disconnected(message: string, retrying = false): void {
    const lost = this.status === 1;
    this.status = retrying ? 0 : -1;
    this.disconnectedAt = Date.now();
    this.lastMessage = message;
    this.publish(lost);
  }

  private write(m: NodeMetrics): void {
    m.connectionStatus = this.status;
    m.lastConnectedTime = this.connectedAt;
    m.lastDisconnectedTime = this.disconnectedAt;
    m.lastDisconnectedMessage = this.lastMessage;
    m.lastTryTime = this.triedAt;
  }

  private follow(from: ConnectionReporter, lost: boolean): void {
    this.status = from.status;
    this.connectedAt = from.connectedAt;
    this.disconnectedAt = from.disconnectedAt;
    this.triedAt = from.triedAt;
    this.lastMessage = from.lastMessage;
    this.publish(lost);
  }

  private publish(lost: boolean): void {
    for (const m of this.nodes) {
      this.write(m);
      if (lost) m.exception(this.lastMessage, this.disconnectedAt);
    }
    for (const l of this.links) l.follow(this, lost);
  }
}
