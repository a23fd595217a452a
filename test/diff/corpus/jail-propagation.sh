# Jails: host mount A, shared, bound into both jails; mounts made inside a
# jail propagate out to the host and into the other jail; a jail's own
# umount propagates back; errors inside a jail use jail paths.
mkdir -p $B/a $B/j1/x $B/j1/y $B/j2/x
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/j1/x
mount --bind $B/a $B/j2/x
mount --make-slave $B/j2/x
chroot $B/j1 mkdir -p /x/d /x/e
chroot $B/j1 mount -t tmpfs D /x/d
chroot $B/j2 mount -t tmpfs E /x/e
chroot $B/j1 mount --bind /x /y
chroot $B/j1 mount -t tmpfs F /y/e
chroot $B/j1 umount /x/d
chroot $B/j1 umount /nonexist
chroot $B/j1 umount /
chroot $B/j1 mount --make-shared /
chroot $B/j1 mount --move /y /x/d
chroot $B/j1 mount --move /x /x/d
chroot $B/j2 mount --make-private /x
