# bash completion for nnprof, installed as share/bash-completion/completions/nnprof by
# `cmake --install` (bash-completion loads it on first use); or source it by hand.
# Completes subcommands, their flags and flag values, directories, and for `nnprof run`
# the command after the options (with bash-completion's _command_offset when present).

_nnprof_dirs() {
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -d -- "$1")
}

_nnprof_words() {
    mapfile -t COMPREPLY < <(compgen -W "$1" -- "$2")
}

_nnprof_run() {
    local cur=$1 prev=$2 i w
    local with_value=" -o --output --level --steps --sample-hz --option --options "
    # The command starts after "--" or at the first word that is not an option or a value.
    for ((i = 2; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        if [[ $w == -- ]] || [[ $w != -* && $with_value != *" ${COMP_WORDS[i - 1]} "* ]]; then
            [[ $w == -- ]] && i=$((i + 1))
            if [[ $i -le $COMP_CWORD ]] && declare -F _command_offset >/dev/null; then
                _command_offset "$i"
            elif [[ $i -eq $COMP_CWORD ]]; then
                mapfile -t COMPREPLY < <(compgen -c -- "$cur")
            else
                compopt -o default 2>/dev/null
                COMPREPLY=()
            fi
            return
        fi
    done
    case $prev in
    -o | --output) _nnprof_dirs "$cur"; return ;;
    --level) _nnprof_words "Level0 Level1 Level2" "$cur"; return ;;
    --steps | --sample-hz | --option | --options) COMPREPLY=(); return ;;
    esac
    case $cur in
    --mpi=*) _nnprof_words "auto on off" "${cur#--mpi=}"; return ;;
    --memory=* | --communication=* | --follow-children=*)
        _nnprof_words "on off" "${cur#*=}"
        return
        ;;
    esac
    if [[ $cur == -* ]]; then
        _nnprof_words "--output --level --memory --communication --steps --sample-hz --option
            --options --follow-children --mpi --analyse --help --op-time= --profile-memory=
            --profile-communication= --profile-framework= --data-process= --timeline-limit=
            --parallel-strategy= --aicore-metrics= --l2-cache= --sync-enable=
            --data-simplification= --host-stack= --sample-interval-ms= --buffer-size-kb=
            --full-policy= --writer-period-ms= --storage-limit-bytes= --raw-file-bytes= --" \
            "$cur"
        [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
        return
    fi
    mapfile -t COMPREPLY < <(compgen -c -- "$cur")
}

_nnprof() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local commands="run analyse dump query summary export info"
    if [[ $COMP_CWORD -eq 1 ]]; then
        _nnprof_words "$commands --help --version -V" "$cur"
        return
    fi
    case ${COMP_WORDS[1]} in
    run) _nnprof_run "$cur" "$prev" ;;
    analyse)
        case $prev in
        --kind) _nnprof_words "detail summary" "$cur" ;;
        -o | --output) _nnprof_dirs "$cur" ;;
        --steps | --jobs | --rank | --graph-id | --peak-tflops | --memory-capacity-gb) ;;
        *)
            if [[ $cur == -* ]]; then
                _nnprof_words "--pretty --steps --jobs --quiet --kind --rank --graph-id
                    --peak-tflops --memory-capacity-gb --output --help" "$cur"
            else
                _nnprof_dirs "$cur"
            fi
            ;;
        esac
        ;;
    export)
        if [[ $COMP_CWORD -eq 2 ]]; then
            _nnprof_words "timeline summary sqlite --export=on --help" "$cur"
            return
        fi
        case $prev in
        -dir | --collection-dir) _nnprof_dirs "$cur" ;;
        --format) _nnprof_words "csv json" "$cur" ;;
        --clear) _nnprof_words "on off" "$cur" ;;
        *)
            case $cur in
            --output=*) _nnprof_dirs "${cur#--output=}" ;;
            --type=*) _nnprof_words "text db" "${cur#--type=}" ;;
            --summary-format=*) _nnprof_words "csv json" "${cur#--summary-format=}" ;;
            -*)
                _nnprof_words "-dir --collection-dir --iteration-id --model-id --iteration-count
                    --format --clear --output --type= --summary-format=" "$cur"
                ;;
            esac
            ;;
        esac
        ;;
    query)
        if [[ $COMP_CWORD -eq 2 ]]; then
            _nnprof_words "op" "$cur"
        elif [[ $prev == -d ]]; then
            _nnprof_dirs "$cur"
        elif [[ $cur == -* ]]; then
            _nnprof_words "-d --device --json --help" "$cur"
        fi
        ;;
    dump | summary | info)
        if [[ $cur == -* ]]; then
            _nnprof_words "--help --json --summary-only" "$cur"
        else
            _nnprof_dirs "$cur"
        fi
        ;;
    esac
}
complete -F _nnprof nnprof
