# MNT_EXPIRE in jails and on propagated copies (issue 29).  A copy's mark
# is its own: a use of a peer or slave copy leaves the mount's mark, a use
# of the very mount from another jail clears it.  The second call's umount
# propagates as a plain umount does, and waits, mark kept, while a copy
# is busy.  A marked slave copy stays, in the views, with its master.
mkdir -p $B/a $B/j1/x $B/j2/x
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/j1/x
mount --bind $B/a $B/j2/x
mount --make-slave $B/j2/x
mkdir -p $B/a/m $B/a/n $B/a/p $B/a/q $B/a/r
mount -t tmpfs M $B/a/m
chroot $B/j1 umount2 -e /x/m
chroot $B/j2 use stat /x/m
use stat $B/a/m
chroot $B/j1 umount2 -e /x/m
mount -t tmpfs N $B/a/n
chroot $B/j2 umount2 -e /x/n
chroot $B/j1 use chdir /x/n
chroot $B/j2 umount2 -e /x/n
mount -t tmpfs P $B/a/p
umount2 -e $B/a/p
chroot $B/a use stat /p
umount2 -e $B/a/p
chroot $B/j1 umount2 -e /x/p
umount2 -e $B/a/p
mount -t tmpfs Q $B/a/q
chroot $B/j1 umount2 -e /x/q
umount2 -e $B/j1/x/q
mount -t tmpfs R $B/a/r
hold $B/j2/x/r
umount2 -e $B/a/r
umount2 -e $B/a/r
release $B/j2/x/r
umount2 -e $B/a/r
mkdir -p $B/a/s
mount -t tmpfs S $B/a/s
chroot $B/j2 umount2 -e /x/s
