/**
 * The daemon's side of a floe group: a definition change from another member applied through the
 * same engine paths REST uses (catalog upsert/remove, rule registration and lifecycle, confKeys
 * and live connections, JavaScript UDF sandboxes), with the store writes kept local (they came
 * from the group); and the answers this instance gives other members (rule status here).
 */
import { GroupEntryRefused, type ClusterNode, type DefinitionChange, type ReplicatedStore } from "../cluster/index.ts";
import { EngineError, ErrCode, errorText } from "../errors.ts";
import { registerBrokenScript, registerScript, type ScriptDef } from "../functions/js-udf.ts";
import type { ConnectionRegistry } from "../connectors/connections.ts";
import type { FunctionRegistry } from "../functions/index.ts";
import type { KuiperConfig } from "../config/index.ts";
import { groupEntryError, type EntryCheckHost } from "./group-entry.ts";
import type { SafeMode } from "./safe-mode.ts";

/** What applying a change needs of the engine (server/engine.ts owns all of it). */
export interface GroupHost extends EntryCheckHost {
  readonly connections: ConnectionRegistry;
  readonly functions: FunctionRegistry;
  readonly config: KuiperConfig;
  readonly scripts: Map<string, ScriptDef>;
  readonly safeMode: SafeMode;
  log(line: string): void;
  removeScript(id: string): void;
}

/** Applies `c`, checked first as REST would check it (group-entry.ts): a refused entry changes nothing. */
export async function applyGroupChange(engine: GroupHost, store: ReplicatedStore, c: DefinitionChange): Promise<void> {
  const { ns, key, value } = c;
  // Our own write coming back, or a change already made here.
  if (store.get(ns, key) === value) return;
  const refusal = groupEntryError(engine, c);
  if (refusal !== undefined) throw new GroupEntryRefused(refusal);
  switch (ns) {
    case "stream":
    case "tempStream":
      store.quietly(() => {
        if (value === undefined) engine.catalog.remove(key);
        else engine.catalog.upsert((JSON.parse(value) as { statement: string }).statement);
      });
      return;
    case "rule":
      return store.quietly(() => engine.rules.applyStored(key, value, !engine.safeMode.on));
    case "confKey": {
      store.quietly(() => (value === undefined ? store.delete(ns, key) : store.set(ns, key, value)));
      const [kind, typ, ...rest] = key.split(".");
      if (kind !== "connections" || !typ) return;
      if (value === undefined) await engine.connections.close(rest.join("."));
      else engine.connections.open(rest.join("."), typ, JSON.parse(value) as Record<string, unknown>);
      return;
    }
    case "script": {
      if (value === undefined) {
        store.quietly(() => engine.removeScript(key));
        return;
      }
      const def = JSON.parse(value) as ScriptDef;
      if (!engine.safeMode.on) {
        try {
          await registerScript(engine.functions, def, engine.config.basic.udfLimits);
        } catch (e) {
          engine.log(`cluster: javascript function ${key} from the group does not load here: ${errorText(e)}`);
          registerBrokenScript(engine.functions, def, errorText(e));
        }
      }
      store.quietly(() => store.set(ns, key, value));
      engine.scripts.set(key, def);
      return;
    }
    default:
      return;
  }
}

/** Start-up order of a snapshot's check: functions before the streams and rules that may call them. */
const NS_ORDER: Record<string, number> = { script: 0, confKey: 1, stream: 2, tempStream: 2, rule: 3 };

/**
 * Checks the definitions a joining member copied from the group at start-up (cluster/definitions.ts
 * `open`, which checked only what needs no engine) as REST would, before any rule is restored
 * (`loadScripts` has run, the catalog is loaded): a refused one is taken out of the local store again.
 */
export function checkGroupSnapshot(engine: GroupHost, cluster: ClusterNode, store: ReplicatedStore): void {
  const taken = cluster.definitions.takeSnapshot().sort((a, b) => NS_ORDER[a.ns]! - NS_ORDER[b.ns]!);
  for (const c of taken) {
    const refusal = groupEntryError(engine, c);
    if (refusal === undefined) continue;
    cluster.definitions.refuseChange(c, refusal);
    store.quietly(() => {
      if (c.ns === "stream" || c.ns === "tempStream") engine.catalog.remove(c.key);
      else if (c.ns === "script") engine.removeScript(c.key);
      else store.delete(c.ns, c.key);
    });
  }
}

/** Requests other members send to this one (cluster/rpc.ts). */
export function answerGroupRequest(engine: GroupHost, req: Record<string, unknown>): unknown {
  switch (req.op) {
    case "ruleStatus":
      return engine.rules.statusMap(String(req.id ?? ""));
    case "ruleStatusAll":
      return engine.rules.statusAll();
    default:
      throw new EngineError(`unknown group request ${JSON.stringify(req.op)}`, ErrCode.general);
  }
}
