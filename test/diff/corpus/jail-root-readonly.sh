# umount2("/", 0) from a jail whose root is a mount does not unmount it:
# the kernel remounts its filesystem read-only and answers 0 (semantics.md
# 5.1 item 8, S36).  The superblock's rw/ro is compared; its bind on the
# host turns read-only too, the mount itself stays rw.
mkdir -p $B/j $B/other
mount -t tmpfs J $B/j
mount --bind $B/j $B/other
chroot $B/j umount /
