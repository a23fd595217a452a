# semantics.md 4.2: bind, destination (shared / private) x source (shared,
# private, slave, shared+slave); the shared destination has a peer dp and a
# slave ds, which receive copies.
mkdir -p $B/d $B/dp $B/ds $B/p $B/sh $B/pr $B/sl $B/ss $B/z
mount -t tmpfs D $B/d
mount --make-shared $B/d
mount --bind $B/d $B/dp
mount --bind $B/d $B/ds
mount --make-slave $B/ds
mount -t tmpfs P $B/p
mount -t tmpfs Z $B/z
mount --make-shared $B/z
mount -t tmpfs SH $B/sh
mount --make-shared $B/sh
mount -t tmpfs PR $B/pr
mount --bind $B/z $B/sl
mount --make-slave $B/sl
mount --bind $B/z $B/ss
mount --make-slave $B/ss
mount --make-shared $B/ss
mkdir -p $B/d/1 $B/d/2 $B/d/3 $B/d/4 $B/p/1 $B/p/2 $B/p/3 $B/p/4
mount --bind $B/sh $B/d/1
mount --bind $B/pr $B/d/2
mount --bind $B/sl $B/d/3
mount --bind $B/ss $B/d/4
mount --bind $B/sh $B/p/1
mount --bind $B/pr $B/p/2
mount --bind $B/sl $B/p/3
mount --bind $B/ss $B/p/4
