# issue 13: the lookup rules of lookup-covered-cwd.sh from a cwd inside a
# jail, covered from the host: umount2's LOOKUP_MOUNTPOINT for ".", ".."
# and a trailing "/."; a mount or bind on "." on top of the stack; a
# bind's source "." beneath it (semantics.md 5.1, 3.2, 4.1).
mkdir -p $B/j1/x/in $B/j1/y $B/j1/z/sub $B/j2
chroot $B/j1 cd /x
mount -t tmpfs X1 $B/j1/x
mount -t tmpfs X2 $B/j1/x
chroot $B/j1 umount2 .
chroot $B/j1 umount2 ./.
chroot $B/j1 umount2 .
mount -t tmpfs X3 $B/j1/x
chroot $B/j1 mount -c -t tmpfs N1 .
chroot $B/j1 mount -c --bind /y .
chroot $B/j1 mount -c --bind . /y
chroot $B/j1 umount /y
chroot $B/j1 umount2 -l ..//x/.
chroot $B/j1 cd /z/sub
mount -t tmpfs Z1 $B/j1/z
mkdir -p $B/j1/z/w
chroot $B/j1 mount -c -t tmpfs W1 ../w
chroot $B/j1 umount2 ../w
chroot $B/j1 umount2 ..
# from the host: the cwd in the jail is just a directory
umount2 .
chroot $B/j1 cd /
