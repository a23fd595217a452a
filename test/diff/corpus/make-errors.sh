# semantics.md 2.1, 10: a propagation change on a directory that is not a
# mount root is EINVAL (all eight forms), on a missing path ENOENT; on a
# mount root it works, also on a covered mount's top.
mkdir -p $B/dir $B/m
mount --make-shared $B/dir
mount --make-slave $B/dir
mount --make-private $B/dir
mount --make-unbindable $B/dir
mount --make-rshared $B/dir
mount --make-rslave $B/dir
mount --make-rprivate $B/dir
mount --make-runbindable $B/dir
mount --make-shared $B/nonexist
mount --make-rprivate $B/no/such/dir
mount -t tmpfs M $B/m
mkdir -p $B/m/sub
mount --make-shared $B/m/sub
mount --make-shared $B/m
mount -t tmpfs TOP $B/m
mount --make-unbindable $B/m
