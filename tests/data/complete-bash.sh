# Drive bash-completion as an interactive bash does: for each line, split it into
# COMP_WORDS, let bash-completion load the command's completion (git's own for `git`,
# ours for `git-recode`, from the user directory), call the registered function, and
# print `line=>candidate|candidate…` (trailing spaces stripped).
source /usr/share/bash-completion/bash_completion
for line in "$@"; do
  read -ra COMP_WORDS <<<"$line"
  [[ $line == *' ' ]] && COMP_WORDS+=('')
  COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
  COMP_LINE=$line
  COMP_POINT=${#line}
  COMPREPLY=()
  complete -p "${COMP_WORDS[0]}" >/dev/null 2>&1 || _completion_loader "${COMP_WORDS[0]}"
  f=$(complete -p "${COMP_WORDS[0]}" | sed -E 's/.*-F ([^ ]+).*/\1/')
  "$f" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
  out=$(printf '%s|' "${COMPREPLY[@]%% }")
  printf '%s=>%s\n' "$line" "${out%|}"
done
