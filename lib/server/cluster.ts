/**
 * The REST view of a floe group (docs/group.md): `GET /cluster` (members, leader,
 * partition ownership) and a rule's status across the group — aggregated by default, one
 * instance's with `?instance=<id>`, every instance's with `?instance=all` — gathered from the
 * members over NATS request/reply (cluster/rpc.ts). On a single node these answer an error
 * (`/cluster`) or stay exactly the local status (the query is ignored).
 */
import { EngineError, ErrCode } from "../errors.ts";
import type { Engine } from "./engine.ts";
import { errorBody, json } from "./respond.ts";
import type { RouteDef } from "./router.ts";

type Entries = [string, number | string][];

export const clusterRoutes: RouteDef<Engine>[] = [
  {
    method: "GET",
    path: "/cluster",
    handler: (_c, e) => {
      if (!e.cluster) return errorBody(ErrCode.notFound, "this instance is not in a group: cluster.nats is not set");
      // The partitions each partitioned rule runs on this instance (they follow ownership within moments).
      const rules: Record<string, number[]> = {};
      for (const [id, run] of [...e.partitionRuns].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) rules[id] = run.owned();
      return json({ ...e.cluster.view(), partitionedRules: rules });
    },
  },
];

/** One instance's status entries of rule `id` (this one locally, another over NATS). */
async function statusOn(e: Engine, instance: string, id: string): Promise<Entries> {
  const cluster = e.cluster!;
  const map = instance === cluster.instance ? e.rules.statusMap(id) : ((await cluster.rpc.ask(instance, { op: "ruleStatus", id })) as Record<string, number | string>);
  return Object.entries(map);
}

/**
 * A rule's status in a group: `instance` empty → aggregated over the live members; `all` → each
 * live member's, by instance id; another value → that member's. Members that do not answer (or
 * do not know the rule yet) are left out of an aggregate; none knowing it is the local error.
 */
export async function groupRuleStatus(e: Engine, id: string, instance: string): Promise<{ entries: Entries } | { each: Record<string, Record<string, number | string>> }> {
  const cluster = e.cluster!;
  if (instance !== "" && instance !== "all") {
    if (!cluster.members.isLive(instance)) throw new EngineError(`instance ${instance} is not a live member of group ${cluster.settings.group}`, ErrCode.notFound);
    return { entries: await statusOn(e, instance, id) };
  }
  const live = cluster.members.liveIds();
  const answers = await Promise.all(live.map((m) => statusOn(e, m, id).then((entries) => ({ m, entries }), (err: unknown) => ({ m, err }))));
  const ok = answers.filter((a): a is { m: string; entries: Entries } => "entries" in a);
  if (instance === "all") return { each: Object.fromEntries(ok.map((a) => [a.m, Object.fromEntries(a.entries)])) };
  if (ok.length === 0) {
    const local = answers.find((a) => a.m === cluster.instance);
    throw local && "err" in local ? local.err : new EngineError(`Rule ${id} is not found`, ErrCode.notFound);
  }
  return { entries: aggregate(ok.map((a) => a.entries)) };
}

/**
 * Sums a rule's metrics over instances, key order of the first: counters and buffer lengths add
 * up; timestamps, latencies and event-loop lag take the largest; a connection status the worst;
 * `status` is running when any instance runs it; `message` joins the distinct messages; other
 * texts (last exception, last invocation) come from the instance with the latest such event.
 */
export function aggregate(all: readonly Entries[]): Entries {
  const maps = all.map((es) => new Map(es));
  const keys: string[] = [];
  const seen = new Set<string>();
  for (const es of all) for (const [k] of es) if (!seen.has(k)) (seen.add(k), keys.push(k));
  const out: Entries = [];
  for (const k of keys) {
    const vals = maps.map((m) => m.get(k)).filter((v): v is number | string => v !== undefined);
    if (k === "status") out.push([k, vals.includes("running") ? "running" : (vals[0] ?? "")]);
    else if (k === "message") out.push([k, [...new Set(vals.filter((v) => v !== ""))].join("; ")]);
    else if (typeof vals[0] === "number") {
      const nums = vals.filter((v): v is number => typeof v === "number");
      if (/connection_status$/.test(k)) out.push([k, Math.min(...nums)]);
      else if (/(Timestamp|_time|_latency_us|^event_loop_lag_.*)$/.test(k)) out.push([k, Math.max(...nums)]);
      else out.push([k, nums.reduce((a, b) => a + b, 0)]);
    } else {
      // The text of the latest event: the instance whose `<key>_time` is largest, else the first non-empty.
      let best = -1;
      let text = vals.find((v) => v !== "") ?? "";
      for (const m of maps) {
        const t = m.get(`${k}_time`);
        const v = m.get(k);
        if (typeof t === "number" && t > best && typeof v === "string" && v !== "") (best = t), (text = v);
      }
      out.push([k, text]);
    }
  }
  return out;
}
