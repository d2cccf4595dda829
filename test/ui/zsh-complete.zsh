#!/usr/bin/env zsh -f
# Asks zsh's own completion system what it offers for a command line, the way a Tab press does:
#   zsh -f test/ui/zsh-complete.zsh <dir holding _plat> '<command line>'
# prints one candidate per line. An interactive zsh runs under zpty with compinit and _plat on its fpath; compadd
# is wrapped so that every match the completion functions add (after zsh's own matching) is printed.
zmodload zsh/zpty || { print -u2 'zsh-complete: no zsh/zpty module'; exit 3 }
local dir=$1 input=$2 line
zpty plat zsh -f -i
# The markers are printed with split quotes, so the echo of the command that prints them never matches.
zpty -w plat "PROMPT= RPROMPT= PS2="
zpty -w plat "fpath=(${(q)dir} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w plat "zstyle ':completion:*' list-grouped false; zstyle ':completion:*' insert-tab false; bindkey '^I' complete-word"
zpty -w plat 'compadd() { if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi; local -a __hits; builtin compadd -A __hits "$@"; local h; for h in $__hits; do print -r -- "CAN""DIDATE:$h"; done; builtin compadd "$@" }'
zpty -w plat '__plat_done() { print -r -- "<<DO""NE>>"; exit }; comppostfuncs=(__plat_done)'
zpty -w plat 'print -r -- "<<REA""DY>>"'
while zpty -r plat line; do [[ $line == *'<<READY>>'* ]] && break; done
zpty -w -n plat "$input"$'\t'
while zpty -r plat line; do
  [[ $line == *'<<DONE>>'* ]] && break
  [[ $line == *CANDIDATE:* ]] && print -r -- "${${line##*CANDIDATE:}%%$'\r'}"
done
zpty -d plat
