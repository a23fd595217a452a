# Mount options (semantics.md 1.5.1, S39): per-mount flags in their fixed
# order, superblock flags in field 11; clones copy the source's per-mount
# flags, propagated copies too; remount changes flags and is never
# propagated (3.4).  util-linux merges a remount with the options the
# mount has; "mount --bind -o ro" is a bind, then a bind-remount.
mkdir -p $B/o $B/s $B/p $B/q $B/r $B/t
mount -t tmpfs -o ro,nosuid,nodev,noexec,noatime,nodiratime,nosymfollow,sync,dirsync,lazytime O $B/o
mount -t tmpfs -o strictatime,nodev S $B/s
mount --make-shared $B/s
mount --bind $B/s $B/p
mkdir -p $B/s/x
mount -t tmpfs -o ro,noexec X $B/s/x
mount -o remount,rw $B/s/x
mount -o remount,bind,ro $B/p/x
mount -o remount,nodev $B/s/x
mount -o remount $B/s
mount --bind -o ro,nosuid $B/s $B/q
mount --rbind -o noexec $B/s $B/r
mount -o remount,bind,relatime,suid $B/q
mount -o remount,ro $B/t
mount -o remount,ro $B/nonexistent
mount -o remount,bind,rw $B/o
mount -o remount,rw $B/o
