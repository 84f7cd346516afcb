#!/usr/bin/env bash
# Banned-function check (after curl's checksrc), run by .ci/run. Fails when a C/C++ source
# calls a function with no bounds or no error reporting, anywhere in the tree, or calls
# abort()/exit() in library code (src/), which must never take the host process down.
# Usage: tools/check_banned.sh [repo-root]    (default: the repository this script is in)
set -euo pipefail

root=${1:-"$(cd "$(dirname "$0")/.." && pwd)"}
cd "$root"

# Why each is banned, and what to use instead.
#   sprintf  -> snprintf (no bound)        strcpy/strcat -> snprintf or memcpy with a length
#   gets     -> fgets (no bound)           strtok -> strtok_r (hidden global state)
#   atoi     -> strtol/strtoll with end and errno checks (no error reporting)
banned_everywhere='sprintf|strcpy|strcat|gets|strtok|atoi'
# The library reports errors with NNP_E* codes and disables itself; it never ends the host.
banned_in_src='abort|exit'

all_dirs=(src tools include tests bench examples fuzz)

# List the C/C++ sources under the given directories that exist.
sources() {
    local d existing=()
    for d in "$@"; do
        [ -d "$d" ] && existing+=("$d")
    done
    [ "${#existing[@]}" -eq 0 ] && return 0
    find "${existing[@]}" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' \
        -o -name '*.cc' -o -name '*.hpp' \) -print0
}

# Match calls only: the name as a whole word followed by "(". "_" counts as part of a word,
# so snprintf, strtok_r, fgets, _exit, atexit and quick_exit do not match; neither do
# struct members such as ops->exit( or cb.abort(.
check() {
    local names=$1 what=$2
    shift 2
    local hits
    hits=$(sources "$@" | xargs -0 -r grep -nHE "(^|[^.>[:alnum:]_])($names)[[:space:]]*\\(" || true)
    if [ -n "$hits" ]; then
        printf '%s\n' "$hits"
        printf 'check_banned: %s\n' "$what" >&2
        return 1
    fi
    return 0
}

status=0
check "$banned_everywhere" \
    "banned function used (sprintf strcpy strcat gets strtok atoi); see tools/check_banned.sh" \
    "${all_dirs[@]}" || status=1
check "$banned_in_src" \
    "abort()/exit() in src/: return an NNP_E* code instead (STYLE.md section 4)" \
    src || status=1

if [ "$status" -eq 0 ]; then
    echo "check_banned: ok"
fi
exit "$status"
