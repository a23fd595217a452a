# S18 (s19b): lazy umount of a tree: the slave's copy s/x with its own child
# z survives (now private), its propagated child s/x/y goes.
mkdir -p $B/a $B/s
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/s
mount --make-slave $B/s
mkdir -p $B/a/x
mount -t tmpfs X $B/a/x
mkdir -p $B/a/x/y $B/a/x/z
mount -t tmpfs Y $B/a/x/y
mount -t tmpfs Z $B/s/x/z
umount $B/a/x
umount -l $B/a/x
