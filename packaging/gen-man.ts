/** Writes floe(1) in roff on stdout, generated from the help text of every command (`make man`). */
import pkg from "../package.json" with { type: "json" };

const ROOT = new URL("..", import.meta.url).pathname;

function help(args: string[]): string {
  const p = Bun.spawnSync([process.execPath, `${ROOT}cli.ts`, ...args, "--help"], { env: { ...process.env, NO_COLOR: "1" } });
  return p.stdout.toString();
}

const esc = (s: string) => s.replace(/\\/g, "\\e").replace(/^([.'])/gm, "\\&$1").replace(/-/g, "\\-");

const top = help([]);
const commands = [...top.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((m) => m[1]!).filter((c) => c !== "help");
let out = `.TH FLOE 1 "" "floe ${pkg.version}" "User Commands"\n.SH NAME\nfloe \\- edge stream processing with eKuiper's SQL, rules and REST API\n`;
out += `.SH SYNOPSIS\n.B floe\n.I command\n[\\fIoptions\\fR]\n.SH DESCRIPTION\n.nf\n${esc(top)}\n.fi\n.SH COMMANDS\n`;
for (const c of commands) out += `.SS ${c}\n.nf\n${esc(help([c]))}\n.fi\n`;
out += `.SH ENVIRONMENT\n.TP\n.B KUIPER__SECTION__KEY\nany kuiper.yaml key (KUIPER__BASIC__RESTPORT=9082)\n.TP\n.B CLIENT__BASIC__PORT\nthe port the kuiper-style verbs connect to\n.TP\n.B NO_COLOR\nno colour in help\n.TP\n.B FLOE_DEBUG=1\nstack traces with errors\n`;
out += `.SH EXIT STATUS\n0 done; 1 failure; 2 bad usage; 3 records lost or rejected with \\-\\-strict.\n.SH SEE ALSO\nsystemd.service(5), https://ekuiper.org\n`;
process.stdout.write(out);
