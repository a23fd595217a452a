# issue 13: pivot_root's two paths from a covered cwd (semantics.md 7):
# new_root is the path as looked up (the mount beneath the cover), put_old
# goes to the top of the stack there (do_lock_mount()).
mkdir -p $B/j $B/k
mount -t tmpfs J $B/j
mkdir -p $B/j/x
mount -t tmpfs X $B/j/x
mkdir -p $B/j/x/d1
chroot $B/j cd /x
mount -t tmpfs Y $B/j/x
mkdir -p $B/j/x/d1
chroot $B/j pivot_root . d1
mount -t tmpfs K $B/k
mkdir -p $B/k/x/d1
mount -t tmpfs KX $B/k/x
mkdir -p $B/k/x/d1
chroot $B/k cd /x/d1
mount -t tmpfs Z $B/k/x/d1
chroot $B/k pivot_root /x .
