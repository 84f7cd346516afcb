#!/usr/bin/env bash
# Formats the C/C++ sources with the repository's .clang-format (STYLE.md section 9).
# Usage: tools/format.sh           reformat every source in place
#        tools/format.sh --check   change nothing; list the files that need formatting and fail
# Pinned to clang-format 14 (Debian 12) because other versions format some constructs
# differently, and CI must agree with what developers run. Override with CLANG_FORMAT=...
set -euo pipefail

mode=fix
case "${1:-}" in
"") ;;
--check) mode=check ;;
-h | --help)
    sed -n '2,6s/^# \{0,1\}//p' "$0"
    exit 0
    ;;
*)
    echo "usage: tools/format.sh [--check]" >&2
    exit 2
    ;;
esac

cd "$(dirname "$0")/.."

cf=${CLANG_FORMAT:-}
if [ -z "$cf" ]; then
    if command -v clang-format-14 >/dev/null 2>&1; then
        cf=clang-format-14
    else
        echo "format.sh: clang-format-14 not found (run scripts/bootstrap," \
            "or set CLANG_FORMAT)" >&2
        exit 1
    fi
fi

dirs=()
for d in src include tools tests bench examples fuzz; do
    [ -d "$d" ] && dirs+=("$d")
done
files=()
if [ "${#dirs[@]}" -gt 0 ]; then
    while IFS= read -r -d '' f; do
        files+=("$f")
    done < <(find "${dirs[@]}" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' \) \
        -print0 | sort -z)
fi
if [ "${#files[@]}" -eq 0 ]; then
    echo "format.sh: no sources found"
    exit 0
fi

if [ "$mode" = fix ]; then
    "$cf" -i --style=file "${files[@]}"
    echo "format.sh: formatted ${#files[@]} file(s)"
    exit 0
fi

# Check each file on its own so the summary names every file that needs formatting; show
# only the first few complaints per file so one badly formatted file cannot flood the log.
max_lines=12
bad=()
for f in "${files[@]}"; do
    if ! out=$("$cf" --dry-run -Werror --style=file "$f" 2>&1); then
        bad+=("$f")
        printf '%s\n' "$out" | head -n "$max_lines" >&2
    fi
done
if [ "${#bad[@]}" -gt 0 ]; then
    echo "format.sh: ${#bad[@]} of ${#files[@]} file(s) need formatting" \
        "(run tools/format.sh):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
fi
echo "format.sh: ${#files[@]} file(s) ok"
