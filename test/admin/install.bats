#!/usr/bin/env bats
# The installed layout (issue 12 item 3): make install DESTDIR=... puts
# every program, page, setting and completion where configure said,
# sharedry included and the shim in $(pkglibdir), not in a libdir that
# multiarch renames; the state directory defaults to $(runstatedir)/libshare;
# and the installed example 1 runs from that tree, finding its programs
# there.

load admin

setup_file() {
	load admin
	install_tree
}

setup() {
	admin_setup
	ROOT=$BATS_FILE_TMPDIR/root
}
teardown() { admin_teardown; }

@test "make install DESTDIR puts each file where configure said" {
	local f
	for f in "$(make_var sbindir)/sharebrokerd" \
		 "$(make_var sbindir)/libshare-enter" "$(make_var sbindir)/mkjail" \
		 "$(make_var bindir)/sharectl" "$(make_var bindir)/sharedry" \
		 "$(make_var pkglibdir)/libshare.so" \
		 "$(make_var sysconfdir)/libshare/libshare.conf" \
		 "$(make_var mandir)/man8/sharebrokerd.8" \
		 "$(make_var mandir)/man8/sharectl.8" \
		 "$(make_var mandir)/man8/mkjail.8" \
		 "$(make_var mandir)/man8/libshare-enter.8" \
		 "$(make_var mandir)/man1/sharedry.1" \
		 "$(make_var mandir)/man7/libshare.7" \
		 "$(make_var bashcompletiondir)/sharectl" \
		 "$(make_var bashcompletiondir)/sharebrokerd" \
		 "$(make_var pkgdatadir)/jail-examples/example1.sh" \
		 "$(make_var pkgdatadir)/jail-examples/paths.sh"; do
		[ -f "$ROOT$f" ] || { echo "missing: $f"; return 1; }
	done
	# a preload object, not a library to link with: not in libdir
	[ ! -e "$ROOT$(make_var libdir)/libshare.so" ]
	[ -x "$ROOT$(make_var bindir)/sharedry" ]
}

@test "the installed broker's state directory is \$(runstatedir)/libshare" {
	run "$ROOT$(make_var sbindir)/sharebrokerd" --config /dev/null --print-config
	[ "$status" -eq 0 ]
	[[ $output == *"state-dir = $(make_var runstatedir)/libshare"* ]]
	run "$ROOT$(make_var sbindir)/sharebrokerd" --help
	[[ $output == *"--config FILE      settings file (default $(make_var sysconfdir)/libshare/libshare.conf)"* ]]
}

@test "the installed scripts find the installed programs of their own tree" {
	local ex=$ROOT$(make_var pkgdatadir)/jail-examples
	run env -u SHAREBROKERD -u SHARECTL -u LIBSHARE_SO bash -c '
		. "$1/lib.sh"; ex_find_binaries
		echo "$SHAREBROKERD"; echo "$SHARECTL"; echo "$LIBSHARE_SO"' \
		bash "$ex"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$ROOT$(make_var sbindir)/sharebrokerd" ]
	[ "${lines[1]}" = "$ROOT$(make_var bindir)/sharectl" ]
	[ "${lines[2]}" = "$ROOT$(make_var pkglibdir)/libshare.so" ]
	# mkjail copies that shim into the jail
	env -u LIBSHARE_SO "$ex/mkjail.sh" "$S/jail"
	cmp "$S/jail/libshare/libshare.so" "$ROOT$(make_var pkglibdir)/libshare.so"
	"$ex/mkjail.sh" --remove "$S/jail"
}

@test "the installed example 1 runs from the DESTDIR tree and passes" {
	run env -u SHAREBROKERD -u SHARECTL -u LIBSHARE_SO -u LIBSHARE_SOCKET \
		"$ROOT$(make_var pkgdatadir)/jail-examples/example1.sh"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"== example1: all "*" checks passed"* ]]
}

# issue 26 item 2: the PAM module, where configure said, naming the
# installed configuration and shim as its defaults.
@test "make install puts pam_libshare.so in \$(pammoddir), its configuration and pam-auth-update profile beside it" {
	[ -e "$BUILD/pam/pam_libshare.so" ] || skip "configure found no libpam"
	local mod=$ROOT$(make_var pammoddir)/pam_libshare.so
	[ -f "$mod" ]
	[ -f "$ROOT$(make_var sysconfdir)/libshare/namespace.conf" ]
	[ -f "$ROOT$(make_var datadir)/pam-configs/libshare" ]
	[ -f "$ROOT$(make_var mandir)/man8/pam_libshare.8" ]
	# every line of the installed configuration is a comment
	! grep -v '^#' "$ROOT$(make_var sysconfdir)/libshare/namespace.conf"
	grep -aq "$(make_var sysconfdir)/libshare/namespace.conf" "$mod"
	grep -aq "$(make_var pkglibdir)/libshare.so" "$mod"
}
