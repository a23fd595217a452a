# S4 (s04): shared+slave group {b,c} receives from a, propagates among itself only.
mkdir -p $B/a $B/b $B/c
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/b
mount --make-slave $B/b
mount --make-shared $B/b
mount --bind $B/b $B/c
mkdir -p $B/a/x $B/c/y
mount -t tmpfs X $B/a/x
mount -t tmpfs Y $B/c/y
