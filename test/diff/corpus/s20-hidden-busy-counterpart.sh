# S20 (s35): a busy counterpart hidden under an overmount still makes the
# umount EBUSY; after the holder exits it succeeds and TOP drops onto b.
mkdir -p $B/a $B/b
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/b
mkdir -p $B/a/x
mount -t tmpfs X $B/a/x
hold $B/b/x
mount --make-private $B/b/x
mount -t tmpfs TOP $B/b/x
umount $B/a/x
release $B/b/x
umount $B/a/x
