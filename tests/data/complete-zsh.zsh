# Drive a real interactive zsh in a pty: for each line, a fresh zsh with compinit; type
# the line, press TAB, print what completion offered (compadd's candidates).
zmodload zsh/zpty
for line in "$@"; do
  zpty z zsh -f -i
  zpty -w z "PROMPT='> '; fpath=($ZFUNC \$fpath); autoload -U compinit; compinit -u -D"
  zpty -w z 'compadd () {
    if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return $?; fi
    typeset -a __hits; builtin compadd -A __hits "$@"; local r=$?
    (( $#__hits )) && print -r -- "<H""IT>${(j:|:)__hits}</H""IT>"
    return r
  }'
  zpty -w z 'setopt nolistbeep; print "RE""ADY"'
  zpty -r z junk '*READY*'
  zpty -w -n z "$line"$'\t'
  zpty -r z out '*</HIT>*'
  print -r -- "${line}=>${${out##*<HIT>}%%</HIT>*}"
  zpty -d z
done
