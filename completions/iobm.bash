_iobm() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="iobm"
                ;;
            iobm,bonnie)
                cmd="iobm__subcmd__bonnie"
                ;;
            iobm,compare)
                cmd="iobm__subcmd__compare"
                ;;
            iobm,help)
                cmd="iobm__subcmd__help"
                ;;
            iobm,io500)
                cmd="iobm__subcmd__io500"
                ;;
            iobm,limits)
                cmd="iobm__subcmd__limits"
                ;;
            iobm,merge)
                cmd="iobm__subcmd__merge"
                ;;
            iobm,meta)
                cmd="iobm__subcmd__meta"
                ;;
            iobm,quick)
                cmd="iobm__subcmd__quick"
                ;;
            iobm,read)
                cmd="iobm__subcmd__read"
                ;;
            iobm,replay)
                cmd="iobm__subcmd__replay"
                ;;
            iobm,report)
                cmd="iobm__subcmd__report"
                ;;
            iobm,rerun)
                cmd="iobm__subcmd__rerun"
                ;;
            iobm,run)
                cmd="iobm__subcmd__run"
                ;;
            iobm,s3)
                cmd="iobm__subcmd__s3"
                ;;
            iobm,serve)
                cmd="iobm__subcmd__serve"
                ;;
            iobm,stream)
                cmd="iobm__subcmd__stream"
                ;;
            iobm,write)
                cmd="iobm__subcmd__write"
                ;;
            iobm__subcmd__help,bonnie)
                cmd="iobm__subcmd__help__subcmd__bonnie"
                ;;
            iobm__subcmd__help,compare)
                cmd="iobm__subcmd__help__subcmd__compare"
                ;;
            iobm__subcmd__help,help)
                cmd="iobm__subcmd__help__subcmd__help"
                ;;
            iobm__subcmd__help,io500)
                cmd="iobm__subcmd__help__subcmd__io500"
                ;;
            iobm__subcmd__help,limits)
                cmd="iobm__subcmd__help__subcmd__limits"
                ;;
            iobm__subcmd__help,merge)
                cmd="iobm__subcmd__help__subcmd__merge"
                ;;
            iobm__subcmd__help,meta)
                cmd="iobm__subcmd__help__subcmd__meta"
                ;;
            iobm__subcmd__help,quick)
                cmd="iobm__subcmd__help__subcmd__quick"
                ;;
            iobm__subcmd__help,read)
                cmd="iobm__subcmd__help__subcmd__read"
                ;;
            iobm__subcmd__help,replay)
                cmd="iobm__subcmd__help__subcmd__replay"
                ;;
            iobm__subcmd__help,report)
                cmd="iobm__subcmd__help__subcmd__report"
                ;;
            iobm__subcmd__help,rerun)
                cmd="iobm__subcmd__help__subcmd__rerun"
                ;;
            iobm__subcmd__help,run)
                cmd="iobm__subcmd__help__subcmd__run"
                ;;
            iobm__subcmd__help,s3)
                cmd="iobm__subcmd__help__subcmd__s3"
                ;;
            iobm__subcmd__help,serve)
                cmd="iobm__subcmd__help__subcmd__serve"
                ;;
            iobm__subcmd__help,stream)
                cmd="iobm__subcmd__help__subcmd__stream"
                ;;
            iobm__subcmd__help,write)
                cmd="iobm__subcmd__help__subcmd__write"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        iobm)
            opts="-h -V --print-spec --help --version write read stream bonnie meta io500 replay compare serve s3 quick report limits merge run rerun help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__bonnie)
            opts="-s -h --size --chunk --per-char --fsync --direct --files --seeks --seekers --keep-cache --drop-caches --data --bonnie-csv --server-ram --server-metrics --server-devices --server-drop-cmd --line-rate --interval --repeat --until-stable --json --csv --html --live --requests --metrics-listen --metrics-linger --label --ignore-free-space --print-spec --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -s)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chunk)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --per-char)
                    COMPREPLY=($(compgen -W "buffered syscall" -- "${cur}"))
                    return 0
                    ;;
                --fsync)
                    COMPREPLY=($(compgen -W "never end each" -- "${cur}"))
                    return 0
                    ;;
                --files)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seeks)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seekers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --data)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bonnie-csv)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-ram)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-metrics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-devices)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-drop-cmd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --line-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repeat)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --until-stable)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --csv)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --html)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --live)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-listen)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-linger)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --label)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__compare)
            opts="-h --transpose --format --aggregate --html --unit --wide --print-spec --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --format)
                    COMPREPLY=($(compgen -W "text markdown csv" -- "${cur}"))
                    return 0
                    ;;
                --aggregate)
                    COMPREPLY=($(compgen -W "makespan sum-of-rates first-done steady-state warp-window" -- "${cur}"))
                    return 0
                    ;;
                --html)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --unit)
                    COMPREPLY=($(compgen -W "mib k" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__help)
            opts="write read stream bonnie meta io500 replay compare serve s3 quick report limits merge run rerun help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__help__subcmd__bonnie)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__help__subcmd__compare)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__help__subcmd__io500)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__help__subcmd__limits)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__help__subcmd__merge)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__help__subcmd__meta)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__help__subcmd__quick)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__help__subcmd__read)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__help__subcmd__replay)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__help__subcmd__report)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__help__subcmd__rerun)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__help__subcmd__run)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__help__subcmd__s3)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__help__subcmd__serve)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__help__subcmd__stream)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__help__subcmd__write)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__io500)
            opts="-j -n -h --jobs --easy-size --easy-transfer --segments --items --easy-items --hard-items --stonewall --keep --server-ram --server-metrics --server-devices --server-drop-cmd --line-rate --interval --json --csv --html --live --requests --metrics-listen --metrics-linger --label --print-spec --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -j)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --easy-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --easy-transfer)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --segments)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --items)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -n)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --easy-items)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hard-items)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stonewall)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-ram)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-metrics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-devices)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-drop-cmd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --line-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --csv)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --html)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --live)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-listen)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-linger)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --label)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__limits)
            opts="-h --size --time --json --like --gpu --print-spec --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --like)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__merge)
            opts="-h --whole --json --csv --html --live --requests --metrics-listen --metrics-linger --label --print-spec --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --csv)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --html)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --live)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-listen)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-linger)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --label)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__meta)
            opts="-j -n -h --jobs --items --items-per-dir --depth --branch --leaves-only --unique-dir --stride --write-bytes --read-bytes --phases --stonewall --drop-caches --keep --server-ram --server-metrics --server-devices --server-drop-cmd --line-rate --interval --repeat --until-stable --json --csv --html --live --requests --metrics-listen --metrics-linger --label --print-spec --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -j)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --items)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -n)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --depth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --branch)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stride)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --write-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --read-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --phases)
                    COMPREPLY=($(compgen -W "dir-create dir-stat dir-remove file-create file-stat file-read file-rename file-remove" -- "${cur}"))
                    return 0
                    ;;
                --stonewall)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-ram)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-metrics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-devices)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-drop-cmd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --line-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repeat)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --until-stable)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --csv)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --html)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --live)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-listen)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-linger)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --label)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__quick)
            opts="-h --step-time --server-ram --server-metrics --server-devices --server-drop-cmd --line-rate --interval --repeat --until-stable --json --csv --html --live --requests --metrics-listen --metrics-linger --label --print-spec --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --step-time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-ram)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-metrics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-devices)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-drop-cmd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --line-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repeat)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --until-stable)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --csv)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --html)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --live)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-listen)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-linger)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --label)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__read)
            opts="-b -d -h --block --random --direct --iodepth --engine --fadvise --madvise --cpus --numa --mem --gds --gdsio-line --rwmix --keep-cache --drop-caches --verify --reorder --duration --ramp --rate --arrivals --rate-sweep --slo --access --think --burst --server-ram --server-metrics --server-devices --server-drop-cmd --line-rate --interval --repeat --until-stable --json --csv --html --live --requests --metrics-listen --metrics-linger --label --print-spec --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --block)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -b)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --iodepth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --engine)
                    COMPREPLY=($(compgen -W "sync io_uring mmap" -- "${cur}"))
                    return 0
                    ;;
                --fadvise)
                    COMPREPLY=($(compgen -W "sequential random willneed dontneed noreuse" -- "${cur}"))
                    return 0
                    ;;
                --madvise)
                    COMPREPLY=($(compgen -W "sequential random willneed dontneed hugepage" -- "${cur}"))
                    return 0
                    ;;
                --cpus)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --numa)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mem)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rwmix)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -d)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ramp)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --arrivals)
                    COMPREPLY=($(compgen -W "uniform poisson" -- "${cur}"))
                    return 0
                    ;;
                --rate-sweep)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --slo)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --think)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --burst)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-ram)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-metrics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-devices)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-drop-cmd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --line-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repeat)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --until-stable)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --csv)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --html)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --live)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-listen)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-linger)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --label)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__replay)
            opts="-j -h --timing --speed --jobs --keep --keep-cache --data --interval --repeat --until-stable --json --csv --html --live --requests --metrics-listen --metrics-linger --label --print-spec --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --timing)
                    COMPREPLY=($(compgen -W "recorded fast" -- "${cur}"))
                    return 0
                    ;;
                --speed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -j)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --data)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repeat)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --until-stable)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --csv)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --html)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --live)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-listen)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-linger)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --label)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__report)
            opts="-h --requests --interval --window --limits --csv --html --print-spec --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --limits)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --csv)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --html)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__rerun)
            opts="-h --set --json --csv --html --live --requests --metrics-listen --metrics-linger --label --print-spec --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --set)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --csv)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --html)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --live)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-listen)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-linger)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --label)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__run)
            opts="-h --out --dry-run --resume --fail-fast --format --html --print-spec --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "text markdown csv" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__s3)
            opts="-c -d -h --endpoint --tls --insecure --dir --bucket --prefix --access-key --secret-key --session-token --region --concurrent --obj-size --obj-size-range --objects --duration --ramp --ops --once --range-size --part-size --part-concurrency --page-keys --batch --get --head --put --delete --list --payload-signing --checksum --retries --max-errors --timeout --verify --rate --arrivals --rate-sweep --slo --access --think --burst --server-ram --server-metrics --server-devices --server-drop-cmd --line-rate --drop-caches --new-connection --data --keep --reuse --interval --repeat --until-stable --json --csv --html --live --requests --metrics-listen --metrics-linger --label --print-spec --help put get head delete list multipart mixed versioned"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bucket)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prefix)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --secret-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --session-token)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --concurrent)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -c)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --obj-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --obj-size-range)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --objects)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -d)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ramp)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ops)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --range-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --part-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --part-concurrency)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --page-keys)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --batch)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --get)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --head)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --put)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --delete)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --list)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --payload-signing)
                    COMPREPLY=($(compgen -W "unsigned sha256" -- "${cur}"))
                    return 0
                    ;;
                --checksum)
                    COMPREPLY=($(compgen -W "crc32 crc32c crc64nvme sha1 sha256" -- "${cur}"))
                    return 0
                    ;;
                --retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-errors)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --arrivals)
                    COMPREPLY=($(compgen -W "uniform poisson" -- "${cur}"))
                    return 0
                    ;;
                --rate-sweep)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --slo)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --think)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --burst)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-ram)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-metrics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-devices)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-drop-cmd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --line-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --data)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reuse)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repeat)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --until-stable)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --csv)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --html)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --live)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-listen)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-linger)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --label)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__serve)
            opts="-h --listen --metrics-listen --access-key --secret-key --anonymous --users --fsync --region --header-timeout --body-timeout --min-body-rate --max-connections --abort-incomplete-after --tls-cert --tls-key --print-spec --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --listen)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-listen)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --secret-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --users)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --header-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --body-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --min-body-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-connections)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --abort-incomplete-after)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__stream)
            opts="-j -s -b -d -h --jobs --size --size-per-job --file-per-job --shared-file --segments --fsync --data --keep --ignore-free-space --destroy-data-on --buffered --block --random --direct --iodepth --engine --fadvise --madvise --cpus --numa --mem --gds --gdsio-line --rwmix --keep-cache --drop-caches --verify --reorder --duration --ramp --rate --arrivals --rate-sweep --slo --access --think --burst --server-ram --server-metrics --server-devices --server-drop-cmd --line-rate --interval --repeat --until-stable --json --csv --html --live --requests --metrics-listen --metrics-linger --label --print-spec --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -j)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -s)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --size-per-job)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --segments)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fsync)
                    COMPREPLY=($(compgen -W "never end each" -- "${cur}"))
                    return 0
                    ;;
                --data)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --destroy-data-on)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --block)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -b)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --iodepth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --engine)
                    COMPREPLY=($(compgen -W "sync io_uring mmap" -- "${cur}"))
                    return 0
                    ;;
                --fadvise)
                    COMPREPLY=($(compgen -W "sequential random willneed dontneed noreuse" -- "${cur}"))
                    return 0
                    ;;
                --madvise)
                    COMPREPLY=($(compgen -W "sequential random willneed dontneed hugepage" -- "${cur}"))
                    return 0
                    ;;
                --cpus)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --numa)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mem)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rwmix)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -d)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ramp)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --arrivals)
                    COMPREPLY=($(compgen -W "uniform poisson" -- "${cur}"))
                    return 0
                    ;;
                --rate-sweep)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --slo)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --think)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --burst)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-ram)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-metrics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-devices)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-drop-cmd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --line-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repeat)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --until-stable)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --csv)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --html)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --live)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-listen)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-linger)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --label)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        iobm__subcmd__write)
            opts="-j -s -b -d -h --jobs --size --size-per-job --file-per-job --shared-file --segments --fsync --data --keep --ignore-free-space --destroy-data-on --buffered --block --random --direct --iodepth --engine --fadvise --madvise --cpus --numa --mem --gds --gdsio-line --rwmix --keep-cache --drop-caches --verify --reorder --duration --ramp --rate --arrivals --rate-sweep --slo --access --think --burst --server-ram --server-metrics --server-devices --server-drop-cmd --line-rate --interval --repeat --until-stable --json --csv --html --live --requests --metrics-listen --metrics-linger --label --print-spec --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -j)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -s)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --size-per-job)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --segments)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fsync)
                    COMPREPLY=($(compgen -W "never end each" -- "${cur}"))
                    return 0
                    ;;
                --data)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --destroy-data-on)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --block)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -b)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --iodepth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --engine)
                    COMPREPLY=($(compgen -W "sync io_uring mmap" -- "${cur}"))
                    return 0
                    ;;
                --fadvise)
                    COMPREPLY=($(compgen -W "sequential random willneed dontneed noreuse" -- "${cur}"))
                    return 0
                    ;;
                --madvise)
                    COMPREPLY=($(compgen -W "sequential random willneed dontneed hugepage" -- "${cur}"))
                    return 0
                    ;;
                --cpus)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --numa)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mem)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rwmix)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -d)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ramp)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --arrivals)
                    COMPREPLY=($(compgen -W "uniform poisson" -- "${cur}"))
                    return 0
                    ;;
                --rate-sweep)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --slo)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --think)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --burst)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-ram)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-metrics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-devices)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --server-drop-cmd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --line-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repeat)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --until-stable)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --csv)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --html)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --live)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-listen)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-linger)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --label)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _iobm -o nosort -o bashdefault -o default iobm
else
    complete -F _iobm -o bashdefault -o default iobm
fi
