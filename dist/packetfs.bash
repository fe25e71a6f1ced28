# bash completion for packetfs(1): the commands, then per command its options and operands
# (stores and mount points as directories, mounted packetfs mount points first for the commands
# that take one, items of a store or mount, files where a file is wanted). Directories and files
# are completed as file names (readline adds the slash of a directory).

# The mount points of the packetfs mounts in the mount table, one a line.
_packetfs_mounts()
{
	findmnt -rn -t fuse.packetfs -o TARGET 2>/dev/null
}

# _packetfs_items DIR : the items of the mount point or store DIR, one a line.
_packetfs_items()
{
	local dir=$1 e
	if [[ -d $dir/.packetfs ]]; then
		for e in "$dir"/*/ctl; do
			[[ -e $e ]] && e=${e%/ctl} && printf '%s\n' "${e##*/}"
		done
	elif [[ -d $dir/worktrees ]]; then
		for e in "$dir"/worktrees/*; do
			[[ -e $e ]] && printf '%s\n' "${e##*/}"
		done
	fi
}

_packetfs()
{
	local cur prev words cword
	if declare -F _init_completion >/dev/null; then
		_init_completion || return
	else
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	fi
	local commands="init mount umount new status log check gc export import record ctl follow top attest verify help"
	local opts_mount="rw nodev dev nosuid suid noexec exec async sync dirsync atime noatime
		relatime strictatime lazytime allow_other allow_root default_permissions auto_unmount
		max_read= max_readahead= max_background= congestion_threshold= log="

	if ((cword == 1)); then
		if [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "--help --version" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
		fi
		return
	fi

	local cmd=${words[1]} i n=0 operands=()
	# The operands before the word being completed (options and their values left out).
	for ((i = 2; i < cword; i++)); do
		case ${words[i]} in
		--repo | --pipeline | --brief | -o | --options | -C | --gpus | --timeout | --key | \
			--subject | --older-than) ((i++)) ;;
		--) [[ $cmd == record ]] && operands+=(--) ;;
		-*) ;;
		*) operands+=("${words[i]}") ;;
		esac
	done
	n=${#operands[@]}

	case $prev in
	--repo | -C)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return
		;;
	--pipeline | --brief | --key)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return
		;;
	-o | --options)
		local pre=
		[[ $cur == *,* ]] && pre=${cur%,*},
		mapfile -t COMPREPLY < <(compgen -P "$pre" -W "$opts_mount" -- "${cur##*,}")
		compopt -o nospace 2>/dev/null
		return
		;;
	--gpus | --timeout | --subject | --older-than) return ;;
	esac

	local flags=
	case $cmd in
	init) flags="--repo --pipeline --help" ;;
	mount) flags="--foreground --options --help" ;;
	new) flags="--brief --help" ;;
	status) flags="--json --help" ;;
	record) flags="-C --gpus --timeout --help" ;;
	top) flags="--once --help" ;;
	gc) flags="--older-than --help" ;;
	verify) flags="--key --subject --require-pass --help" ;;
	*) flags="--help" ;;
	esac
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$flags" -- "$cur")
		return
	fi

	case $cmd:$n in
	help:0)
		mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
		;;
	umount:0 | new:0)
		mapfile -t COMPREPLY < <(compgen -W "$(_packetfs_mounts)" -- "$cur")
		if ((${#COMPREPLY[@]} == 0)); then
			compopt -o filenames 2>/dev/null
			mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		fi
		;;
	status:0 | log:0 | check:0 | gc:0 | export:0 | attest:0)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -W "$(_packetfs_mounts)" -- "$cur")
		mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -d -- "$cur")
		;;
	status:1 | log:1 | export:1 | attest:1)
		mapfile -t COMPREPLY < <(compgen -W "$(_packetfs_items "${operands[0]}")" -- "$cur")
		;;
	init:0 | mount:* | export:2 | import:0 | import:1 | ctl:0 | follow:0)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		;;
	top:0)
		mapfile -t COMPREPLY < <(compgen -W "$(_packetfs_mounts)" -- "$cur")
		if ((${#COMPREPLY[@]} == 0)); then
			compopt -o filenames 2>/dev/null
			mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		fi
		;;
	log:2 | verify:0)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		;;
	record:*)
		if [[ " ${operands[*]} " == *" -- "* ]]; then
			mapfile -t COMPREPLY < <(compgen -c -- "$cur")
		elif ((n == 0)) && [[ -n ${PACKET_DIR:-} && -d $PACKET_DIR/../.packetfs/recipes ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$(ls "$PACKET_DIR/../.packetfs/recipes")" -- "$cur")
		fi
		;;
	esac
} &&
	complete -F _packetfs packetfs
