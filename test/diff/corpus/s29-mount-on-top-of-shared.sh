# S29 (s30): a mount on top of shared a covers a's root and b's root
# (peer); umount of b's cover removes both.
mkdir -p $B/a $B/b
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/b
mount -t tmpfs COVER $B/a
umount $B/b
