# semantics.md 2.3 (last table), S39: unmounting the sole member of a group
# turns its slave private; unmounting a sole shared+slave M re-masters its
# slave S to the grand-master Z; a peer's umount leaves the slaves alone.
mkdir -p $B/p $B/b $B/z $B/m $B/s $B/c $B/cp $B/cs
mount -t tmpfs P $B/p
mkdir -p $B/p/a
mount --make-shared $B/p
mount -t tmpfs A $B/p/a
mount --make-private $B/p
mount --bind $B/p/a $B/b
mount --make-slave $B/b
umount $B/p/a
mount -t tmpfs Z $B/z
mount --make-shared $B/z
mount --bind $B/z $B/m
mount --make-slave $B/m
mount --make-shared $B/m
mount --bind $B/m $B/s
mount --make-slave $B/s
umount $B/m
mount -t tmpfs C $B/c
mount --make-shared $B/c
mount --bind $B/c $B/cp
mount --bind $B/c $B/cs
mount --make-slave $B/cs
umount $B/c
