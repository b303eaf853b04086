#!/usr/bin/env bash
# Checks the map in docs/architecture.md against the tree.
#
#   --arrows  Every `#include "room/..."` of every file under src/ follows the arrows of the
#             picture of the rooms (the ```mermaid block of docs/architecture.md, one
#             `from --> to` edge per line): a room may include itself and every room it reaches
#             along the arrows. Fails naming the file, the line and the include when it may not,
#             and naming a folder of src/ that is not in the picture or a room in the picture
#             that is not a folder of src/.
#   --files   Every file under src/ is named in docs/architecture.md, as a `src/...` path in
#             backquotes or matched by a `src/...*...` glob there (a `*` does not cross a `/`).
#             Fails naming each file that is not.
#
# Usage: check_architecture.sh --arrows|--files [REPO_ROOT]  (default root: two levels above
# this script). Exit 1 with one line per failure.
set -euo pipefail

mode="${1:-}"
case "$mode" in --arrows | --files) ;; *)
  echo "usage: check_architecture.sh --arrows|--files [REPO_ROOT]" >&2
  exit 2
  ;;
esac
root="${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
cd "$root"
doc=docs/architecture.md
if [ ! -f "$doc" ]; then
  echo "check_architecture: no $doc under $root" >&2
  exit 1
fi

failures=0
fail() {
  echo "$1" >&2
  failures=$((failures + 1))
}

check_arrows() {
  # The picture: nodes and edges of the mermaid block.
  declare -A rooms=() edges=()
  local from to
  while read -r from to; do
    rooms[$from]=1
    if [ -n "$to" ]; then
      rooms[$to]=1
      edges[$from]+=" $to"
    fi
  done < <(awk '/^```mermaid/ {inside = 1; next} /^```/ {inside = 0} inside' "$doc" |
    sed -nE 's/^[[:space:]]*([a-z_]+)[[:space:]]*-->[[:space:]]*([a-z_]+)[[:space:]]*$/\1 \2/p;
              s/^[[:space:]]*([a-z_]+)[[:space:]]*$/\1/p')
  if [ ${#rooms[@]} -eq 0 ]; then
    fail "$doc: no \`from --> to\` arrows in a \`\`\`mermaid block"
    return
  fi

  # What each room reaches along the arrows (itself included).
  declare -A reach=()
  local room next frontier seen
  for room in "${!rooms[@]}"; do
    seen=" $room "
    frontier="$room"
    while [ -n "$frontier" ]; do
      next=""
      for from in $frontier; do
        for to in ${edges[$from]:-}; do
          if [[ "$seen" != *" $to "* ]]; then
            seen+="$to "
            next+=" $to"
          fi
        done
      done
      frontier="$next"
    done
    reach[$room]="$seen"
  done

  # Folders and rooms name the same set.
  local dir
  for dir in src/*/; do
    room="$(basename "$dir")"
    [ -n "${rooms[$room]:-}" ] || fail "src/$room/: folder missing from the picture in $doc"
  done
  for room in "${!rooms[@]}"; do
    [ -d "src/$room" ] || fail "$doc: room '$room' in the picture is not a folder of src/"
  done

  # Every quoted include.
  local file line inc target checked=0
  while IFS=: read -r file line inc; do
    checked=$((checked + 1))
    room="${file#src/}"
    room="${room%%/*}"
    [ -n "${rooms[$room]:-}" ] || continue # reported above as a missing folder
    inc="$(sed -E 's/.*"([^"]*)".*/\1/' <<<"$inc")"
    target="${inc%%/*}"
    if [ "$target" = "$inc" ] || [ -z "${rooms[$target]:-}" ]; then
      fail "$file:$line: #include \"$inc\": '$target' is not a room in the picture in $doc"
    elif [[ "${reach[$room]}" != *" $target "* ]]; then
      fail "$file:$line: #include \"$inc\": no arrow path from $room to $target in $doc"
    fi
  done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' src || true)
  echo "check_architecture --arrows: ${#rooms[@]} rooms, $checked includes checked"
}

check_files() {
  declare -A named=()
  local token path
  shopt -s nullglob
  while IFS= read -r token; do
    token="${token//\`/}"
    if [[ "$token" == *'*'* ]]; then
      for path in $token; do named[$path]=1; done
    else
      named[$token]=1
    fi
  done < <(grep -oE '`src/[^` ]*`' "$doc" || true)
  shopt -u nullglob
  local file total=0
  while IFS= read -r file; do
    total=$((total + 1))
    [ -n "${named[$file]:-}" ] ||
      fail "$file: named nowhere in $doc (name it, or a glob that matches it, in § Files)"
  done < <(find src -type f | sort)
  echo "check_architecture --files: $total files under src/"
}

if [ "$mode" = --arrows ]; then check_arrows; else check_files; fi
if [ $failures -gt 0 ]; then
  echo "check_architecture $mode: $failures failures" >&2
  exit 1
fi
