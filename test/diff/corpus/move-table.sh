# semantics.md 6.2: move into a non-shared dest keeps every type (shared,
# slave, private, unbindable); into a shared dest with a peer and a slave:
# private -> shared, slave -> shared+slave, shared keeps its group.
mkdir -p $B/z $B/ms $B/msl $B/mp $B/mu $B/p $B/d $B/dp $B/ds $B/s1 $B/s2 $B/s3
mount -t tmpfs Z $B/z
mount --make-shared $B/z
mount --bind $B/z $B/ms
mount --bind $B/z $B/msl
mount --make-slave $B/msl
mount -t tmpfs MP $B/mp
mount -t tmpfs MU $B/mu
mount --make-unbindable $B/mu
mount -t tmpfs P $B/p
mkdir -p $B/p/1 $B/p/2 $B/p/3 $B/p/4
mount --move $B/ms $B/p/1
mount --move $B/msl $B/p/2
mount --move $B/mp $B/p/3
mount --move $B/mu $B/p/4
mount -t tmpfs D $B/d
mount --make-shared $B/d
mount --bind $B/d $B/dp
mount --bind $B/d $B/ds
mount --make-slave $B/ds
mkdir -p $B/d/1 $B/d/2 $B/d/3 $B/d/4
mount --move $B/p/1 $B/d/1
mount --move $B/p/2 $B/d/2
mount --move $B/p/3 $B/d/3
mount --move $B/p/4 $B/d/4
