# S30 (s26, the sysfs part): a second mount of the same superblock on the
# root of the topmost mount there is EBUSY; the same superblock elsewhere,
# or a bind of it onto itself, is fine (semantics.md 3.1).
mkdir -p $B/sys1 $B/sys2
mount -t sysfs x $B/sys1
mount -t sysfs x $B/sys1
mount -t sysfs x $B/sys2
mount --bind $B/sys2 $B/sys2
mount -t sysfs x $B/sys2
umount $B/sys2
mount -t sysfs x $B/sys2
