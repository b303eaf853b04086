#!/usr/bin/env bash
# Checks that the documentation can be followed: every repository path docs/*.md names exists
# (a `*` in a path must match at least one file), every relative Markdown link in docs/*.md points
# to an existing file and, with a #anchor, to an existing heading, and every code comment that
# cites `docs/NAME.md § Section` names an existing file and a section that is one of its headings.
#
# Usage: check_doc_paths.sh [REPO_ROOT]  (default: two levels above this script). Exit 1 with one
# line per broken reference. Convention for docs: paths of other projects are written as full URLs
# (https://github.com/owner/repo/blob/...), so only this repository's paths appear bare.
set -euo pipefail

root="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
cd "$root"
shopt -s nullglob
docs=(docs/*.md)
if [ ${#docs[@]} -eq 0 ]; then
  echo "check_doc_paths: no docs/*.md under $root" >&2
  exit 1
fi

failures=0
checked=0
fail() {
  echo "$1" >&2
  failures=$((failures + 1))
}

# GitHub's anchors for a file's headings: lower case, punctuation other than '-' and '_'
# dropped, spaces to '-'.
anchors() {
  grep -E '^#{1,6} ' "$1" | sed -E 's/^#+ +//' | tr '[:upper:]' '[:lower:]' |
    sed -E 's/[^a-z0-9 _-]//g; s/ /-/g'
}

# Headings of a Markdown file, without the leading #s and without a trailing "*(...)*" note.
headings() {
  grep -E '^#{1,6} ' "$1" | sed -E 's/^#+ +//; s/ +\*\([^)]*\)\*$//'
}

# 1. Repository paths named in the docs.
for f in "${docs[@]}"; do
  while IFS=: read -r line path; do
    while [[ "$path" =~ [.,:\;]$ ]]; do path="${path%?}"; done
    checked=$((checked + 1))
    if [[ "$path" == *'*'* ]]; then
      compgen -G "$path" >/dev/null || fail "$f:$line: no file matches '$path'"
    elif [ ! -e "$path" ]; then
      fail "$f:$line: '$path' does not exist"
    fi
  done < <(grep -noP '(?<![\w/.\-])(src|tests|tools|bench|scripts|docs|models)/[\w./*\-]*' "$f" ||
    true)
done

# 2. Relative Markdown links between the docs, with their anchors.
for f in "${docs[@]}"; do
  while IFS=: read -r line link; do
    target="${link#](}"
    target="${target%)}"
    case "$target" in http://* | https://* | mailto:*) continue ;; esac
    file="${target%%#*}"
    anchor=""
    [[ "$target" == *'#'* ]] && anchor="${target#*#}"
    [ -n "$file" ] && path="docs/$file" || path="$f"
    checked=$((checked + 1))
    if [ ! -e "$path" ]; then
      fail "$f:$line: link target '$target' does not exist"
      continue
    fi
    if [ -n "$anchor" ] && ! anchors "$path" | grep -qxF -- "$anchor"; then
      fail "$f:$line: '$path' has no heading for '#$anchor'"
    fi
  done < <(grep -noP '\]\([^)\s]+\)' "$f" || true)
done

# 3. Code comments citing the docs: `docs/NAME.md` must exist, and `§ Section` must begin with
#    one of its headings.
while IFS= read -r hit; do
  where="${hit%%:docs/*}"
  cite="docs/${hit#*:docs/}"
  file="${cite%%.md*}.md"
  checked=$((checked + 1))
  if [ ! -e "$file" ]; then
    fail "$where: cites '$file', which does not exist"
    continue
  fi
  rest="${cite#"$file"}"
  if [[ "$rest" =~ ^\ ?§\ ?(.*)$ ]]; then
    section="${BASH_REMATCH[1]}"
    found=0
    while IFS= read -r h; do
      [[ "$section" == "$h"* ]] && found=1 && break
    done < <(headings "$file")
    [ $found -eq 1 ] || fail "$where: '$file' has no section starting '${section:0:40}'"
  fi
done < <(grep -rnoP --include='*.h' --include='*.cpp' --include='*.py' --include='*.sh' \
  --include='*.jinja' --include='*.md' --include='CMakeLists.txt' \
  --exclude-dir=node_modules --exclude-dir=.git \
  'docs/[a-z0-9_]+\.md( ?§ ?[^,;()]*)?' src tests tools bench 2>/dev/null || true)

if [ $failures -gt 0 ]; then
  echo "check_doc_paths: $failures broken of $checked references" >&2
  exit 1
fi
echo "check_doc_paths: $checked references, all resolve"
