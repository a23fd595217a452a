# S12 (s11): a shared mount bound onto itself; a mount on top lands on the
# top clone and propagates to the hidden original; umount of the top clone
# is EBUSY (it has a child).
mkdir -p $B/a $B/b
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/a
mkdir -p $B/a/x
mount -t tmpfs X $B/a/x
umount $B/a
