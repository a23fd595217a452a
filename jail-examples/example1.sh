#!/bin/bash
# Example 1 of the shared-subtree RFC, with a chroot jail standing for the
# cloned namespace: the host's /floppy is shared, the jail's /floppy is a
# slave of it.
#
#  - a floppy the host mounts on /floppy appears in the jail's /floppy;
#  - a mount made inside the jail on /floppy stays in the jail;
#  - the host's umount takes the jail's copy away, and the jail's own mount
#    drops into its place.
#
# Every mount and umount below is an unmodified util-linux command whose
# mount(2) goes through libshare.so to this example's own sharebrokerd,
# which performs it (and the copies propagation calls for) with plain
# private mounts.  The same steps, as a dry run of the engine, are
# example1.dry.
#
# Run as root: ./example1.sh.  Exit 0 when everything happened as the RFC
# says, 1 with a FAIL line otherwise.  It leaves nothing behind.
set -eu
# shellcheck source=lib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
ex_init example1 "$@"

# The host's /floppy is $B/floppy; the jail is $B/jail.  Jails are built
# before the broker starts: it imports their /usr mounts with the rest.
mkdir -p "$B/floppy"
ex_jail jail
mkdir -p "$B/jail/floppy"
ex_broker

say "the host makes /floppy a shared mount of its own"
host mount --bind "$B/floppy" "$B/floppy"
host mount --make-shared "$B/floppy"

say "the jail gets a copy of it (a peer), and makes it a slave from inside"
host mount --bind "$B/floppy" "$B/jail/floppy"
jail jail mount --make-slave /floppy

say "the host mounts a floppy"
host mount -t tmpfs floppy-disk "$B/floppy"
write host "$B/floppy/label" "host floppy"
show_dir host "$B/floppy"
show_dir jail /floppy
show_mounts
expect_content jail /floppy/label "host floppy" \
	"the host's floppy appears in the jail's slave /floppy"
expect_sources "$B/jail/floppy" "example1-sandbox floppy-disk" \
	"the broker copied the mount into the jail"

say "inside the jail, a mount on /floppy"
jail jail mount -t tmpfs jail-disk /floppy
write jail /floppy/label "jail disk"
show_dir host "$B/floppy"
show_dir jail /floppy
show_mounts
expect_content jail /floppy/label "jail disk" \
	"the jail sees its own mount on top"
expect_content host "$B/floppy/label" "host floppy" \
	"the jail's mount does not travel back to the host (slave)"
expect_sources "$B/floppy" "example1-sandbox floppy-disk" \
	"the host's /floppy has no copy of the jail's mount"

say "the host unmounts its floppy"
host umount "$B/floppy"
show_dir host "$B/floppy"
show_dir jail /floppy
show_mounts
expect_missing host "$B/floppy/label" \
	"the host's floppy is gone from the host"
expect_content jail /floppy/label "jail disk" \
	"the copy left the jail; the jail's own mount dropped into its place"
expect_sources "$B/jail/floppy" "example1-sandbox jail-disk" \
	"the jail's /floppy: its slave bind, with the jail's mount on it"

say "the jail unmounts its own"
jail jail umount /floppy
show_dir jail /floppy
expect_sources "$B/jail/floppy" "example1-sandbox" \
	"only the jail's slave /floppy is left"

ex_done
