#!/usr/bin/env bats
# Programs that call mount(2) and umount2(2) themselves, not util-linux:
# through libc and through syscall(2), from many threads at once, across
# fork and vfork, after closing every descriptor, and one that bypasses the
# shim altogether (a static binary).  Inside a jail each
# gets what the kernel gives it (same_as_kernel: the same program natively
# in a scratch namespace).

load ../lib/broker

setup() {
	broker_setup
	mkdir -p "$J/a/sub" "$J/b" "$J/c"
}

teardown() { broker_teardown; }

# Success, ENOENT for a missing target, EINVAL for the umount of a
# directory that is no mount point, EBUSY for one with a submount.
STEPS=(mount /a /b - bind
       mount none /b/sub tmpfs 0
       mount none /missing tmpfs 0
       umount /c 0
       umount /missing 0
       umount /b 0
       umount /b/sub 0
       umount /b 0)
EXPECTED="mount /b = 0
mount /b/sub = 0
mount /missing = ENOENT
umount /c = EINVAL
umount /missing = ENOENT
umount /b = EBUSY
umount /b/sub = 0
umount /b = 0"

@test "mount(2) and umount2(2) through libc in a jail: 0, ENOENT, EINVAL, EBUSY as natively" {
	snapshot before
	same_as_kernel shimmed "$CALLER" --chroot "$J" "${STEPS[@]}"
	[ "$(sed -n 1,8p <<<"$output")" = "$EXPECTED" ]
	assert_table_unchanged before
}

@test "syscall(SYS_mount) and syscall(SYS_umount2) in a jail: the same answers" {
	snapshot before
	same_as_kernel shimmed "$CALLER" --raw --chroot "$J" "${STEPS[@]}"
	[ "$(sed -n 1,8p <<<"$output")" = "$EXPECTED" ]
	assert_table_unchanged before
}

@test "bad flags and MNT_EXPIRE in a jail: EINVAL, EAGAIN then 0, as natively" {
	snapshot before
	same_as_kernel shimmed "$CALLER" --chroot "$J" \
		umount /c 0x100 \
		mount none /c - shared,private \
		mount none /c - shared \
		mount none /c tmpfs 0 \
		umount /c expire,detach \
		umount /c expire \
		umount /c expire \
		umount /c 0
	[ "$(sed -n 1,8p <<<"$output")" = "umount /c = EINVAL
mount /c = EINVAL
mount /c = EINVAL
mount /c = 0
umount /c = EINVAL
umount /c = EAGAIN
umount /c = 0
umount /c = EINVAL" ]
	assert_table_unchanged before
}

@test "threads mounting and unmounting their own directories at once all succeed" {
	local i
	for ((i = 0; i < 8; i++)); do mkdir "$J/t$i"; done
	snapshot before
	run shimmed "$CALLER" --chroot "$J" --threads 8 --repeat 25 \
		mount none /t%t tmpfs 0 umount /t%t 0
	[ "$(grep -c . <<<"$output")" = 400 ]
	[ "$(grep -c ' = 0$' <<<"$output")" = 400 ]
	for ((i = 0; i < 8; i++)); do
		[ "$(grep -c "^$i mount /t$i = 0\$" <<<"$output")" = 25 ]
		[ "$(grep -c "^$i umount /t$i = 0\$" <<<"$output")" = 25 ]
	done
	assert_table_unchanged before
	assert_broker_serves
}

@test "a thread with a cwd of its own: its relative paths start there, as natively" {
	mkdir -p "$J/a/x" "$J/x"
	# the main thread stays at the jail's /, the calling thread is in /a
	same_as_kernel shimmed "$CALLER" --chroot "$J" --own-cwd /a \
		mount none x tmpfs 0
	grep -qx "\$S/jail/a/x / tmpfs none rw/rw on \$S" <<<"$output"
}

@test "a caller that forks: parent and child both get through" {
	mkdir "$J/f0" "$J/f1"
	run shimmed "$CALLER" --chroot "$J" --fork mount none /f%t tmpfs 0
	[ "$(sort <<<"$output")" = "0 mount /f0 = 0"$'\n'"1 mount /f1 = 0" ]
	is_mountpoint "$J/f0"
	is_mountpoint "$J/f1"
}

@test "a caller that vforks: the child gets through, then the parent" {
	mkdir "$J/v0" "$J/v1"
	run shimmed "$CALLER" --chroot "$J" --vfork mount none /v%t tmpfs 0
	[ "$output" = "1 mount /v1 = 0"$'\n'"0 mount /v0 = 0" ]
	is_mountpoint "$J/v0"
	is_mountpoint "$J/v1"
}

@test "a caller that closed every descriptor still gets through" {
	run shimmed "$CALLER" --chroot "$J" --closefds /results \
		mount none /c tmpfs 0 umount /c 0 mount none /c tmpfs 0
	[ "$status" -eq 0 ]
	[ "$(cat "$J/results")" = "mount /c = 0
umount /c = 0
mount /c = 0" ]
	is_mountpoint "$J/c"
}


@test "a mount made without the shim (a static binary in the jail) is known at the next request" {
	mkdir "$J/x"
	# straight to the kernel, as a static busybox in a jail would
	"$CALLER" --chroot "$J" mount none /x tmpfs 0
	is_mountpoint "$J/x"
	run shimmed "$CALLER" --chroot "$J" umount /x 0
	[ "$output" = "umount /x = 0" ]
	run is_mountpoint "$J/x"
	[ "$status" -ne 0 ]
}

@test "a caller holding 19,000 descriptors is known by the one it names: it gets through" {
	local hard
	hard=$(ulimit -Hn)
	[ "$hard" = unlimited ] || [ "$hard" -ge 19500 ] ||
		skip "RLIMIT_NOFILE's hard limit is $hard here"
	run bash -c '
		ulimit -n 19500
		for ((i = 0; i < 19000; i++)); do exec {fd}</dev/null; done
		"$@"' bash env LD_PRELOAD="$SHIM" "$CALLER" --chroot "$J" \
			mount none /c tmpfs 0 umount /c 0
	[ "$output" = "mount /c = 0
umount /c = 0" ]
}

@test "a client naming a descriptor that is not its connection is refused: ESRCH" {
	run "$RAWCLIENT" --op status --fd1 1
	[ "$output" = "reply op=5 error=ESRCH" ]
	run "$RAWCLIENT" --op status --fd1 4000000000
	[ "$output" = "reply op=5 error=ESRCH" ]
	assert_broker_serves
}
