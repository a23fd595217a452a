#!/usr/bin/env bats
# The manual (issue 12 item 2): every page lints clean with man --warnings,
# has the sections an administrator looks for, and documents every option
# its program's --help lists; every program answers --version, -h and
# --help, and --help lists every option the program takes.

load admin

PAGES="sharebrokerd.8 sharectl.8 libshare-enter.8 mkjail.8 sharedry.1 libshare.7"

page() {
	echo "$SRC/man/$1"
}

@test "every page is lint-clean: man --warnings prints nothing" {
	command -v man >/dev/null || skip "man-db is not installed"
	local p warnings
	for p in $PAGES; do
		warnings=$(MANWIDTH=80 LC_ALL=C man --warnings -l "$(page "$p")" 2>&1 >/dev/null)
		echo "$p: $warnings"
		[ -z "$warnings" ]
	done
}

@test "every page has SYNOPSIS, OPTIONS, EXIT STATUS, ENVIRONMENT, FILES and EXAMPLES" {
	local p s
	for p in $PAGES; do
		for s in SYNOPSIS OPTIONS "EXIT STATUS" ENVIRONMENT FILES EXAMPLES; do
			grep -qx ".SH \"*$s\"*" "$(page "$p")" || {
				echo "$p: no $s section"
				return 1
			}
		done
	done
}

# The long options PROG's --help names, one a line.
help_options() {
	"$@" --help | grep -o -- '--[a-z][a-z-]*' | sort -u
}

@test "each program's --help lists every option it takes, and its page documents each" {
	local prog opt src
	for prog in sharebrokerd:daemon/broker/main/sharebrokerd.c:8 \
		    sharectl:daemon/tools/sharectl.c:8 \
		    sharedry:daemon/tools/sharedry.c:1; do
		IFS=: read -r name src sec <<<"$prog"
		# the getopt_long table: { "name", ... }
		for opt in $(grep -o '{ "[a-z-]*", \(no\|required\)_argument' "$SRC/$src" |
				 sed 's/{ "\([a-z-]*\)".*/\1/'); do
			help_options "$(libshare_find "daemon/$name")" | grep -qx -- "--$opt" || {
				echo "$name --help does not list --$opt"
				return 1
			}
			grep -q -- "\\\\-\\\\-${opt//-/\\\\-}" "$(page "$name.$sec")" || {
				echo "$name.$sec does not document --$opt"
				return 1
			}
		done
	done
}

@test "--version, -h and --help answer with status 0" {
	local bin
	for bin in "$SHAREBROKERD" "$SHARECTL" "$SHAREDRY" "$DIST/libshare-enter"; do
		run "$bin" --version
		[ "$status" -eq 0 ]
		[[ $output == *" (libshare) "[0-9]* ]]
		run "$bin" -h
		[ "$status" -eq 0 ]
		[[ $output == usage:* ]]
		run "$bin" --help
		[ "$status" -eq 0 ]
		[[ $output == usage:* ]]
	done
	run "$SRC/jail-examples/mkjail.sh" --help
	[[ $output == *"usage: mkjail.sh"* ]]
}

# pam_libshare.8 (issue 26 item 2): a PAM module's page, RETURN VALUES for
# EXIT STATUS; every option the module parses is documented.
@test "pam_libshare.8 is lint-clean and documents every option pam_libshare.c parses" {
	command -v man >/dev/null || skip "man-db is not installed"
	local p=$SRC/man/pam_libshare.8 opt
	[ -z "$(MANWIDTH=80 LC_ALL=C man --warnings -l "$p" 2>&1 >/dev/null)" ]
	for s in SYNOPSIS OPTIONS "RETURN VALUES" ENVIRONMENT FILES EXAMPLES; do
		grep -qx ".SH \"*$s\"*" "$p"
	done
	# the options: the literals parse_opts() compares argv with
	run sed -n '/^static int parse_opts/,/^}/s/.*cmp(a, "\([a-z_]*=*[a-z]*\)".*/\1/p' \
		"$SRC/pam/pam_libshare.c"
	[ "${#lines[@]}" -ge 5 ]
	for opt in "${lines[@]}"; do
		grep -q -- "${opt%%=*}" "$p" || {
			echo "pam_libshare.8 does not document $opt"
			return 1
		}
		[[ $opt != *=?* ]] || grep -q -- "${opt#*=}" "$p"
	done
}
