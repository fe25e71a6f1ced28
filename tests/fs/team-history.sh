#!/usr/bin/env bash
# A team on one mount (SPEC §3): .history keeps a document's privacy. A revision file is
# readable by those who may read the document now and as its mode allowed then: A's 0600
# document's revisions are A's, 0400, and B (in the store's group) gets EACCES, A reads them;
# a 0640 document's are 0440 in its group, and B reads them; a chmod 600 of a document hides
# its older, once readable revisions from B too; a removed document's revisions stay its
# writer's with the read bits they had; root reads everything.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../users.sh"
need_users
make_group TEAM
make_user A "$TEAM"
make_user B "$TEAM"
team_store "$TEAM"
mount_team
run_as "$A" sh -c "umask 022 && mkdir '$M/fix-1'" || fail "A cannot make an item"
d=$M/fix-1
h=$d/.history

run_as "$A" sh -c "umask 077 && printf 'secret\n' > '$d/secret.md' && printf 'more\n' >> '$d/secret.md'" ||
	fail "A cannot write secret.md"
run_as "$A" sh -c "umask 027 && printf 'team\n' > '$d/team.md'" || fail "A cannot write team.md"
run_as "$A" sh -c "umask 022 && printf 'open\n' > '$d/open.md'" || fail "A cannot write open.md"

assert_eq "$A:$TEAM 400" "$(owner_of "$h/secret.md@1")" "a 0600 document's revision"
assert_eq "$A:$TEAM 440" "$(owner_of "$h/team.md@1")" "a 0640 document's revision"
assert_eq "$A:$TEAM 444" "$(owner_of "$h/open.md@1")" "a 0644 document's revision"
assert_fails_with EACCES run_as "$B" cat "$h/secret.md@1"
assert_fails_with EACCES run_as "$B" cat "$h/secret.md@2"
assert_eq secret "$(run_as "$A" cat "$h/secret.md@1")" "A reads its own revision"
assert_eq team "$(run_as "$B" cat "$h/team.md@1")" "B reads a group-readable revision"
assert_eq open "$(run_as "$B" cat "$h/open.md@1")" "B reads a world-readable revision"

# A chmod hides the revisions that were readable.
run_as "$A" chmod 600 "$d/open.md" || fail "A's chmod"
assert_eq "$A:$TEAM 400" "$(owner_of "$h/open.md@1")" "an earlier revision after chmod 600"
assert_fails_with EACCES run_as "$B" cat "$h/open.md@1"

# A removed document: its writer's, with its read bits then.
run_as "$A" rm "$d/secret.md" "$d/team.md" || fail "A's rm"
assert_eq "$A:$TEAM 400" "$(owner_of "$h/secret.md@2")" "a removed 0600 document's revision"
assert_fails_with EACCES run_as "$B" cat "$h/secret.md@2"
assert_eq team "$(run_as "$B" cat "$h/team.md@1")" "a removed 0640 document's revision"
assert_file_eq "$h/secret.md@2" $'secret\nmore\n'
echo ok
