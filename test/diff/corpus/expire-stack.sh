# MNT_EXPIRE beneath a stack (issue 29): a cwd kept beneath a mount
# stacked on its directory names the stack's top for umount2's last
# component ("."), as for a new mount's place (semantics.md 3.2).
# umount2's lookup leaves the top's mark (mntput_no_expire()): the second
# call unmounts it.  A mount made there goes on the marked top, and its
# lookup clears the mark (mntput()).
mkdir -p $B/a $B/b
mount -t tmpfs A $B/a
mkdir -p $B/a/d
cd $B/a
mount -t tmpfs T $B/a
umount2 -e $B/a
umount2 -e .
umount2 -e d
umount2 -e .
mount -t tmpfs B $B/b
cd $B/b
mount -t tmpfs U $B/b
umount2 -e .
mount -t tmpfs V .
umount2 -e .
umount2 -e .
umount2 -e .
umount2 -e .
