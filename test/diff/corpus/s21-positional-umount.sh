# S21 (s37): umount propagation is positional: the peer's copy made private
# still goes, and so does the slave's own LOCAL at the same place.
mkdir -p $B/a $B/b $B/s
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/b
mount --bind $B/a $B/s
mount --make-slave $B/s
mkdir -p $B/a/x $B/a/q
mount -t tmpfs X $B/a/x
mount --make-private $B/b/x
mount -t tmpfs AQ $B/a/q
umount $B/s/q
mount -t tmpfs LOCAL $B/s/q
umount $B/a/x
umount $B/a/q
