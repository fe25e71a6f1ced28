#!/usr/bin/env bash
# The daemon speaks systemd's notify protocol (Type=notify): with NOTIFY_SOCKET set it sends
# READY=1 once the mount answers (in the foreground, as the unit runs it; and when it forks
# away, with MAINPID=its pid), and STOPPING=1 when it is unmounted: by SIGTERM, as systemd
# stops the unit, or by packetfs umount. The test listens on the unix datagram socket itself.
. "$(dirname "$0")/../lib.sh"
make_store
mkdir -p "$T/mnt"
MOUNTS+=("$T/mnt")

# notify_run MODE : runs the daemon (MODE "-f": in the foreground; "": daemonized) under a
# NOTIFY_SOCKET the script listens on, checks what arrives and when, then unmounts.
notify_run()
{
	python3 - "$PFS" "$STORE" "$T/mnt" "$T/notify.sock" "$1" <<'PY'
import os, socket, subprocess, sys, time
pfs, store, mnt, path, mode = sys.argv[1:6]
if os.path.exists(path):
    os.unlink(path)
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(path)
sock.settimeout(60)
env = dict(os.environ, NOTIFY_SOCKET=path)
args = [pfs, "mount", store, mnt] + ([mode] if mode else [])
proc = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL)

def fail(why):
    print("FAIL: " + why, file=sys.stderr)
    proc.kill()
    sys.exit(1)

def receive():
    try:
        return dict(l.split("=", 1) for l in sock.recv(4096).decode().split("\n") if "=" in l)
    except socket.timeout:
        fail("nothing arrived on NOTIFY_SOCKET in 60 s")

msg = receive()
# The mount answers the moment READY=1 arrives (a stat through it, and an item listing).
if msg.get("READY") != "1":
    fail("first notification is not READY=1: %r" % msg)
if not os.path.exists(os.path.join(mnt, ".packetfs", "version")):
    fail("READY=1 arrived before the mount answered")
os.listdir(mnt)
if mode:
    if "MAINPID" in msg:
        fail("MAINPID sent by a daemon in the foreground: %r" % msg)
    daemon = proc.pid
else:
    if proc.wait(timeout=60) != 0:
        fail("packetfs mount failed")
    daemon = int(msg.get("MAINPID", "0"))
    if daemon <= 0 or not os.path.exists("/proc/%d" % daemon):
        fail("READY=1 without the daemon's MAINPID: %r" % msg)
if mode:
    os.kill(daemon, 15)
else:
    out = subprocess.run([pfs, "umount", mnt], capture_output=True, text=True)
    if out.returncode != 0:
        fail("packetfs umount failed: " + out.stderr)
msg = receive()
if msg.get("STOPPING") != "1":
    fail("no STOPPING=1 at unmount: %r" % msg)
if mode and proc.wait(timeout=60) != 0:
    fail("packetfs mount -f exited with %d after SIGTERM" % proc.returncode)
if os.path.ismount(mnt):
    fail("still mounted after STOPPING=1")
print("notify %s: READY=1 then STOPPING=1" % (mode or "daemonized"))
PY
}

notify_run -f || fail "in the foreground"
notify_run "" || fail "daemonized"
[ -z "$(find_daemon "$STORE" "$T/mnt")" ] || fail "a daemon still runs"
exit 0
