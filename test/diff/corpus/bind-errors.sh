# semantics.md 4.1, 10: bind/rbind of an unbindable mount, or of a
# directory inside one, is EINVAL; missing source or target is ENOENT; a
# bind of a plain directory of a private mount is fine (root = that dir).
mkdir -p $B/u $B/t $B/t2
mount -t tmpfs U $B/u
mkdir -p $B/u/sub
mount --make-unbindable $B/u
mount --bind $B/u $B/t
mount --rbind $B/u $B/t
mount --bind $B/u/sub $B/t
mount --rbind $B/u/sub $B/t
mount --bind $B/nonexist $B/t
mount --bind $B/t $B/nonexist
mount --rbind $B/nonexist $B/t
mount -t tmpfs X $B/nonexist
mount --bind $B/u/sub/../sub $B/t2
mkdir -p $B/base/dir
mount --bind $B/base/dir $B/t2
