# semantics.md 4.2, 3.3: rbind of an rshared tree into a private dest (each
# clone joins its original's group) and into a shared dest with a peer
# and a shared+slave group; later mounts in the tree then propagate into
# every copy.
mkdir -p $B/t $B/p $B/d $B/dp $B/dss1 $B/dss2
mount -t tmpfs T $B/t
mkdir -p $B/t/a $B/t/b
mount -t tmpfs TA $B/t/a
mount -t tmpfs TB $B/t/b
mount --make-rshared $B/t
mount -t tmpfs D $B/d
mount --make-shared $B/d
mount --bind $B/d $B/dp
mount --bind $B/d $B/dss1
mount --make-slave $B/dss1
mount --make-shared $B/dss1
mount --bind $B/dss1 $B/dss2
mount --rbind $B/t $B/p
mkdir -p $B/d/in
mount --rbind $B/t $B/d/in
mkdir -p $B/t/a/x
mount -t tmpfs AX $B/t/a/x
