/** The kuiper verbs, in the order `floe --help` lists them. Its own file so that naming them loads no client code. */
export const KUIPER_VERBS = ["create", "describe", "drop", "explain", "show", "getstatus", "gettopo", "start", "stop", "restart", "validate", "import", "export", "register", "query"];

/** What each verb acts on (the word after it), for shell completion. */
export const VERB_OBJECTS: Record<string, string[]> = {
  create: ["stream", "table", "rule", "plugin", "service", "schema", "script"],
  describe: ["stream", "table", "rule", "plugin", "udf", "service", "service_func", "schema", "script"],
  drop: ["stream", "table", "rule", "plugin", "service", "schema", "script"],
  explain: ["rule", "stream", "table"],
  show: ["streams", "tables", "rules", "plugins", "udfs", "services", "service_funcs", "schemas", "scripts"],
  getstatus: ["rule", "import"],
  gettopo: ["rule"],
  start: ["rule"],
  stop: ["rule"],
  restart: ["rule"],
  validate: ["rule"],
  import: ["ruleset", "data"],
  export: ["ruleset", "data"],
  register: ["plugin"],
  query: [],
};
