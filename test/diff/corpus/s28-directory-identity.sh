# S28 (s42): propagation follows directories, not paths: Z mounted at a/e/z
# (e is a bind of a/d in the same shared fs) appears four times.
mkdir -p $B/a $B/b
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/b
mkdir -p $B/a/d/z $B/a/e
mount --bind $B/a/d $B/a/e
mount -t tmpfs Z $B/a/e/z
