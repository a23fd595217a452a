# S17 (s16): a process in the peer's copy b/x makes umount a/x EBUSY
# (nothing removed); umount -l removes both.
mkdir -p $B/a $B/b
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/b
mkdir -p $B/a/x
mount -t tmpfs X $B/a/x
hold $B/b/x
umount $B/a/x
umount -l $B/a/x
release $B/b/x
