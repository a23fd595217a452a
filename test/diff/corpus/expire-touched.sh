# MNT_EXPIRE's mark on a mount the broker must touch (issue 29): a copy
# propagated into it, a namespace's copy of it, a move aside for a copy
# beneath it.  Each is done as the kernel does it (no EIO, no copy left
# out); the next call's answer is not compared here: the broker's touch
# clears the kernel's mark, which the kernel keeps (docs/design.md,
# "MNT_EXPIRE: the kernel's own mark").
mkdir -p $B/a $B/j1/x $B/m $B/s
mount -t tmpfs A $B/a
mkdir -p $B/a/p $B/a/q
mount -t tmpfs P $B/a/p
mkdir -p $B/a/p/t
mount --make-shared $B/a/p
mount --bind $B/a/p $B/j1/x
umount2 -e $B/a/p
chroot $B/j1 mount -t tmpfs S /x/t
umount2 -e $B/a/p
mount -t tmpfs Q $B/a/q
umount2 -e $B/a/q
unshare ns1
umount $B/a/q
mount -t tmpfs M $B/m
mount --make-shared $B/m
mount --bind $B/m $B/s
mount --make-slave $B/s
mkdir -p $B/m/c/d
mount -t tmpfs COVER $B/s/c
umount2 -e $B/s/c
mount -t tmpfs NEW $B/m/c/d
umount $B/s/c
