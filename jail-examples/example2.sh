#!/bin/bash
# Example 2 of the shared-subtree RFC: per-user namespaces, with one chroot
# jail per user standing for each user's namespace.  Every jail's /mnt is a
# peer of the host's shared /mnt: one peer group.
#
#  - a CD the host mounts under /mnt appears in every user's jail;
#  - a USB stick alice mounts in her jail appears for bob and on the host:
#    between peers, events travel both ways;
#  - what bob mounts outside /mnt (his /tmp) stays his;
#  - bob unmounts alice's stick, and it goes from every jail and the host.
#
# Every mount and umount is an unmodified util-linux command whose mount(2)
# goes through libshare.so to this example's own sharebrokerd.  The same
# steps, as a dry run of the engine, are example2.dry.
#
# Run as root: ./example2.sh.  Exit 0 when everything happened as the RFC
# says, 1 with a FAIL line otherwise.  It leaves nothing behind.
set -eu
# shellcheck source=lib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/lib.sh"
ex_init example2 "$@"

# The host's /mnt is $B/mnt, with a place for a CD and a USB stick; the
# users' jails are $B/alice and $B/bob, built before the broker starts.
mkdir -p "$B/mnt/cdrom" "$B/mnt/usb"
ex_jail alice
ex_jail bob
mkdir -p "$B/alice/mnt" "$B/bob/mnt"
ex_broker

say "the host makes /mnt a shared mount of its own"
host mount --bind "$B/mnt" "$B/mnt"
host mount --make-shared "$B/mnt"

say "each user's jail gets a peer of it at /mnt: one peer group"
host mount --bind "$B/mnt" "$B/alice/mnt"
host mount --bind "$B/mnt" "$B/bob/mnt"

say "the host mounts a CD on /mnt/cdrom"
host mount -t tmpfs cdrom "$B/mnt/cdrom"
write host "$B/mnt/cdrom/label" "the cd"
show_dir alice /mnt/cdrom
show_dir bob /mnt/cdrom
expect_content alice /mnt/cdrom/label "the cd" "alice sees the host's CD"
expect_content bob /mnt/cdrom/label "the cd" "bob sees the host's CD"

say "alice mounts a USB stick on /mnt/usb, inside her jail"
jail alice mount -t tmpfs alice-usb /mnt/usb
write alice /mnt/usb/label "alice stick"
show_dir host "$B/mnt/usb"
show_dir bob /mnt/usb
show_mounts
expect_content bob /mnt/usb/label "alice stick" \
	"bob sees alice's stick (peers: events travel between jails)"
expect_content host "$B/mnt/usb/label" "alice stick" \
	"the host sees it too (peers: events travel back to the host)"

say "bob mounts a scratch space on his /tmp, outside /mnt"
jail bob mount -t tmpfs bob-tmp /tmp
write bob /tmp/note "bob only"
show_dir bob /tmp
show_dir alice /tmp
expect_content bob /tmp/note "bob only" "bob sees his /tmp"
expect_missing alice /tmp/note "alice does not: bob's /tmp is his alone"
expect_sources "$B/alice/tmp" "" "no copy of bob's /tmp in alice's jail"

say "bob unmounts alice's stick"
jail bob umount /mnt/usb
show_dir alice /mnt/usb
show_dir host "$B/mnt/usb"
show_mounts
expect_missing alice /mnt/usb/label "the stick is gone from alice's jail"
expect_missing host "$B/mnt/usb/label" "and from the host"
expect_sources "$B/mnt/usb" "" "no mount is left at any /mnt/usb"
expect_sources "$B/bob/mnt/usb" "" "not even in bob's jail"

ex_done
