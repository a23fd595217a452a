#!/usr/bin/env bats
# In a jail built by mkjail.sh, the unmodified mount and umount of
# util-linux and a program calling mount(2) and umount2(2) through libc
# behave as on Linux, messages and exit statuses included.  The same
# commands run in two jails of the same namespace: $S/shim, where the shim
# forwards them to a broker (broker and jail under the legacy simulation),
# and $S/native, the same jail without the shim, where the kernel itself
# answers (in a scratch copy of the namespace, so that nothing it mounts
# reaches the broker's table).  Both have /proc mounted, as jails usually
# do; in the shim jail the shim serves its mount table.  Their output must
# be identical.

load helpers

# mount-calls: each call's result as "call: OK" or "call: ERRNO (text)".
setup_file() {
	cat >"$BATS_FILE_TMPDIR/mount-calls.c" <<'EOF'
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/syscall.h>

static void report(const char *what, long r)
{
	if (r == 0)
		printf("%s: OK\n", what);
	else
		printf("%s: %d (%s)\n", what, errno, strerror(errno));
}

#define CALL(expr) report(#expr, (long)(expr))

int main(void)
{
	CALL(mount("none", "/mnt", "tmpfs", 0, NULL));
	CALL(mount("none", "/mnt", "tmpfs", MS_NOEXEC, "size=1m"));
	CALL(umount2("/mnt", 0));
	CALL(umount("/mnt"));
	CALL(umount("/mnt"));
	CALL(umount("/nonexistent"));
	CALL(mount("/nonexistent", "/mnt", NULL, MS_BIND, NULL));
	CALL(mount("none", "/nonexistent", "tmpfs", 0, NULL));
	CALL(mount("none", "/mnt", "nosuchfs", 0, NULL));
	CALL(mount("none", "/mnt", "", 0, NULL));
	CALL(mount(NULL, "/mnt", NULL, MS_SHARED, NULL));
	CALL(mount(NULL, "/mnt", NULL, MS_SHARED | MS_SLAVE, NULL));
	CALL(mount("/mnt", "/mnt2", NULL, MS_MOVE, NULL));
	CALL(mount("/file", "/mnt", NULL, MS_BIND, NULL));
	CALL(mount(NULL, "/mnt", NULL, MS_REMOUNT | MS_RDONLY, NULL));
	CALL(umount2("/mnt", MNT_EXPIRE | MNT_FORCE));
	CALL(umount2("/mnt", 0x100));
	CALL(syscall(SYS_mount, "none", "/mnt", "tmpfs", 0, NULL));
	CALL(mount("/mnt", "/mnt2", NULL, MS_BIND, NULL));
	CALL(mount(NULL, "/mnt2", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL));
	int fd = open("/mnt2/f", O_CREAT | O_WRONLY, 0644);
	report("open(\"/mnt2/f\", O_CREAT)", fd < 0 ? -1 : (close(fd), 0));
	CALL(chdir("/mnt"));
	CALL(umount("/mnt"));
	CALL(chdir("/"));
	CALL(syscall(SYS_umount2, "/mnt2", 0));
	CALL(umount2("/mnt", MNT_DETACH));
	CALL(umount("/"));
	return 0;
}
EOF
	cc -Wall -o "$BATS_FILE_TMPDIR/mount-calls" \
		"$BATS_FILE_TMPDIR/mount-calls.c"
}

setup() {
	require_built
	legacy_require
	sandbox_setup
	local j
	"$MKJAIL" "$S/shim" "$LIBSHARE_SO"
	"$MKJAIL" --no-shim "$S/native"
	for j in shim native; do
		mkdir "$S/$j/mnt" "$S/$j/mnt2"
		echo file >"$S/$j/file"
		cp "$BATS_FILE_TMPDIR/mount-calls" "$S/$j/mount-calls"
		# util-linux reads /proc (the mount table, the filesystem
		# types): both jails have it, before the broker starts
		mount -t proc proc "$S/$j/proc"
	done
	SOCK=@libshare-jail-mount-$$-$BATS_TEST_NUMBER
	broker_start "$SOCK"
}

teardown() {
	broker_stop "$SOCK"
	sandbox_teardown
}

# Under the legacy simulation, state in the sandbox; it detaches once ready.
broker_start() {
	legacy "$SHAREBROKERD" --socket "$1" --state-dir "$S/state.$1" \
		--debug --log "$S/broker$1.log" 2>/dev/null
}

broker_stop() {
	local i
	"$SHARECTL" --socket "$1" stop >/dev/null 2>&1 || return 0
	for ((i = 0; i < 50; i++)); do
		"$SHARECTL" --socket "$1" status >/dev/null 2>&1 || return 0
		sleep 0.1
	done
	echo "the broker on $1 did not stop" >&2
	return 1
}

# compare [--user UID] SCRIPT: runs the shell script in both jails (as root
# or as UID) and fails, showing both, unless stdout, stderr and the exit
# statuses it prints agree.  The shim jail's commands reach the broker on
# $SOCK, or the default socket when none is set.  Every script here calls
# mount(2) or umount2(2) at least once.
compare() {
	local user=() shim native
	if [ "$1" = --user ]; then
		user=(--userspec="$2:$2")
		shift 2
	fi
	shim=$(env -u LD_PRELOAD ${SOCK:+LIBSHARE_SOCKET="$SOCK"} \
		"$LEGACY_SIM" -- chroot "${user[@]}" "$S/shim" /bin/sh -c "$1" 2>&1)
	native=$(env -u LD_PRELOAD unshare -m --propagation unchanged \
		chroot "${user[@]}" "$S/native" /bin/sh -c "$1" 2>&1)
	# the same answers could come from the kernel if the shim were not
	# loaded: the broker must have heard from the jail (its log names
	# each request's root; sharectl jails lists only roots still lived in)
	if [ -n "${SOCK:-}" ] &&
		! grep -qF "(root $S/shim)" "$S/broker$SOCK.log"; then
		echo "the broker never heard from $S/shim" >&2
		return 1
	fi
	if [ "$shim" != "$native" ]; then
		echo "the kernel (native jail):"
		echo "$native"
		echo "libshare (shim jail):"
		echo "$shim"
		diff <(echo "$native") <(echo "$shim")
		return 1
	fi
	echo "$shim"
}

@test "mount --bind of a missing source, mount on a missing target" {
	compare 'mount --bind /nonexistent /mnt; echo status $?
		mount -t tmpfs x /nonexistent; echo status $?'
}

@test "umount of a directory that is not mounted, of a missing path, of the jail's root" {
	compare 'umount /mnt; echo status $?
		umount /notmounted; echo status $?
		umount -l /mnt; echo status $?
		umount /; echo status $?'
}

@test "mount -t tmpfs and umount: what the jail sees in between" {
	compare 'mount -t tmpfs x /mnt; echo status $?
		echo data >/mnt/f; ls /mnt
		umount /mnt; echo status $?; ls /mnt
		umount /mnt; echo status $?'
}

@test "stacked mounts come off one at a time" {
	compare 'mount -t tmpfs a /mnt; mount -t tmpfs b /mnt
		echo top >/mnt/f
		umount /mnt; echo status $?; ls /mnt
		umount /mnt; echo status $?
		umount /mnt; echo status $?'
}

@test "umount of a busy mount: target is busy, and it stays mounted" {
	compare 'mount -t tmpfs x /mnt; echo data >/mnt/f
		cd /mnt; umount /mnt; echo status $?; cd /
		cat /mnt/f; umount /mnt; echo status $?'
}

@test "propagation, move, remount of a directory that is not a mount point" {
	compare 'mount --make-shared /mnt; echo status $?
		mount --make-rslave /mnt; echo status $?
		mount --move /mnt /mnt2; echo status $?
		mount -o remount,ro /mnt; echo status $?'
}

@test "binding a file on a directory, an unknown filesystem type" {
	compare 'mount --bind /file /mnt; echo status $?
		mount -t nosuchfs x /mnt; echo status $?'
}

@test "a read-only bind: writes fail with the kernel's error" {
	compare 'mount --bind /mnt /mnt; mount -o remount,bind,ro /mnt
		echo status $?; touch /mnt/x; echo status $?
		umount /mnt; echo status $?; touch /mnt/x; echo status $?'
}

@test "rbind and move of real mounts" {
	compare 'mount -t tmpfs x /mnt; mkdir /mnt/sub
		mount -t tmpfs y /mnt/sub; echo in-sub >/mnt/sub/f
		mount --rbind /mnt /mnt2; echo status $?; cat /mnt2/sub/f
		umount /mnt2/sub; umount /mnt2; echo status $?
		mount --move /mnt/sub /mnt2; echo status $?; cat /mnt2/f
		umount /mnt2; umount /mnt; echo status $?'
}

@test "a C program calling mount(2), umount2(2) and syscall(SYS_mount) gets the kernel's errnos" {
	compare '/mount-calls; echo status $?'
}

@test "a non-root user: the C program's calls are refused with the kernel's errnos" {
	compare --user 65534 '/mount-calls; echo status $?'
}

@test "a non-root user: the setuid mount and umount reach the broker through ld.so.preload and are refused as by the kernel" {
	# A setuid program ignores LIBSHARE_SOCKET: only a broker on the
	# default socket serves it.  A network namespace of this test's own
	# gives the default abstract name to this test's broker alone.
	broker_stop "$SOCK"
	run unshare -n bash -c "
		$(declare -f broker_start broker_stop compare legacy)
		S='$S' LEGACY_SIM='$LEGACY_SIM' SHAREBROKERD='$SHAREBROKERD' \
			SHARECTL='$SHARECTL' SOCK=
		broker_start @libshare || exit 1
		compare --user 65534 'mount -t tmpfs x /mnt; echo status \$?
			mount --bind /file /mnt; echo status \$?
			umount /mnt; echo status \$?'
		rc=\$?
		echo heard: \$(grep -cF \"(root \$S/shim)\" \"\$S/broker@libshare.log\")
		broker_stop @libshare
		exit \$rc"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"must be superuser"* ]]
	# the broker answered them: its log names the jail as their root
	[[ $output =~ heard:\ [1-9] ]]
}
