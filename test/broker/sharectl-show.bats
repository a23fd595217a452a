#!/usr/bin/env bats
# sharectl tree and graph after the RFC's Example 1 done through the shim
# (the host's /floppy shared, the jail's bound and made a slave, a floppy
# mounted on the host's): the tree is the one the kernel's findmnt shows
# for the same steps done natively, on the host (PROPAGATION and the other
# columns) and as the jail sees it (the whole output); --root is looked up
# inside the caller's root; a tree bigger than a reply's 64 KiB arrives
# whole; the graph is DOT with the shared group as a cluster, the
# master-to-slave edge and the jail; --output draws it with Graphviz's dot
# or says that dot is missing.

load ../lib/broker

# The example's steps; $1 runs a command on the host, $2 in the jail.
example1() {
	mkdir -p "$S/floppy" "$J/floppy"
	$1 mount --bind "$S/floppy" "$S/floppy"
	$1 mount --make-shared "$S/floppy"
	$1 mount --bind "$S/floppy" "$J/floppy"
	$2 mount --make-slave /floppy
	$1 mount -t tmpfs DISK "$S/floppy"
}

native_host() { env LD_PRELOAD= "$@"; }
native_jail() { env LD_PRELOAD="$SPY" SPY_ROOT="$J" "$@"; }

# CMD run after the same steps done by the kernel itself, in a scratch
# namespace on a fresh sandbox.
native_example1() {
	native bash -ec "
		$(declare -f example1 native_host native_jail)
		S='$S' J='$J' SPY='$SPY'
		umount -R -l \"\$S\"
		mount -t tmpfs sandbox \"\$S\"
		mkdir -p \"\$J\"
		example1 native_host native_jail >/dev/null
		$*"
}

# The rows of a tree for the mounts under $S, without the tree drawing,
# blanks squeezed, sorted: "TARGET SOURCE FSROOT PROPAGATION".
sandbox_rows() {
	sed 's/^[│├└─| `-]*//' | tr -s ' ' |
		awk -v s="$S" 'index($1, s "/") == 1' | LC_ALL=C sort
}

# findmnt's ASCII tree (what it draws without a UTF-8 locale, in a jail).
ascii() {
	sed 's/├─/|-/g; s/└─/`-/g; s/│ /| /g'
}

setup() {
	broker_setup
	example1 host jail
}

teardown() { broker_teardown; }

@test "tree: the host's view, the floppy shared and the jail's copy a slave, as findmnt shows it natively" {
	run "$SHARECTL" tree
	[ "$status" -eq 0 ]
	[[ ${lines[0]} =~ ^TARGET\ +SOURCE\ +FSROOT\ +PROPAGATION$ ]]
	local rows
	rows=$(sandbox_rows <<<"$output")
	[ "$rows" = "$S/floppy DISK / shared
$S/floppy sandbox[/floppy] /floppy shared
$J/floppy DISK / private,slave
$J/floppy sandbox[/floppy] /floppy private,slave" ]
	# the same columns as the kernel's findmnt for the same steps
	local kernel
	kernel=$(native_example1 findmnt -o TARGET,SOURCE,FSROOT,PROPAGATION |
		 sandbox_rows)
	[ "$rows" = "$kernel" ]
	# the tree drawing: the floppy under the bind, the bind under $S
	grep -qE "^[│ ]*[├└]─$S/floppy +sandbox\[/floppy\]" <<<"$output"
	local bind disk
	bind=$(grep -E "─$S/floppy +sandbox" <<<"$output" | sed 's/─.*//')
	disk=$(grep -E "─$S/floppy +DISK" <<<"$output" | sed 's/─.*//')
	[ "${#disk}" -eq $((${#bind} + 2)) ]
}

@test "tree: the PROPAGATION column is findmnt -o TARGET,PROPAGATION's, target by target" {
	local ours kernel
	ours=$("$SHARECTL" tree | sandbox_rows | awk '{ print $1, $4 }')
	kernel=$(native_example1 findmnt -o TARGET,PROPAGATION | sandbox_rows)
	[ -n "$ours" ]
	[ "$ours" = "$kernel" ]
}

@test "tree --root JAIL: only the jail's mounts, relative to it, exactly findmnt's in the jail" {
	run "$SHARECTL" tree --root "$J"
	[ "$status" -eq 0 ]
	[ "$output" = "TARGET    SOURCE           FSROOT  PROPAGATION
/floppy   sandbox[/floppy] /floppy private,slave
└─/floppy DISK             /       private,slave" ]
	local kernel
	kernel=$(native_example1 native_jail findmnt \
		 -o TARGET,SOURCE,FSROOT,PROPAGATION)
	[ "$(ascii <<<"$output")" = "$kernel" ]
	# a relative DIR starts at the caller's cwd
	[ "$(cd "$S" && "$SHARECTL" tree --root jail)" = "$output" ]
}

@test "tree inside the jail: its own view, and --root cannot climb out of it" {
	local view
	view=$("$SHARECTL" tree --root "$J")
	run jail "$SHARECTL" tree
	[ "$status" -eq 0 ]
	[ "$output" = "$view" ]
	run jail "$SHARECTL" tree --root /..
	[ "$status" -eq 0 ]
	[ "$output" = "$view" ]
	run jail "$SHARECTL" tree --root /floppy
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "/      DISK   /      private,slave" ]
	[ "${#lines[@]}" -eq 2 ]
}

@test "tree --root of a missing or non-directory DIR fails with a message" {
	run "$SHARECTL" tree --root "$S/nonexistent"
	[ "$status" -eq 1 ]
	[ "$output" = "sharectl: tree: $S/nonexistent: No such file or directory" ]
	touch "$S/file"
	run "$SHARECTL" tree --root "$S/file"
	[ "$status" -eq 1 ]
	[ "$output" = "sharectl: tree: $S/file: Not a directory" ]
	run "$SHARECTL" status --root /
	[ "$status" -eq 2 ]
}

@test "a tree bigger than a reply's 64 KiB arrives whole, and the broker keeps no file or descriptor of it" {
	local long i fds
	long=$(printf 'd%.0s' {1..200})
	mkdir -p "$S/many"
	for i in $(seq 1 300); do
		mkdir "$S/many/$long-$i"
		host mount -t tmpfs "many$i" "$S/many/$long-$i"
	done
	fds=$(ls "/proc/$BROKER_PID/fd" | wc -l)
	run "$SHARECTL" tree
	[ "$status" -eq 0 ]
	[ "${#output}" -gt 65536 ]
	[ "$(grep -c -- "─$S/many/$long-[0-9]* *many[0-9]* " <<<"$output")" -eq 300 ]
	"$SHARECTL" tree >/dev/null
	"$SHARECTL" graph >/dev/null
	[ "$(ls "/proc/$BROKER_PID/fd" | wc -l)" -eq "$fds" ]
	[ -z "$(ls "$STATE" | grep '^reply')" ]
}

# The node id of the mount labelled PATH\nSOURCE in the DOT text $output.
node() {
	grep -F "[label=\"$1\\n$2\"]" <<<"$output" | awk '{ print $1 }'
}

# The cluster node $1 is drawn in, or nothing.
cluster_of() {
	awk -v n="$1" '/subgraph cluster_/ { c = $2 } /^\t}/ { c = "" }
		       $1 == n && c { print c }' <<<"$output"
}

@test "graph: the shared group as a cluster with its peers, an edge to the slave, the jail" {
	# a peer of the host's floppy, to share its cluster
	mkdir -p "$S/peer"
	host mount --bind "$S/floppy" "$S/peer"
	run "$SHARECTL" graph
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "digraph propagation {" ]
	[ "${lines[-1]}" = "}" ]
	local bind peer slave disk jdisk
	bind=$(node "$S/floppy" "sandbox[/floppy]")
	slave=$(node "$J/floppy" "sandbox[/floppy]")
	disk=$(node "$S/floppy" DISK)
	peer=$(node "$S/peer" DISK)
	jdisk=$(node "$J/floppy" DISK)
	[ -n "$bind" ] && [ -n "$slave" ] && [ -n "$disk" ] && [ -n "$peer" ]
	# peers in one cluster; the slave in none (it does not forward)
	[ -n "$(cluster_of "$disk")" ]
	[ "$(cluster_of "$disk")" = "$(cluster_of "$peer")" ]
	[ -n "$(cluster_of "$bind")" ]
	[ -z "$(cluster_of "$slave")" ]
	# events travel from the master mount to the slave
	grep -qxF "	$bind -> $slave;" <<<"$output"
	grep -qxF "	$disk -> $jdisk;" <<<"$output"
	# the jail, with the mounts it sees
	grep -qF "label=\"jail $J\\l  /floppy  sandbox[/floppy]\\l  /floppy  DISK\\l\"" <<<"$output"
	grep -qE "^	j0 -> $slave \[style=dashed" <<<"$output"
	# private mounts (the sandbox itself) are left out
	[ -z "$(grep -F "[label=\"$S\\n" <<<"$output")" ]
	if command -v dot >/dev/null; then
		"$SHARECTL" graph | dot -Tsvg >"$BATS_TEST_TMPDIR/g.svg"
		grep -q '<svg' "$BATS_TEST_TMPDIR/g.svg"
	fi
}

@test "graph --output: DOT to a file, SVG and PNG through dot, a message when dot is missing" {
	run "$SHARECTL" graph --output "$BATS_TEST_TMPDIR/g.dot"
	[ "$status" -eq 0 ]
	[ "$(cat "$BATS_TEST_TMPDIR/g.dot")" = "$("$SHARECTL" graph)" ]
	mkdir "$BATS_TEST_TMPDIR/nobin"
	run env PATH="$BATS_TEST_TMPDIR/nobin" "$SHARECTL" graph \
		--output "$BATS_TEST_TMPDIR/g.svg"
	[ "$status" -eq 1 ]
	[ "$output" = "sharectl: graph: $BATS_TEST_TMPDIR/g.svg needs Graphviz's dot, which is not installed" ]
	run "$SHARECTL" graph --output "$BATS_TEST_TMPDIR/g.gif"
	[ "$status" -eq 2 ]
	if command -v dot >/dev/null; then
		"$SHARECTL" graph --output "$BATS_TEST_TMPDIR/g.svg"
		grep -q '<svg' "$BATS_TEST_TMPDIR/g.svg"
		"$SHARECTL" graph --output "$BATS_TEST_TMPDIR/g.png"
		[ "$(head -c 4 "$BATS_TEST_TMPDIR/g.png" | tail -c 3)" = PNG ]
	fi
}

@test "graph is refused to a jailed caller: it names the host's paths" {
	run jail "$SHARECTL" graph
	[ "$status" -eq 1 ]
	[ "$output" = "sharectl: graph: Operation not permitted" ]
}
