/**
 * The completion scripts for bash, zsh and fish, rendered from the program's description (model.ts). They are
 * static text plus one callback, `plat __complete <kind>`, for values only this machine knows (profiles, scopes
 * from the cached metadata, paths from the cached API description). `completions/` holds the rendered files.
 */
import { valueFlags, type ArgumentSpec, type CommandSpec, type OptionSpec, type ProgramSpec, type Values } from './model.js';

export type Shell = 'bash' | 'zsh' | 'fish';

export function renderScript(program: ProgramSpec, shell: Shell): string {
  switch (shell) {
    case 'bash':
      return renderBash(program);
    case 'zsh':
      return renderZsh(program);
    case 'fish':
      return renderFish(program);
  }
}

const flagsOf = (o: OptionSpec) => [o.short, o.long].filter((f): f is string => Boolean(f));
/** Our own words (commands, flags, methods): checked, so nothing below needs quoting beyond this. */
const PLAIN = /^[A-Za-z0-9_.:,=/-]+$/;
function plain(word: string): string {
  if (!PLAIN.test(word)) throw new Error(`completion: "${word}" cannot go into a script unquoted`);
  return word;
}
const single = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

function header(shell: Shell, comment: string, use: string[]): string {
  return [
    `${comment} ${shell} completion for plat. Generated from plat's command definitions by`,
    `${comment} \`plat completion ${shell}\` (npm run build keeps completions/ in sync); do not edit.`,
    ...use.map((line) => `${comment} ${line}`),
    '',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------------- bash

function bashValueCase(program: ProgramSpec): string {
  const lines: string[] = [];
  const add = (pattern: string, values: Values) => {
    const kind =
      values.type === 'dynamic'
        ? `d ${values.kind}`
        : values.type === 'list'
          ? `l ${values.items.map(plain).join(' ')}`
          : values.type === 'files'
            ? 'f'
            : values.type === 'command-line'
              ? 'c'
              : '';
    if (kind) lines.push(`    ${pattern}) echo ${single(kind)} ;;`);
  };
  for (const o of program.globalOptions) if (o.takesValue) add(flagsOf(o).map((f) => `*:${plain(f)}`).join('|'), o.values);
  for (const c of program.commands) {
    for (const o of c.options) if (o.takesValue) add(flagsOf(o).map((f) => `${plain(c.name)}:${plain(f)}`).join('|'), o.values);
    c.args.forEach((a, i) => add(a.variadic ? `${plain(c.name)}:arg:*` : `${plain(c.name)}:arg:${i}`, a.values));
  }
  return lines.join('\n');
}

function renderBash(program: ProgramSpec): string {
  const globalValueFlags = valueFlags(program.globalOptions).map(plain);
  const takesValue = program.commands
    .filter((c) => valueFlags(c.options).length > 0)
    .map((c) => {
      // An operation's parameter (--<name> value) takes a value; plat's own boolean options do not.
      const booleans = c.options.filter((o) => !o.takesValue).flatMap(flagsOf).map(plain);
      const params = c.operationParams ? ` ${booleans.join('|')}) return 1 ;; --*) return 0 ;;` : '';
      return `    ${plain(c.name)}) case $2 in ${valueFlags(c.options).map(plain).join('|')}) return 0 ;;${params} esac ;;`;
    })
    .join('\n');
  const opCommands = program.commands.filter((c) => c.operationParams).map((c) => plain(c.name));
  const options = program.commands
    .map((c) => `    ${plain(c.name)}) echo ${single(c.options.flatMap(flagsOf).map(plain).join(' '))} ;;`)
    .join('\n');
  const commands = program.commands.map((c) => plain(c.name)).join(' ');
  return `${header('bash', '#', [
    'Use: source <(plat completion bash)   (in ~/.bashrc), or save it as',
    '     ~/.local/share/bash-completion/completions/plat',
  ])}
# Whether option $2 of command $1 takes a value (the next word).
__plat_takes_value() {
  case $2 in ${globalValueFlags.join('|')}) return 0 ;; esac
  case $1 in
${takesValue}
  esac
  return 1
}

# What the value of option $2 (or argument arg:<n>) of command $1 is: "d <kind>" ask plat, "l <words>" a list,
# "f" file names, "c" a command line of its own; nothing: no completion.
__plat_value_kind() {
  case $1:$2 in
${bashValueCase(program)}
  esac
}

__plat_options() {
  echo ${single(program.globalOptions.flatMap(flagsOf).map(plain).join(' '))}
  case $1 in
${options}
  esac
}

# Adds the candidates on stdin (value, then a tab and a description) that start with $cur.
__plat_add() {
  local c
  while IFS= read -r c; do
    c=\${c%%$'\\t'*}
    [[ -n $c && $c == "$cur"* ]] && COMPREPLY+=("$c")
  done
}

# Values of kind $1 ("d <kind>", "l <words>", "f").
__plat_add_values() {
  local kind=$1 w
  case $kind in
    d\\ *) __plat_add < <("$plat" __complete "\${kind#d }" "\${globals[@]}" 2>/dev/null) ;;
    l\\ *) for w in \${kind#l }; do [[ $w == "$cur"* ]] && COMPREPLY+=("$w"); done ;;
    f)
      compopt -o filenames 2>/dev/null
      __plat_add < <(compgen -f -- "$cur")
      ;;
    c) __plat_add < <(compgen -c -- "$cur") ;;
  esac
}

# After plat exec --: a command line of its own, completed as bash completes one after sudo (bash-completion's
# _command_offset: the program's name, then its own completion; without bash-completion, file names).
__plat_command_line() {
  local start=$1
  if declare -F _command_offset >/dev/null; then
    _command_offset "$start"
  elif ((COMP_CWORD == start)); then
    __plat_add < <(compgen -c -- "$cur")
  else
    compopt -o filenames 2>/dev/null
    __plat_add < <(compgen -f -- "$cur")
  fi
}

_plat() {
  COMPREPLY=()
  # bash splits words at ':' and '=' (COMP_WORDBREAKS), which scopes and --opt=value contain: join them again.
  local -a words=()
  local line=$COMP_LINE i w gap cword=0 last
  for ((i = 0; i < \${#COMP_WORDS[@]} && i <= COMP_CWORD; i++)); do
    w=\${COMP_WORDS[i]}
    gap=\${line%%[![:space:]]*}
    line=\${line#"$gap"}
    line=\${line#"$w"}
    last=
    ((\${#words[@]})) && last=\${words[\${#words[@]}-1]}
    if ((i > 0)) && [[ -z $gap ]] && [[ $w == [:=]* || $last == *[:=] ]]; then
      words[\${#words[@]}-1]+=$w
    else
      words+=("$w")
    fi
  done
  cword=$((\${#words[@]} - 1))
  local cur=\${words[cword]} prev=
  ((cword > 0)) && prev=\${words[cword - 1]}

  local plat=\${COMP_WORDS[0]}
  type -P -- "$plat" &>/dev/null || plat=plat
  local cmd= nargs=0 skip= first=
  local -a globals=()
  for ((i = 1; i < cword; i++)); do
    w=\${words[i]}
    if [[ -n $skip ]]; then skip=; continue; fi
    case $w in
      --profile | --base-url) ((i + 1 < cword)) && globals+=("$w" "\${words[i + 1]}") ;;
      --profile=* | --base-url=*) globals+=("$w") ;;
    esac
    case $w in
      --*=*) ;;
      -?*) __plat_takes_value "$cmd" "$w" && skip=1 ;;
      *) if [[ -z $cmd ]]; then cmd=$w; else ((nargs++ == 0)) && first=$w; fi ;;
    esac
  done
  # After an operationId, its parameters: --<name> flags and their values, from plat's cache.
  local opid=
  case $cmd in ${opCommands.length > 0 ? opCommands.join('|') : '__none__'}) opid=$first ;; esac

  # plat exec -- <command> [args…]: the words after -- are another program's.
  if [[ -n $cmd && $(__plat_value_kind "$cmd" "arg:*") == c ]]; then
    for ((i = 1; i < COMP_CWORD; i++)); do
      if [[ \${COMP_WORDS[i]} == -- ]]; then
        __plat_command_line $((i + 1))
        return 0
      fi
    done
  fi

  local word=$cur
  if [[ -n $skip ]]; then
    local kind
    kind=$(__plat_value_kind "$cmd" "$prev")
    if [[ -z $kind && -n $opid && $prev == --* ]]; then
      __plat_add < <("$plat" __complete op-values "$opid" "\${prev#--}" "\${globals[@]}" 2>/dev/null)
    else
      __plat_add_values "$kind"
    fi
  elif [[ $cur == --*=* ]]; then
    local flag=\${cur%%=*}
    cur=\${cur#*=}
    __plat_add_values "$(__plat_value_kind "$cmd" "$flag")"
    ((\${#COMPREPLY[@]})) && COMPREPLY=("\${COMPREPLY[@]/#/$flag=}")
  elif [[ $cur == -* ]]; then
    __plat_add < <(__plat_options "$cmd" | tr ' ' '\\n')
    [[ -n $opid ]] && __plat_add < <("$plat" __complete op-flags "$opid" "\${globals[@]}" 2>/dev/null)
  elif [[ -z $cmd ]]; then
    __plat_add_values ${single(`l ${commands}`)}
  elif [[ -n $opid && $prev == --* ]]; then
    # a parameter named like one of plat's flag options (--include): the parameter's values
    __plat_add < <("$plat" __complete op-values "$opid" "\${prev#--}" "\${globals[@]}" 2>/dev/null)
  else
    local kind
    kind=$(__plat_value_kind "$cmd" "arg:$nargs")
    [[ -z $kind ]] && kind=$(__plat_value_kind "$cmd" "arg:*")
    __plat_add_values "$kind"
  fi

  # Readline replaces only the text after the last word-break character: hand it just that part.
  local breaks=
  [[ $COMP_WORDBREAKS == *:* ]] && breaks+=:
  [[ $COMP_WORDBREAKS == *=* ]] && breaks+==
  if [[ -n $breaks && $word == *[$breaks]* ]]; then
    local prefix=\${word%"\${word##*[$breaks]}"}
    COMPREPLY=("\${COMPREPLY[@]#"$prefix"}")
  fi
  return 0
}

complete -F _plat plat
`;
}

// ----------------------------------------------------------------------------------------------------- zsh

/** Text inside an _arguments `[…]` explanation or a message, then single-quoted for the shell. */
const zshExplain = (text: string) => text.replace(/\\/g, '\\\\').replace(/([[\]:])/g, '\\$1');

function zshAction(values: Values, message: string): string {
  const m = zshExplain(message);
  switch (values.type) {
    case 'dynamic':
      return `:${m}:__plat_dynamic ${values.kind}`;
    case 'list':
      return `:${m}:(${values.items.map(plain).join(' ')})`;
    case 'files':
      return `:${m}:_files`;
    case 'command-line':
      return `:${m}:_command_names -e`;
    default:
      return `:${m}: `;
  }
}

function zshOption(o: OptionSpec): string {
  const flags = flagsOf(o).map(plain);
  const suffix = (f: string) => (o.takesValue ? (f.startsWith('--') ? '=' : '+') : '');
  const explain = `[${zshExplain(o.description)}]`;
  const action = o.takesValue ? zshAction(o.values, o.valueName ?? 'value') : '';
  const rest = single(`${explain}${action}`);
  if (flags.length === 1) return `${single(`${o.repeatable ? '*' : ''}${flags[0]}${suffix(flags[0]!)}`)}${rest}`;
  const exclusion = o.repeatable ? "'*'" : single(`(${flags.join(' ')})`);
  return `${exclusion}{${flags.map((f) => `${f}${suffix(f)}`).join(',')}}${rest}`;
}

function zshArgument(a: ArgumentSpec): string {
  // A command line of its own (plat exec -- …): zsh's _normal completes it as after sudo, on the words after --.
  if (a.values.type === 'command-line') return single(`*::${zshExplain(a.name)}:__plat_command_line`);
  const colons = a.variadic ? '*:' : a.required ? ':' : '::';
  return single(`${colons}${zshAction(a.values, a.name).slice(1)}`);
}

function renderZsh(program: ProgramSpec): string {
  const globals = program.globalOptions.map((o) => `    ${zshOption(o)}`).join('\n');
  const commands = program.commands.map((c) => `    ${single(`${plain(c.name)}:${c.description}`)}`).join('\n');
  const cases = program.commands
    .map((c) => {
      const specs = [...c.options.filter((o) => o.long !== '--help').map(zshOption), ...c.args.map(zshArgument)];
      // After an operationId: its parameters and their values, besides what _arguments knows.
      const booleans = c.options.filter((o) => !o.takesValue).flatMap(flagsOf).map(plain);
      const params = c.operationParams ? `\n          __plat_op_params ${valueFlags(c.options).map(plain).join(' ')} -- ${booleans.join(' ')} && ret=0` : '';
      return `        ${plain(c.name)})${params}\n          _arguments -S "\${__plat_globals[@]}"${specs.map((s) => ` \\\n            ${s}`).join('')} && ret=0\n          ;;`;
    })
    .join('\n');
  return `#compdef plat
${header('zsh', '#', [
    'Use: plat completion zsh > "${fpath[1]}/_plat"   (then start a new shell), or, after compinit,',
    '     source <(plat completion zsh)',
  ])}
# Values only this machine knows, from \`plat __complete <kind>\` (profiles, cached scopes and API paths).
# _arguments puts its compadd options before our kind, the last argument; they go on to _describe.
__plat_dynamic() {
  local kind=\${@[-1]} line value
  set -- "\${@[1,-2]}"
  local -a items
  for line in "\${(@f)$($_plat_command __complete $kind "\${_plat_context[@]}" 2>/dev/null)}"; do
    [[ -z $line ]] && continue
    value=\${line%%$'\\t'*}
    if [[ $line == *$'\\t'* ]]; then
      items+=("\${value//:/\\\\:}:\${line#*$'\\t'}")
    else
      items+=("\${value//:/\\\\:}")
    fi
  done
  _describe -t $kind $kind items "$@"
}

# plat op <operationId> …: the operation's --<name> flags (a word starting with -), or the values of the parameter
# before the cursor (its enum), from \`plat __complete op-flags|op-values\`. Arguments: plat's value-taking options,
# --, its boolean ones (an unknown --<name> before the operationId is taken to have a value).
__plat_op_params() {
  local -a boolean_flags=("\${(@)argv[\${argv[(i)--]}+1,-1]}")
  local i w id= skip=
  for ((i = 2; i < CURRENT; i++)); do
    w=$words[i]
    if [[ -n $skip ]]; then skip=; continue; fi
    case $w in
      --*=*) ;;
      -*) (( $boolean_flags[(Ie)$w] )) || skip=1 ;;
      *) id=$w; break ;;
    esac
  done
  [[ -n $id ]] || return 1
  local -a items
  local line value
  if [[ $PREFIX == -* ]]; then
    for line in "\${(@f)$($_plat_command __complete op-flags $id "\${_plat_context[@]}" 2>/dev/null)}"; do
      [[ -z $line ]] && continue
      value=\${line%%$'\\t'*}
      items+=("\${value//:/\\\\:}:\${line#*$'\\t'}")
    done
    (( $#items )) && _describe -t parameters parameter items
  elif [[ $words[CURRENT-1] == --* ]]; then
    for line in "\${(@f)$($_plat_command __complete op-values $id \${words[CURRENT-1]#--} "\${_plat_context[@]}" 2>/dev/null)}"; do
      [[ -n $line ]] && items+=("\${line%%$'\\t'*}")
    done
    (( $#items )) && compadd -a items
  else
    return 1
  fi
}

# plat exec -- <command> [args…]: the words after -- are a command line of its own, completed as after sudo.
__plat_command_line() {
  if [[ $words[1] == -- ]]; then
    shift words
    (( CURRENT-- ))
  fi
  _normal
}

_plat() {
  local curcontext=$curcontext state state_descr line ret=1
  typeset -A opt_args
  local _plat_command=\${words[1]}
  (( $+commands[$_plat_command] )) || [[ -x $_plat_command ]] || _plat_command=plat
  # --profile and --base-url choose where plat looks for scopes and paths: pass them on.
  local -a _plat_context
  local i
  for ((i = 2; i < CURRENT; i++)); do
    case $words[i] in
      --profile|--base-url) (( i + 1 < CURRENT )) && _plat_context+=($words[i] $words[i+1]) ;;
      --profile=*|--base-url=*) _plat_context+=($words[i]) ;;
    esac
  done
  local -a __plat_globals=(
${globals}
  )
  _arguments -C -S "\${__plat_globals[@]}" \\
    '(-): :->command' \\
    '(-)*:: :->args' && ret=0
  case $state in
    command)
      local -a commands=(
${commands}
      )
      _describe -t commands 'plat command' commands && ret=0
      ;;
    args)
      curcontext=\${curcontext%:*:*}:plat-$words[1]:
      case $words[1] in
${cases}
      esac
      ;;
  esac
  return ret
}

if [[ \${zsh_eval_context[-1]} == loadautofunc ]]; then
  _plat "$@"
else
  compdef _plat plat
fi
`;
}

// ---------------------------------------------------------------------------------------------------- fish

const fishQuote = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function fishValues(values: Values): string {
  switch (values.type) {
    case 'dynamic':
      return ` -x -a ${fishQuote(`(__plat_query ${values.kind})`)}`;
    case 'list':
      return ` -x -a ${fishQuote(values.items.map(plain).join(' '))}`;
    case 'files':
      return ' -r -F';
    case 'command-line':
      return ` -x -a ${fishQuote('(__fish_complete_command)')}`;
    default:
      return ' -x';
  }
}

function fishOption(o: OptionSpec, condition: string | undefined): string {
  const parts = ['complete -c plat'];
  if (condition) parts.push(`-n ${fishQuote(condition)}`);
  if (o.short) parts.push(`-s ${plain(o.short.slice(1))}`);
  if (o.long) parts.push(`-l ${plain(o.long.slice(2))}`);
  parts.push(`-d ${fishQuote(o.description)}`);
  return parts.join(' ') + (o.takesValue ? fishValues(o.values) : '');
}

function fishCommand(c: CommandSpec): string[] {
  const name = plain(c.name);
  const lines = [`complete -c plat -n __plat_needs_command -a ${name} -d ${fishQuote(c.description)}`];
  for (const o of c.options) if (o.long !== '--help') lines.push(fishOption(o, `__plat_using ${name}`));
  c.args.forEach((a, i) => {
    if (a.values.type === 'none') return;
    if (a.values.type === 'command-line') {
      lines.push(`complete -c plat -n ${fishQuote(`__plat_using ${name}`)} -x -a '(__plat_command_line)'`);
      return;
    }
    const condition = a.variadic ? `__plat_using ${name}` : `__plat_arg ${name} ${i}`;
    lines.push(`complete -c plat -n ${fishQuote(condition)}${fishValues(a.values)} -d ${fishQuote(a.description)}`);
  });
  return lines;
}

function renderFish(program: ProgramSpec): string {
  const takesValue = program.commands
    .filter((c) => valueFlags(c.options).length > 0)
    .map((c) => {
      const line = `        case ${plain(c.name)}\n            contains -- $argv[2] ${valueFlags(c.options).map(plain).join(' ')}; and return 0`;
      if (!c.operationParams) return line;
      // An operation's parameter (--<name> value) takes a value; plat's own boolean options do not.
      const booleans = c.options.filter((o) => !o.takesValue).flatMap(flagsOf).map(plain);
      return `${line}\n            contains -- $argv[2] ${booleans.join(' ')}; and return 1\n            string match -q -- '--*' $argv[2]; and return 0`;
    })
    .join('\n');
  const opCommands = program.commands.filter((c) => c.operationParams).map((c) => plain(c.name));
  return `${header('fish', '#', ['Use: plat completion fish > ~/.config/fish/completions/plat.fish'])}
# Whether option $argv[2] of command $argv[1] takes a value (the next word).
function __plat_takes_value
    contains -- $argv[2] ${valueFlags(program.globalOptions).map(plain).join(' ')}; and return 0
    switch $argv[1]
${takesValue}
    end
    return 1
end

# Prints the command (or "(none)" before one) and how many of its arguments precede the cursor.
function __plat_state
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l cmd '(none)'
    set -l nargs 0
    set -l skip 0
    set -l first ''
    for t in $tokens
        if test $skip -eq 1
            set skip 0
        else if string match -qr -- '^--.*=' $t
            continue
        else if string match -qr -- '^-.' $t
            __plat_takes_value $cmd $t; and set skip 1
        else if test "$cmd" = '(none)'
            set cmd $t
        else
            test $nargs -eq 0; and set first $t
            set nargs (math $nargs + 1)
        end
    end
    echo $cmd
    echo $nargs
    echo $first
end

function __plat_needs_command
    set -l state (__plat_state)
    test "$state[1]" = '(none)'
end

function __plat_using
    set -l state (__plat_state)
    test "$state[1]" = $argv[1]
end

function __plat_arg
    set -l state (__plat_state)
    test "$state[1]" = $argv[1]; and test "$state[2]" = $argv[2]
end

# Values only this machine knows, from \`plat __complete <kind>\`; --profile and --base-url are passed on.
function __plat_query
    set -l tokens (commandline -opc)
    set -l context
    for i in (seq 2 (count $tokens))
        switch $tokens[$i]
            case --profile --base-url
                set -l next (math $i + 1)
                test $next -le (count $tokens); and set context $context $tokens[$i] $tokens[$next]
            case '--profile=*' '--base-url=*'
                set context $context $tokens[$i]
        end
    end
    set -l plat $tokens[1]
    command -q $plat; or set plat plat
    $plat __complete $argv $context 2>/dev/null
end

# The operationId when the cursor is among an operation's parameters (plat op <operationId> …).
function __plat_opid
    set -l state (__plat_state)
    contains -- "$state[1]" ${opCommands.length > 0 ? opCommands.join(' ') : '__none__'}; or return 1
    test "$state[2]" -ge 1; or return 1
    echo $state[3]
end

# The operation's --<name> flags, for a word that starts with -.
function __plat_op_flags
    string match -q -- '-*' (commandline -ct); or return
    set -l id (__plat_opid); or return
    __plat_query op-flags $id
end

# The values of the parameter before the cursor (its enum).
function __plat_op_values
    set -l id (__plat_opid); or return
    set -l prev (commandline -opc)[-1]
    string match -q -- '--*' $prev; or return
    __plat_query op-values $id (string replace -r -- '^--' '' $prev)
end

# plat exec -- <command> [args…]: the words after -- are a command line of its own, completed as after sudo.
function __plat_command_line
    set -l tokens (commandline -opc) (commandline -ct)
    set -l at (contains -i -- -- $tokens); or return
    test $at -lt (count $tokens); or return
    __fish_complete_subcommand --commandline $tokens[(math $at + 1)..-1]
end

complete -c plat -f
${program.commands.flatMap(fishCommand).join('\n')}
complete -c plat -n '__plat_opid >/dev/null' -a '(__plat_op_flags)'
complete -c plat -n '__plat_opid >/dev/null' -a '(__plat_op_values)'
${program.globalOptions.map((o) => fishOption(o, undefined)).join('\n')}
`;
}
