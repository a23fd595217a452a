#!/usr/bin/env bats
# sharectl check: a jailtab's errors, each as FILE:LINE: message; a file
# with errors is not applied at all; a wrong option is a usage error
# (exit 2) before any file is read.  No broker is needed to check.

load ../lib/legacy

SHARECTL=$(libshare_find daemon/sharectl)

setup() {
	TAB=$BATS_TEST_TMPDIR/jailtab
	export LIBSHARE_SOCKET=@libshare-bats-check-$$
}

@test "check: a good file passes, with a count of its entries" {
	cat >"$TAB" <<-'EOT'
	# comment, then a blank line

	/srv/shared  /srv/shared   none   bind,rshared               0 0
	/srv/shared  /srv/j1/mnt   none   bind,ro,slave,x-jail=/srv/j1
	tmpfs        /srv/j1/tmp   tmpfs  size=1m,nofail,x-jail=/srv/j1
	none         /srv/shared   none   runbindable
	/srv/a\040b  /srv/j1/a\040b none  rbind,x-jail=/srv/j1
	EOT
	run "$SHARECTL" check "$TAB"
	[ "$status" -eq 0 ]
	[ "$output" = "sharectl: check: 5 entries, no errors" ]
}

@test "check: every error with its file and line, and the count" {
	cat >"$TAB" <<-'EOT'
	/srv/shared /srv/shared
	/srv/shared srv/j1/mnt none bind
	/srv/shared /srv/j1/mnt none bind,x-jail=/srv/j2
	relative /srv/j1/b none bind
	/srv/x /srv/j1/../etc none bind,x-jail=/srv/j1
	tmpfs /srv/t tmpfs defaults x 0
	/srv/a /srv/b none bind,size=1m
	none /srv/c none ro
	/srv/a /srv/d none move
	tmpfs /srv/t tmpfs defaults
	tmpfs /srv/t tmpfs defaults
	EOT
	run "$SHARECTL" check "$TAB"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$output" = "$TAB:1: 2 fields; expected SOURCE TARGET TYPE [OPTIONS [FREQ [PASSNO]]]
$TAB:2: srv/j1/mnt: the target must be an absolute path without . or .. components
$TAB:3: /srv/j1/mnt: not inside its jail /srv/j2
$TAB:4: relative: a bind's source must be an absolute host path without . or ..
$TAB:5: /srv/j1/../etc: the target must be an absolute path without . or .. components
$TAB:6: x: FREQ must be a number
$TAB:7: size=1m: not an option of a bind mount
$TAB:8: source and type \"none\" without bind: only propagation options may follow
$TAB:9: move: a jailtab declares mounts; it cannot move one
$TAB:11: /srv/t: already mounted by $TAB:10
sharectl: check: 10 errors" ]
}

@test "apply refuses a file with errors and mounts nothing" {
	echo "/srv/shared /srv/shared" >"$TAB"
	run "$SHARECTL" apply "$TAB"
	[ "$status" -eq 1 ]
	[ "$output" = "$TAB:1: 2 fields; expected SOURCE TARGET TYPE [OPTIONS [FREQ [PASSNO]]]
sharectl: apply: 1 error; nothing applied" ]
}

@test "check: a directory stands for its *.tab files, in order" {
	mkdir "$BATS_TEST_TMPDIR/d"
	echo "tmpfs /srv/b tmpfs bogus=1 0 x" >"$BATS_TEST_TMPDIR/d/b.tab"
	echo "tmpfs /srv/a tmpfs defaults 0 y" >"$BATS_TEST_TMPDIR/d/a.tab"
	echo "not a tab file" >"$BATS_TEST_TMPDIR/d/README"
	run "$SHARECTL" check "$BATS_TEST_TMPDIR/d"
	[ "$status" -eq 1 ]
	[ "$output" = "$BATS_TEST_TMPDIR/d/a.tab:1: y: PASSNO must be a number
$BATS_TEST_TMPDIR/d/b.tab:1: x: PASSNO must be a number
sharectl: check: 2 errors" ]
}

@test "check --jail DIR: targets inside the jail, as a schroot profile writes them" {
	printf '%s\n' "/srv/shared /mnt none bind,slave" \
		"tmpfs /../x tmpfs defaults" >"$TAB"
	run "$SHARECTL" check --jail /srv/j1 "$TAB"
	[ "$status" -eq 1 ]
	[ "$output" = "$TAB:2: /srv/j1/../x: the target must be an absolute path without . or .. components
sharectl: check: 1 error" ]
}

@test "apply and check: --help is their usage; a wrong option is a usage error, before any file is read" {
	local usage="usage: sharectl [--socket ADDR] apply [--dry-run] [--jail DIR] [FILE|DIR]...
       sharectl check [--jail DIR] [FILE|DIR]..."
	run "$SHARECTL" apply --help
	[ "$status" -eq 0 ]
	[ "$output" = "$usage" ]
	run "$SHARECTL" --socket @x check --help
	[ "$status" -eq 0 ]
	[ "$output" = "$usage" ]
	# a file with an error would be exit 1: it is not even read
	echo "tmpfs relative tmpfs defaults" >"$TAB"
	run "$SHARECTL" check --dry-run "$TAB"
	[ "$status" -eq 2 ]
	[ "$output" = "$usage" ]
	run "$SHARECTL" apply --jail srv/j1 "$TAB"
	[ "$status" -eq 2 ]
	[ "$output" = "$usage" ]
	run "$SHARECTL" apply --no-such-option "$TAB"
	[ "$status" -eq 2 ]
	[ "$output" = "apply: unrecognized option '--no-such-option'
$usage" ]
}

@test "jailtab(5) is lint-clean" {
	run bash -c "man --warnings -l '$BATS_TEST_DIRNAME/../../man/jailtab.5' 2>&1 >/dev/null"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}
