# MNT_EXPIRE on a covered mount (issue 29): a cwd kept beneath a mount on
# a directory above reaches mounts no path from the root reaches.  Their
# marks are the kernel's as any other's: a use from there (a stat)
# clears it, and with no use in between the second call unmounts.
mkdir -p $B/a
mount -t tmpfs A $B/a
mkdir -p $B/a/m $B/a/n
mount -t tmpfs M $B/a/m
mount -t tmpfs N $B/a/n
cd $B/a
mount -t tmpfs T $B/a
umount2 -e m
use stat m
umount2 -e m
umount2 -e m
umount2 -e m
umount2 -e n
umount2 -e n
umount2 -e n
