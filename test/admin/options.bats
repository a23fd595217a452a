#!/usr/bin/env bats
# Every option checked, with a message that says what is wrong (issue 12
# item 6), and the configuration file under the command line (item 7):
# usage errors exit 2 and start nothing.

load admin

setup() { admin_setup; }
teardown() { admin_teardown; }

# sharebrokerd ARGS must refuse with exit 2 and MESSAGE, and start nothing.
refused() {
	local message=$1
	shift
	run "$SHAREBROKERD" --state-dir "$STATE" "$@"
	echo "$output"
	[ "$status" -eq 2 ]
	[ "$output" = "sharebrokerd: $message" ]
	[ ! -e "$STATE/sharebrokerd.pid" ]
}

@test "sharebrokerd refuses the empty, @-only and relative socket names, saying why" {
	refused "--socket '': an empty name" --socket ""
	refused "--socket '@': '@' alone: an abstract name needs at least one character after the @" --socket @
	refused "--socket 'run/s': a relative path: every jail and the broker would look for it from a different directory; give @NAME (abstract) or an absolute /PATH" --socket run/s
	refused "--socket '/$(printf 'x%.0s' {1..120})': longer than a socket address can hold (107 bytes)" --socket "/$(printf 'x%.0s' {1..120})"
	LIBSHARE_SOCKET=rel refused "LIBSHARE_SOCKET 'rel': a relative path: every jail and the broker would look for it from a different directory; give @NAME (abstract) or an absolute /PATH"
}

@test "sharebrokerd refuses numbers that are not, and a limit below the mounts there are" {
	refused "--max-mounts 'abc': not a whole number from 1 to 4294967295" --max-mounts abc
	refused "--max-mounts '-5': not a whole number from 1 to 4294967295" --max-mounts -5
	refused "--max-mounts '12x': not a whole number from 1 to 4294967295" --max-mounts 12x
	refused "--max-mounts '99999999999': not a whole number from 1 to 4294967295" --max-mounts 99999999999
	refused "--threads '0': not a whole number from 1 to 8" --threads 0
	refused "--threads '9': not a whole number from 1 to 8" --threads 9
	# the table has more than 2 mounts: / and the sandbox at least
	run start_broker --max-mounts 2
	[ "$status" -eq 2 ]
	# (after what it says about the host's own mounts, if anything)
	[ "${lines[-1]}" = "sharebrokerd: max-mounts 2: the mount table already holds $(wc -l </proc/self/mountinfo) mounts" ]
	run "$SHARECTL" status
	[ "$status" -eq 1 ]
}

@test "sharebrokerd refuses other bad values and stray arguments" {
	refused "--log 'broker.log': neither syslog, stderr nor an absolute file name" --log broker.log
	refused "--state-dir 'state': not an absolute directory name" --state-dir state
	refused "unexpected argument 'start' (see --help)" start
	run "$SHAREBROKERD" --no-such-option
	[ "$status" -eq 2 ]
	[[ $output == *"unrecognized option '--no-such-option'"*"usage: sharebrokerd"* ]]
}

@test "sharectl: an unsupported --output format and a bad socket are named, not just the usage" {
	run "$SHARECTL" graph --output x.pdf
	[ "$status" -eq 2 ]
	[ "$output" = "sharectl: --output 'x.pdf': unsupported format: the name must end in .dot, .svg or .png" ]
	run "$SHARECTL" --socket "" status
	[ "$status" -eq 2 ]
	[ "$output" = "sharectl: --socket '': not @NAME (abstract) nor an absolute /PATH of 2 to 107 bytes" ]
	run "$SHARECTL" --socket @ status
	[ "$status" -eq 2 ]
	run "$SHARECTL" --socket rel/s status
	[ "$status" -eq 2 ]
	[[ $output == "sharectl: --socket 'rel/s': "* ]]
}

@test "sharedry: --max-mounts is checked" {
	run "$SHAREDRY" --max-mounts abc -
	[ "$status" -eq 2 ]
	[ "$output" = "sharedry: --max-mounts 'abc': not a whole number from 1 to 4294967295" ]
}

@test "the configuration file sets what the command line does not, and says which line is wrong" {
	local conf=$S/libshare.conf
	cat >"$conf" <<-EOF2
	# a comment
	socket = @from-the-file-$$
	max-mounts = 5000   # trailing comment
	threads = 3
	log = $S/file.log
	fallback = native
	debug = yes
	EOF2
	run env -u LIBSHARE_SOCKET "$SHAREBROKERD" --config "$conf" --print-config
	[ "$status" -eq 0 ]
	[[ $output == *"socket = @from-the-file-$$"* ]]
	[[ $output == *"max-mounts = 5000"* ]]
	[[ $output == *"threads = 3"* ]]
	[[ $output == *"fallback = native"* ]]
	[[ $output == *"debug = yes"* ]]
	# the command line (and LIBSHARE_SOCKET, its stand-in) overrides it
	run "$SHAREBROKERD" --config "$conf" --max-mounts 6000 --threads 1 --print-config
	[[ $output == *"max-mounts = 6000"* ]]
	[[ $output == *"threads = 1"* ]]
	[[ $output == *"socket = $SOCK"* ]]
	# a broker started with it listens where the file says
	run env -u LIBSHARE_SOCKET "$SHAREBROKERD" --config "$conf" --state-dir "$STATE"
	[ "$status" -eq 0 ]
	run "$SHARECTL" --socket "@from-the-file-$$" status
	[ "$status" -eq 0 ]
	[[ $output == "sharebrokerd $(pid_of): "* ]]
	wait_for_line "$S/file.log" "started: socket @from-the-file-$$"
	# errors name the file and the line
	printf 'socket = @ok\nmax-mounts = lots\n' >"$S/bad.conf"
	run "$SHAREBROKERD" --config "$S/bad.conf" --print-config
	[ "$status" -eq 2 ]
	[ "$output" = "sharebrokerd: $S/bad.conf:2: max-mounts 'lots': not a whole number from 1 to 4294967295" ]
	printf 'sockets = @x\n' >"$S/bad.conf"
	run "$SHAREBROKERD" --config "$S/bad.conf" --print-config
	[ "$output" = "sharebrokerd: $S/bad.conf:1: unknown setting 'sockets'" ]
	run "$SHAREBROKERD" --config "$S/missing.conf" --print-config
	[ "$status" -eq 2 ]
	[ "$output" = "sharebrokerd: $S/missing.conf: No such file or directory" ]
}

@test "sharedry --trace: a step under a covering mount and a mount no path reaches say so" {
	# s36 up to its line 12: the copy for s/a/b goes under COVER on s/a
	# (the broker moves COVER aside for it); fault-diff.sh reads these marks
	local s36=$BATS_TEST_DIRNAME/../diff/corpus/s36-covered-receiver-place.sh
	[ "$(sed -n 12p "$s36")" = 'mount -t tmpfs NEW $B/m/a/b' ]
	run "$SHAREDRY" --trace --base /tmp/w - < <(head -n 12 "$s36")
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"step new mount 6 on 3 at /a/b"$'\n'* ]]
	[[ $output == *"step bind mount 7 from 6 on 4 at /a/b (under 5) (hidden)"* ]]
	[ "$(grep -c '(under\|(hidden)' <<<"$output")" -eq 1 ]
}
