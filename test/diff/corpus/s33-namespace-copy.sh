# S33 (s23, the same-user-namespace child): unshare -m copies every mount;
# shared mounts stay in their groups across the namespaces, slaves follow
# the same masters, unbindable is dropped (6.18, semantics.md 8).  Mounts
# propagate both ways between the peers; each namespace keeps its own
# private mounts; a move or umount in one namespace stays there.
mkdir -p $B/s $B/z $B/sl $B/p $B/q
mount -t tmpfs S $B/s
mount --make-shared $B/s
mount -t tmpfs Z $B/z
mount --make-shared $B/z
mount --bind $B/z $B/sl
mount --make-slave $B/sl
mount -t tmpfs P $B/p
mount -t tmpfs SL $B/p
mount --make-unbindable $B/p
unshare child
mkdir -p $B/s/x $B/s/y $B/z/w
mount -t tmpfs X $B/s/x
within child mount -t tmpfs Y $B/s/y
within child mount -t tmpfs W $B/z/w
within child mount --bind $B/p $B/q
mount --bind $B/p $B/q
within child umount $B/s/x
within child mount -t tmpfs Q $B/q
unshare grandchild
within grandchild mount --make-private $B/s
mount -t tmpfs X2 $B/s/x
