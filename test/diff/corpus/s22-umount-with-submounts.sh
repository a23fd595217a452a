# S22 (s19): umount of a mount with a child is EBUSY; umount -l takes the
# tree and the copies, but the peer's private copy with its own Z stays.
mkdir -p $B/a $B/b
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/b
mkdir -p $B/a/x
mount -t tmpfs X $B/a/x
mkdir -p $B/a/x/y $B/a/x/z
mount -t tmpfs Y $B/a/x/y
mount --make-private $B/b/x
mount -t tmpfs Z $B/b/x/z
umount $B/a/x
umount -l $B/a/x
