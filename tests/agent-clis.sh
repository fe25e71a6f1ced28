#!/usr/bin/env bash
# tests/agent-clis.sh - the real agent CLIs the agent tests drive, pinned, from the npm registry.
#
#	bash tests/agent-clis.sh install   installs them (once: cached) and prints "VAR=VALUE" lines
#	bash tests/agent-clis.sh env       prints the lines only, exit 77 when they are not installed
#
# The versions tested are pinned here and named in docs/agents.md:
#   Claude Code  @anthropic-ai/claude-code  CLAUDE_VERSION
#   Codex CLI    @openai/codex               CODEX_VERSION
# Both packages ship their native binary inside a per-platform npm package (an optional
# dependency), so `npm install` brings everything; nothing is downloaded at run time.
#
# The cache is ${PFS_AGENT_CACHE:-/var/cache/packetfs-tests}/clis-claude-V-codex-V, made
# whole or not at all (installed under a temporary name, then renamed), so that a test suite
# run on a clean clone of the project reuses it. Output lines:
#   PFS_CLAUDE=/abs/path/to/claude
#   PFS_CODEX=/abs/path/to/codex
# Exit status: 0 installed, 77 not installed (env) or npm missing/failing (install: the reason
# on stderr as "agent-clis.sh: what: why").
set -euo pipefail

CLAUDE_VERSION=2.1.332
CODEX_VERSION=0.171.0

cache=${PFS_AGENT_CACHE:-/var/cache/packetfs-tests}
dir=$cache/clis-claude-$CLAUDE_VERSION-codex-$CODEX_VERSION

say_env()
{
	[ -x "$dir/node_modules/.bin/claude" ] && [ -x "$dir/node_modules/.bin/codex" ] || return 77
	echo "PFS_CLAUDE=$dir/node_modules/.bin/claude"
	echo "PFS_CODEX=$dir/node_modules/.bin/codex"
}

case ${1:-} in
env)
	say_env
	;;
install)
	if say_env 2>/dev/null; then
		exit 0
	fi
	command -v npm >/dev/null 2>&1 || {
		echo "agent-clis.sh: npm: not installed (apt-get install npm)" >&2
		exit 77
	}
	mkdir -p "$cache"
	tmp=$(mktemp -d "$cache/.install.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	if ! npm install --no-audit --no-fund --loglevel=error --prefix "$tmp" \
		"@anthropic-ai/claude-code@$CLAUDE_VERSION" "@openai/codex@$CODEX_VERSION" \
		>"$tmp.log" 2>&1; then
		echo "agent-clis.sh: npm install: failed:" >&2
		tail -n 20 "$tmp.log" >&2
		rm -f "$tmp.log"
		exit 77
	fi
	rm -f "$tmp.log"
	"$tmp/node_modules/.bin/claude" --version | grep -qF "$CLAUDE_VERSION" || {
		echo "agent-clis.sh: claude --version: not $CLAUDE_VERSION" >&2
		exit 77
	}
	"$tmp/node_modules/.bin/codex" --version | grep -qF "$CODEX_VERSION" || {
		echo "agent-clis.sh: codex --version: not $CODEX_VERSION" >&2
		exit 77
	}
	rm -rf "$dir"
	mv "$tmp" "$dir"
	trap - EXIT
	say_env
	;;
*)
	echo "usage: bash tests/agent-clis.sh install|env" >&2
	exit 2
	;;
esac
