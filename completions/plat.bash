# bash completion for plat. Generated from plat's command definitions by
# `plat completion bash` (npm run build keeps completions/ in sync); do not edit.
# Use: source <(plat completion bash)   (in ~/.bashrc), or save it as
#      ~/.local/share/bash-completion/completions/plat

# Whether option $2 of command $1 takes a value (the next word).
__plat_takes_value() {
  case $2 in --base-url|--profile) return 0 ;; esac
  case $1 in
    login) case $2 in --scope|--add-scope|--port|--resource|--resource-metadata|--client-id|--client-metadata-url|--timeout|--for) return 0 ;; esac ;;
    token) case $2 in --min-ttl|--dpop-proof|--dpop-nonce) return 0 ;; esac ;;
    exec) case $2 in --env|--min-ttl) return 0 ;; esac ;;
    call) case $2 in --header|-H|--field|-f|--typed-field|-F|--input|--timeout|--retry|--max-pages|--max-items|--items|--next|--jq) return 0 ;; esac ;;
    api) case $2 in --method|-X|--jq|-q|--header|-H|--field|-f|--typed-field|-F|--input|--timeout|--retry|--max-pages|--max-items|--items|--next) return 0 ;; esac ;;
    op) case $2 in --param|-p|--header|-H|--field|-f|--typed-field|-F|--input|--timeout|--retry|--max-pages|--max-items|--items|--next|--jq) return 0 ;; --refresh|-i|--include|--anonymous|--paginate|--ndjson|--slurp|-h|--help) return 1 ;; --*) return 0 ;; esac ;;
    batch) case $2 in --concurrency|--rate|--journal|--settle-unknown|--failed|--jq) return 0 ;; esac ;;
    mcp) case $2 in --for|--concurrency) return 0 ;; esac ;;
    proxy) case $2 in --port|--socket) return 0 ;; esac ;;
  esac
  return 1
}

# What the value of option $2 (or argument arg:<n>) of command $1 is: "d <kind>" ask plat, "l <words>" a list,
# "f" file names, "c" a command line of its own; nothing: no completion.
__plat_value_kind() {
  case $1:$2 in
    *:--base-url) echo 'd base-urls' ;;
    *:--profile) echo 'd profiles' ;;
    login:--scope) echo 'd scopes' ;;
    login:--add-scope) echo 'd scopes' ;;
    login:--for) echo 'd operations' ;;
    status:arg:0) echo 'd profiles' ;;
    switch:arg:0) echo 'd profiles' ;;
    exec:arg:*) echo 'c' ;;
    call:--input) echo 'f' ;;
    call:arg:0) echo 'l GET POST PUT PATCH DELETE HEAD OPTIONS' ;;
    call:arg:1) echo 'd paths' ;;
    api:-X|api:--method) echo 'l GET POST PUT PATCH DELETE HEAD OPTIONS' ;;
    api:--input) echo 'f' ;;
    api:arg:0) echo 'd paths' ;;
    op:--input) echo 'f' ;;
    op:arg:0) echo 'd operations' ;;
    scopes:arg:*) echo 'd operations' ;;
    batch:--journal) echo 'f' ;;
    batch:--settle-unknown) echo 'l done failed' ;;
    batch:--failed) echo 'f' ;;
    batch:arg:0) echo 'f' ;;
    mcp:--for) echo 'd operations' ;;
    proxy:--socket) echo 'f' ;;
    completion:arg:0) echo 'l bash zsh fish' ;;
    help:arg:0) echo 'l login whoami status switch refresh token exec logout call api op scopes batch discover mcp proxy completion sign-in sessions requests scripting agents security environment files exit-codes troubleshooting' ;;
  esac
}

__plat_options() {
  echo '--version --base-url --profile --json --verbose --no-color --no-prompt -h --help'
  case $1 in
    login) echo '--scope --add-scope --device --no-browser --port --resource --resource-metadata --client-id --client-secret-stdin --client-metadata-url --timeout --no-dpop --for -h --help' ;;
    whoami) echo '-h --help' ;;
    status) echo '--check -h --help' ;;
    switch) echo '-h --help' ;;
    refresh) echo '-h --help' ;;
    token) echo '--min-ttl --dpop-bound --dpop-proof --dpop-nonce -h --help' ;;
    exec) echo '--env --proxy --min-ttl -h --help' ;;
    logout) echo '--no-revoke --all --forget -h --help' ;;
    call) echo '-H --header -f --field -F --typed-field --input -i --include --anonymous --timeout --retry --paginate --ndjson --slurp --max-pages --max-items --items --next --jq -h --help' ;;
    api) echo '-X --method -q --jq --silent -H --header -f --field -F --typed-field --input -i --include --anonymous --timeout --retry --paginate --ndjson --slurp --max-pages --max-items --items --next -h --help' ;;
    op) echo '-p --param --refresh -H --header -f --field -F --typed-field --input -i --include --anonymous --timeout --retry --paginate --ndjson --slurp --max-pages --max-items --items --next --jq -h --help' ;;
    scopes) echo '-h --help' ;;
    batch) echo '--concurrency --rate --journal --idempotency-key --resend-unknown --settle-unknown --failed --ordered --fail-fast --check --strict --jq -h --help' ;;
    discover) echo '--refresh -h --help' ;;
    mcp) echo '--for --allow-write --concurrency -h --help' ;;
    proxy) echo '--port --socket --allow-write -h --help' ;;
    completion) echo '-h --help' ;;
    help) echo '-h --help' ;;
  esac
}

# Adds the candidates on stdin (value, then a tab and a description) that start with $cur.
__plat_add() {
  local c
  while IFS= read -r c; do
    c=${c%%$'\t'*}
    [[ -n $c && $c == "$cur"* ]] && COMPREPLY+=("$c")
  done
}

# Values of kind $1 ("d <kind>", "l <words>", "f").
__plat_add_values() {
  local kind=$1 w
  case $kind in
    d\ *) __plat_add < <("$plat" __complete "${kind#d }" "${globals[@]}" 2>/dev/null) ;;
    l\ *) for w in ${kind#l }; do [[ $w == "$cur"* ]] && COMPREPLY+=("$w"); done ;;
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
  for ((i = 0; i < ${#COMP_WORDS[@]} && i <= COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    gap=${line%%[![:space:]]*}
    line=${line#"$gap"}
    line=${line#"$w"}
    last=
    ((${#words[@]})) && last=${words[${#words[@]}-1]}
    if ((i > 0)) && [[ -z $gap ]] && [[ $w == [:=]* || $last == *[:=] ]]; then
      words[${#words[@]}-1]+=$w
    else
      words+=("$w")
    fi
  done
  cword=$((${#words[@]} - 1))
  local cur=${words[cword]} prev=
  ((cword > 0)) && prev=${words[cword - 1]}

  local plat=${COMP_WORDS[0]}
  type -P -- "$plat" &>/dev/null || plat=plat
  local cmd= nargs=0 skip= first=
  local -a globals=()
  for ((i = 1; i < cword; i++)); do
    w=${words[i]}
    if [[ -n $skip ]]; then skip=; continue; fi
    case $w in
      --profile | --base-url) ((i + 1 < cword)) && globals+=("$w" "${words[i + 1]}") ;;
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
  case $cmd in op) opid=$first ;; esac

  # plat exec -- <command> [args…]: the words after -- are another program's.
  if [[ -n $cmd && $(__plat_value_kind "$cmd" "arg:*") == c ]]; then
    for ((i = 1; i < COMP_CWORD; i++)); do
      if [[ ${COMP_WORDS[i]} == -- ]]; then
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
      __plat_add < <("$plat" __complete op-values "$opid" "${prev#--}" "${globals[@]}" 2>/dev/null)
    else
      __plat_add_values "$kind"
    fi
  elif [[ $cur == --*=* ]]; then
    local flag=${cur%%=*}
    cur=${cur#*=}
    __plat_add_values "$(__plat_value_kind "$cmd" "$flag")"
    ((${#COMPREPLY[@]})) && COMPREPLY=("${COMPREPLY[@]/#/$flag=}")
  elif [[ $cur == -* ]]; then
    __plat_add < <(__plat_options "$cmd" | tr ' ' '\n')
    [[ -n $opid ]] && __plat_add < <("$plat" __complete op-flags "$opid" "${globals[@]}" 2>/dev/null)
  elif [[ -z $cmd ]]; then
    __plat_add_values 'l login whoami status switch refresh token exec logout call api op scopes batch discover mcp proxy completion help'
  elif [[ -n $opid && $prev == --* ]]; then
    # a parameter named like one of plat's flag options (--include): the parameter's values
    __plat_add < <("$plat" __complete op-values "$opid" "${prev#--}" "${globals[@]}" 2>/dev/null)
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
    local prefix=${word%"${word##*[$breaks]}"}
    COMPREPLY=("${COMPREPLY[@]#"$prefix"}")
  fi
  return 0
}

complete -F _plat plat
