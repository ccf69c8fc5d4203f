/**
 * What a pipe-mode run is given and what it returns (pipe-mode.md), shared by both runners: the
 * file/replay runner (direct.ts) and the streaming one (live.ts). Also the one answer to "which
 * streams read standard input".
 */
import { dirname, join, resolve } from "node:path";
import { SchemaRegistry } from "../formats/schema-registry.ts";
import { createNetGuard } from "../net/guard.ts";
import { readSchemaDir } from "../store/schemas.ts";
import type { EmitMode } from "../connectors/stdio/stdout.ts";
import type { DataServerOptions } from "../connectors/http/server.ts";
import { isLookupTable, type StreamDef } from "../plan/streams.ts";
import type { Zone } from "../value/time.ts";

export interface PipeRequest {
  /** Rule file text: CREATE statements then one SELECT. */
  readonly sql: string;
  /** Extra CREATE statements (`--streams`). */
  readonly streamsSql?: string;
  readonly ruleId?: string;
  /** Rule options (`-o KEY=VALUE`). */
  readonly options: Readonly<Record<string, unknown>>;
  /** Input lines, in batches (one batch per read). */
  readonly input: AsyncIterable<string[]>;
  readonly replay: boolean;
  readonly emit: EmitMode;
  readonly onEof: "flush" | "drop";
  readonly zone: Zone;
  /** `basic.ignoreCase`: case-insensitive column lookup. */
  readonly ignoreCase?: boolean;
  /** `basic.enablePrivateNet` (httppull targets on loopback/private networks). */
  readonly enablePrivateNet?: boolean;
  /** A `.json` rule's actions, run as well as stdout (live.ts). */
  readonly actions?: readonly unknown[];
  /** A `.json` graph rule's `graph` (graph-rules.md): it runs live, its sinks and stdout receiving its output. */
  readonly graph?: unknown;
  /** etc directory for connector confKeys (`mqtt_source.yaml`). */
  readonly etcDir?: string;
  /** Where httppush/websocket/sse endpoints listen (default 127.0.0.1:10081), and who may open its websockets. */
  readonly dataServer?: Pick<DataServerOptions, "hostname" | "port" | "origins">;
  /**
   * `floe test` (eKuiper's mockSource idea): every stream and scan table is fed from the input,
   * whatever its connector TYPE, so a case tests the rule file as it is deployed. Lookup tables
   * are still queried through their connector.
   */
  readonly mockSources?: boolean;
  /** Ends a live run like SIGINT. */
  readonly signal?: AbortSignal;
  /** Standard output. */
  write(text: string): void;
  /** A promise while standard output's reader lags (the run waits for it), else undefined. */
  drain?(): Promise<void> | undefined;
  /** Diagnostics (standard error). */
  warn(text: string): void;
}

export interface PipeResult {
  /** 0 done, 1 the rule failed (or stopped by error). (3 is the caller's, from `lost`/`rowErrors` with --strict.) */
  readonly exitCode: 0 | 1;
  /** Records lost or rejected: decode errors, late rows, sink failures. */
  readonly lost: number;
  /** Of `lost`: records that did not decode (or failed the stream schema). */
  readonly decodeErrors: number;
  /** Record failures in the rule's operators (reported on stderr; not in `lost`). */
  readonly rowErrors: number;
  /** Rule status with eKuiper's keys; null when the rule never ran. */
  readonly status: Record<string, number | string> | null;
  /** The parse or plan error the rule failed with, for the CLI to show where it is. */
  readonly error?: unknown;
}

/** The result of a run that failed before or while starting. */
export function failed(status: Record<string, number | string> | null = null): PipeResult {
  return { exitCode: 1, lost: 0, decodeErrors: 0, rowErrors: 0, status };
}

/**
 * Streams fed from standard input: no connector TYPE, or TYPE="stdin"; and a file table without a
 * DATASOURCE (its rows come from the input like a stream's).
 */
export function isStdin(def: StreamDef): boolean {
  const t = (def.options.TYPE ?? "").toLowerCase();
  return t === "" || t === "stdin" || (def.kind === "table" && t === "file" && !def.options.DATASOURCE);
}

/** Whether the run feeds stream `def` from its input: stdin streams, or every scan source with `mockSources`. */
export function fedFromInput(def: StreamDef, req: Pick<PipeRequest, "mockSources">): boolean {
  return isStdin(def) || (req.mockSources === true && !isLookupTable(def));
}

/** The protobuf schemas a pipe run can name: `<etc>/schemas/protobuf/*.proto` (pipe mode has no data dir). */
export function pipeSchemas(etcDir: string | undefined): SchemaRegistry {
  const r = new SchemaRegistry();
  if (etcDir) for (const s of readSchemaDir(join(etcDir, "schemas", "protobuf"))) r.set({ ...s, version: "" });
  return r;
}

/** What opening lookup tables takes from the request (the file/replay runner: connectors/lookups.ts createLookupEnv). */
export function pipeLookupEnv(req: PipeRequest) {
  return {
    etcDir: req.etcDir,
    // The eKuiper root (relative file-source paths): the parent of --etc, else the working dir.
    baseDir: req.etcDir ? dirname(resolve(req.etcDir)) : process.cwd(),
    outbound: createNetGuard({ allowPrivate: req.enablePrivateNet }),
    // Debug lines are the daemon's (--log-level debug); pipe mode's stderr keeps to what matters.
    log: (l: string, level?: string) => void (level !== "debug" && req.warn(l + "\n")),
  };
}

/** The runtime env fields pipe mode takes from its request (the streaming runner). */
export function pipeEnv(req: PipeRequest) {
  return { ...pipeLookupEnv(req), schemas: pipeSchemas(req.etcDir), zone: req.zone, ignoreCase: req.ignoreCase };
}
