# 40-cuda.sh - the CUDA SDK parts the CUPTI back end (src/collect/cuda/) builds against:
# cuda.h (nvidia-cuda-dev), cupti.h + libcupti (libcupti-dev) and nvcc (nvidia-cuda-toolkit,
# for the compile-only check of scripts/gpu-check's CUDA program), all CUDA 11.8 from Debian
# 12's contrib/non-free components. Sourced by scripts/bootstrap (say, is_installed in scope).
# Idempotent: with the packages installed it touches nothing. NNPROF_CUDA_SDK=0 skips it
# (the back end then simply is not built); NNPROF_CUDA_NVCC=0 leaves nvcc out.

cuda_packages=(nvidia-cuda-dev libcupti-dev)
if [ "${NNPROF_CUDA_NVCC:-1}" != 0 ]; then
    cuda_packages+=(nvidia-cuda-toolkit)
fi
# Our own sources file: the machine's own files are never edited.
cuda_sources=/etc/apt/sources.list.d/nnprof-contrib-non-free.sources

# True when some apt source already enables the given component for bookworm.
cuda_has_component() {
    local files=(/etc/apt/sources.list /etc/apt/sources.list.d/*.list
        /etc/apt/sources.list.d/*.sources)
    local f
    for f in "${files[@]}"; do
        [ -f "$f" ] || continue
        # deb822 "Components: main contrib" or one-line "deb URI bookworm main contrib".
        if grep -Eq "^[[:space:]]*(Components:|deb[[:space:]].*bookworm).*[[:space:]]$1([[:space:]]|\$)" \
            "$f"; then
            return 0
        fi
    done
    return 1
}

cuda_enable_components() {
    local want
    want=$'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\n'
    want+=$'Components: contrib non-free\n'
    want+=$'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
    if cuda_has_component contrib && cuda_has_component non-free; then
        return 0
    fi
    if [ -f "$cuda_sources" ] && [ "$(cat "$cuda_sources")"$'\n' = "$want" ]; then
        return 0
    fi
    say "enabling Debian contrib and non-free for bookworm in $cuda_sources"
    printf '%s' "$want" >"$cuda_sources.tmp"
    mv "$cuda_sources.tmp" "$cuda_sources"
}

cuda_part() {
    local missing_cuda=() p start
    if [ "${NNPROF_CUDA_SDK:-1}" = 0 ]; then
        say "cuda: NNPROF_CUDA_SDK=0, the CUPTI back end will not be built"
        return 0
    fi
    for p in "${cuda_packages[@]}"; do
        is_installed "$p" || missing_cuda+=("$p")
    done
    if [ "${#missing_cuda[@]}" -eq 0 ]; then
        say "cuda: ${cuda_packages[*]} already installed."
        return 0
    fi
    if ! grep -q '^VERSION_CODENAME=bookworm' /etc/os-release 2>/dev/null; then
        say "cuda: not Debian 12 (bookworm): install ${missing_cuda[*]} (CUDA 11.8) yourself," \
            "or set NNPROF_CUDA_SDK=0" >&2
        return 1
    fi
    if [ "$(id -u)" -ne 0 ]; then
        say "cuda: missing ${missing_cuda[*]}; run as root (Debian contrib/non-free)" >&2
        return 1
    fi
    cuda_enable_components || return 1
    export DEBIAN_FRONTEND=noninteractive
    start=$SECONDS
    say "cuda: apt-get update"
    apt-get update -q -o Acquire::Retries=3 -o DPkg::Lock::Timeout=600 || return 1
    say "cuda: installing ${missing_cuda[*]} (about 3 GB installed with nvcc)"
    apt-get install -y -q --no-install-recommends -o Acquire::Retries=3 \
        -o DPkg::Lock::Timeout=600 "${missing_cuda[@]}" || return 1
    for p in "${missing_cuda[@]}"; do
        if ! is_installed "$p"; then
            say "cuda: package $p is still not installed" >&2
            return 1
        fi
    done
    say "cuda: installed in $((SECONDS - start)) s"
}

cuda_part
