/**
 * The httppull lookup (rules-and-sinks.md §11.3, last paragraph): each lookup sends the configured
 * request with the lookup key values as template fields of url, body and headers (`{{.id}}`), and
 * the response rows are the result (responseType, compression, OAuth as for the source).
 */
import type { Obj, Value } from "../../value/values.ts";
import { HttpClient, parseHttpConf } from "./client.ts";
import type { Props } from "../../config/props.ts";
import type { HttpPullEnv } from "./pull-source.ts";
import type { LookupSource } from "../../lookup/table.ts";

export class HttpPullLookup implements LookupSource {
  private readonly client: HttpClient;

  constructor(props: Props, env: HttpPullEnv) {
    // Lookups are one request per key: incremental skipping and pull intervals do not apply.
    this.client = new HttpClient({ ...parseHttpConf(props, env.baseDir), incremental: false }, env.outbound);
  }

  open(): Promise<void> {
    return this.client.connect();
  }

  async lookup(keys: readonly string[], values: readonly Value[]): Promise<Obj[]> {
    const data: Obj = { ...this.client.conf.states };
    for (let i = 0; i < keys.length; i++) data[keys[i]!] = values[i]!;
    return (await this.client.fetchRows(data)) ?? [];
  }

  close(): void {
    this.client.close();
  }
}
