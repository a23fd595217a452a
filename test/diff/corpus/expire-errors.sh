# MNT_EXPIRE's refusals (issue 29): EINVAL with MNT_DETACH or MNT_FORCE
# and on the caller's root; EBUSY for a mount in use (a cwd, an open file,
# a child mount), which leaves the mark as it was: the use's end clears it.
mkdir -p $B/a $B/j
mount -t tmpfs A $B/a
touch $B/a/f
umount2 -e -l $B/a
umount2 -e -f $B/a
umount2 -e $B/a
hold $B/a
umount2 -e $B/a
release $B/a
umount2 -e $B/a
hold_fd $B/a/f
umount2 -e $B/a
release $B/a/f
umount2 -e $B/a
mkdir -p $B/a/x
mount -t tmpfs X $B/a/x
umount2 -e $B/a
umount2 -e $B/a/x
umount2 -e $B/a/x
umount2 -e $B/a
umount2 -e $B/a
mount -t tmpfs J $B/j
chroot $B/j umount2 -e /
chroot $B/j umount2 -e /
mkdir -p $B/j/k
chroot $B/j mount -t tmpfs K /k
chroot $B/j umount2 -e -l /k
chroot $B/j umount2 -e /k
chroot $B/j umount2 -e /k
