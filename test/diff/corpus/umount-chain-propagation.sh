# S16/s31: umount propagates down a master -> shared+slave -> slave chain;
# umount on the middle group propagates to its peers and slaves only.
mkdir -p $B/a $B/b $B/c $B/d
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/b
mount --make-slave $B/b
mount --make-shared $B/b
mount --bind $B/b $B/c
mount --bind $B/b $B/d
mount --make-slave $B/d
mkdir -p $B/a/x $B/a/y
mount -t tmpfs X $B/a/x
mount -t tmpfs Y $B/a/y
umount $B/a/x
umount $B/c/y
