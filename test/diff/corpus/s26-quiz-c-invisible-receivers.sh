# S26 (s33, quiz C): receivers that cannot see the mountpoint are bypassed;
# their slaves still get a copy, slaved to the nearest copy above.
mkdir -p $B/mnt $B/tmp $B/tmp1 $B/bin
mount -t tmpfs MNT $B/mnt
mount -t tmpfs BIN $B/bin
mount --bind $B/mnt $B/mnt
mount --make-shared $B/mnt
mkdir -p $B/mnt/1/2/3 $B/mnt/1/test
mount --bind $B/mnt/1 $B/tmp
mount --make-slave $B/mnt
mount --make-shared $B/mnt
mount --bind $B/mnt/1/2 $B/tmp1
mount --make-slave $B/mnt
mount --bind $B/bin $B/tmp/test
