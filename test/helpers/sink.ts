/** A sink pipeline of rule `r` around a test connector, as the runtime builds one. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseSinkCommon } from "../../lib/sink/common.ts";
import type { SinkConnector } from "../../lib/sink/connector.ts";
import { SinkPipeline } from "../../lib/sink/pipeline.ts";

/** The opened pipeline of sink `type` over `conn`; `sendSingle` unless `props` says otherwise; `fence` as a group partition's run has one. */
export function openPipeline(type: string, conn: SinkConnector, props: Record<string, unknown> = {}, fence?: () => boolean): SinkPipeline {
  const p = new SinkPipeline({
    ruleId: "r",
    type,
    index: 0,
    props,
    common: parseSinkCommon({ sendSingle: true, ...props }),
    connector: conn,
    dataDir: mkdtempSync(join(tmpdir(), `floe-${type}-`)),
    log: () => {},
    fence,
  });
  p.open();
  return p;
}
