# S16 (s15): umount on a peer removes the copies on all peers and slaves;
# umount of a slave's received copy is local.
mkdir -p $B/a $B/b $B/c
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/b
mount --bind $B/a $B/c
mount --make-slave $B/c
mkdir -p $B/a/x $B/a/y
mount -t tmpfs X $B/a/x
mount -t tmpfs Y $B/a/y
umount $B/b/x
umount $B/c/y
