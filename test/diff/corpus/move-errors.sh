# semantics.md 6.1, 10: move of a mount under a shared parent, of a
# non-mount directory, of the sandbox root's subtree into itself (ELOOP),
# of a tree holding an unbindable mount into a shared dest; a busy mount
# can be moved (moves have no busy check).
mkdir -p $B/sh $B/p $B/q $B/d
mount -t tmpfs SH $B/sh
mount --make-shared $B/sh
mkdir -p $B/sh/c
mount -t tmpfs C $B/sh/c
mount --move $B/sh/c $B/d
mount --make-private $B/sh
mount --move $B/sh/c $B/d
mount --move $B/sh/c $B/d/c
mount --move $B/d $B/d
mount -t tmpfs P $B/p
mkdir -p $B/p/x
mount --move $B/p/x $B/q
mount --move $B/p $B/p/x
mount --move $B/nonexist $B/q
mount --move $B/p $B/nonexist
hold $B/p
mount --move $B/p $B/q
release $B/p
mkdir -p $B/q/u
mount -t tmpfs U $B/q/u
mount --make-unbindable $B/q/u
mount --make-shared $B/sh
mount --move $B/q $B/sh/c
mount --move $B/q $B/d
