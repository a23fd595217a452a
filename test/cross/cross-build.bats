#!/usr/bin/env bats
# The shim of a jail of another architecture or libc, built as its users
# build it: ./configure --host=TRIPLET (aarch64-linux-gnu, i686-linux-gnu,
# arm-linux-gnueabihf) or ./configure CC=musl-gcc, then make.  Each one is
# an ELF of its machine that exports the names of shim/libshare.map, and
# the wire codec compiled for it (test/unit/wire-test.c, run natively or
# under qemu-user) sends and reads the same bytes as on x86_64: the golden
# bytes of that test are this machine's.  Skipped only when the target's
# compiler or qemu-user-static is not installed (the README's test command
# installs them).

load ../lib/legacy
load cross

MAP=$BATS_TEST_DIRNAME/../../shim/libshare.map

# The names in the map's global: section, less those TARGET does not
# interpose: on a 32-bit glibc stat64, lstat64 and fstatat64 stay libc's
# (nsfile.c), and musl before 1.2.5 has none of them, nor statx.
expected_names() {
	local drop=
	case $1 in
	i686-* | arm-*) drop='^(stat64|lstat64|fstatat64)$' ;;
	musl) drop='^(stat64|lstat64|fstatat64|statx)$' ;;
	esac
	perl -0777 -ne 's{/\*.*?\*/}{}gs;
		/global:(.*?)local:/s or die "no global: section\n";
		print "$_\n" for sort grep { length } split /[\s;]+/, $1' "$MAP" |
		if [ -n "$drop" ]; then grep -Ev "$drop"; else cat; fi
}

# The shim of TARGET: its machine, then its exports.
check_shim() {
	local got
	cross_need "$1"
	cross_shim "$1"
	run readelf -h "$CROSS_SHIM"
	[ "$status" -eq 0 ]
	[[ $output == *"Machine:"*" $CROSS_ARCH"* ]] || {
		echo "$CROSS_SHIM is not $CROSS_ARCH: $output" >&2
		return 1
	}
	[[ $output == *"Type:"*"DYN"* ]]
	got=$(readelf --dyn-syms -W "$CROSS_SHIM" |
		awk '$7 != "UND" && $5 == "GLOBAL" { sub(/@.*/, "", $8); print $8 }' |
		sort)
	if [ "$got" != "$(expected_names "$1")" ]; then
		echo "exports of $1's shim (-expected +got):" >&2
		diff <(expected_names "$1") <(echo "$got") >&2
		return 1
	fi
}

# wire-test compiled for TARGET: every golden byte string as on x86_64.
check_wire() {
	cross_need "$1"
	cross_compile "$1" "$CROSS_SRC/test/unit/wire-test.c" wire-test \
		-I"$CROSS_SRC/test/unit"
	run cross_run "$1" "$CROSS_PROG"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"ok "* ]]
	[[ $output != *"not ok"* ]]
	# as many points as the native run
	[ "$(grep -c '^ok ' <<<"$output")" -eq \
	  "$("$(libshare_find test/unit/wire-test)" | grep -c '^ok ')" ]
}

@test "aarch64-linux-gnu: configure --host builds an AArch64 shim exporting the map" {
	check_shim aarch64-linux-gnu
}

@test "i686-linux-gnu: configure --host builds an i386 shim exporting the map" {
	check_shim i686-linux-gnu
}

@test "arm-linux-gnueabihf: configure --host builds an ARM shim exporting the map" {
	check_shim arm-linux-gnueabihf
}

@test "musl: configure CC=musl-gcc builds a shim exporting the map" {
	check_shim musl
	run readelf -d "$CROSS_SHIM"
	[[ $output == *"NEEDED"*"[libc.so]"* ]]
}

@test "aarch64-linux-gnu: the codec's golden bytes" {
	check_wire aarch64-linux-gnu
}

@test "i686-linux-gnu: the codec's golden bytes (32-bit)" {
	check_wire i686-linux-gnu
}

@test "arm-linux-gnueabihf: the codec's golden bytes (32-bit)" {
	check_wire arm-linux-gnueabihf
}

@test "musl: the codec's golden bytes" {
	check_wire musl
}
