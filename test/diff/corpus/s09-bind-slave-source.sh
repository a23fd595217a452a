# S9 (s08): bind of a slave: into a private dest a slave of the same master;
# into a shared dest shared+slave, with a copy on the dest's peer.
mkdir -p $B/z $B/s $B/n $B/sh $B/shp
mount -t tmpfs Z $B/z
mount --make-shared $B/z
mount --bind $B/z $B/s
mount --make-slave $B/s
mount -t tmpfs SH $B/sh
mount --make-shared $B/sh
mount --bind $B/sh $B/shp
mkdir -p $B/sh/t
mount --bind $B/s $B/n
mount --bind $B/s $B/sh/t
