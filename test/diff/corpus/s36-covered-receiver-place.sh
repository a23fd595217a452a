# S36: a receiver whose mountpoint is under another mount of its own
# (semantics.md 3.2: receivers are places, not paths): the copy for s/a/b
# goes there although s/a is covered, hidden under COVER; its umount
# takes it away from under COVER again.
mkdir -p $B/m $B/s
mount -t tmpfs M $B/m
mount --make-shared $B/m
mount --bind $B/m $B/s
mount --make-slave $B/s
mkdir -p $B/m/a/b
mount -t tmpfs COVER $B/s/a
mount -t tmpfs NEW $B/m/a/b
mount --bind $B/m/a $B/m/a/b
umount $B/m/a/b
umount $B/m/a/b
