#!/usr/bin/env bash
# A slip in a ctl command (SPEC §4) gets the name it likely meant, as pipeline.json's unknown keys
# do: a verb, a stage of the pipeline and a recipe of the catalog within two edits; a word near
# none gets the plain reason. Shown by `packetfs ctl` on stderr and by reading ctl.
. "$(dirname "$0")/../lib.sh"
std_item 01-build

rc=0
"$PFS" ctl "$d" advanz "run plna" "rerun 01-biuld" frobnicate "run zzzzzz" >/dev/null 2>"$T/err" ||
	rc=$?
assert_eq 1 "$rc" "exit status after refused commands"
assert_eq "packetfs: ctl: advanz: error: unknown verb (did you mean \"advance\"?)
packetfs: ctl: run plna: error: no stage 'plna' in the pipeline (did you mean \"plan\"?)
packetfs: ctl: rerun 01-biuld: error: no recipe '01-biuld' in the catalog (did you mean \"01-build\"?)
packetfs: ctl: frobnicate: error: unknown verb
packetfs: ctl: run zzzzzz: error: no stage 'zzzzzz' in the pipeline" "$(cat "$T/err")" \
	"the reasons of the refused commands"

# A shell's write: EINVAL, and ctl's first line says what was meant.
assert_fails_with EINVAL sh_write "$d/ctl" $'hodl\n'
assert_eq 'hodl: error: unknown verb (did you mean "hold"?)' "$(head -n 1 "$d/ctl")" \
	"ctl after a write of hodl"
assert_eq new "$(status_field "$M" fix-1 state)" "state after the refused commands"
exit 0
