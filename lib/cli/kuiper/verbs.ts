/** The kuiper verbs, in the order `floe --help` lists them. Its own file so that naming them loads no client code. */
export const KUIPER_VERBS = ["create", "describe", "drop", "explain", "show", "getstatus", "gettopo", "start", "stop", "restart", "validate", "import", "export", "register", "query"];
