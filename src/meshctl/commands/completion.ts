import type { Command } from 'commander';
import { Argument } from 'commander';
import type { CliContext } from '../cli-context.js';
import { UsageError } from '../cli-context.js';
import { KIND_TABLE } from '../kind-table.js';

/** What the shell may offer at one command path. */
interface CompletionNode {
  /** `get`, `config control-planes add`; empty for the program itself. */
  path: string;
  subcommands: string[];
  flags: string[];
  /** Flags that take a value (the next word is not a command or argument). */
  valueFlags: string[];
  /** Words for each positional argument, by position. */
  args: string[][];
}

/** Words for an argument: a kind argument offers the registry's kinds, others their choices. */
function argumentWords(name: string, choices: readonly string[] | undefined): string[] {
  // The collection path (plural) and the kind name (singular) of each kind; other spellings work too.
  if (name === 'kind') {
    return [...new Set(KIND_TABLE.flatMap((k) => [k.path, ...k.aliases, k.kind.toLowerCase()]))].sort();
  }
  return choices ? [...choices] : [];
}

/** The completion nodes of a command and everything under it. */
export function completionNodes(cmd: Command, path = '', inherited: string[] = []): CompletionNode[] {
  const own = cmd.options.filter((o) => !o.hidden);
  const valueFlags = [
    ...inherited,
    ...own
      .filter((o) => o.required || o.optional)
      .flatMap((o) => [o.long, o.short].filter(Boolean) as string[]),
  ];
  const subs = cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden);
  const node: CompletionNode = {
    path,
    subcommands: subs.map((c) => c.name()),
    flags: [...own.map((o) => o.long ?? o.short ?? ''), '--help'].filter((f) => f !== ''),
    valueFlags,
    args: cmd.registeredArguments.map((a) => argumentWords(a.name(), a.argChoices)),
  };
  // Program options (global flags) take their values anywhere.
  const passOn = path === '' ? valueFlags : inherited;
  return [node, ...subs.flatMap((c) => completionNodes(c, path ? `${path} ${c.name()}` : c.name(), passOn))];
}

/** A bash completion script for the program's command tree. */
export function bashCompletion(program: Command): string {
  const nodes = completionNodes(program);
  const quote = (words: string[]): string => words.join(' ');
  const cases = nodes.map((n) => {
    const positional = n.args
      .map((words, i) => `        ${i}) words="${quote(words)}" ;;`)
      .concat([`        *) words="" ;;`]);
    return [
      `    "${n.path}")`,
      `      valueflags=" ${quote(n.valueFlags)} "`,
      `      flags="${quote(n.flags)}"`,
      `      subcommands="${quote(n.subcommands)}"`,
      `      case "$npos" in`,
      ...positional,
      `      esac ;;`,
    ].join('\n');
  });
  const name = program.name();
  const fn = `_${name.replace(/[^A-Za-z0-9_]/g, '_')}_complete`;
  return `# ${name} completion for bash: source <(${name} completion bash)
${fn}_node() {
  valueflags=""; flags=""; subcommands=""; words=""
  case "$1" in
${cases.join('\n')}
    *) return 1 ;;
  esac
}

${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" npos=0 skip=0 i w
  local valueflags flags subcommands words
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    if ((skip)); then skip=0; continue; fi
    ${fn}_node "$path" "$npos"
    case "$w" in
      -*) [[ "$valueflags" == *" $w "* ]] && skip=1; continue ;;
    esac
    if [[ " $subcommands " == *" $w "* && $npos -eq 0 ]]; then
      path="\${path:+$path }$w"
    else
      npos=$((npos + 1))
    fi
  done
  ${fn}_node "$path" "$npos" || return 0
  # The word is the value of a flag: let the shell complete file names.
  if ((skip)); then COMPREPLY=($(compgen -f -- "$cur")); return 0; fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  elif ((npos == 0)) && [[ -n "$subcommands" ]]; then
    COMPREPLY=($(compgen -W "$subcommands" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  fi
}
complete -F ${fn} ${name}
`;
}

/** A zsh completion script: zsh's bash compatibility runs the bash one. */
export function zshCompletion(program: Command): string {
  return `#compdef ${program.name()}
# ${program.name()} completion for zsh: source <(${program.name()} completion zsh)
autoload -U +X bashcompinit && bashcompinit
${bashCompletion(program)}`;
}

/** `meshctl completion bash|zsh`: prints a completion script made from the command tree. */
export function registerCompletion(program: Command, cli: CliContext): void {
  program
    .command('completion')
    .description('print a shell completion script (bash or zsh): source <(meshctl completion bash)')
    .addArgument(new Argument('<shell>', 'bash or zsh').choices(['bash', 'zsh']))
    .action((shell: string) => {
      if (shell === 'bash') cli.stdout.write(bashCompletion(program));
      else if (shell === 'zsh') cli.stdout.write(zshCompletion(program));
      else throw new UsageError(`completion is for bash or zsh, not "${shell}"`);
    });
}
