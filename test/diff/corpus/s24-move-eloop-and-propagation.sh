# S24 (s21): move into the source's own subtree or onto itself is ELOOP;
# a private tree moved under a shared dest gets new groups and copies on
# the peer and slave; a moved slave becomes shared+slave.
mkdir -p $B/p
mount -t tmpfs P $B/p
mkdir -p $B/p/q
mount -t tmpfs Q $B/p/q
mkdir -p $B/p/q/r
mount --move $B/p $B/p/q/r
mount --move $B/p $B/p/q
mount --move $B/p $B/p
mkdir -p $B/d $B/dp $B/ds
mount -t tmpfs D $B/d
mount --make-shared $B/d
mount --bind $B/d $B/dp
mount --bind $B/d $B/ds
mount --make-slave $B/ds
mkdir -p $B/d/t
mount --move $B/p $B/d/t
mkdir -p $B/z $B/zs $B/d/t2
mount -t tmpfs Z $B/z
mount --make-shared $B/z
mount --bind $B/z $B/zs
mount --make-slave $B/zs
mount --move $B/zs $B/d/t2
