# S5 (s05): chain A -> B (shared+slave) -> C (slave); a mount on A reaches B and C.
mkdir -p $B/a $B/b $B/c
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/b
mount --make-slave $B/b
mount --make-shared $B/b
mount --bind $B/b $B/c
mount --make-slave $B/c
mkdir -p $B/a/x
mount -t tmpfs X $B/a/x
