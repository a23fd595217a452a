# semantics.md 5.3: a mount with a process inside is EBUSY for umount but
# not for umount -l; after the process exits umount works. Holding the
# parent does not make the child busy.
mkdir -p $B/a $B/b
mount -t tmpfs A $B/a
mkdir -p $B/a/c
mount -t tmpfs C $B/a/c
hold $B/a/c
umount $B/a/c
release $B/a/c
umount $B/a/c
mount -t tmpfs C2 $B/a/c
hold $B/a
umount $B/a/c
umount $B/a
umount -l $B/a
release $B/a
mount -t tmpfs BB $B/b
hold $B/b
umount -l $B/b
release $B/b
