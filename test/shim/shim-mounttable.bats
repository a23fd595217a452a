#!/usr/bin/env bats
# The virtual mount table (issue 4 item 1, shim/mounttable.c): after the
# RFC's Example 1 through the shim and the real broker (under legacy-sim),
# a jail without /proc reads its own table from the broker, by every entry
# point, and util-linux shows and uses it; the host, shim loaded, sees the
# propagation the kernel itself does not have.  Other names are the
# kernel's, and without a broker so is the table.

load ../lib/broker

MTREAD=$(libshare_find test/shim/mtread)

setup() {
	broker_setup
	mkdir -p "$S/floppy" "$J/floppy"
	host mount --bind "$S/floppy" "$S/floppy"
	host mount --make-shared "$S/floppy"
	host mount --bind "$S/floppy" "$J/floppy"
	jail mount --make-slave /floppy
	host mount -t tmpfs DISK "$S/floppy"
}

teardown() { broker_teardown; }

# The mountinfo line whose mountpoint (field 5) is $1 and source $2.
line_of() {
	awk -v mp="$1" -v src="$2" '{
		for (i = 7; $i != "-"; i++) ;
		if ($5 == mp && $(i + 2) == src) print
	}'
}

@test "jail: cat /proc/self/mountinfo shows the jail's mounts, relative to it, with master:N" {
	[ ! -e "$J/proc" ]
	run jail cat /proc/self/mountinfo
	[ "$status" -eq 0 ]
	echo "$output"
	[[ "$(line_of /floppy DISK <<<"$output")" == *" master:"* ]]
	[ -n "$(line_of /floppy "$S/floppy" <<<"$output")$(line_of /floppy sandbox <<<"$output")" ]
	# nothing outside the jail, no host path
	[[ "$output" != *"$S"* ]]
	# the kernel itself propagates nothing
	assert_kernel_private
}

@test "jail: findmnt -o TARGET,PROPAGATION says private,slave for /floppy" {
	run jail findmnt -n -o TARGET,PROPAGATION /floppy
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"/floppy private,slave"* ]]
	run jail findmnt -J
	[ "$status" -eq 0 ]
	python3 -c 'import json, sys; json.loads(sys.argv[1])' "$output"
}

@test "host: findmnt shows the host's /floppy shared" {
	run host findmnt -n -o TARGET,PROPAGATION "$S/floppy"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"$S/floppy shared"* ]]
	# the kernel's own table says private
	run findmnt -n -o PROPAGATION "$S/floppy"
	[[ "$output" != *shared* ]]
}

@test "jail: mount lists DISK, umount /floppy uses the virtual table" {
	run jail mount
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"DISK on /floppy type tmpfs"* ]]
	run jail umount /floppy
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(mountpoints_of DISK)" = "$S/floppy" ]
	run jail cat /proc/mounts
	[[ "$output" != *DISK* ]]
}

@test "jail: every entry point of mtread" {
	local p a ref
	ref=$(jail "$MTREAD" open /proc/self/mountinfo | cut -d' ' -f3-)
	[ -n "$(line_of /floppy DISK <<<"$(jail "$MTREAD" open /proc/self/mountinfo)")" ]
	for p in open open64 fopen fopen64 freopen sys-open sys-openat; do
		for a in /proc/self/mountinfo //proc/./self//mountinfo \
			 /proc/thread-self/mountinfo; do
			run jail "$MTREAD" $p "$a"
			[ "$status" -eq 0 ] || { echo "$p $a: $output"; return 1; }
			[ "$(cut -d' ' -f3- <<<"$output")" = "$ref" ] ||
				{ echo "$p $a: $output"; return 1; }
		done
	done
	for p in pid tid; do
		run jail "$MTREAD" $p mountinfo
		[ "$(cut -d' ' -f3- <<<"$output")" = "$ref" ]
		run jail "$MTREAD" $p mounts
		[[ "$output" == *"DISK /floppy tmpfs "* ]]
	done
	for a in /proc/mounts /proc/self/mounts /etc/mtab; do
		run jail "$MTREAD" setmntent "$a"
		[ "$status" -eq 0 ]
		[[ "$output" == *"DISK /floppy tmpfs"* ]] ||
			{ echo "setmntent $a: $output"; return 1; }
		run jail "$MTREAD" open "$a"
		[[ "$output" == *"DISK /floppy tmpfs "* ]]
	done
	run jail "$MTREAD" access /proc/self/mountinfo
	[ "$output" = "access: ok" ]
	run jail "$MTREAD" cloexec /proc/self/mountinfo
	[ "$output" = "1 0" ]
	# a write open is the kernel's own: root may open mountinfo so (and
	# fails each write), as without the shim
	run jail "$MTREAD" write /proc/self/mountinfo
	[ "$output" = "$(native "$MTREAD" write /proc/self/mountinfo)" ]
	[ "$output" = "write: opened" ]
}

@test "host: openat with a dirfd of /proc, relative names after chdir, /proc/<pid>/mounts" {
	run host "$MTREAD" openat /proc self/mountinfo
	[ "$status" -eq 0 ]
	[[ "$(line_of "$S/floppy" DISK <<<"$output")" == *" shared:"* ]]
	run host "$MTREAD" openat /proc/self mountinfo
	[[ "$(line_of "$S/floppy" DISK <<<"$output")" == *" shared:"* ]]
	run host "$MTREAD" chdir /proc self/mountinfo
	[[ "$(line_of "$S/floppy" DISK <<<"$output")" == *" shared:"* ]]
	run host "$MTREAD" chdir /proc mounts
	[[ "$output" == *"DISK $S/floppy tmpfs "* ]]
	# python (open64 or openat) is too big for a bare jail: on the host
	run host python3 -c "print(open('/proc/self/mountinfo').read(), end='')"
	[ "$status" -eq 0 ]
	[[ "$(line_of "$S/floppy" DISK <<<"$output")" == *" shared:"* ]]
	run host "$MTREAD" pid mounts
	[[ "$output" == *"DISK $S/floppy tmpfs "* ]]
	run host "$MTREAD" setmntent /proc/self/mountinfo
	[ "$status" -eq 0 ]
	# the kernel's table has no shared: field here; the broker's has
	run host cat /proc/self/mountinfo
	[[ "$(line_of "$S/floppy" DISK <<<"$output")" == *" shared:"* ]]
	[[ "$(line_of "$S/floppy" DISK </proc/self/mountinfo)" != *" shared:"* ]]
}

# Programs built with -D_FORTIFY_SOURCE call glibc's __open_2 for an open
# whose flags the compiler cannot see.  Run without spy (which has an
# __open_2 of its own), chrooted through the shim as a jailed program is.
@test "jail: a fortified __open_2 of /proc/self/mountinfo is served as open() is" {
	local ref
	[ ! -e "$J/proc" ]
	run shimmed "$MTREAD" --chroot "$J" open /proc/self/mountinfo
	[ "$status" -eq 0 ]
	[[ "$(line_of /floppy DISK <<<"$output")" == *" master:"* ]]
	ref=$(cut -d' ' -f3- <<<"$output")
	run shimmed "$MTREAD" --chroot "$J" open_2 /proc/self/mountinfo
	[ "$status" -eq 0 ]
	[ "$(cut -d' ' -f3- <<<"$output")" = "$ref" ]
	# the kernel alone has no such file in the jail
	run "$MTREAD" --chroot "$J" open_2 /proc/self/mountinfo
	[ "$output" = "open_2: ENOENT" ]
	# on the host, the broker's table: shared:, which the kernel's lacks
	run shimmed "$MTREAD" open_2 /proc/self/mountinfo
	[ "$status" -eq 0 ]
	[[ "$(line_of "$S/floppy" DISK <<<"$output")" == *" shared:"* ]]
}

@test "a mount that just returned is listed; a name with a space is escaped" {
	mkdir -p "$J/new" "$J/with space"
	run jail "$MTREAD" mount-read FRESH /new
	echo "$output"
	[ "$status" -eq 0 ]
	[ -n "$(line_of /new FRESH <<<"$output")" ]
	jail mount -t tmpfs SPACED "/with space"
	run jail cat /proc/self/mountinfo
	[[ "$output" == *' /with\040space '* ]]
}

@test "other names under /proc are the kernel's; without a broker so is the table" {
	run host cat /proc/self/status
	[[ "$output" == *"Name:"*cat* ]]
	run host "$MTREAD" openat /proc self/stat
	[ "$status" -eq 0 ]
	[[ "$output" == *mtread* ]]
	# no broker: the kernel's own file, for a jail that has none of /proc
	run env LIBSHARE_SOCKET=@libshare-none-$$ LD_PRELOAD="$SHIM" \
		cat /proc/self/mountinfo
	[ "$status" -eq 0 ]
	[ "$output" = "$(cat /proc/self/mountinfo)" ]
	run env LIBSHARE_SOCKET=@libshare-none-$$ LD_PRELOAD="$SHIM" \
		"$MTREAD" fopen /proc/self/mountinfo
	[ "$output" = "$(cat /proc/self/mountinfo)" ]
}

@test "jail: df lists the jail's own mounts from the virtual table" {
	run jail df -P /floppy
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$(tail -n 1 <<<"$output")" == DISK*" /floppy" ]]
	run jail df -a -P
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q '^DISK .* /floppy$' <<<"$output"
	# nothing outside the jail
	! grep -qF "$S" <<<"$output"
}

@test "names with a tab, a newline and a backslash are escaped as the kernel escapes them" {
	local t=$'tab\tname' n=$'new\nline' b='back\slash'
	mkdir -p "$J/$t" "$J/$n" "$J/$b"
	jail mount -t tmpfs T1 "/$t"
	jail mount -t tmpfs T2 "/$n"
	jail mount -t tmpfs T3 "/$b"
	run jail cat /proc/self/mountinfo
	echo "$output"
	[[ "$output" == *' /tab\011name '* ]]
	[[ "$output" == *' /new\012line '* ]]
	[[ "$output" == *' /back\134slash '* ]]
	# the same escapes as the kernel's own table for the real mounts
	grep -qF "$J/tab\\011name " /proc/self/mountinfo
	grep -qF "$J/new\\012line " /proc/self/mountinfo
	grep -qF "$J/back\\134slash " /proc/self/mountinfo
}

@test "jail with /proc mounted: its mount table is still the broker's view of the jail" {
	mkdir -p "$J/proc"
	mount -t proc proc "$J/proc"          # natively, behind the broker
	run jail cat /proc/self/mountinfo
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$(line_of /floppy DISK <<<"$output")" == *" master:"* ]]
	[ -n "$(awk '$5 == "/proc"' <<<"$output")" ]
	[[ "$output" != *"$S"* ]]
	run jail findmnt -n -o TARGET,PROPAGATION /floppy
	[[ "$output" == *"/floppy private,slave"* ]]
	# while the kernel's own table has no propagation fields at all
	! grep -q "master:" "$J/proc/self/mountinfo"
}
