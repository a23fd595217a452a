# semantics.md 5.2: umount -l of a tree removes the copies of every member
# on peers and slaves, even busy ones; a copy with an extra child survives
# but loses its propagated children.
mkdir -p $B/a $B/b $B/s $B/s2
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/b
mount --bind $B/a $B/s
mount --make-slave $B/s
mount --bind $B/a $B/s2
mount --make-slave $B/s2
mkdir -p $B/a/x
mount -t tmpfs X $B/a/x
mkdir -p $B/a/x/y $B/a/x/z
mount -t tmpfs Y $B/a/x/y
mkdir -p $B/a/x/y/w
mount -t tmpfs W $B/a/x/y/w
mount -t tmpfs OWN $B/s2/x/z
hold $B/b/x/y
umount $B/b/x
umount -l $B/b/x
release $B/b/x/y
