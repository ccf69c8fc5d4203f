/**
 * The `kuiper` command grammar (config-and-cli.md §8) as a client of `floe serve`: global flags,
 * the connection lines, then one verb. Used by `floe <verb> …` and when the binary runs as `kuiper`.
 */
import { resolvePaths } from "../../config/paths.ts";
import { connect, errorMessage, type Client } from "./client.ts";
import { pluginCommand, schemaCommand, scriptCommand, serviceCommand, udfCommand } from "./extensions.ts";
import { queryCommand } from "./query.ts";
import { ruleCommand } from "./rules.ts";
import { streamCommand } from "./streams.ts";
import { exportCommand, importCommand, importStatus } from "./transfer.ts";

export { KUIPER_VERBS } from "./verbs.ts";

const HELP = `NAME:
   Kuiper - The command line tool for EMQ X Kuiper.

USAGE:
   kuiper [global options] command [command options] [arguments...]

COMMANDS:
   create     create stream $stream_name | create stream $stream_name -f $stream_def_file | create table ... | create rule $rule_name $rule_json | create rule $rule_name -f $rule_def_file | create plugin ... | create service ... | create schema ... | create script $json
   describe   describe stream $stream_name | describe table $table_name | describe rule $rule_name | describe plugin $plugin_type $plugin_name | describe udf $udf_name | describe service ... | describe schema ... | describe script $id
   drop       drop stream $stream_name | drop table $table_name | drop rule $rule_name | drop plugin ... | drop service ... | drop schema ... | drop script $id
   export     export ruleset $ruleset_file | export data $file [-r $rules]
   getstatus  getstatus rule $rule_name | getstatus import
   gettopo    gettopo rule $rule_name
   import     import ruleset -f $ruleset_file | import data -f $file -p true|false -s true|false
   query      query command line
   register   register plugin function $name $json
   restart    restart rule $rule_name
   show       show streams | show tables | show rules | show plugins $type | show udfs | show services | show service_funcs | show schemas $type | show scripts
   start      start rule $rule_name
   stop       stop rule $rule_name
   validate   validate rule $rule_name $rule_json | validate rule $rule_name -f $rule_def_file
   help, h    Shows a list of commands or help for one command

GLOBAL OPTIONS:
   --help, -h     show help
   --version, -v  print the version
`;

export interface KuiperIo {
  /** Results. */
  readonly print: (s: string) => void;
  /** The connection lines and error sentences (default: `print`, as eKuiper's CLI writes them). */
  readonly error?: (s: string) => void;
  /** Exit 1 after a failure and 2 after bad usage (`floe <verb>`); `kuiper` exits 0 whatever happened. */
  readonly strict?: boolean;
  readonly env?: Record<string, string | undefined>;
  readonly version: string;
  readonly stdin?: NodeJS.ReadableStream;
}

const STREAM_WORDS = new Set(["stream", "streams", "table", "tables"]);
const RULE_WORDS = new Set(["rule", "rules"]);

/** Runs one kuiper command line (without the program name). Exits 0 like the Go CLI unless `io.strict`. */
export async function runKuiper(argv: string[], io: KuiperIo): Promise<number> {
  const env = io.env ?? process.env;
  let i = 0;
  const flags: { loadFileType?: string; etc?: string } = {};
  while (i < argv.length && /^--?(loadFileType|etc)$/.test(argv[i]!)) {
    const name = argv[i]!.replace(/^--?/, "") as "loadFileType" | "etc";
    flags[name] = argv[i + 1];
    i += 2;
  }
  const args = argv.slice(i);
  const paths = resolvePaths(flags, env);
  const client = await connect(paths.etc, env, io.print, io.error);
  if (!client) return io.strict ? 1 : 0;
  const [verb, what] = args;
  if (verb === undefined || verb === "help" || verb === "h" || verb === "--help" || verb === "-h") {
    io.print(HELP);
    return 0;
  }
  if (verb === "--version" || verb === "-v") {
    io.print(`Kuiper version ${io.version}\n`);
    return 0;
  }
  await dispatch(client, verb, what, args, io);
  return io.strict ? client.outcome : 0;
}

async function dispatch(c: Client, verb: string, what: string | undefined, args: string[], io: KuiperIo): Promise<void> {
  const rest = args.slice(2);
  if (verb === "query") return queryCommand(c, io.stdin);
  if (what === undefined) {
    c.usage(`Incorrect Usage. ${verb} needs a sub-command\n`);
    return;
  }
  if (STREAM_WORDS.has(what) && ["create", "describe", "drop", "explain", "show"].includes(verb)) return streamCommand(c, args);
  if (RULE_WORDS.has(what)) return ruleCommand(c, verb, rest);
  if (verb === "getstatus" && what === "import") return importStatus(c);
  if (verb === "import") return importCommand(c, what, rest);
  if (verb === "export") return exportCommand(c, what, rest);
  if (what === "plugin" || what === "plugins") {
    if (verb === "register") {
      const [type, name, json] = rest;
      if (type !== "function") return c.usage("Plugin type must be function.\n");
      const r = await c.call("POST", `/plugins/functions/${encodeURIComponent(name ?? "")}/register`, json ?? "{}");
      return r.status < 300 ? c.print(`Plugin ${name} is created.\n`) : c.fail(`Register plugin functions error: ${errorMessage(r)}\n`);
    }
    return pluginCommand(c, verb, rest);
  }
  if (what === "udf" || what === "udfs") return udfCommand(c, verb, rest);
  if (what === "service" || what === "services" || what === "service_func" || what === "service_funcs") return serviceCommand(c, verb, what, rest);
  if (what === "schema" || what === "schemas") return schemaCommand(c, verb, rest);
  if (what === "script" || what === "scripts") return scriptCommand(c, verb, rest);
  c.usage(`Incorrect Usage: unknown sub-command ${what} of ${verb}\n`);
}
