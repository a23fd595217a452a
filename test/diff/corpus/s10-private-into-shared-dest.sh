# S10 (s09): private source bound into a shared dest with a peer and a
# slave: new group on clone and peer copy, slave copy is its slave.
mkdir -p $B/d $B/dp $B/ds $B/p
mount -t tmpfs D $B/d
mount --make-shared $B/d
mount --bind $B/d $B/dp
mount --bind $B/d $B/ds
mount --make-slave $B/ds
mount -t tmpfs P $B/p
mkdir -p $B/d/t
mount --bind $B/p $B/d/t
