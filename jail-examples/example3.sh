#!/bin/bash
# Example 3 of the shared-subtree RFC: one tree visible at several places
# (the RFC's versioned views), with two chroot jails as the places.  A
# shared tree is bound recursively (rbind) into each jail's /view:
#
#  - the copies carry the tree's submounts with them (its /usr), except the
#    one marked unbindable (its /secret);
#  - a new version the host mounts over /usr shows in every view;
#  - a mount made inside one view reaches the host's tree and the other
#    view: the copies are peers, events travel both ways;
#  - an umount from any view takes the mount away from all of them.
#
# Every mount and umount is an unmodified util-linux command whose mount(2)
# goes through libshare.so to this example's own sharebrokerd.  The same
# steps, as a dry run of the engine, are example3.dry.
#
# Run as root: ./example3.sh.  Exit 0 when everything happened as the RFC
# says, 1 with a FAIL line otherwise.  It leaves nothing behind.
set -eu
# shellcheck source=lib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
ex_init example3 "$@"

# The tree lives at $B/tree; the jails are $B/v1 and $B/v2.
mkdir -p "$B/tree"
ex_jail v1
ex_jail v2
mkdir -p "$B/v1/view" "$B/v2/view"
ex_broker

say "the host builds a tree: its /usr at version 1, and a secret"
host mount -t tmpfs tree "$B/tree"
mkdir -p "$B/tree/usr" "$B/tree/extra" "$B/tree/secret"
host mount -t tmpfs usr-1 "$B/tree/usr"
write host "$B/tree/usr/version" "1"
host mount -t tmpfs secret "$B/tree/secret"
write host "$B/tree/secret/key" "do not copy"

say "the whole tree becomes shared; the secret unbindable"
host mount --make-rshared "$B/tree"
host mount --make-unbindable "$B/tree/secret"

say "each jail gets a view of the whole tree"
host mount --rbind "$B/tree" "$B/v1/view"
host mount --rbind "$B/tree" "$B/v2/view"
show_dir v1 /view/usr
show_dir v2 /view/secret
show_mounts
expect_content v1 /view/usr/version "1" "rbind took /usr into v1's view"
expect_content v2 /view/usr/version "1" "and into v2's"
expect_missing v2 /view/secret/key "the unbindable secret stayed out"
expect_sources "$B/v1/view/secret" "" "no copy of it in any view"

say "the host mounts version 2 over /usr"
host mount -t tmpfs usr-2 "$B/tree/usr"
write host "$B/tree/usr/version" "2"
show_dir v1 /view/usr
show_dir v2 /view/usr
expect_content v1 /view/usr/version "2" "v1's view shows version 2"
expect_content v2 /view/usr/version "2" "v2's view shows version 2"

say "v1 mounts something in its view"
jail v1 mount -t tmpfs extra /view/extra
write v1 /view/extra/note "from v1"
show_dir host "$B/tree/extra"
show_dir v2 /view/extra
show_mounts
expect_content host "$B/tree/extra/note" "from v1" \
	"the host's tree got v1's mount (peers)"
expect_content v2 /view/extra/note "from v1" "and so did v2's view"

say "v2 unmounts version 2 from its view"
jail v2 umount /view/usr
show_dir host "$B/tree/usr"
show_dir v1 /view/usr
show_mounts
expect_content host "$B/tree/usr/version" "1" \
	"the host's /usr is back to version 1"
expect_content v1 /view/usr/version "1" "so is v1's view"
expect_content v2 /view/usr/version "1" "and v2's"
expect_sources "$B/v1/view/usr" "usr-1" "only version 1 is mounted at any /usr"

ex_done
