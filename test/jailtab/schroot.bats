#!/usr/bin/env bats
# schroot with the libshare hook and profile (schroot/): a real schroot
# session of a mkjail.sh jail receives, through the broker, a slave of the
# host's shared tree as the profile's jailtab declares it; a mount the host
# makes there later shows in the session, whose programs load the shim and
# see the propagation; the session is known to the broker; ending the
# session leaves no mount of it behind.
#
# Private to the test: /etc/schroot (the shipped hook and profile, beside
# schroot's own setup.d scripts), /run/schroot and /var/lib/schroot, each
# mounted over in the test's mount namespace before its broker starts.

load ../lib/broker

MKJAIL=$(cd "$BATS_TEST_DIRNAME/../../jail-examples" && pwd)/mkjail.sh
SRC=$(cd "$BATS_TEST_DIRNAME/../../schroot" && pwd)
CONFIG=$(libshare_find schroot/config)

# /etc/schroot of the test: schroot's setup.d with our hook, our profile
# (config told where this build's sharectl, shim and broker are), and a
# chroot "libshare-test" of the jail $J.
private_schroot() {
	local etc=$BATS_TEST_TMPDIR/etc-schroot
	mkdir -p "$etc/chroot.d" "$etc/libshare" /run/schroot
	cp -a /etc/schroot/setup.d "$etc/"
	cp "$SRC/12libshare" "$etc/setup.d/"
	: >"$etc/schroot.conf"
	cp "$SRC/fstab" "$SRC/copyfiles" "$SRC/nssdatabases" "$etc/libshare/"
	cp "$CONFIG" "$etc/libshare/config"
	mount --bind "$etc" /etc/schroot
	mount -t tmpfs schroot-run /run/schroot
	mount -t tmpfs schroot-lib /var/lib/schroot
	mkdir -p /var/lib/schroot/session /var/lib/schroot/unpack \
		/var/lib/schroot/union/overlay /var/lib/schroot/union/underlay
}

setup() {
	command -v schroot >/dev/null || skip "schroot is not installed"
	private_schroot
	broker_setup
	cat >>/etc/schroot/libshare/config <<-EOT
	LIBSHARE_SHARECTL=$SHARECTL
	LIBSHARE_SO=$SHIM
	LIBSHARE_SOCKET=$LIBSHARE_SOCKET
	EOT
	echo "$S/shared /mnt none bind,slave 0 0" >/etc/schroot/libshare/jailtab
	# the jail, its mounts made through the broker (it runs already)
	LD_PRELOAD=$SHIM "$MKJAIL" "$J" "$SHIM" >/dev/null
	mkdir -p "$S/shared/disk" "$J/mnt"
	"$SHARECTL" apply /dev/stdin <<<"$S/shared $S/shared none bind,shared"
	cat >/etc/schroot/chroot.d/libshare-test <<-EOT
	[libshare-test]
	type=directory
	directory=$J
	profile=libshare
	users=root
	root-users=root
	EOT
	SESSION=
}

teardown() {
	if [ -n "$SESSION" ]; then
		schroot -e -c "$SESSION" 2>/dev/null || true
	fi
	broker_teardown
	umount -l /etc/schroot /run/schroot /var/lib/schroot 2>/dev/null || true
}

# The kernel's mounts under the session's root, or of the jail.
session_mounts() {
	awk -v r="$1" '$5 == r || index($5, r "/") == 1 { print $5 }' \
		/proc/self/mountinfo
}

@test "schroot: the session loads the shim and sees a mount the host makes later" {
	SESSION=$(schroot -b -c libshare-test)
	local root
	root=$(realpath "$(schroot --location -c "session:$SESSION")")
	[ -n "$root" ]
	host mount -t tmpfs DISK "$S/shared/disk"
	echo floppy >"$S/shared/disk/hello"
	run schroot -r -c "$SESSION" -d / -- cat /mnt/disk/hello
	[ "$status" -eq 0 ]
	[ "$output" = floppy ]
	# the session's programs see the broker's table: the slave (-p: the
	# test's broker is not at the default socket, LIBSHARE_SOCKET names it)
	run schroot -p -r -c "$SESSION" -d / -- findmnt -n -o PROPAGATION /mnt
	echo "$output"
	[ "$output" = "private,slave" ]
	# schroot's --make-private in 10mount did not undo it: the broker's
	# tree has the session's /mnt as a slave
	run "$SHARECTL" tree
	[[ $output =~ $root/mnt\ +sandbox\[/shared\]\ +/shared\ +private,slave ]]
	# and the broker heard from the session's own processes
	grep -qF "(root $root)" "$STATE/sharebrokerd.log"
}

@test "schroot: ending the session leaves none of its mounts, the host's stay" {
	local before root
	before=$(table)
	SESSION=$(schroot -b -c libshare-test)
	root=$(realpath "$(schroot --location -c "session:$SESSION")")
	host mount -t tmpfs DISK "$S/shared/disk"
	[ "$(mountpoints_of DISK | LC_ALL=C sort)" = \
	  "$(printf '%s\n' "$root/mnt/disk" "$S/shared/disk" | LC_ALL=C sort)" ]
	[ -n "$(session_mounts "$root")" ]
	schroot -e -c "$SESSION"
	SESSION=
	[ -z "$(session_mounts "$root")" ]
	[ ! -e "$root" ]
	# the host's floppy stays; nothing else changed in the sandbox
	[ "$(mountpoints_of DISK)" = "$S/shared/disk" ]
	[ "$(table | grep -v ' DISK ')" = "$before" ]
	assert_count_agrees
}
