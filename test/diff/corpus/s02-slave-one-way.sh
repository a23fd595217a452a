# S2 (s02): slave receives from its master, never the other way.
mkdir -p $B/a $B/b
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/b
mount --make-slave $B/b
mkdir -p $B/a/x $B/a/y
mount -t tmpfs X $B/a/x
mount -t tmpfs Y $B/b/y
