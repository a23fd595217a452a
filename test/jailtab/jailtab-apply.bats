#!/usr/bin/env bats
# sharectl apply: a jailtab (man/jailtab.5) made true through the broker.
# The host's $S/shared is bound onto itself and made shared; the jail $J
# gets a slave bind of it at /mnt and a tmpfs of its own.  A mount made
# later under the shared entry reaches the jail; a second apply calls
# nothing and leaves both tables byte for byte as they were; --dry-run
# names the receivers from the engine's plan and mounts nothing.

load ../lib/broker

setup() {
	broker_setup
	mkdir -p "$S/shared" "$J/mnt" "$J/data"
	TAB=$S/jailtab
	cat >"$TAB" <<-EOT
	# the host's tree that jails receive from
	$S/shared  $S/shared  none   bind,shared                      0 0
	# jail J
	$S/shared  $J/mnt     none   bind,slave,x-jail=$J             0 0
	JAILDATA   $J/data    tmpfs  size=1m,mode=0755,x-jail=$J      0 0
	EOT
}

teardown() { broker_teardown; }

# The table the broker shows through the shim, propagation fields included.
broker_view() {
	legacy env LD_PRELOAD="$SHIM" cat /proc/self/mountinfo
}

@test "apply: the declared mounts appear, with their propagation" {
	run "$SHARECTL" apply "$TAB"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"$TAB:2: bind $S/shared on $S/shared"* ]]
	[[ $output == *"$TAB:2: make shared"* ]]
	[[ $output == *"$TAB:4: make slave"* ]]
	[[ $output == *"sharectl: apply: 5 changes" ]]
	[ "$(mountpoints_of JAILDATA)" = "$J/data" ]
	run "$SHARECTL" tree
	[[ $output =~ $S/shared\ +sandbox\[/shared\]\ +/shared\ +shared ]]
	[[ $output =~ $J/mnt\ +sandbox\[/shared\]\ +/shared\ +private,slave ]]
	assert_kernel_private
}

@test "apply: a mount made later under the shared entry reaches the jail, not back" {
	"$SHARECTL" apply "$TAB"
	mkdir -p "$S/shared/disk"
	host mount -t tmpfs DISK "$S/shared/disk"
	echo floppy >"$S/shared/disk/hello"
	[ "$(mountpoints_of DISK)" = "$J/mnt/disk
$S/shared/disk" ]
	[ "$(cat "$J/mnt/disk/hello")" = floppy ]
	# the jail's slave sends nothing back to the host
	mkdir -p "$J/mnt/disk/own"
	jail mount -t tmpfs OWN /mnt/disk/own
	[ "$(mountpoints_of OWN)" = "$J/mnt/disk/own" ]
}

@test "apply twice: the second changes nothing, the tables are byte-identical" {
	"$SHARECTL" apply "$TAB"
	snapshot first
	broker_view >"$BATS_TEST_TMPDIR/view.first"
	run "$SHARECTL" apply "$TAB"
	[ "$status" -eq 0 ]
	[ "$output" = "sharectl: apply: 0 changes" ]
	assert_table_unchanged first
	broker_view | cmp - "$BATS_TEST_TMPDIR/view.first"
}

@test "apply: the broker shows the jail its mounts, as a process there sees them" {
	"$SHARECTL" apply "$TAB"
	run "$SHARECTL" tree --root "$J"
	[[ $output == *"/mnt "*"private,slave"* ]]
	[[ $output == *"/data "*"JAILDATA"* ]]
}

@test "apply: another mount at a declared target is left alone and reported" {
	host mount -t tmpfs OTHER "$J/data"
	run "$SHARECTL" apply "$TAB"
	[ "$status" -eq 1 ]
	[[ $output == *"$TAB:5: $J/data: OTHER (tmpfs) is mounted there; left alone"* ]]
	[ "$(mountpoints_of OTHER)" = "$J/data" ]
	[ -z "$(mountpoints_of JAILDATA)" ]
}

@test "apply --dry-run: what would be mounted and its receivers; nothing mounted" {
	"$SHARECTL" apply "$TAB"
	mkdir -p "$S/shared/new"
	echo "tmpfs $S/shared/new tmpfs defaults 0 0" >"$S/more.tab"
	snapshot before
	run "$SHARECTL" apply --dry-run "$S/more.tab"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$S/more.tab:1: would mount tmpfs on $S/shared/new type tmpfs" ]
	[ "${lines[1]}" = "    copies at: $J/mnt/new" ]
	[ "${lines[2]}" = "sharectl: apply --dry-run: 1 change" ]
	assert_table_unchanged before
}

@test "apply --dry-run from scratch: the slave's master and the peers" {
	run "$SHARECTL" apply --dry-run "$TAB"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"$TAB:4: would make slave
    receives from: $S/shared"* ]]
	[ -z "$(mountpoints_of JAILDATA)" ]
	! is_mountpoint "$J/mnt"
}

@test "apply without arguments: the default files, both missing here, are no error" {
	# the boot command; SYSCONFDIR/libshare holds no jailtab on a test host
	run "$SHARECTL" apply
	[ "$status" -eq 0 ]
	[ "$output" = "sharectl: apply: 0 changes" ]
}

@test "apply without a broker: exit 1, saying so, and nothing mounted" {
	run env LIBSHARE_SOCKET=@libshare-bats-none-$$ "$SHARECTL" apply "$TAB"
	[ "$status" -eq 1 ]
	[[ $output == "sharectl: no broker at @libshare-bats-none-$$: "* ]]
	! is_mountpoint "$J/mnt"
}
