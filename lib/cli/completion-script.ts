/** Completion scripts for bash, zsh and fish from a table of commands and their flags. */
export type Shell = "bash" | "zsh" | "fish";

export function completionScript(shell: Shell, commands: Record<string, string[]>): string {
  const names = Object.keys(commands);
  if (shell === "bash") {
    const cases = names.map((n) => `    ${n}) words="${commands[n]!.join(" ")}" ;;`).join("\n");
    return `# bash completion for floe (floe completion bash)
_floe() {
  local cur=\${COMP_WORDS[COMP_CWORD]} words
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${names.join(" ")} --help --version" -- "$cur"))
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases}
    *) words="" ;;
  esac
  if [[ "$cur" == -* || "\${COMP_WORDS[1]}" == completion || "\${COMP_WORDS[1]}" == help ]]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o filenames -F _floe floe
`;
  }
  if (shell === "zsh") {
    const cases = names.map((n) => `    ${n}) compadd -- ${commands[n]!.join(" ")}; _files ;;`).join("\n");
    return `#compdef floe
# zsh completion for floe (floe completion zsh)
_floe() {
  if (( CURRENT == 2 )); then
    compadd -- ${names.join(" ")} --help --version
    return
  fi
  case "\${words[2]}" in
${cases}
  esac
}
compdef _floe floe
`;
  }
  const lines = ["# fish completion for floe (floe completion fish)", `complete -c floe -n __fish_use_subcommand -f -a "${names.join(" ")}"`];
  for (const n of names)
    for (const f of commands[n]!)
      lines.push(f.startsWith("--") ? `complete -c floe -n "__fish_seen_subcommand_from ${n}" -l ${f.slice(2)}` : `complete -c floe -n "__fish_seen_subcommand_from ${n}" -f -a ${f}`);
  return lines.join("\n") + "\n";
}
