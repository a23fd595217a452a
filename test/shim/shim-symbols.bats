#!/usr/bin/env bats
# libshare.so must load in jails whose glibc is older than the build's:
# it imports no symbol version newer than GLIBC_MAX (getauxval, 2.16, is
# the newest it needs; everything else is GLIBC_2.2.5 on x86_64; dlsym,
# where used, is pinned to its old version rather than 2.34's).  And it
# exports exactly the interposed names of shim/libshare.map, unversioned,
# so that they also capture references to mount@GLIBC_2.2.5 and the like.

load helpers

GLIBC_MAX=GLIBC_2.16
MAP=$BATS_TEST_DIRNAME/../../shim/libshare.map

# The names in the map's global: section.
map_names() {
	perl -0777 -ne 's{/\*.*?\*/}{}gs;
		/global:(.*?)local:/s or die "no global: section\n";
		print "$_\n" for sort grep { length } split /[\s;]+/, $1' "$MAP"
}

@test "no imported GLIBC version is newer than $GLIBC_MAX" {
	local versions newest
	versions=$(objdump -T "$SHIM" | awk '/\*UND\*/' |
		grep -o 'GLIBC_[0-9][0-9.]*' | sort -u -V)
	[ -n "$versions" ]
	newest=$(printf '%s\n' $versions $GLIBC_MAX | sort -V | tail -n 1)
	if [ "$newest" != "$GLIBC_MAX" ]; then
		objdump -T "$SHIM" | grep "$newest" >&2
		return 1
	fi
}

@test "no GLIBC_PRIVATE import" {
	run objdump -T "$SHIM"
	[ "$status" -eq 0 ]
	[[ "$output" != *GLIBC_PRIVATE* ]]
}

@test "objdump -T: the exports are the map's names, unversioned" {
	local got
	got=$(objdump -T "$SHIM" | awk '$1 ~ /^[0-9a-f]+$/ && !/\*UND\*/ {
		print $NF, $(NF - 1) }' | sort)
	expect_lines <(map_names | sed 's/$/ Base/') "$got"
}

@test "nm -D --defined-only lists the map's names and nothing else" {
	expect_lines <(map_names) "$(nm -D --defined-only "$SHIM" |
		awk '{ print $NF }' | sort)"
}
