# S18 (s17): a counterpart that has its own child (not on its root) survives
# the propagated umount; one whose only child is a root overmount is
# removed and the overmount drops into its place.
mkdir -p $B/a $B/b
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/b
mkdir -p $B/a/x
mount -t tmpfs X $B/a/x
mount --make-private $B/b/x
mkdir -p $B/b/x/y
mount -t tmpfs Y $B/b/x/y
umount $B/a/x
mount -t tmpfs X2 $B/a/x
mount --make-private $B/b/x
mount -t tmpfs OVER $B/b/x
umount $B/a/x
