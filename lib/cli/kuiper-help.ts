/**
 * Help for the kuiper-style verbs (`floe create --help`): what each does, its forms and examples.
 * Shown without a server; the verbs themselves talk to a running `floe serve`.
 */

/** How every verb finds the server: printed under each verb's help. */
const CONNECTION =
  "Talks to a running `floe serve` on its CLI port (127.0.0.1:20498 by default: basic.host and\n" +
  "basic.port in etc/client.yaml, or CLIENT__BASIC__HOST / CLIENT__BASIC__PORT, e.g.\n" +
  "CLIENT__BASIC__PORT=20499 floe show rules). The sentences are eKuiper's `kuiper` CLI's: results\n" +
  "on standard output; the connection line and errors on standard error (so `floe show rules | jq .`\n" +
  "works). Exit status: 0 done, 1 the server refused or failed (or no server), 2 bad usage.\n" +
  "Installed as `kuiper` (a symlink), the binary prints everything on standard output and exits 0,\n" +
  "as eKuiper's CLI does.";

interface VerbHelp {
  readonly summary: string;
  readonly forms: string[];
  readonly examples: string[];
}

export const KUIPER_HELP: Record<string, VerbHelp> = {
  create: {
    summary: "Create a stream, table, rule, plugin, service, schema or script",
    forms: ["create stream NAME 'SQL' | create stream NAME -f FILE", "create table NAME 'SQL' | create table NAME -f FILE", "create rule ID 'JSON' | create rule ID -f FILE", "create plugin|service|schema|script …"],
    examples: [
      `floe create stream demo '(temperature float, humidity bigint) WITH (FORMAT="JSON", DATASOURCE="demo")'`,
      `floe create rule r1 '{"sql":"SELECT * FROM demo WHERE temperature > 30","actions":[{"log":{}}]}'`,
      "floe create rule r1 -f rules/r1.json",
    ],
  },
  describe: {
    summary: "Show the definition of a stream, table, rule, plugin, UDF, service, schema or script",
    forms: ["describe stream|table NAME", "describe rule ID", "describe plugin TYPE NAME | describe udf NAME | describe service NAME | describe schema TYPE NAME | describe script ID"],
    examples: ["floe describe stream demo", "floe describe rule r1"],
  },
  drop: {
    summary: "Delete a stream, table, rule, plugin, service, schema or script",
    forms: ["drop stream|table NAME", "drop rule ID", "drop plugin TYPE NAME | drop service NAME | drop schema TYPE NAME | drop script ID"],
    examples: ["floe drop rule r1", "floe drop stream demo"],
  },
  explain: {
    summary: "Explain the query plan of a rule, or a stream or table",
    forms: ["explain rule ID", "explain stream|table NAME"],
    examples: ["floe explain rule r1"],
  },
  show: {
    summary: "List streams, tables, rules, plugins, UDFs, services, schemas or scripts",
    forms: ["show streams | show tables | show rules", "show plugins TYPE | show udfs | show services | show service_funcs | show schemas TYPE | show scripts"],
    examples: ["floe show rules", "floe show streams"],
  },
  getstatus: {
    summary: "Print a rule's status and metrics, or the last import's status",
    forms: ["getstatus rule ID", "getstatus import"],
    examples: ["floe getstatus rule r1"],
  },
  gettopo: {
    summary: "Print a rule's topology (sources, operators, sinks and their edges)",
    forms: ["gettopo rule ID"],
    examples: ["floe gettopo rule r1"],
  },
  start: { summary: "Start a stopped rule", forms: ["start rule ID"], examples: ["floe start rule r1"] },
  stop: { summary: "Stop a running rule", forms: ["stop rule ID"], examples: ["floe stop rule r1"] },
  restart: { summary: "Restart a rule", forms: ["restart rule ID"], examples: ["floe restart rule r1"] },
  validate: {
    summary: "Check a rule against the server's streams without creating it",
    forms: ["validate rule ID 'JSON' | validate rule ID -f FILE"],
    examples: [`floe validate rule r1 '{"sql":"SELECT * FROM demo","actions":[{"log":{}}]}'`],
  },
  import: {
    summary: "Import a ruleset or a whole configuration",
    forms: ["import ruleset -f FILE", "import data -f FILE [-p true|false] [-s true|false]"],
    examples: ["floe import ruleset -f ruleset.json", "floe import data -f backup.json -s true"],
  },
  export: {
    summary: "Export the ruleset or the whole configuration to a file",
    forms: ["export ruleset FILE", "export data FILE [-r RULE,RULE]"],
    examples: ["floe export ruleset ruleset.json", "floe export data backup.json"],
  },
  register: {
    summary: "Register the functions of a function plugin",
    forms: ["register plugin function NAME 'JSON'"],
    examples: [`floe register plugin function myfuncs '{"functions":["f1","f2"]}'`],
  },
  query: {
    summary: "Interactive SQL: type a SELECT, see the results as they come (a temporary rule)",
    forms: ["query"],
    examples: ["floe query"],
  },
};

/** The citty description of verb `verb`: summary line, forms, examples, connection note. */
export function verbDescription(verb: string): string {
  const h = KUIPER_HELP[verb];
  if (!h) return `kuiper-compatible \`${verb}\``;
  return (
    `${h.summary}\n\n` +
    `Forms:\n${h.forms.map((f) => `  floe ${f}`).join("\n")}\n\n` +
    `Examples:\n${h.examples.map((e) => `  ${e}`).join("\n")}\n\n` +
    CONNECTION
  );
}
