#!/usr/bin/env bats
# The broker's rooms as docs/design.md draws them (issue 25 item 4): the
# table of arrows there is what every #include of daemon/ and shim/
# follows (test/admin/rooms.sh reads both), and the check does fail when
# an include goes where no arrow does.  Reads the source tree only.

SRC=$(cd "${BATS_TEST_DIRNAME}/../.." && pwd)

setup() {
	COPY=$(mktemp -d)
	mkdir -p "$COPY/docs"
	cp -R "$SRC/daemon" "$SRC/include" "$SRC/shim" "$COPY/"
	cp "$SRC/docs/design.md" "$COPY/docs/"
}

teardown() {
	rm -rf "$COPY"
}

@test "every include of daemon/ and shim/ follows an arrow of docs/design.md, and every arrow is taken" {
	run "$SRC/test/admin/rooms.sh" "$SRC"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "a lower room that includes a higher room's header is named, with the arrow it lacks" {
	sed -i '0,/^#include "/s//#include "exec\/exec.h"\n&/' "$COPY/daemon/broker/hold/handle.c"
	run "$SRC/test/admin/rooms.sh" "$COPY"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$output" = "daemon/broker/hold/handle.c: includes daemon/broker/exec/exec.h: no arrow hold -> exec" ]
}

@test "an arrow back up makes a circle, and an arrow nothing takes is named" {
	sed -i 's/^    hold     -> base$/&\n    base     -> hold/' "$COPY/docs/design.md"
	run "$SRC/test/admin/rooms.sh" "$COPY"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"a circle of arrows through "* ]]
	[[ "$output" == *"the arrow base -> hold is drawn, but no file of base includes from hold"* ]]
}

@test "an include of a header the tree does not have is named" {
	echo '#include "nowhere.h"' >> "$COPY/shim/shim.h"
	run "$SRC/test/admin/rooms.sh" "$COPY"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$output" = "shim/shim.h: includes \"nowhere.h\", which is no header of the tree" ]
}
