#!/usr/bin/env bats
# What the broker starts from: the kernel's table and its own state file.
#
#   - `--mount-table /proc/mounts`, the path of kernels without mountinfo
#     (before 2.6.26): the broker counts as many mounts as the kernel has,
#     and RFC Example 1 (host /floppy shared, the jail's /floppy its slave;
#     a floppy mounted on the host shows in the jail, its umount takes it
#     away, a mount in the jail stays there) gives, step by step, the table
#     the kernel itself gives for the same commands (scratch namespace);
#   - a state file left by an earlier broker ($STATE/state) that is corrupt
#     is ignored without harm: with a wrong first line none of it applies
#     (a mount no longer propagates), garbage lines do not stop the broker
#     from starting and serving, a line that makes a mount its own master
#     does not hang it;
#   - a state line whose mount id now names another mount (ids are reused:
#     umount and mount again natively while no broker runs) is dropped, so
#     no stale propagation applies: whether the id now names another
#     filesystem, or a bind of the same directory at another place.

load ../lib/broker

setup() { broker_setup; }
teardown() { broker_teardown; }

# RFC Example 1's setup: the host's $S/floppy shared, the jail's /floppy
# bound from it and made a slave.
floppy_setup() {
	mkdir -p "$S/floppy" "$J/floppy"
	host mount --bind "$S/floppy" "$S/floppy"
	host mount --make-shared "$S/floppy"
	host mount --bind "$S/floppy" "$J/floppy"
	jail mount --make-slave /floppy
}

# RFC Example 1, printing the table after each step.
example1() {
	floppy_setup
	echo "-- set up: $?"
	table
	host mount -t tmpfs DISK "$S/floppy"
	echo "-- host mounts a floppy: $?"
	table
	host umount "$S/floppy"
	echo "-- host umounts it: $?"
	table
	jail mount -t tmpfs JDISK /floppy
	echo "-- the jail mounts its own: $?"
	table
}

# "ID MAJ:MIN" of the mount at PATH (the top one).
id_dev_of() {
	awk -v p="$1" '$5 == p { r = $1 " " $3 } END { print r }' /proc/self/mountinfo
}

# Mounts tmpfs on $S/soak/N until one gets an id above $1: every free id
# below it is taken, so that the next mount after $1 is freed gets $1
# (the kernel hands out the smallest free id, and other tests on this
# machine free ids too).  The broker must not be running.
soak_ids_below() {
	local i id
	mkdir -p "$S/soak"
	mount -t tmpfs soak "$S/soak"
	for ((i = 0; i < 500; i++)); do
		mkdir "$S/soak/$i"
		mount -t tmpfs soak "$S/soak/$i"
		id=$(id_dev_of "$S/soak/$i")
		((${id% *} > $1)) && return
	done
}

# After soak_ids_below: mounts (mount ARGS... PLACE) at $S/soak/probe/N
# until the kernel hands out id $1, then moves that mount to $2 (a move
# keeps the id); mounts that got a smaller id stay, keeping it taken.
# Fails once an id above $1 comes: someone else took it.
mount_with_id() {
	local want=$1 dest=$2 i id
	shift 2
	mkdir -p "$S/soak/probe"
	for ((i = 0; i < 500; i++)); do
		mkdir "$S/soak/probe/$i"
		mount "$@" "$S/soak/probe/$i"
		id=$(id_dev_of "$S/soak/probe/$i")
		id=${id% *}
		if ((id == want)); then
			mount --move "$S/soak/probe/$i" "$dest"
			return
		fi
		((id < want)) || return 1
	done
	return 1
}

# floppy_setup, the broker stopped, and behind its back both /floppy
# mounts go and "mount ARGS... J/floppy" takes the host's old id (sets
# old_s, "ID DEV" of the host's).  A test beside this one may take the
# freed id first: then all again with new ids, 5 times at most (2).
floppy_id_reused() {
	local try
	for ((try = 1; ; try++)); do
		floppy_setup
		[ "$(call_result)" = 0 ] || return 1
		old_s=$(id_dev_of "$S/floppy")
		broker_stop
		soak_ids_below "${old_s% *}"
		umount "$J/floppy" && umount "$S/floppy" || return 1
		mount_with_id "${old_s% *}" "$J/floppy" "$@" && break
		umount -R "$S/soak" && rm -rf "$S/soak" || return 1
		((try < 5)) || return 2
		broker_start || return 1
	done
	umount -R "$S/soak"
}

@test "imported from /proc/mounts, the broker counts the kernel's mounts" {
	broker_restart --mount-table /proc/mounts
	run "$SHARECTL" status
	[ "$status" -eq 0 ]
	[ "$output" = "sharebrokerd $BROKER_PID: $(wc -l </proc/mounts) mounts, 0 jails" ]
	assert_count_agrees
}

@test "imported from /proc/mounts, RFC Example 1 goes as in the kernel" {
	broker_restart --mount-table /proc/mounts
	local kernel
	kernel=$(native bash -c "
		$(declare -f table floppy_setup example1)
		S='$S' J='$J' SPY='$SPY'
		host() { \"\$@\"; }
		jail() { env LD_PRELOAD=\"\$SPY\" SPY_ROOT=\"\$J\" \"\$@\"; }
		example1 2>&1")
	output=$(example1 2>&1)
	diff <(echo "$kernel") <(echo "$output")
	# and what the RFC says, spelled out
	grep -qx -- "-- host mounts a floppy: 0" <<<"$output"
	[ -z "$(mountpoints_of DISK)" ]
	[ "$(mountpoints_of JDISK)" = "$J/floppy" ]
	assert_count_agrees
}

@test "imported from /proc/mounts over mounts the kernel stacked, the count still agrees" {
	mkdir -p "$S/st"
	mount -t tmpfs LOW "$S/st"
	mount -t tmpfs HIGH "$S/st"
	broker_restart --mount-table /proc/mounts
	assert_count_agrees
	# a mount on the stack goes on its top, as in the kernel
	same_as_kernel host mount -t tmpfs TOP "$S/st"
	assert_count_agrees
}

@test "a state file with a wrong first line is ignored: nothing of it applies" {
	floppy_setup
	[ "$(call_result)" = 0 ]
	broker_stop
	[[ $(head -n 1 "$STATE/state") == "libshare-state "[0-9]* ]]
	[ "$(wc -l <"$STATE/state")" -ge 3 ]
	sed -i '1s/.*/libshare-state 999/' "$STATE/state"
	broker_restart
	assert_broker_serves
	# no propagation left: the kernel's answer with everything private
	same_as_kernel host mount -t tmpfs DISK "$S/floppy"
	[ "$(mountpoints_of DISK)" = "$S/floppy" ]
}

@test "a state file of garbage lines does not stop the broker" {
	local sb long
	sb=$(id_dev_of "$S")
	long=$(head -c 9000 /dev/zero | tr '\0' a)
	broker_stop
	{
		echo "libshare-state 3"
		echo "garbage"
		echo ""
		echo "-1 x:y 1 2 3"
		echo "1 2 3"
		printf '%s\n' "$long"
		printf '\001\002\377 \t\n'
		echo "999999 0:0 7 0 0 / /nowhere 0 0"
		echo "${sb% *} 999:999 7 0 0 / $S 0 0"
		echo "${sb% *} ${sb#* } 7 999999 0 /nowhere /nowhere 999999 -3"
		echo "-5 ${sb#* } -1 -1 -1 / $S -1 -1"
		echo "$sb 7 0 0 /$long $S/$long 0 0"
		echo "children"
		echo "children ${sb% *} ${sb% *} x 999999"
		echo "ns 1 ${sb% *}"
		echo "ns 99999999999 ${sb% *} ${sb#* } / $S ${sb% *} /nowhere"
		echo "nstoken 0 1 1 0 ${sb% *} /nowhere"
	} >"$STATE/state"
	broker_start
	assert_broker_serves
	assert_count_agrees
	mkdir "$S/m"
	same_as_kernel host mount -t tmpfs M "$S/m"
	[ "$(mountpoints_of M)" = "$S/m" ]
}

@test "a state line that makes a mount its own master does not hang the broker" {
	mkdir -p "$S/self" "$J/self"
	host mount --bind "$S/self" "$S/self"
	[ "$(call_result)" = 0 ]
	broker_stop
	local m r
	m=$(id_dev_of "$S/self")
	r=$(awk -v p="$S/self" '$5 == p { r = $4 } END { print r }' \
		/proc/self/mountinfo)
	printf 'libshare-state 3\n%s %s 7 %s 0 %s %s %s %s\n' "${m% *}" \
		"${m#* }" "${m% *}" "$r" "$S/self" "${m% *}" "${m% *}" \
		>"$STATE/state"
	broker_restart
	assert_broker_serves
	background host mount -t tmpfs SELF "$S/self"
	wait_gone "$BG" 20
	wait "$BG"
	[ "$(mountpoints_of SELF)" = "$S/self" ]
	assert_broker_serves
}

@test "a state line whose id now names another filesystem is dropped" {
	local old_s rc=0
	# behind the broker's back: both go, the jail's /floppy gets a tmpfs
	floppy_id_reused -t tmpfs OTHER || rc=$?
	[ "$rc" != 2 ] || skip "5 times a test beside this one took the id"
	[ "$rc" = 0 ]
	broker_restart
	# a mount on the host's /floppy reaches nothing: the kernel's answer
	host mount --bind "$S/floppy" "$S/floppy"
	same_as_kernel host mount -t tmpfs DISK "$S/floppy"
	[ "$(mountpoints_of DISK)" = "$S/floppy" ]
	same_as_kernel jail mount -t tmpfs JDISK /floppy
	[ "$(mountpoints_of JDISK)" = "$J/floppy" ]
}

@test "a state line whose id now names a bind of the same directory elsewhere is dropped" {
	local old_s new_j rc=0
	mkdir "$S/x"
	# behind the broker's back: both go, and the same directory is bound
	# into the jail: the new mount takes the host's old id back (the
	# smallest free), same superblock, same root, another place
	floppy_id_reused --bind "$S/floppy" || rc=$?
	[ "$rc" != 2 ] || skip "5 times a test beside this one took the id"
	[ "$rc" = 0 ]
	new_j=$(id_dev_of "$J/floppy")
	[ "$new_j" = "$old_s" ]
	broker_restart
	# all private now (the kernel's table): a bind of the jail's /floppy
	# is private too, and a mount on it stays there
	host mount --bind "$J/floppy" "$S/x"
	[ "$(call_result)" = 0 ]
	same_as_kernel host mount -t tmpfs DISK "$S/x"
	[ "$(mountpoints_of DISK)" = "$S/x" ]
	same_as_kernel jail mount -t tmpfs JDISK /floppy
	[ "$(mountpoints_of JDISK)" = "$J/floppy" ]
}

@test "a state whose links make no tree (cycles, a mount before itself, two after one) loads what it can and serves" {
	local a b c d
	mkdir -p "$S/l1" "$S/l2" "$S/l3" "$S/l4"
	for m in l1 l2 l3 l4; do
		host mount -t tmpfs "$m" "$S/$m"
	done
	broker_stop
	a=$(id_dev_of "$S/l1") b=$(id_dev_of "$S/l2")
	c=$(id_dev_of "$S/l3") d=$(id_dev_of "$S/l4")
	{
		echo "libshare-state 3"
		# masters of each other; each before itself in its ring
		echo "$a 4 ${b% *} 0 / $S/l1 ${a% *} ${b% *}"
		echo "$b 4 ${a% *} 0 / $S/l2 ${b% *} ${a% *}"
		# two lines after the same peer, one before a mount of no line
		echo "$c 5 0 0 / $S/l3 ${d% *} 0"
		echo "$d 5 0 0 / $S/l4 ${d% *} 0"
		echo "${c% *} 0:0 5 0 0 / /nowhere 999999 -7"
	} >"$STATE/state"
	broker_start
	assert_broker_serves
	assert_count_agrees
	mkdir "$S/m"
	host mount -t tmpfs M "$S/m"
	[ "$(mountpoints_of M)" = "$S/m" ]
}
