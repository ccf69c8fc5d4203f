/** Stream and table verbs (config-and-cli.md §8.2): the command line itself is the SQL statement. */
import { existsSync, readFileSync } from "node:fs";
import { errorMessage, ok, type Client } from "./client.ts";

/** `create|show|describe|drop|explain stream|table …`; `argv` is the whole command line. */
export async function streamCommand(c: Client, argv: string[]): Promise<void> {
  const [verb, kind] = argv as [string, string];
  let sql = argv.join(" ");
  if (verb === "create" && argv[2] === "-f") {
    const file = argv[3] ?? "";
    c.note(`Creating a new ${kind} from file ${file}.\n`);
    if (!existsSync(file)) {
      c.usage(`The specified ${kind} defenition file ${file} is not existed.\n`);
      return;
    }
    let content: string;
    try {
      content = readFileSync(file, "utf8");
    } catch {
      c.fail(`Failed to read from ${kind} definition file ${file}.\n`);
      return;
    }
    sql = `CREATE ${kind.toUpperCase()}  ${content}`;
  }
  let json = false;
  if (verb === "describe" && argv[2] === "-json") {
    json = true;
    sql = [argv[0], argv[1], ...argv.slice(3)].join(" ");
  }
  const r = await c.call("POST", kind === "table" || kind === "tables" ? "/tables" : "/streams", { sql });
  if (!ok(r)) {
    c.fail(errorMessage(r) + "\n");
    return;
  }
  const text = htmlUnescape(r.text);
  if (json) {
    c.print(describeToJson(text) + "\n");
    return;
  }
  c.print(text.endsWith("\n") ? text + "\n" : text + "\n\n");
}

function htmlUnescape(s: string): string {
  return s.replace(/&lt;|&gt;|&amp;|&#39;|&#34;/g, (m) => ({ "&lt;": "<", "&gt;": ">", "&amp;": "&", "&#39;": "'", "&#34;": '"' })[m]!);
}

/** The `-json` conversion of the DESCRIBE text, with eKuiper's quirks (keys keep `:`, spaces dropped). */
function describeToJson(text: string): string {
  const parts = text.split("\n\n");
  if (parts.length < 2) return JSON.stringify({ Fields: null, Options: { "": "" } }, null, "\t");
  const fields = parts[0]!
    .split("\n")
    .slice(2)
    .filter((l) => l)
    .map((l) => {
      const [name, type, kw, dflt] = l.split("\t");
      const o: Record<string, string> = { Name: name!, Type: type! };
      if (kw === "DEFAULT") o.DefaultClause = dflt ?? "";
      return o;
    });
  const options: Record<string, string> = {};
  for (const l of parts[1]!.split("\n").filter((x) => x)) {
    const i = l.indexOf(" ");
    options[l.slice(0, i)] = l.slice(i + 1).replace(/ /g, "");
  }
  return JSON.stringify({ Fields: fields, Options: options }, null, "\t");
}
