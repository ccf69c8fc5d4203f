/**
 * The rule processor and registry of the daemon (rest-api.md §5–§7): validation order, the KV
 * store as the source of truth for definitions and desired state (`triggered`), one
 * RuleLifecycle per rule, and the status/topology views. Every definition change is committed to
 * the store before the caller replies.
 */
import { EngineError, ErrCode, errorText, TooLargeError } from "../errors.ts";
import type { Zone } from "../value/time.ts";
import { RuleLifecycle, RuleStateName, type RunFactory, type Topo } from "./lifecycle.ts";
import { inSchedule, nextStartTimestamp } from "./scheduler.ts";
import { isScheduled } from "./lifecycle.ts";
import { loopLag } from "../runtime/loop-lag.ts";
import type { StreamCatalog } from "../store/stream-catalog.ts";
import type { DefinitionStore } from "../store/definition-store.ts";
import type { FunctionSignatures } from "../sql/function-signatures.ts";
import { parseStoredRule, rewriteRuleText, ruleSources, versionAllows, type StoredRule } from "../store/stored-rule.ts";
import { MASK, unmaskSecrets } from "./confkeys.ts";
import { goQuote } from "./respond.ts";

/**
 * Go `%q` with the escapes JSON lacks (`\a`, `\v`, `\x..`) written as `\u00..`. A decode error
 * can quote payload bytes (a control character in a JSON payload), and eKuiper's `json.Indent`
 * then refuses its own text; floe answers valid JSON, the same bytes whenever eKuiper's is valid.
 */
function statusQuote(s: string): string {
  const q = goQuote(s);
  return q.includes("\\") ? q.replace(/\\(\\|x([0-9a-f]{2})|a|v)/g, (m, e: string, hex?: string) => (hex ? `\\u00${hex}` : e === "a" ? "\\u0007" : e === "v" ? "\\u000b" : m)) : q;
}

/** The legacy status text of status entries: hand-built, two-space indented, in entry order (rest-api.md §6.2). */
export function statusText(entries: readonly (readonly [string, number | string])[]): string {
  const lines = entries.map(([k, v]) => `  "${k}": ${typeof v === "string" ? statusQuote(v) : String(v)}`);
  return "{\n" + lines.join(",\n") + "\n}";
}

/** Plans a definition without running it (throws the planning error). */
export type RuleValidator = (def: StoredRule) => void;

const e1000 = (m: string) => new EngineError(m, ErrCode.undefined);
/** A code-1000 error with `m`; a size refusal stays one (413). */
const wrapped = (m: string, cause: unknown) => (cause instanceof TooLargeError ? new TooLargeError(m) : e1000(m));
const notFound = (m: string) => new EngineError(m, ErrCode.notFound);

export class RuleManager {
  readonly rules = new Map<string, RuleLifecycle>();
  /** Removes a deleted rule's data (sink cache pages, `data/rule_<id>`); errors are reported. */
  cleanup: (id: string) => void = () => {};

  constructor(
    private readonly kv: DefinitionStore,
    private readonly catalog: StreamCatalog,
    private readonly functions: FunctionSignatures,
    private readonly defaults: () => Readonly<Record<string, unknown>>,
    private readonly factory: RunFactory,
    private readonly validate: RuleValidator,
    private readonly zone: () => Zone,
    private readonly log: (m: string) => void = () => {},
  ) {}

  /** Plans a definition without storing or running it. */
  validateDef(def: StoredRule): void {
    this.validate(def);
  }

  parse(text: string, pathId?: string): StoredRule {
    return parseStoredRule(text, this.functions, this.defaults(), pathId);
  }

  /**
   * Create/update/start API: runs now, except a scheduled rule outside its schedule, which waits
   * for its next window (the SHOULD of rest-api.md §5; eKuiper runs it until the next tick).
   */
  private launch(lc: RuleLifecycle, def: StoredRule, stopMessage = "stopped by update"): Promise<void> {
    if (isScheduled(def) && !inSchedule(def, Date.now(), this.zone())) return lc.waitForSchedule(def, stopMessage);
    return lc.startNow(def, stopMessage);
  }

  /** A rule that reached EOF is no longer triggered; one function for every rule's lifecycle. */
  private readonly untrigger = (id: string): void => this.setTriggered(id, false);

  private lifecycle(def: StoredRule): RuleLifecycle {
    const lc = new RuleLifecycle(def, this.factory, this.untrigger);
    lc.onState = this.onState;
    return lc;
  }

  /** Told of every rule's state changes (the daemon's log). */
  onState: RuleLifecycle["onState"];

  /** Boot: registers every stored rule and starts the triggered ones (config-and-cli.md §6.2); none in safe mode. */
  restore(start = true): void {
    for (const [id, text] of this.kv.entries("rule")) this.recover(id, text, start);
  }

  /** Registers a stored rule (replacing a registered one) and starts it when triggered (and `start`). */
  recover(id: string, text: string, start = true): void {
    let def: StoredRule;
    try {
      def = parseStoredRule(text, this.functions, this.defaults(), undefined, { keepBadSql: true });
    } catch (e) {
      this.log(`cannot restore rule ${id}: ${errorText(e)}`);
      return;
    }
    const old = this.rules.get(id);
    if (old) void old.stop("stopped by update");
    const lc = this.lifecycle(def);
    this.rules.set(id, lc);
    if (def.triggered && start) void lc.start();
  }

  /**
   * A rule's stored text changed elsewhere in the group (server/cluster-apply.ts; undefined:
   * deleted). Applied as the REST call that made it: a delete stops and removes the rule, a new
   * rule is registered and started when triggered, a changed `triggered` alone starts or stops
   * it, any other change restarts it with the new definition. Every store write happens before
   * the first await, so the caller's `quietly` covers them.
   */
  async applyStored(id: string, text: string | undefined, start: boolean): Promise<void> {
    const lc = this.rules.get(id);
    if (text === undefined) {
      if (lc) await this.delete(id);
      else this.kv.delete("rule", id);
      return;
    }
    const def = parseStoredRule(text, this.functions, this.defaults(), undefined, { keepBadSql: true });
    this.kv.set("rule", id, text);
    if (!lc) {
      const fresh = this.lifecycle(def);
      this.rules.set(id, fresh);
      if (def.triggered && start) void this.launch(fresh, def);
      return;
    }
    const onlyTriggered = rewriteRuleText(lc.def.text, { triggered: true }) === rewriteRuleText(text, { triggered: true });
    lc.def = def;
    if (!def.triggered) await lc.stop("canceled manually");
    else if (start && !(onlyTriggered && lc.running)) void this.launch(lc, def);
  }

  /** `POST /rules`: returns the id. */
  create(text: string): string {
    let def: StoredRule;
    try {
      def = this.parse(text);
    } catch (e) {
      throw wrapped(`invalid rule json: ${errorText(e)}`, e);
    }
    if (this.rules.has(def.id)) throw e1000(`rule ${def.id} already exists`);
    this.validate(def);
    if (!def.temp && !this.kv.setnx("rule", def.id, text)) throw e1000(`store the rule error: Item ${def.id} already exists`);
    const lc = this.lifecycle(def);
    this.rules.set(def.id, lc);
    if (def.triggered) void this.launch(lc, def);
    return def.id;
  }

  /** `PUT /rules/{id}`: upsert; nothing changes when the new definition is invalid. */
  update(id: string, text: string): void {
    // A secret sent back masked (`******`) keeps the stored value.
    const stored = this.kv.get("rule", id);
    if (stored !== undefined && text.includes(MASK)) {
      try {
        text = JSON.stringify(unmaskSecrets(JSON.parse(text) as Record<string, unknown>, JSON.parse(stored) as Record<string, unknown>));
      } catch {
        // not JSON: the parse below reports it
      }
    }
    let def: StoredRule;
    try {
      def = this.parse(text, id);
    } catch (e) {
      throw wrapped(`Invalid rule json: ${errorText(e)}`, e);
    }
    const old = this.rules.get(id);
    if (old && !versionAllows(old.def.version, def.version))
      throw e1000(`rule ${id} already exists with version (${old.def.version}), new version (${def.version}) is lower`);
    this.validate(def);
    if (def.temp) this.kv.delete("rule", id);
    else this.kv.set("rule", id, text);
    if (old) {
      old.def = def;
      if (def.triggered) void this.launch(old, def);
      else void old.stop("stopped by update");
    } else {
      const lc = this.lifecycle(def);
      this.rules.set(id, lc);
      if (def.triggered) void this.launch(lc, def);
    }
  }

  /** Stores (import semantics): overwrite unless the stored version is newer; false when refused. */
  importRule(id: string, text: string): boolean {
    const stored = this.kv.get("rule", id);
    if (stored !== undefined) {
      try {
        const old = this.parse(stored);
        const def = this.parse(text);
        if (!versionAllows(old.version, def.version) && !(old.version === "" && def.version === "")) return false;
      } catch {
        // an unparsable stored rule is simply replaced
      }
    }
    this.kv.set("rule", id, text);
    return true;
  }

  async delete(id: string): Promise<void> {
    const lc = this.rules.get(id);
    if (!lc) throw e1000(`rule ${id} not found`);
    this.rules.delete(id);
    this.kv.delete("rule", id);
    await lc.stop("canceled manually");
    this.cleanup(id);
  }

  describe(id: string): string {
    const lc = this.rules.get(id);
    const text = this.kv.get("rule", id) ?? (lc?.def.temp ? lc.def.text : undefined);
    if (text === undefined) throw notFound(`Rule ${id} is not found.`);
    return text;
  }

  private setTriggered(id: string, triggered: boolean): void {
    const lc = this.rules.get(id);
    const text = this.kv.get("rule", id);
    if (text !== undefined) {
      const next = rewriteRuleText(text, { triggered });
      this.kv.set("rule", id, next);
      if (lc) lc.def = { ...lc.def, triggered, text: next };
    } else if (lc) lc.def = { ...lc.def, triggered };
  }

  private registered(id: string): RuleLifecycle {
    const lc = this.rules.get(id);
    if (!lc) throw notFound(`Rule ${id} is not found in registry, please check if it is created`);
    return lc;
  }

  /** `POST /rules/{id}/start`: triggered=true, re-plan, start (restarts a running rule). */
  async start(id: string): Promise<void> {
    const lc = this.registered(id);
    const text = this.kv.get("rule", id) ?? lc.def.text;
    const def = this.parse(text);
    this.validate(def);
    this.setTriggered(id, true);
    await this.launch(lc, { ...def, triggered: true, text: this.kv.get("rule", id) ?? text });
  }

  async stop(id: string): Promise<void> {
    const lc = this.registered(id);
    this.setTriggered(id, false);
    await lc.stop("canceled manually");
  }

  async restart(id: string): Promise<void> {
    const lc = this.registered(id);
    this.setTriggered(id, true);
    const def = this.parse(this.kv.get("rule", id) ?? lc.def.text);
    await lc.stop("canceled manually");
    await this.launch(lc, def);
  }

  /** Stops every rule (shutdown): keeps `triggered`, so running rules come back at the next boot. */
  async stopAll(timeoutMs: number): Promise<void> {
    const all = Promise.all([...this.rules.values()].map((r) => r.stop("canceled manually")));
    await Promise.race([all, Bun.sleep(timeoutMs)]);
  }

  /** `GET /rules` elements (keys alphabetical). */
  list(): Record<string, unknown>[] {
    const ids = new Set([...this.kv.keys("rule"), ...this.rules.keys()]);
    return [...ids].sort().map((id) => {
      const lc = this.rules.get(id);
      if (!lc) return { id, name: id, status: `error: Rule ${id} is not found in registry`, tags: null, trace: false, version: "" };
      const d = lc.def;
      return { id, name: d.name || id, status: lc.state, tags: d.tags, trace: lc.running && lc.tracing, version: d.version };
    });
  }

  /** State fields of the status, then every metric of the current/last run. */
  private statusEntries(lc: RuleLifecycle): [string, number | string][] {
    const out: [string, number | string][] = [
      ["status", lc.state],
      ["message", lc.message],
      ["lastStartTimestamp", lc.lastStartTimestamp],
      ["lastStopTimestamp", lc.lastStopTimestamp],
      ["nextStartTimestamp", lc.running ? 0 : nextStartTimestamp(lc.def, Date.now(), this.zone())],
    ];
    for (const n of lc.nodes()) for (const e of n.entries()) out.push(e);
    if (lc.running && loopLag.running) {
      // floe's own, after eKuiper's keys: the process's event-loop lag over the last minute (loop-lag.ts).
      const l = loopLag.stats();
      out.push(["event_loop_lag_max_ms", l.maxMs], ["event_loop_lag_p99_ms", l.p99Ms], ["event_loop_lag_p999_ms", l.p999Ms]);
    }
    return out;
  }

  /** Legacy status text: hand-built, two-space indented (rest-api.md §6.2). */
  statusText(id: string): string {
    const lc = this.rules.get(id);
    if (!lc) throw notFound(`Rule ${id} is not found`);
    return statusText(this.statusEntries(lc));
  }

  /** v2 status: a Go map (keys sorted by the encoder). */
  statusMap(id: string): Record<string, number | string> {
    const lc = this.rules.get(id);
    if (!lc) throw notFound(`Rule ${id} is not found`);
    return Object.fromEntries(this.statusEntries(lc));
  }

  /** `GET /rules/status/all`: id → {status, last_exception, exceptions_total}. */
  statusAll(): Record<string, { status: string; last_exception: string; exceptions_total: number }> {
    const out: Record<string, { status: string; last_exception: string; exceptions_total: number }> = {};
    const ids = new Set([...this.kv.keys("rule"), ...this.rules.keys()]);
    for (const id of [...ids].sort()) {
      const lc = this.rules.get(id);
      if (!lc) {
        out[id] = { status: "", last_exception: "", exceptions_total: 0 };
        continue;
      }
      let le = "";
      let et = 0;
      if (lc.running) {
        let best = -1;
        for (const n of lc.nodes()) {
          if (n.lastExceptionTime > best) {
            best = n.lastExceptionTime;
            le = n.lastException;
            et = n.exceptions;
          }
        }
      }
      out[id] = { status: lc.state, last_exception: le, exceptions_total: et };
    }
    return out;
  }

  topo(id: string): Topo {
    const lc = this.rules.get(id);
    if (!lc) throw notFound(`Rule ${id} is not found`);
    if (!lc.lastTopo) throw new EngineError(`Fail to get rule ${id}'s topo, make sure the rule has been started before`, ErrCode.general);
    return lc.lastTopo;
  }

  /** Rewrites the tag list of a stored rule (`PUT|PATCH|DELETE /rules/{id}/tags`). */
  setTags(id: string, op: "put" | "add" | "remove", tags: string[]): void {
    const text = this.kv.get("rule", id);
    if (text === undefined) throw notFound(`Rule ${id} is not found.`);
    const lc = this.rules.get(id);
    if (!lc) throw new EngineError(`rule ${id} is not registered`, ErrCode.undefined);
    const cur = lc.def.tags ?? [];
    let next: string[];
    if (op === "put") next = [...tags];
    else if (op === "add") next = [...cur, ...tags.filter((t, i) => !cur.includes(t) && tags.indexOf(t) === i)];
    else next = cur.filter((t) => !tags.includes(t));
    const updated = rewriteRuleText(text, { tags: next });
    this.kv.set("rule", id, updated);
    lc.def = { ...lc.def, tags: next, text: updated };
  }

  /** Ids of stored rules whose tags include all of `tags` (sorted). */
  matchTags(tags: string[]): string[] {
    const out: string[] = [];
    for (const [id, lc] of this.rules) {
      if (lc.def.temp) continue;
      const have = lc.def.tags ?? [];
      if (tags.every((t) => have.includes(t))) out.push(id);
    }
    return out.sort();
  }

  /** Rules (registered) that read `stream`. */
  referencing(stream: string): string[] {
    const out: string[] = [];
    for (const [id, lc] of this.rules) if (ruleSources(lc.def).includes(stream)) out.push(id);
    return out;
  }

  get(id: string): RuleLifecycle | undefined {
    return this.rules.get(id);
  }

  /** Counts for `kuiper_rule_count`. */
  counts(): { running: number; stop: number } {
    let running = 0;
    for (const lc of this.rules.values()) if (lc.state === RuleStateName.running) running++;
    return { running, stop: this.rules.size - running };
  }

  /** Deletes every rule (full import reset). */
  async clear(): Promise<void> {
    const all = [...this.rules.values()];
    this.rules.clear();
    this.kv.clear("rule");
    await Promise.all(all.map((r) => r.stop("canceled manually")));
  }
}
