/** Completion scripts for bash, zsh and fish from one table: each command's flags, the words after it, and flag values. */
export type Shell = "bash" | "zsh" | "fish";

export interface CommandCompletion {
  /** Flags, long (`--emit`) and short (`-C`). */
  readonly flags: string[];
  /** The words that may follow the command (`show` → `streams rules …`; `completion` → shells). Files when empty. */
  readonly words: string[];
  /** The values a flag takes (`--emit` → `rows array`; `-o` → `sendError= …`). */
  readonly values: Record<string, string[]>;
}

const q = (words: string[]) => words.join(" ");

function bash(table: Record<string, CommandCompletion>): string {
  const names = Object.keys(table);
  const valueCases = names.flatMap((n) => Object.entries(table[n]!.values).map(([f, v]) => `    "${n} ${f}") values="${q(v)}" ;;`)).join("\n");
  const cases = names.map((n) => `    ${n}) flags="${q(table[n]!.flags)}"; words="${q(table[n]!.words)}" ;;`).join("\n");
  return `# bash completion for floe (floe completion bash)
_floe() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} cmd=\${COMP_WORDS[1]} flags="" words="" values=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${q(names)} --help --version" -- "$cur"))
    return
  fi
  case "$cmd $prev" in
${valueCases}
  esac
  if [ -n "$values" ]; then
    # Option keys end in "=": the value follows without a space.
    [[ "$values" == *=* ]] && compopt -o nospace 2>/dev/null
    COMPREPLY=($(compgen -W "$values" -- "$cur"))
    return
  fi
  case "$cmd" in
${cases}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  elif [ -n "$words" ] && [ "$COMP_CWORD" -eq 2 ]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o filenames -F _floe floe
`;
}

function zsh(table: Record<string, CommandCompletion>): string {
  const names = Object.keys(table);
  const valueCases = names.flatMap((n) => Object.entries(table[n]!.values).map(([f, v]) => `    "${n} ${f}") compadd ${v.some((x) => x.endsWith("=")) ? "-S '' " : ""}-- ${q(v)}; return ;;`)).join("\n");
  const cases = names
    .map((n) => {
      const t = table[n]!;
      const words = t.words.length ? `(( CURRENT == 3 )) && { compadd -- ${q(t.words)}; return; }; ` : "";
      return `    ${n}) ${words}compadd -- ${q(t.flags)}; ${t.words.length ? "" : "_files "};;`;
    })
    .join("\n");
  return `#compdef floe
# zsh completion for floe (floe completion zsh)
_floe() {
  if (( CURRENT == 2 )); then
    compadd -- ${q(names)} --help --version
    return
  fi
  case "\${words[2]} \${words[CURRENT-1]}" in
${valueCases}
  esac
  case "\${words[2]}" in
${cases}
  esac
}
compdef _floe floe
`;
}

function fish(table: Record<string, CommandCompletion>): string {
  const names = Object.keys(table);
  const lines = ["# fish completion for floe (floe completion fish)", `complete -c floe -n __fish_use_subcommand -f -a "${q(names)}"`];
  for (const n of names) {
    const t = table[n]!;
    const when = `-n "__fish_seen_subcommand_from ${n}"`;
    if (t.words.length) lines.push(`complete -c floe ${when} -f -a "${q(t.words)}"`);
    for (const f of t.flags) {
      const opt = f.startsWith("--") ? `-l ${f.slice(2)}` : `-s ${f.slice(1)}`;
      const v = t.values[f];
      lines.push(`complete -c floe ${when} ${opt}${v ? ` -x -a "${q(v)}"` : ""}`);
    }
  }
  return lines.join("\n") + "\n";
}

export function completionScript(shell: Shell, table: Record<string, CommandCompletion>): string {
  return shell === "bash" ? bash(table) : shell === "zsh" ? zsh(table) : fish(table);
}
