# semantics.md 5.1, 10: umount of a plain directory is EINVAL, of a missing
# path ENOENT (also lazy); of a stack only the top goes; a mount with a
# child or a root overmount is EBUSY.
mkdir -p $B/dir $B/s
umount $B/dir
umount -l $B/dir
umount $B/nonexist
umount -l $B/nonexist
mount -t tmpfs S1 $B/s
mount -t tmpfs S2 $B/s
mount -t tmpfs S3 $B/s
umount $B/s
mkdir -p $B/s/c
mount -t tmpfs C $B/s/c
umount $B/s
umount $B/s/c
umount $B/s
umount $B/s
umount $B/s
