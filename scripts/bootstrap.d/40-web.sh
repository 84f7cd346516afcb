# scripts/bootstrap.d/40-web.sh - what the web UI needs (issue 11), sourced by
# scripts/bootstrap with `say` and `is_installed` in scope:
#   libmicrohttpd-dev  the UI's HTTP server (src/server/http.c)
#   nodejs + npm       esbuild bundles web/ into the binary at build time
#   chromium           the browser tests (web/tests/ui_test.mjs, run by ctest)
#   npm ci in web/     echarts, esbuild, playwright-core, pinned by web/package-lock.json
# Idempotent: touches nothing when all of it is there and web/node_modules matches the lock.

web_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/web
web_pkgs=(libmicrohttpd-dev chromium)
web_missing=()
for p in "${web_pkgs[@]}"; do
    is_installed "$p" || web_missing+=("$p")
done
# Node: Debian's nodejs needs Debian's npm package. A nodejs from another source (e.g.
# nodesource's, which bundles npm and conflicts with Debian's npm) is used as it is.
if ! command -v node >/dev/null 2>&1; then
    web_missing+=(nodejs npm)
elif ! command -v npm >/dev/null 2>&1; then
    if dpkg -s nodejs 2>/dev/null | grep -q '^Version: .*nodesource'; then
        say "nodejs is nodesource's but npm is missing: reinstall nodejs from nodesource" >&2
        exit 1
    fi
    web_missing+=(npm)
fi
if [ "${#web_missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        say "web UI: missing ${web_missing[*]}; run as root" >&2
        exit 1
    fi
    say "web UI: installing ${web_missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -q -o Acquire::Retries=3 \
        -o DPkg::Lock::Timeout=600
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        -o Acquire::Retries=3 -o DPkg::Lock::Timeout=600 "${web_missing[@]}"
fi
for cmd in node npm chromium; do
    if ! command -v "$cmd" >/dev/null 2>&1; then
        say "web UI: $cmd is still missing" >&2
        exit 1
    fi
done
# npm ci only when node_modules is missing or older than the lock file.
if [ ! -f "$web_dir/node_modules/.package-lock.json" ] ||
    [ "$web_dir/package-lock.json" -nt "$web_dir/node_modules/.package-lock.json" ]; then
    say "web UI: npm ci in web/ (node $(node --version), npm $(npm --version))"
    (cd "$web_dir" && npm ci --no-audit --no-fund --loglevel=error)
else
    say "web UI: web/node_modules up to date"
fi
