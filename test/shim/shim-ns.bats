#!/usr/bin/env bats
# Mount namespaces through the broker (issue 11): every entry point of the
# shim (unshare by libc and syscall(), unshare(1), clone's wrapper and
# syscall(SYS_clone), setns by libc and syscall(), nsenter(1), the ns
# file's open, readlink and stat) under the legacy simulation, with a real
# broker; in a jail (nscall chroots itself through the shim) and on the
# host's root.  Each test ends with every namespace freed: the broker's
# count and the kernel's table agree again (broker_teardown).

load ../lib/broker

NSCALL=$(libshare_find test/shim/nscall)

setup() {
	broker_setup
	mkdir -p "$J/a/x" "$J/a/y"
}

teardown() {
	ns_all_gone || true
	broker_teardown
}

# nscall with the shim.
ns() {
	shimmed "$NSCALL" "$@"
}

# $output is exactly these lines.
expect_output_lines() {
	local want
	want=$(printf '%s\n' "$@")
	if [ "$output" != "$want" ]; then
		printf 'output:\n%s\n-- wanted:\n%s\n' "$output" "$want" >&2
		return 1
	fi
}

# FILE holds exactly these lines.
expect_lines() {
	local file=$1
	shift
	output=$(cat "$file")
	expect_output_lines "$@"
}

# A shared bind of the jail's /a, the place mounts propagate through.
share_a() {
	ns mount "$J/a" "$J/a" - bind mount - "$J/a" - shared >/dev/null
}

@test "unshare(CLONE_NEWNS) by libc and by syscall(): a namespace of its own" {
	run ns chroot "$J" readlink /proc/self/ns/mnt unshare ns \
		readlink /proc/self/ns/mnt sys-unshare ns readlink /proc/self/ns/mnt
	[ "$status" -eq 0 ]
	[ "${lines[2]}" = "unshare: ok" ]
	[ "${lines[4]}" = "sys-unshare: ok" ]
	[[ ${lines[1]} == "readlink = mnt:["* ]]
	[ "${lines[1]}" != "${lines[3]}" ]
	[ "${lines[3]}" != "${lines[5]}" ]
	[ "${lines[1]}" != "${lines[5]}" ]
	ns_all_gone
}

@test "a jail's copy: mounts propagate between peers both ways" {
	share_a
	background ns chroot "$J" unshare ns touch /ready waitfor /go ls /a/x \
		mount t /a/y tmpfs 0 touch /a/y/fromA touch /done waitfor /end \
		ls /a/y
	wait_file "$J/ready"
	ns mount t "$J/a/x" tmpfs 0 >/dev/null
	touch "$J/a/x/fromhost" "$J/go"
	wait_file "$J/done"
	[ -e "$J/a/y/fromA" ]           # A's mount reached the host
	ns umount "$J/a/y" >/dev/null   # and the host's umount reaches A
	touch "$J/end"
	wait
	expect_lines "$BATS_TEST_TMPDIR/bg.0" "chroot: ok" "unshare: ok" \
		"ls /a/x = fromhost" "mount: ok" "ls /a/y ="
	ns umount "$J/a/x" >/dev/null
	ns_all_gone
}

@test "a slave copy receives the host's mounts and sends nothing back" {
	share_a
	background ns chroot "$J" unshare ns mount - /a - slave touch /ready waitfor /go \
		ls /a/x mount t /a/y tmpfs 0 touch /a/y/fromA touch /done \
		waitfor /end
	wait_file "$J/ready"
	ns mount t "$J/a/x" tmpfs 0 >/dev/null
	touch "$J/a/x/fromhost" "$J/go"
	wait_file "$J/done"
	[ ! -e "$J/a/y/fromA" ]
	touch "$J/end"
	wait
	expect_lines "$BATS_TEST_TMPDIR/bg.0" "chroot: ok" "unshare: ok" \
		"mount: ok" "ls /a/x = fromhost" "mount: ok"
	ns umount "$J/a/x" >/dev/null
	ns_all_gone
}

@test "children inherit the namespace; the copy keeps the cwd" {
	run ns chroot "$J" chdir /a unshare ns readlink /proc/self/ns/mnt \
		fork readlink /proc/self/ns/mnt cwd \;
	[ "$status" -eq 0 ]
	[ "${lines[2]}" = "unshare: ok" ]
	[ "${lines[4]}" = "child ${lines[3]}" ]
	[ "${lines[5]}" = "child cwd = /a" ]
	ns_all_gone
}

@test "unshare(1) with each --propagation: findmnt as the kernel shows it" {
	local p kernel
	ns mount "$S" "$S" - bind >/dev/null
	ns mount - "$S" - shared >/dev/null
	for p in "" private unchanged shared slave; do
		ns_all_gone     # the kernel's copy would show the broker's
		# the kernel's table is all private: it is shared there first
		kernel=$(native sh -c "mount --make-shared '$S' && unshare -m \
			${p:+--propagation $p} findmnt -R -n -o \
			TARGET,PROPAGATION '$S'" 2>&1)
		run shimmed unshare -m ${p:+--propagation $p} \
			findmnt -R -n -o TARGET,PROPAGATION "$S"
		[ "$status" -eq 0 ]
		[ "$output" = "$kernel" ] || {
			echo "--propagation '$p': $output, not $kernel" >&2
			return 1
		}
	done
	ns_all_gone
	ns umount "$S" >/dev/null      # the bind on the sandbox itself
}

@test "unshare(1) gives /proc/self/mountinfo of the copy, a number of its own" {
	S=$S run shimmed sh -c 'readlink /proc/self/ns/mnt
		unshare -m --propagation unchanged sh -c \
			"readlink /proc/self/ns/mnt; readlink /proc/\$\$/ns/mnt;
			 stat -L -c %i /proc/self/ns/mnt
			 grep -c \"$S\" /proc/self/mountinfo"
		grep -c "$S" /proc/self/mountinfo'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" != "${lines[1]}" ]
	[ "${lines[1]}" = "${lines[2]}" ]
	[ "${lines[1]}" = "mnt:[${lines[3]}]" ]
	# the copy has every mount of the sandbox (mounts out of the
	# broker's reach, covered ones, are not copied: README Limits)
	[ "${lines[4]}" = "${lines[5]}" ]
	ns_all_gone
}

@test "the ns file by a relative name, as lsns and friends name it" {
	run shimmed unshare -m --propagation unchanged sh -c \
		'readlink /proc/self/ns/mnt; cd /proc/$$ && readlink ns/mnt &&
		 stat -L -c %i ns/mnt'
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "mnt:["* ]]
	[ "${lines[1]}" = "${lines[0]}" ]
	[ "mnt:[${lines[2]}]" = "${lines[0]}" ]
	ns_all_gone
}

@test "clone(CLONE_NEWNS) by glibc's wrapper and by syscall(); clone3 is ENOSYS" {
	run ns chroot "$J" readlink /proc/self/ns/mnt \
		clone readlink /proc/self/ns/mnt \; \
		sys-clone readlink /proc/self/ns/mnt \; \
		sys-clone3 readlink /proc/self/ns/mnt
	[ "$status" -eq 0 ]
	[ "${lines[3]}" = "clone: exit 0" ]
	[ "${lines[5]}" = "sys-clone: exit 0" ]
	[ "${lines[6]}" = "sys-clone3: ENOSYS" ]
	[ "${lines[2]}" != "child ${lines[1]}" ]
	[ "${lines[4]}" != "child ${lines[1]}" ]
	[ "${lines[2]}" != "${lines[4]}" ]
	[ "${lines[7]}" = "${lines[1]}" ]    # the parent stays where it was
	ns_all_gone
}

@test "setns by libc and syscall(), types 0 and CLONE_NEWNS; nsenter -t and --mount" {
	background shimmed unshare -m --propagation unchanged "$NSCALL" touch "$S/in" \
		waitfor "$S/out"
	wait_file "$S/in"
	local pid=$(pgrep -f "^$NSCALL touch $S/in")
	local want=$(shimmed readlink /proc/$pid/ns/mnt)
	[[ $want == "mnt:["* ]]
	[ "$want" != "$(shimmed readlink /proc/self/ns/mnt)" ]
	run ns setns /proc/$pid/ns/mnt ns readlink /proc/self/ns/mnt cwd
	[ "$output" = "$(printf 'setns: ok\nreadlink = %s\ncwd = /' "$want")" ]
	run ns sys-setns /proc/$pid/ns/mnt 0 readlink /proc/self/ns/mnt
	[ "${lines[1]}" = "readlink = $want" ]
	run shimmed nsenter -t "$pid" -m readlink /proc/self/ns/mnt
	[ "$output" = "$want" ]
	run shimmed nsenter --mount=/proc/$pid/ns/mnt readlink /proc/self/ns/mnt
	[ "$output" = "$want" ]
	touch "$S/out"
	wait
	ns_all_gone
}

@test "entering again keeps one membership: no descriptor piles up" {
	run ns fds unshare ns fds hold /proc/self/ns/mnt setns-held 0 \
		setns-held ns close-held fds unshare ns fds
	[ "$status" -eq 0 ]
	# the membership, and the one connection to the broker the shim
	# keeps from its first call on (conn.c)
	local n=${lines[0]#fds = }
	[ "${lines[2]}" = "fds = $((n + 2))" ]
	[ "${lines[7]}" = "fds = $((n + 2))" ]
	[ "${lines[9]}" = "fds = $((n + 2))" ]
	ns_all_gone
}

@test "setns refuses what the kernel refuses" {
	# a descriptor that is no namespace, for the type emulated: EINVAL
	# (closed: EBADF), as from a kernel with mount namespaces; for
	# another type the kernel's, here ENOSYS; a pidfd: pidfd_open is
	# ENOSYS under the legacy simulation (as on kernels before 5.3)
	run ns setns /dev/null ns setns /dev/null 0 sys-setns /dev/null ns \
		setns /dev/null uts setns pidfd ns hold /nonexistent setns-held 0
	expect_output_lines "setns: EINVAL" "setns: EINVAL" "sys-setns: EINVAL" \
		"setns: ENOSYS" "setns: ENOSYS" "hold: ENOENT" "setns-held: EBADF"
	run shimmed setpriv --reuid 65534 --regid 65534 --clear-groups \
		--inh-caps=-all --bounding-set=-all "$NSCALL" unshare ns \
		sys-unshare ns hold /proc/self/ns/mnt setns-held ns
	expect_output_lines "unshare: EPERM" "sys-unshare: EPERM" "hold: ok" \
		"setns-held: EPERM"
	# a copy for a new user namespace (CL_SHARED_TO_SLAVE, locked
	# mounts) is not emulated: EINVAL, a kernel without user namespaces'
	run ns unshare ns,user sys-unshare ns,user
	[ "${lines[0]}" = "unshare: EINVAL" ]
	[ "${lines[1]}" = "sys-unshare: EINVAL" ]
	# other types are the kernel's: here it makes them
	run ns readlink /proc/self/ns/uts unshare ns,uts,ipc \
		readlink /proc/self/ns/uts
	[ "${lines[1]}" = "unshare: ok" ]
	[ "${lines[0]}" != "${lines[2]}" ]
	ns_all_gone
}

# The setns steps of the types libshare does not emulate, each with its
# own type, 0, another type and CLONE_NEWNS; the kernel's own mount ns
# file (through a link: the shim's open of a name ending in ns/mnt gives
# a token), a pidfd, and a descriptor that is no namespace with another
# type (with CLONE_NEWNS or 0 it is the emulation's: the test before).
other_types() {
	local pid=$1 t steps=()
	for t in ipc uts net; do
		steps+=(setns /proc/$pid/ns/$t $t setns /proc/$pid/ns/$t 0
			sys-setns /proc/$pid/ns/$t 0
			setns /proc/$pid/ns/$t $([ $t = ipc ] && echo uts || echo ipc)
			setns /proc/$pid/ns/$t ns)
	done
	steps+=(setns "$S/mntlink" ns setns "$S/mntlink" 0
		sys-setns "$S/mntlink" 0 setns "$S/mntlink" ipc
		setns pidfd uts setns pidfd ipc,uts setns pidfd 0
		setns /dev/null uts)
	printf '%s\n' "${steps[@]}"
}

@test "setns of a type libshare does not emulate: the kernel's answer, legacy or not" {
	# another process's IPC, UTS and network namespaces, the kernel's
	env -u LD_PRELOAD unshare -i -u -n sleep 60 &
	BG_PIDS+=($!)
	local pid=$!
	while [ "$(readlink /proc/$pid/ns/uts)" = "$(readlink /proc/self/ns/uts)" ]
	do sleep 0.02; done
	ln -s /proc/$$/ns/mnt "$S/mntlink"
	local steps
	mapfile -t steps < <(other_types "$pid")
	local kernel=$(env -u LD_PRELOAD "$NSCALL" "${steps[@]}" 2>&1)
	local shim=$(env LD_PRELOAD="$SHIM" "$NSCALL" "${steps[@]}" 2>&1)
	local lkernel=$(legacy env -u LD_PRELOAD "$NSCALL" "${steps[@]}" 2>&1)
	local lshim=$(ns "${steps[@]}" 2>&1)
	diff -u <(echo "$kernel") <(echo "$shim")
	diff -u <(echo "$lkernel") <(echo "$lshim")
	# what each says: a modern kernel enters a type's own and refuses
	# another; the legacy simulation has no setns at all
	[ "$(grep -c ': ok$' <<<"$kernel")" -ge 12 ]
	[ "$(grep -c ': EINVAL$' <<<"$kernel")" -ge 6 ]
	[ "$(grep -vc ': ENOSYS$' <<<"$lkernel")" -eq 0 ]
	ns_all_gone
}

@test "setns(pidfd, CLONE_NEWNS) enters the process's namespace, as the kernel's does" {
	# a modern kernel (pidfd_open is ENOSYS under the legacy simulation):
	# the kernel's way in a namespace of its own, then the shim's
	local x=$S/px steps
	mkdir -p "$x"
	env -u LD_PRELOAD unshare -m --propagation private "$NSCALL" \
		mount t "$x" tmpfs 0 touch "$x/m" touch "$S/kin" \
		waitfor "$S/kout" >/dev/null &
	BG_PIDS+=($!)
	wait_file "$S/kin"
	local pid=$(pgrep -f "^$NSCALL mount t $x")
	steps=(setns pidfd:$pid ns ls "$x" setns pidfd:$pid ns,uts ls "$x")
	local kernel=$(env -u LD_PRELOAD "$NSCALL" "${steps[@]}" 2>&1)
	touch "$S/kout"
	wait_gone "$pid"
	env LD_PRELOAD="$SHIM" "$NSCALL" unshare ns mount t "$x" tmpfs 0 \
		touch "$x/m" touch "$S/sin" waitfor "$S/sout" >/dev/null &
	BG_PIDS+=($!)
	wait_file "$S/sin"
	pid=$(pgrep -f "^$NSCALL unshare ns mount t $x")
	steps=(setns pidfd:$pid ns ls "$x" setns pidfd:$pid ns,uts ls "$x")
	local shim=$(env LD_PRELOAD="$SHIM" "$NSCALL" "${steps[@]}" 2>&1)
	touch "$S/sout"
	[ "$kernel" = "$(printf 'setns: ok\nls %s = m\nsetns: ok\nls %s = m' "$x" "$x")" ]
	[ "$shim" = "$kernel" ]
	wait_gone "$pid"
	[ -z "$(ls "$x")" ]             # the copy was never ours
	ns_all_gone
}

@test "the ns file: one number per namespace, st_ino N, a descriptor setns takes" {
	run ns chroot "$J" stat /proc/self/ns/mnt lstat /proc/self/ns/mnt \
		readlink /proc/self/ns/mnt hold /proc/self/ns/mnt unshare ns \
		stat /proc/self/ns/mnt setns-held 0 stat /proc/self/ns/mnt
	[ "$status" -eq 0 ]
	local n=${lines[1]#stat = }
	n=${n% file}
	[ "${lines[2]}" = "lstat = $n link" ]
	[ "${lines[3]}" = "readlink = mnt:[$n]" ]
	[ "${lines[6]}" != "stat = $n file" ]
	[ "${lines[7]}" = "setns-held: ok" ]
	[ "${lines[8]}" = "stat = $n file" ]
	ns_all_gone
}

@test "the ns file is the emulation's with /proc mounted in the jail too" {
	mkdir -p "$J/proc"
	ns mount proc "$J/proc" proc 0 >/dev/null
	local host=$(ns readlink /proc/self/ns/mnt)
	run ns chroot "$J" readlink /proc/self/ns/mnt unshare ns \
		readlink /proc/self/ns/mnt readlink /proc/1/ns/mnt
	[ "${lines[1]}" = "$host" ]
	[ "${lines[2]}" = "unshare: ok" ]
	[[ ${lines[3]} == "readlink = mnt:["* ]]
	[ "${lines[3]}" != "$host" ]
	# a process outside the jail: not the jail's to name
	[ "${lines[4]}" = "readlink: ENOENT" ]
	ns_all_gone
	ns umount "$J/proc" >/dev/null
}

@test "a namespace lives while a descriptor of its ns file is open" {
	background ns chroot "$J" unshare ns mount t /a/x tmpfs 0 touch /a/x/mark \
		touch /ready waitfor /go
	wait_file "$J/ready"
	local pid=$(pgrep -f "^$NSCALL chroot $J unshare")
	[ ! -e "$J/a/x/mark" ]          # only in the copy
	background ns hold /proc/$pid/ns/mnt touch "$S/held" waitfor "$S/left" \
		setns-held ns ls /a/x
	wait_file "$S/held"
	touch "$J/go"
	while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
	sleep 0.3                       # a tick of the broker
	[ -d "$STATE/ns" ]              # held: still there
	touch "$S/left"
	wait
	expect_lines "$BATS_TEST_TMPDIR/bg.1" "hold: ok" "setns-held: ok" \
		"ls /a/x = mark"
	ns_all_gone
}
