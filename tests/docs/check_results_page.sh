#!/usr/bin/env bash
# bench/README.md stays the results page, not a diary: under 400 lines, no heading names a
# session (the history is in git), and every machine class under § Results by machine class has
# its table. Prints each problem with its line and fails if there is one.
#
#   tests/docs/check_results_page.sh [ROOT]
set -euo pipefail
root=${1:-.}
page=$root/bench/README.md
fail=0
lines=$(wc -l <"$page")
if ((lines >= 400)); then
  echo "bench/README.md: $lines lines; the limit is 399 (move history to the commit messages)"
  fail=1
fi
if grep -nE '^#+ .*\b[Ss]ession\b' "$page"; then
  echo "bench/README.md: the headings above name a session; results go by machine class"
  fail=1
fi
awk '
  /^## / { in_results = ($0 == "## Results by machine class"); if (open) missing(); open = 0; next }
  in_results && /^### / { if (open) missing(); open = 1; name = $0; at = NR; next }
  open && /^\|/ { open = 0 }
  END { if (open) missing(); exit bad }
  function missing() { printf "bench/README.md:%d: %s has no table\n", at, name; bad = 1 }
' "$page" || fail=1
if ((fail == 0)); then echo "bench/README.md: $lines lines, one table per machine class"; fi
exit $fail
