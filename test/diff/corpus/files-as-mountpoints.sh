# Files as mountpoints and bind sources (semantics.md 3.1, 4.1, 6.1):
# file vs directory mismatches are ENOTDIR for new mounts and binds,
# EINVAL for moves; a file in the middle of a path is ENOTDIR.
mkdir -p $B/d $B/e
touch $B/f $B/g $B/d/h
mount -t tmpfs T $B/f
mount --bind $B/f $B/g
mount --bind $B/d $B/f
mount --bind $B/f $B/d
mount --make-shared $B/d
mount --bind $B/d/h $B/g
mount --bind $B/g $B/e
mount -t tmpfs M $B/e
mount --bind $B/e $B/e
touch $B/e/k
mount --move $B/g $B/e/k
mount --move $B/g $B/d
mount --bind $B/f/x $B/e
