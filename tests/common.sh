# shellcheck shell=bash
# tests/common.sh - helpers without side effects shared by tests/lib.sh and
# tests/bench/run.sh: JSON text from shell words, the pipeline.json files they write, and
# processes by pid or command line. Defines functions only.

# json_escape STRING : the string as a JSON string literal.
json_escape()
{
	local s=$1
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	printf '"%s"' "$s"
}

# argv_json WORD... : a JSON array of strings.
argv_json()
{
	local out="[" sep="" w
	for w in "$@"; do
		out+="$sep$(json_escape "$w")"
		sep=", "
	done
	printf '%s]' "$out"
}

# pipeline_json FILE REPO RECIPES_DIR MEMBERS STAGE_JSON... : writes FILE, a pipeline.json over
# the repository REPO (base main) and RECIPES_DIR, with the top-level MEMBERS (JSON text that
# ends in a comma, e.g. '"gpus": 0, "max_parallel_recipes": 2,') on a line of their own before
# "stages", and the STAGE_JSON objects as its stages, one a line.
pipeline_json()
{
	local file=$1 repo=$2 recipes=$3 members=$4 stages="" sep="" s
	shift 4
	for s in "$@"; do
		stages+="$sep    $s"
		sep=$',\n'
	done
	cat >"$file" <<EOF
{
  "repo": $(json_escape "$repo"), "base": "main", "recipes_dir": $(json_escape "$recipes"),
  $members
  "stages": [
$stages
  ]
}
EOF
}

# pid_alive PID : whether PID is a live process: one that exists with a thread that is not a
# zombie. A killed process whose first thread has exited shows as a zombie while its other
# threads still exit, and until the last one has, its files (and the locks on them) are held.
pid_alive()
{
	local t s
	kill -0 "$1" 2>/dev/null || return 1
	for t in "/proc/$1/task/"*/stat; do
		s=$(cat "$t" 2>/dev/null) || continue
		s=${s##*) }
		[ "${s%% *}" = Z ] || return 0
	done
	return 1
}

# pid_of_cmdline [-p] WORD... : prints the pid of the first process whose command line is
# exactly the WORDs (with -p: begins with them); prints nothing when there is none. A daemon's
# replayer (fs/replayer.c), forked with the daemon's command line and named packetfs-replay, is
# never taken for it.
pid_of_cmdline()
{
	local prefix=0 p
	local -a args
	if [ "$1" = -p ]; then
		prefix=1
		shift
	fi
	for p in /proc/[0-9]*; do
		[ -r "$p/cmdline" ] || continue
		mapfile -d '' args 2>/dev/null <"$p/cmdline" || continue
		if [ "$prefix" = 1 ]; then
			[ "${#args[@]}" -ge $# ] || continue
		else
			[ "${#args[@]}" = $# ] || continue
		fi
		if [ "${args[*]:0:$#}" = "$*" ] && [ "$(cat "$p/comm" 2>/dev/null)" != packetfs-replay ]; then
			echo "${p#/proc/}"
			return 0
		fi
	done
	return 0
}
