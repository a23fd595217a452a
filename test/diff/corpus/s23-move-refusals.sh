# S23 (s20): move refusals: source under a shared parent (EINVAL), target
# under the source covered (ENOENT) or missing, source not a mount root
# (EINVAL), unbindable into a shared dest (EINVAL) but into a private one
# OK, a tree containing an unbindable mount into a shared dest (EINVAL).
mkdir -p $B/sh $B/p $B/dst
mount -t tmpfs SH $B/sh
mount --make-shared $B/sh
mkdir -p $B/sh/m
mount -t tmpfs M $B/sh/m
mount -t tmpfs P $B/p
mkdir -p $B/p/q $B/p/q/r
mount -t tmpfs Q $B/p/q
mount --move $B/sh/m $B/dst
mount --move $B/p $B/p/q/r
mount --move $B/p $B/p/x_nonexist
mkdir -p $B/p/dir
mount --move $B/p/dir $B/dst
mkdir -p $B/u $B/sh/t
mount -t tmpfs U $B/u
mount --make-unbindable $B/u
mount --move $B/u $B/sh/t
mount --move $B/u $B/p/dir
mkdir -p $B/p/q/r
mount -t tmpfs UB2 $B/p/q/r
mount --make-unbindable $B/p/q/r
mount --move $B/p/q $B/sh/t
