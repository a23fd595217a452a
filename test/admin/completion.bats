#!/usr/bin/env bats
# bash completion (issue 12 item 10): the installed scripts, sourced into a
# bash, complete sharectl's commands and each command's options, and
# sharebrokerd's options and their values.  The programs are the built
# ones, found through PATH as completion finds them.

load admin

# complete WORD...: the completion words for the command line WORD... with
# the cursor at the end of the last word (possibly empty).
complete_words() {
	local dir
	dir=$(mktemp -d "$BATS_TEST_TMPDIR/bin.XXXX")
	ln -s "$SHARECTL" "$dir/sharectl"
	ln -s "$SHAREBROKERD" "$dir/sharebrokerd"
	PATH=$dir:$PATH bash -c '
		. "$1"/sharectl
		. "$1"/sharebrokerd
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMPREPLY=()
		fn=$(complete -p "$1" | sed "s/.*-F \([^ ]*\).*/\1/")
		"$fn"
		printf "%s\n" "${COMPREPLY[@]}" | sort' bash "$SRC/dist/completion" "$@"
}

@test "sharectl completes its commands" {
	run complete_words sharectl ""
	[ "$status" -eq 0 ]
	[ "$(echo $output)" = "apply check graph jails ns status stop tree" ]
	run complete_words sharectl st
	[ "$(echo $output)" = "status stop" ]
}

@test "sharectl completes each command's options, and --output only for graph" {
	run complete_words sharectl graph --
	[ "$(echo $output)" = "--help --output --socket --version" ]
	run complete_words sharectl tree --
	[ "$(echo $output)" = "--help --ns --root --socket --version" ]
	run complete_words sharectl apply --
	[ "$(echo $output)" = "--dry-run --help --jail --socket --version" ]
	run complete_words sharectl stop --
	[ "$(echo $output)" = "--final --help --socket --version" ]
	run complete_words sharectl check --j
	[ "$(echo $output)" = "--jail" ]
	run complete_words sharectl --s
	[ "$(echo $output)" = "--socket" ]
}

@test "sharebrokerd completes every option and the values of --log" {
	run complete_words sharebrokerd --
	[ "$(echo $output)" = "--config --debug --foreground --help --log --max-mounts --mount-table --no-fuse --print-config --socket --state-dir --threads --version" ]
	cd "$BATS_TEST_TMPDIR"
	run complete_words sharebrokerd --log s
	[ "$(echo $output)" = "stderr syslog" ]
}
