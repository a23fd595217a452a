# Jails whose root is a mount: the jail's top mount is listed as "/";
# propagate_from appears when the master is outside the jail; a jail sees
# nothing above its root. umount / inside a jail whose root is a mount is
# OK (the kernel remounts it read-only, see jail-root-readonly.sh),
# umount -l / detaches it.
mkdir -p $B/j1 $B/j2 $B/src
mount -t tmpfs SRC $B/src
mount --make-shared $B/src
mount --bind $B/src $B/j1
mount --make-slave $B/j1
mount --make-shared $B/j1
chroot $B/j1 mkdir -p /sub /inner
chroot $B/j1 mount --bind /sub /inner
chroot $B/j1 mount --make-slave /inner
mount -t tmpfs J2 $B/j2
chroot $B/j2 mkdir -p /d
chroot $B/j2 mount -t tmpfs D2 /d
chroot $B/j2 umount /
chroot $B/j2 umount -l /
