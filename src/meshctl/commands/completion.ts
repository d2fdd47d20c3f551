import type { Argument, Command, Option } from 'commander';
import { Argument as CommanderArgument } from 'commander';
import type { CliContext, GlobalOptions, Writer } from '../cli-context.js';
import { UsageError, createCliContext } from '../cli-context.js';
import { KIND_TABLE } from '../kind-table.js';
import { collectionPath, findKind } from '../kinds.js';
import type { ListBody } from '../resource-table.js';
import { inspectSubjects, inspectTypes } from './inspect.js';

// Completion as cobra (kumactl) does it: the shell scripts are small and ask `meshctl __complete
// <words…>` for the words, so bash, zsh and fish share one completer that knows the command tree,
// the registry's kinds and, from the server, meshes and resource names.

/** The word `meshctl __complete` prints alone when the shell should complete file names. */
export const FILES = ':files';

/** The first argument of `meshctl` that asks for completions (not a command: handled before parsing). */
export const COMPLETE_COMMAND = '__complete';

/** How long a completion waits for the server before it offers nothing. */
const SERVER_WAIT_MS = 2000;

/** What the completer knows of the line: the command reached, its arguments and the flags given. */
interface Line {
  program: Command;
  command: Command;
  /** `config control-planes switch`; empty for the program. */
  path: string;
  args: string[];
  /** Values of the flags given, by long name (`--mesh`), short ones resolved. */
  flags: Map<string, string>;
  cli: CliContext;
}

/** The kind words `get` and the other kind arguments take: paths, aliases and kind names. */
function kindWords(stored = false): string[] {
  const kinds = KIND_TABLE.filter((k) => !stored || !k.derived);
  return [...new Set(kinds.flatMap((k) => [k.path, ...k.aliases, k.kind.toLowerCase()]))].sort();
}

/** Resolves after `ms` with `fallback`, or with `work` if it is first; never rejects. */
async function within<T>(work: Promise<T>, fallback: T, ms = SERVER_WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  try {
    return await Promise.race([work.catch(() => fallback), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Names of the items of a list, read from the server (`name=` narrows it to those containing `word`). */
async function namesOf(line: Line, path: string, word: string): Promise<string[]> {
  return within(
    (async () => {
      const api = await line.cli.api();
      const res = await api.request<ListBody>('GET', path, {
        query: { size: 1000, name: word || undefined },
      });
      return res.body.items.map((i) => String(i.name ?? ''));
    })(),
    [],
  );
}

const meshNames = (line: Line, word: string) => namesOf(line, '/meshes', word);

/** Names of the resources of the kind named by the first argument, in `--mesh` (default `default`). */
async function resourceNames(line: Line, word: string): Promise<string[]> {
  const kind = line.args[0] === undefined ? undefined : findKind(line.args[0]);
  if (!kind || kind.singleton) return [];
  if (
    line.path === 'inspect' &&
    !(kind.isPolicy || ['Dataplane', 'ZoneIngress', 'ZoneEgress'].includes(kind.kind))
  )
    return [];
  return namesOf(line, collectionPath(kind, line.flags.get('--mesh') ?? 'default'), word);
}

const contextNames = async (line: Line): Promise<string[]> =>
  (await within(line.cli.config(), undefined))?.contexts.map((c) => c.name) ?? [];
const controlPlaneNames = async (line: Line): Promise<string[]> =>
  (await within(line.cli.config(), undefined))?.controlPlanes.map((c) => c.name) ?? [];

type Words = string[] | typeof FILES;
type Completer = (line: Line, word: string) => Words | Promise<Words>;

/** Values of flags, by long name; a `path → completer` map where the same flag means another thing. */
const FLAG_VALUES: Record<string, Completer | Record<string, Completer>> = {
  '--output': (line) =>
    ['config view', 'revert'].includes(line.path) ? ['yaml', 'json'] : ['table', 'yaml', 'json'],
  '--mesh': meshNames,
  '--context': contextNames,
  '--name': {
    'config control-planes switch': contextNames,
    'config control-planes remove': controlPlaneNames,
  },
  '--file': () => FILES,
  '--config-file': () => FILES,
  '--ca-cert': () => FILES,
  '--kind': () => kindWords(true),
  '--type': (line) => inspectTypes(line.args[0] ?? ''),
  '--status': () => ['online', 'offline', 'partially_degraded'],
  '--proxy-type': () => ['dataplane', 'ingress', 'egress'],
  '--scope': () => ['cp', 'ingress', 'egress'],
};

/** Words of positional arguments, by the argument's name. */
const ARGUMENT_WORDS: Record<string, Completer> = {
  kind: (line) => kindWords(line.path !== 'get'),
  what: () => inspectSubjects(),
  name: resourceNames,
};

/** The words of one positional argument: its completer, else its choices. */
function argumentWords(arg: Argument | undefined, line: Line, word: string): Words | Promise<Words> {
  if (!arg) return [];
  const completer = ARGUMENT_WORDS[arg.name()];
  if (completer) return completer(line, word);
  return arg.argChoices ? [...arg.argChoices] : [];
}

/** The option of `cmd` (or a program option) that a flag word names. */
function optionOf(line: Pick<Line, 'command' | 'program'>, flag: string): Option | undefined {
  const find = (c: Command) => c.options.find((o) => o.long === flag || o.short === flag);
  return find(line.command) ?? find(line.program);
}

const takesValue = (o: Option): boolean => o.required;

/**
 * The words to offer for the last of `words` (the words after `meshctl`; the last is the one being
 * completed, maybe empty), or {@link FILES}. Walks the command tree as commander parses it: flags
 * that take a value skip the next word, a subcommand name before any argument descends.
 */
export async function completeWords(
  program: Command,
  words: readonly string[],
  deps: { env: NodeJS.ProcessEnv; stderr: Writer },
): Promise<Words> {
  const flags = new Map<string, string>();
  const line: Omit<Line, 'cli'> = { program, command: program, path: '', args: [], flags };
  let pending: Option | undefined;
  for (const w of words.slice(0, -1)) {
    if (pending) {
      flags.set(pending.long ?? pending.short ?? '', w);
      pending = undefined;
      continue;
    }
    if (w.startsWith('-') && w.length > 1) {
      const eq = w.startsWith('--') ? w.indexOf('=') : -1;
      const opt = optionOf(line, eq > 0 ? w.slice(0, eq) : w);
      if (opt && eq > 0) flags.set(opt.long ?? '', w.slice(eq + 1));
      else if (opt && takesValue(opt)) pending = opt;
      continue;
    }
    const sub = line.args.length === 0 ? line.command.commands.find((c) => c.name() === w) : undefined;
    if (sub) {
      line.command = sub;
      line.path = line.path ? `${line.path} ${w}` : w;
    } else {
      line.args.push(w);
    }
  }
  const globals: GlobalOptions = {
    configFile: flags.get('--config-file'),
    context: flags.get('--context'),
    apiAddress: flags.get('--api-address'),
    apiToken: flags.get('--api-token'),
  };
  const cli = createCliContext({
    globals: () => globals,
    env: deps.env,
    stdout: { write: () => undefined },
    stderr: deps.stderr,
  });
  const full: Line = { ...line, cli };
  const word = words.at(-1) ?? '';
  let found: Words;
  if (pending) {
    const entry = FLAG_VALUES[pending.long ?? ''];
    const completer = typeof entry === 'function' ? entry : entry?.[full.path];
    found = completer ? await completer(full, word) : [];
  } else if (word.startsWith('--') && word.includes('=')) {
    // `--flag=partial`: the flag's values, each with the `--flag=` typed before it.
    const eq = word.indexOf('=');
    const opt = optionOf(full, word.slice(0, eq));
    const entry = opt ? FLAG_VALUES[opt.long ?? ''] : undefined;
    const completer = typeof entry === 'function' ? entry : entry?.[full.path];
    const values = completer ? await completer(full, word.slice(eq + 1)) : [];
    found = values === FILES ? FILES : values.map((v) => `${word.slice(0, eq + 1)}${v}`);
  } else if (word.startsWith('-')) {
    const own = full.command.options.filter((o) => !o.hidden).map((o) => o.long ?? o.short ?? '');
    found = [...own, '--help'].filter((f) => f !== '');
  } else if (full.args.length === 0 && full.command.commands.length > 0) {
    found = full.command.commands.map((c) => c.name());
  } else {
    const declared = full.command.registeredArguments;
    const arg = declared[full.args.length] ?? (declared.at(-1)?.variadic ? declared.at(-1) : undefined);
    found = await argumentWords(arg, full, word);
  }
  return found === FILES ? FILES : [...new Set(found)].filter((w) => w.startsWith(word));
}

/** A bash completion script: each TAB runs `meshctl __complete` with the words of the line. */
export function bashCompletion(program: Command): string {
  const name = program.name();
  const fn = `_${name.replace(/[^A-Za-z0-9_]/g, '_')}_complete`;
  return `# ${name} completion for bash: source <(${name} completion bash)
${fn}() {
  local line="\${COMP_LINE:0:$COMP_POINT}" out keep drop c
  local -a words
  # The words as typed, split at blanks only: bash's own COMP_WORDS also splits at = and :, which
  # --mesh=x and URLs hold. No glob expands (set -f) in the words or in the answers.
  set -f
  words=($line)
  set +f
  [[ "$line" == *[[:blank:]] ]] && words+=("")
  local cur="\${line##*[[:blank:]]}"
  # The program as typed, asked for the words of this line (the current word included).
  out=$("\${words[0]}" ${COMPLETE_COMMAND} "\${words[@]:1}" 2>/dev/null) || return 0
  [[ -n "$out" ]] || return 0
  # bash replaces only the part of the word after its last = or : (COMP_WORDBREAKS): drop the rest.
  keep="$cur"
  for c in = :; do [[ "$COMP_WORDBREAKS" == *"$c"* ]] && keep="\${keep##*"$c"}"; done
  drop="\${cur:0:\${#cur}-\${#keep}}"
  local IFS=$'\\n'
  set -f
  if [[ "$out" == "${FILES}" ]]; then
    compopt -o filenames 2>/dev/null
    COMPREPLY=($(compgen -f -- "$keep"))
  else
    COMPREPLY=($out)
    [[ -n "$drop" ]] && COMPREPLY=("\${COMPREPLY[@]#"$drop"}")
  fi
  set +f
  return 0
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

/** A fish completion script: the same `meshctl __complete`, file names through fish's own. */
export function fishCompletion(program: Command): string {
  const name = program.name();
  const fn = `__${name.replace(/[^A-Za-z0-9_]/g, '_')}_complete`;
  return `# ${name} completion for fish: ${name} completion fish | source
function ${fn}
    set -l args (commandline -opc)
    set -l program $args[1]
    set -e args[1]
    set -l current (commandline -ct)
    set -l out ($program ${COMPLETE_COMMAND} $args $current 2>/dev/null)
    if test "$out" = "${FILES}"
        __fish_complete_path $current
        return
    end
    printf '%s\\n' $out
end
complete -c ${name} -f -a '(${fn})'
`;
}

const SCRIPTS: Record<string, (program: Command) => string> = {
  bash: bashCompletion,
  zsh: zshCompletion,
  fish: fishCompletion,
};

/** `meshctl completion bash|zsh|fish`: prints a completion script. */
export function registerCompletion(program: Command, cli: CliContext): void {
  program
    .command('completion')
    .description(
      'print a shell completion script: source <(meshctl completion bash), or … zsh; meshctl completion fish | source',
    )
    .addArgument(new CommanderArgument('<shell>', 'bash, zsh or fish').choices(Object.keys(SCRIPTS)))
    .action((shell: string) => {
      const script = SCRIPTS[shell];
      if (!script) throw new UsageError(`completion is for bash, zsh or fish, not "${shell}"`);
      cli.stdout.write(script(program));
    });
}

/** `meshctl __complete <words…>`: the words for the shell, one a line (see {@link completeWords}). */
export async function runComplete(
  program: Command,
  words: readonly string[],
  deps: { env: NodeJS.ProcessEnv; stdout: Writer; stderr: Writer },
): Promise<void> {
  const found = await completeWords(program, words.length === 0 ? [''] : words, deps);
  deps.stdout.write(found === FILES ? `${FILES}\n` : found.map((w) => `${w}\n`).join(''));
}
