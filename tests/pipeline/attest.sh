#!/usr/bin/env bash
# packetfs attest prints a DSSE envelope holding an in-toto test-result Statement about the
# item's head, signed with the store's ed25519 key, and packetfs verify checks it. The plan names
# 01-build (validated) and 03-fail (failing); an external claim that 03-fail validated changes
# nothing. The round trip verifies (exit 0, item, commit, FAILED, 1/2), the Statement says what
# the registry says, and openssl checks the signature on PAE bytes built here, independently.
# verify refuses, exit 1 with its reason: a changed byte in the payload and in the signature,
# another store's key, a wrong payloadType (signed all the same), malformed JSON and base64, and
# another --subject; --require-pass refuses the FAILED result. A store without a key pair gets one
# at its first attest.
. "$(dirname "$0")/../lib.sh"
make_repo
copy_recipes
pipeline_item "$(plan_stage 01-build 03-fail)" "$(validate_stage)"
ctl "$M" fix-1 advance
settled fix-1 >/dev/null
assert_eq validated "$(reg field "$r" -1 status recipe=01-build)" "01-build"
assert_eq failing "$(reg field "$r" -1 status recipe=03-fail)" "03-fail"
head=$(worktree_head fix-1)
printf '{"recipe":"03-fail","status":"validated","head":"%s"}\n' "$head" >>"$r"

# init made the key pair: the private key the owner's alone, the public one for everyone.
assert_eq 600 "$(stat -c %a "$STORE/signing.key")" "mode of signing.key"
assert_eq 644 "$(stat -c %a "$STORE/signing.pub")" "mode of signing.pub"
out=$("$PFS" init "$T/store2" --repo "$REPO" 2>&1) || fail "second init: $out"
assert_eq "$(cat "$T/store2/signing.pub")" "$out" "init prints the public key"

"$PFS" attest "$M" fix-1 >"$T/env.json" 2>"$T/attest.err" || fail "attest: $(cat "$T/attest.err")"
"$PFS" attest "$STORE" fix-1 >"$T/env2.json" || fail "attest of the store failed"
pub=$STORE/signing.pub
out=$("$PFS" verify "$T/env.json" --key "$pub" --subject "$head") || fail "verify: $out"
assert_eq "item: fix-1
subject: git+$REPO@packetfs/fix-1
commit: $head
result: FAILED
passed: 1/2" "$out" "what verify prints"
"$PFS" verify "$T/env2.json" --key "$pub" --subject "${head:0:7}" >/dev/null ||
	fail "verify of the attestation made from the store"
# --require-pass: the same FAILED result is shown, then refused (exit 1, the reason).
rc=0
out=$("$PFS" verify "$T/env.json" --key "$pub" --require-pass 2>"$T/verify.err") || rc=$?
assert_eq 1 "$rc" "exit status of verify --require-pass of a FAILED result"
assert_contains "$out" "result: FAILED" "what verify --require-pass prints"
assert_eq "packetfs: verify: the result is FAILED, not PASSED (--require-pass)" \
	"$(cat "$T/verify.err")" "the reason of verify --require-pass"

# The envelope and the Statement, read with python; the PAE and signature files for openssl.
python3 - "$T" "$head" "$REPO" "$RECIPES" <<'EOF' || fail "the envelope or Statement is wrong"
import base64, hashlib, json, sys
t, head, repo, recipes = sys.argv[1:]
env = json.load(open(t + "/env.json"))
assert env["payloadType"] == "application/vnd.in-toto+json", env["payloadType"]
assert len(env["signatures"]) == 1
payload = base64.b64decode(env["payload"], validate=True)
st = json.loads(payload)
assert st["_type"] == "https://in-toto.io/Statement/v1", st["_type"]
assert st["subject"] == [{"name": "git+%s@packetfs/fix-1" % repo,
                          "digest": {"gitCommit": head}}], st["subject"]
assert st["predicateType"] == "https://in-toto.io/attestation/test-result/v0.1"
p = st["predicate"]
assert p["result"] == "FAILED", p
assert p["passedTests"] == ["01-build"] and p["failedTests"] == ["03-fail"], p
assert p["warnedTests"] == [], p
conf = {c["name"]: c for c in p["configuration"]}
assert sorted(conf) == ["01-build", "03-fail"], conf
for name in conf:
    data = open("%s/%s.sh" % (recipes, name), "rb").read()
    assert conf[name]["digest"] == {"sha256": hashlib.sha256(data).hexdigest()}, conf[name]
    assert conf[name]["uri"] == "file://%s/%s.sh" % (recipes, name), conf[name]
assert conf["03-fail"]["annotations"]["status"] == "failing", conf
typ = env["payloadType"].encode()
pae = b"DSSEv1 %d %s %d %s" % (len(typ), typ, len(payload), payload)
open(t + "/pae", "wb").write(pae)
open(t + "/sig", "wb").write(base64.b64decode(env["signatures"][0]["sig"], validate=True))
open(t + "/keyid", "w").write(env["signatures"][0]["keyid"])
EOF
openssl pkeyutl -verify -pubin -inkey "$pub" -rawin -in "$T/pae" -sigfile "$T/sig" >"$T/ossl" 2>&1 ||
	fail "openssl does not verify the signature: $(cat "$T/ossl")"
assert_contains "$(cat "$T/ossl")" "Signature Verified Successfully" "openssl"
keyid=$(openssl pkey -pubin -in "$pub" -outform DER | sha256sum | cut -d' ' -f1)
assert_eq "$keyid" "$(cat "$T/keyid")" "keyid: sha256 of the DER public key"

# refused FILE WHY [ARG...] : verify FILE --key ARGs exits 1 with "packetfs: verify: " and WHY.
refused()
{
	local file=$1 why=$2 out rc=0
	shift 2
	out=$("$PFS" verify "$file" "$@" 2>&1) || rc=$?
	assert_eq 1 "$rc" "exit status of verify ($why)"
	assert_contains "$out" "packetfs: verify: " "error of verify ($why)"
	assert_contains "$out" "$why" "error of verify"
}
# tamper WHAT OUT : a copy of env.json with one byte of the payload or of the signature changed.
tamper()
{
	python3 - "$T/env.json" "$1" >"$2" <<'EOF'
import base64, json, sys
env = json.load(open(sys.argv[1]))
if sys.argv[2] == "payload":
    b = bytearray(base64.b64decode(env["payload"]))
    i = b.index(b"FAILED")
    b[i:i + 6] = b"PASSED"
    env["payload"] = base64.b64encode(bytes(b)).decode()
else:
    b = bytearray(base64.b64decode(env["signatures"][0]["sig"]))
    b[10] ^= 1
    env["signatures"][0]["sig"] = base64.b64encode(bytes(b)).decode()
print(json.dumps(env))
EOF
}
tamper payload "$T/bad-payload.json"
refused "$T/bad-payload.json" "no signature verifies" --key "$pub"
tamper sig "$T/bad-sig.json"
refused "$T/bad-sig.json" "no signature verifies" --key "$pub"
refused "$T/env.json" "no signature verifies" --key "$T/store2/signing.pub"
other=$(git -C "$REPO" rev-parse main)
[ "$other" != "$head" ] || other=0000000000000000000000000000000000000000
refused "$T/env.json" "not $other" --key "$pub" --subject "$other"
printf '{"payloadType": "application/vnd.in-toto+json", "payload": ' >"$T/trunc.json"
refused "$T/trunc.json" "not a JSON object" --key "$pub"
sed 's/"payload":[[:space:]]*"/&!!/' "$T/env.json" >"$T/bad-b64.json"
refused "$T/bad-b64.json" "payload is not base64" --key "$pub"
refused "$T/env.json" "not an ed25519 public key" --key "$T/env.json"

# A wrong payloadType, signed all the same (by openssl, with the store's key).
python3 - "$T" <<'EOF'
import base64, json, sys
t = sys.argv[1]
env = json.load(open(t + "/env.json"))
payload = base64.b64decode(env["payload"])
typ = b"text/plain"
open(t + "/pae2", "wb").write(b"DSSEv1 %d %s %d %s" % (len(typ), typ, len(payload), payload))
env["payloadType"] = typ.decode()
json.dump(env, open(t + "/type.json", "w"))
EOF
openssl pkeyutl -sign -inkey "$STORE/signing.key" -rawin -in "$T/pae2" -out "$T/sig2" ||
	fail "openssl cannot sign"
python3 - "$T" <<'EOF'
import base64, json, sys
t = sys.argv[1]
env = json.load(open(t + "/type.json"))
env["signatures"][0]["sig"] = base64.b64encode(open(t + "/sig2", "rb").read()).decode()
json.dump(env, open(t + "/type.json", "w"))
EOF
refused "$T/type.json" "payloadType is text/plain, not application/vnd.in-toto+json" --key "$pub"

# Usage.
rc=0
"$PFS" verify "$T/env.json" >/dev/null 2>&1 || rc=$?
assert_eq 2 "$rc" "verify without --key"
out=$("$PFS" attest "$M" no-such 2>&1) && fail "attest of a missing item succeeded"
assert_contains "$out" "packetfs: attest: no-such: no such item" "attest of a missing item"

# A store made before keys existed gets its pair at its first attest.
rm "$STORE/signing.key" "$STORE/signing.pub"
"$PFS" attest "$STORE" fix-1 >"$T/env3.json" 2>"$T/attest3.err" || fail "attest without a key"
assert_contains "$(cat "$T/attest3.err")" "made the store's signing key pair" "attest's note"
assert_eq 600 "$(stat -c %a "$STORE/signing.key")" "mode of the new signing.key"
"$PFS" verify "$T/env3.json" --key "$STORE/signing.pub" >/dev/null || fail "verify with the new key"
refused "$T/env3.json" "no signature verifies" --key "$T/store2/signing.pub"
exit 0
