# semantics.md 3.1, S29: mounts stacked on a shared mount propagate to its
# peers as overmounts; unmounting the top on one peer removes them all,
# exposing the previous layer everywhere.
mkdir -p $B/a $B/b $B/c
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/b
mount --bind $B/a $B/c
mount --make-slave $B/c
mount -t tmpfs L1 $B/a
mount -t tmpfs L2 $B/b
mount --bind $B/c $B/c
umount $B/a
umount $B/c
