/**
 * Requests between the members of a group over NATS request/reply: subject
 * `floe.<group>.rpc.<instance>`, a JSON request in, `{ok: true, value}` or `{ok: false, code,
 * message}` out. The server answers with what only that instance knows (a rule's status there).
 */
import type { NatsConnection } from "./nats.ts";
import { EngineError, ErrCode, errorText } from "../errors.ts";

export type RpcHandler = (request: Record<string, unknown>) => Promise<unknown> | unknown;

type Reply = { ok: true; value: unknown } | { ok: false; code: number; message: string };

export class GroupRpc {
  private sub: { unsubscribe(): void } | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly group: string,
    private readonly instance: string,
  ) {}

  private subject(instance: string): string {
    return `floe.${this.group}.rpc.${instance}`;
  }

  /** Answers requests addressed to this instance with `handler`. */
  serve(handler: RpcHandler): void {
    this.sub = this.nc.subscribe(this.subject(this.instance), {
      callback: (err, msg) => {
        if (err) return;
        void (async () => {
          let reply: Reply;
          try {
            const req = JSON.parse(new TextDecoder().decode(msg.data)) as Record<string, unknown>;
            reply = { ok: true, value: await handler(req) };
          } catch (e) {
            reply = { ok: false, code: e instanceof EngineError ? e.code : ErrCode.general, message: errorText(e) };
          }
          msg.respond(JSON.stringify(reply));
        })();
      },
    });
  }

  /** Asks `instance`; its error comes back as an EngineError with its code. */
  async ask(instance: string, request: Record<string, unknown>, timeoutMs = 3000): Promise<unknown> {
    let reply: Reply;
    try {
      const m = await this.nc.request(this.subject(instance), JSON.stringify(request), { timeout: timeoutMs });
      reply = JSON.parse(new TextDecoder().decode(m.data)) as Reply;
    } catch (e) {
      throw new EngineError(`instance ${instance} did not answer: ${errorText(e)}`, ErrCode.io, { cause: e });
    }
    if (!reply.ok) throw new EngineError(reply.message, reply.code);
    return reply.value;
  }

  stop(): void {
    this.sub?.unsubscribe();
  }
}
